//! `summary.md`: the headline of a report for a CI job summary (GitHub's `$GITHUB_STEP_SUMMARY`).

use crate::baseline::BaselineComparison;
use crate::compare::{compare_runs, Comparison};
use crate::probe::{case_clocks, enough_samples, judging_rule, ClockFlag, THROTTLE_THRESHOLD};
use stats::Class;
use crate::model::roofline::{any_roofline, format_roofline};
use crate::model::{format_ms as ms, RunReport};
use crate::onnx_table::{onnx_tables, OnnxCell};
use crate::tables::{model_rows, phased_tables, vs_f32_note};
use std::fmt::Write;

/// Renders the summary of `report`.
pub fn render(report: &RunReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# harness results\n");
    let _ = writeln!(
        s,
        "Suite **{}**, up to {} samples per case, {} sampling, {} · harness {}\n",
        report.settings.suite,
        report.settings.samples,
        report.settings.sampling.as_str(),
        report.created_at,
        report.harness.version
    );
    let user_flags: Vec<String> = report.settings.browser_args.iter().map(|a| format!("`--browser-arg {a}`"))
        .chain(report.settings.browser_prefs.iter().map(|p| format!("`--browser-pref {p}`")))
        .collect();
    if !user_flags.is_empty() {
        let _ = writeln!(s, "User browser flags: {}\n", user_flags.join(", "));
    }
    for warning in crate::adapter::software_adapter_warnings(report) {
        let _ = writeln!(s, "> **Warning:** {warning}\n");
    }
    let _ = writeln!(s, "| run | host | browser | adapter | passed | wrong | timed out | crashed | device lost | error | not run | unsupported | unchecked |");
    let _ = writeln!(s, "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let labels = crate::model::labels(report);
    for (run, label) in report.runs.iter().zip(&labels) {
        let c = run.counts();
        let browser = run.browser_info.as_ref().map(|b| format!("{} {}", b.name, b.version)).unwrap_or_default();
        let adapter = match &run.adapter {
            Some(a) if a.available => {
                let name = [&a.vendor, &a.architecture, &a.description]
                    .iter()
                    .filter(|v| !v.is_empty())
                    .map(|v| v.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                let fallback = if a.is_fallback_adapter == Some(true) { " (fallback)" } else { "" };
                format!("{}{fallback}", if name.is_empty() { "unnamed" } else { &name })
            }
            Some(_) => "unavailable".into(),
            None => "–".into(),
        };
        let _ = writeln!(
            s,
            "| {label} | {} | {browser} | {adapter} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            run.host.os, c.passed, c.failed, c.timed_out, c.crashed, c.device_lost, c.error, c.not_run, c.unsupported, c.unchecked
        );
    }
    for (run, label) in report.runs.iter().zip(&labels) {
        if let Some(l) = &run.completion_latency {
            let _ = writeln!(s, "- {label} completion latency: {}", l.describe());
        }
        if let Some(why) = &run.unavailable {
            let _ = writeln!(s, "- {label} unavailable: {why}");
        }
        if let Some(m) = run.memory_growth() {
            let _ = writeln!(s, "- {label} memory: {}", m.describe());
        }
        if let Some(p) = &run.roofline {
            let _ = writeln!(s, "- {label} roofline: {}", p.describe());
        }
        if let Some(f) = run.features_used() {
            let _ = writeln!(s, "- {label} optional features its shaders used: {f}");
        }
        if let Some(p) = run.cpu_policy(&report.settings) {
            let _ = writeln!(s, "- {label} sampled for a CPU (a software adapter): {}", p.describe());
        }
        if let Some(t) = crate::model::describe_case_times(run.cases.iter().filter_map(|c| c.case_time.as_ref())) {
            let _ = writeln!(s, "- {label} time: {t}");
        }
    }
    for (run, label) in report.runs.iter().zip(&labels) {
        if let Some(f) = &run.failure {
            let _ = writeln!(s, "\n**{label} failed:** {}", f.lines().next().unwrap_or(""));
        }
    }
    if let Some(b) = &report.baseline {
        s += &baseline_section(b);
    }
    onnx(&mut s, report);
    models(&mut s, report);
    phased(&mut s, report);
    gpu_timers(&mut s, report);
    let clocks = ClockFlags { flags: crate::probe::clock_flags(report), note: clock_note(report) };
    match compare_runs(report) {
        Some(cmp) => comparison(&mut s, &cmp, &clocks),
        None => {
            if !clocks.flags.is_empty() {
                let _ = writeln!(s, "\n## Flagged\n");
            }
            write_clock_flags(&mut s, &clocks);
            single(&mut s, report)
        }
    }
    s
}

/// The comparison with a baseline: counts, the gate's verdict, and every case that changed or
/// could not be compared (unchanged cases are counted, not listed).
pub fn baseline_section(b: &BaselineComparison) -> String {
    let mut s = String::new();
    let n = b.counts();
    let _ = writeln!(s, "\n## Compared with baseline `{}`\n", b.name);
    let _ = writeln!(
        s,
        "Baseline from {}. **{} regressed**, {} improved, {} unchanged (within noise: 95% CI includes 0 or |change| ≤ {}%), {} not compared, {} only in the baseline, {} only in this run.\n",
        b.baseline_created_at, n.regressed, n.improved, n.unchanged, b.noise_pct, n.not_compared, n.only_baseline, n.only_new
    );
    for change in &b.hardware_changes {
        let _ = writeln!(s, "**Not compared:** {}.\n", change.describe());
    }
    if let Some(limit) = b.fail_on_regression_pct {
        let failing = b.failing().count();
        let changed = b.hardware_changes.len();
        let _ = writeln!(
            s,
            "{}\n",
            match (failing, changed) {
                (0, 0) => format!("Regression gate (> {limit}%): **passed**."),
                (k, 0) => format!("Regression gate (> {limit}%): **failed** by {k} case(s)."),
                (k, c) => format!("Regression gate (> {limit}%): **failed** by {k} case(s) and {c} run(s) on other hardware."),
            }
        );
    }
    let listed: Vec<_> = b.cases.iter().filter(|c| c.class() != Some(Class::Unchanged)).collect();
    if !listed.is_empty() {
        let _ = writeln!(s, "| run | case | baseline ms | new ms | change [95% CI] | verdict |");
        let _ = writeln!(s, "|---|---|---:|---:|---:|---|");
        for c in listed {
            let (old, new, change) = match &c.change {
                Some(ch) => (ms(ch.old_median), ms(ch.new_median), ch.describe()),
                None => ("–".into(), "–".into(), "–".into()),
            };
            let verdict = match c.class() {
                Some(Class::Regressed) => "**regressed**".to_string(),
                Some(k) => k.as_str().to_string(),
                None => c.note.clone().unwrap_or_default(),
            };
            let _ = writeln!(s, "| {} | `{}` | {old} | {new} | {change} | {verdict} |", c.run, c.id);
        }
    }
    s
}

/// The model cases (those with a throughput) of every run; nothing when there are none.
fn models(s: &mut String, report: &RunReport) {
    let rows = model_rows(report);
    if rows.is_empty() {
        return;
    }
    let note = vs_f32_note(&rows);
    let (head, rule) = if note.is_some() { (" vs f32 |", "---|") } else { ("", "") };
    let _ = writeln!(s, "\n## Models\n");
    let _ = writeln!(s, "| case | run | median ms (timer, ±95% CI) | rate | per item | dispatches | status | check |{head}");
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---|---|{rule}");
    for m in rows {
        let vs_f32 = note.map(|_| format!(" {} |", m.vs_f32.as_deref().unwrap_or("–"))).unwrap_or_default();
        let _ = writeln!(
            s,
            "| `{}` | {} | {} ({}, {}) | {} | {} | {} | {} | {} |{vs_f32}",
            m.case.id, m.run, m.median, m.timer, m.ci, m.rate, m.per_item, m.dispatches, m.case.status.as_str(), m.check
        );
    }
    if let Some(note) = note {
        let _ = writeln!(s, "\n{note}");
    }
}

/// The user's own ONNX files (`--onnx`): a table of warm runs, one of cold starts; nothing
/// without them.
fn onnx(s: &mut String, report: &RunReport) {
    for t in onnx_tables(report) {
        let _ = writeln!(s, "\n## {}\n", t.title);
        let heads: Vec<String> = t.columns.iter().map(|c| format!("{} {}", c.provider, c.browser)).collect();
        let _ = writeln!(s, "| case | {} |", heads.join(" | "));
        let _ = writeln!(s, "|---|{}", "---:|".repeat(heads.len()));
        for row in &t.rows {
            let cells: Vec<String> = row.cells.iter().map(onnx_cell).collect();
            let _ = writeln!(s, "| `{}` | {} |", row.id, cells.join(" | "));
        }
        let _ = writeln!(s, "\n{}", t.note);
        if let Some(note) = &t.software_note {
            let _ = writeln!(s, "\n{note}");
        }
    }
}

/// A cell of the ONNX tables: `**18.745** (wall, ±1.2%, fastest)`, `30.673 (…, 1.64×)`, a status
/// other than passed in bold before it (`**failed** 151.5 (…)`), its CPU fallback after it
/// (`· CPU 1/6: Cast`), `–` where the run did not plan it.
fn onnx_cell(c: &OnnxCell) -> String {
    let mark = if c.stands_out { format!("**{}**", c.status) } else { String::new() };
    let cell = match &c.median {
        Some(median) => {
            let median = if c.fastest { format!("**{median}**") } else { median.clone() };
            let rank = c.rank.as_ref().map(|r| format!(", {r}")).unwrap_or_default();
            format!("{mark} {median} ({}, {}{rank})", c.timer, c.ci).trim_start().to_string()
        }
        None if c.stands_out => mark,
        None => "–".into(),
    };
    match &c.cpu_brief {
        Some(cpu) => format!("{cell} · {cpu}"),
        None => cell,
    }
}

/// A table of each kind of case timed in phases (cold starts, runs from text).
fn phased(s: &mut String, report: &RunReport) {
    for t in phased_tables(report) {
        let _ = writeln!(s, "\n## {}\n", t.title);
        let _ = writeln!(s, "| case | run | {} | min–max | {} | phases (median ms) | status |", t.median_header, t.count_header);
        let _ = writeln!(s, "|---|---|---:|---:|---:|---|---|");
        for c in t.rows {
            let _ = writeln!(s, "| `{}` | {} | {} | {} | {} | {} | {} |", c.case.id, c.run, c.median, c.spread, c.count, c.phases, c.case.status.as_str());
        }
        let _ = writeln!(s, "\n{}", t.note);
    }
}

fn gpu_timers(s: &mut String, report: &RunReport) {
    let rows = crate::tables::gpu_timer_rows(report);
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(s, "\n## GPU timer\n");
    let _ = writeln!(s, "| case | run | span ms | busy ms | wall ms | timer cost | timer |");
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---|");
    for r in rows {
        let _ = writeln!(s, "| `{}` | {} | {} | {} | {} | {} | {} |", r.case.id, r.run, r.span, r.busy, r.wall, r.cost, r.timer);
    }
    let _ = writeln!(s, "\n{}", crate::tables::GPU_TIMER_NOTE);
}

/// The report's clock flags and how they were judged.
struct ClockFlags {
    /// Cases measured below the report's clock.
    flags: Vec<ClockFlag>,
    /// The rule, where some case has clocks ([`clock_note`]).
    note: Option<String>,
}

/// How clock flags are judged, and how many cases had too few probe samples to be: `None` when
/// no case has clocks.
fn clock_note(report: &RunReport) -> Option<String> {
    let clocks: Vec<_> = case_clocks(report).collect();
    if clocks.is_empty() {
        return None;
    }
    let here = match clocks.iter().filter(|c| !enough_samples(c)).count() {
        0 => String::new(),
        unknown => format!(" ({unknown} of {} cases here)", clocks.len()),
    };
    Some(format!(
        "Clock flags: a case is flagged when its median SM clock is under {:.0}% of the highest seen in this report; {}{here}.",
        THROTTLE_THRESHOLD * 100.0,
        judging_rule()
    ))
}

/// Cases measured below the report's clock, one line each, then the rule they were judged by.
fn write_clock_flags(s: &mut String, clocks: &ClockFlags) {
    for f in &clocks.flags {
        let _ = writeln!(s, "- `{}` ({}): {}", f.id, f.run, f.why);
    }
    if let Some(note) = &clocks.note {
        let _ = writeln!(s, "\n{note}");
    }
}

fn comparison(s: &mut String, cmp: &Comparison, clocks: &ClockFlags) {
    let flagged: Vec<_> = cmp.flagged().collect();
    let _ = writeln!(s, "\n## Flagged\n");
    if flagged.is_empty() {
        let _ = writeln!(s, "Nothing: among the runs that measured each case, none disagrees on correctness, and none ranked for speed is more than 2× slower than the fastest.");
    }
    for c in flagged {
        let _ = writeln!(s, "- `{}`: {}", c.id, c.reasons().join("; "));
    }
    if let Some(note) = cmp.software_note() {
        let _ = writeln!(s, "\n{note}");
    }
    write_clock_flags(s, clocks);
    let _ = writeln!(s, "\n## Median ms (× fastest)\n");
    let _ = writeln!(s, "| case | timer | {} |", cmp.runs.join(" | "));
    let _ = writeln!(s, "|---|---|{}", "---:|".repeat(cmp.runs.len()));
    for c in &cmp.cases {
        let cells: Vec<String> = c
            .entries
            .iter()
            .map(|e| match (e.stats, e.status) {
                (Some(st), Some(status)) => {
                    let mark = if status.as_str() == "passed" { String::new() } else { format!(" **{}**", status.as_str()) };
                    let peak = e.roofline.as_ref().map(|f| format!(", {}", f.label())).unwrap_or_default();
                    let rank = e.rank().map(|r| format!("{r}, ")).unwrap_or_default();
                    format!("{} ({rank}cv {:.0}%{peak}){mark}", ms(st.median), st.cv * 100.0)
                }
                (_, Some(status)) => status.as_str().to_string(),
                _ => "–".into(),
            })
            .zip(&c.entries)
            .map(|(cell, e)| match crate::model::untold_variant(&c.id, e.variant.as_deref()) {
                Some(v) => format!("{cell} [{v}]"),
                None => cell,
            })
            .collect();
        let _ = writeln!(s, "| `{}` | {} | {} |", c.id, c.timer_words(), cells.join(" | "));
    }
}

fn single(s: &mut String, report: &RunReport) {
    let Some(run) = report.runs.first() else { return };
    let roofline = any_roofline(report);
    let (peak_head, peak_rule) = if roofline { (" of peak |", "---:|") } else { ("", "") };
    let _ = writeln!(s, "\n## Cases\n");
    let _ = writeln!(s, "| case | status | timer | median ms | ±95% CI | cv | n (stop) | GFLOP/s | GB/s |{peak_head}");
    let _ = writeln!(s, "|---|---|---|---:|---:|---:|---:|---:|---:|{peak_rule}");
    for c in &run.cases {
        let h = c.headline();
        let peak = if roofline { format!(" {} |", format_roofline(c)) } else { String::new() };
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} |{peak}",
            c.label(),
            c.status.as_str(),
            c.timer_label(),
            h.map(|h| ms(h.median)).unwrap_or_else(|| "–".into()),
            crate::model::format_ci(h.and_then(|h| h.ci_half_width_pct)),
            h.map(|h| format!("{:.0}%", h.cv * 100.0)).unwrap_or_else(|| "–".into()),
            match (h, c.stopped_by) {
                (Some(h), Some(stop)) => format!("{} ({})", h.n, stop.describe()),
                _ => "–".into(),
            },
            c.gflops.map(|g| format!("{g:.2}")).unwrap_or_else(|| "–".into()),
            c.gbps.map(|g| format!("{g:.2}")).unwrap_or_else(|| "–".into()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{case, model_case, report_with};

    #[test]
    fn flags_lead_the_cross_browser_summary() {
        let report = report_with(vec![
            ("chrome", vec![case("a", &[1.0], true, true), case("b", &[1.0], true, true)]),
            ("firefox", vec![case("a", &[3.0], true, true), case("b", &[1.0], false, true)]),
        ]);
        let md = render(&report);
        assert!(md.contains("- `a`: firefox/webgpu 3.0× slower than the fastest"), "{md}");
        assert!(md.contains("- `b`: correctness disagrees (chrome/webgpu passed, firefox/webgpu failed)"), "{md}");
        assert!(md.find("## Flagged").unwrap() < md.find("## Median ms").unwrap());
    }

    #[test]
    fn a_software_adapters_times_are_shown_unranked_with_the_reason() {
        let mut report = report_with(vec![("chrome", vec![case("a", &[9.0], true, true)]), ("firefox", vec![case("a", &[1.0], true, true)])]);
        report.runs[0].adapter = Some(crate::adapter::tests::swiftshader());
        let md = render(&report);
        assert!(!md.contains("chrome/webgpu 9.0×") && md.contains("| `a` | gpu | 9.000 (software, cv 0%) | 1.000 (cv 0%) |"), "{md}");
        assert!(md.contains("\nSpeed not compared for chrome/webgpu (SwiftShader"), "{md}");
    }

    #[test]
    fn a_run_on_other_hardware_than_the_baselines_is_named_and_fails_the_gate() {
        let mut old = report_with(vec![("chrome", vec![case("a", &[1.0, 1.0], true, true)])]);
        let mut new = old.clone();
        old.runs[0].adapter = Some(kernels::wire::AdapterReport { available: true, vendor: "nvidia".into(), is_fallback_adapter: Some(false), ..Default::default() });
        new.runs[0].adapter = Some(crate::adapter::tests::swiftshader());
        let md = baseline_section(&crate::baseline::BaselineComparison::new("main", &old, &new, 2.0, Some(5.0)));
        assert!(md.contains("**Not compared:** chrome/webgpu ran on other hardware than the baseline's (baseline: nvidia; now: google swiftshader, software: SwiftShader"), "{md}");
        assert!(md.contains("**failed** by 0 case(s) and 1 run(s) on other hardware.") && md.contains("1 not compared"), "{md}");
    }

    #[test]
    fn the_users_browser_flags_are_mentioned_when_given() {
        let mut report = report_with(vec![("chrome", vec![case("a", &[2.0], true, false)])]);
        assert!(!render(&report).contains("User browser flags"));
        report.settings.browser_args = vec!["chrome=--enable-features=Vulkan".into()];
        report.settings.browser_prefs = vec!["firefox=a.b=true".into()];
        let md = render(&report);
        assert!(md.contains("User browser flags: `--browser-arg chrome=--enable-features=Vulkan`, `--browser-pref firefox=a.b=true`\n"), "{md}");
    }

    #[test]
    fn a_single_run_lists_its_cases() {
        let md = render(&report_with(vec![("chrome", vec![case("a", &[2.0], true, false)])]));
        assert!(md.contains("| `a` | passed | wall | 2.000 | – | 0% | 1 (sample count) |"), "{md}");
    }

    #[test]
    fn model_cases_get_a_models_table_and_kernel_runs_none() {
        let report = report_with(vec![("chrome", vec![case("a", &[1.0], true, false), model_case("prefill", &[2.0, 2.5, 1.5])])]);
        let md = render(&report);
        let median = report.runs[0].cases[1].headline().unwrap().median;
        let rate = format!("{:.1} tokens/s", 16.0 / median * 1e3);
        assert!(md.contains("| `prefill` | chrome/webgpu | 2.000 (gpu, ±"), "{md}");
        // One layer's 9 dispatches (16 rows run as matvecs: the norms folded into them, Q, K and V
        // one, SwiGLU fused) and the final norm, over 16 tokens.
        assert!(md.contains(&format!(" | {rate} | 0.1250 ms/token | 0.625/token | passed | cos ≥ 0.99987 |")), "{md}");
        assert!(md.find("## Models").unwrap() < md.find("## Cases").unwrap());
        let kernels_only = render(&report_with(vec![("chrome", vec![case("a", &[1.0], true, false)])]));
        assert!(!kernels_only.contains("## Models") && !kernels_only.contains("tokens/s"));
    }
}
