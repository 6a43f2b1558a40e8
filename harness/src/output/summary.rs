//! The summary printed when a run ends: one row per case, totals, phases and where the reports are.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Table};
use reports::{PlatformRun, RunReport};
use std::fmt::Write;

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|v| format!("{v:.digits$}")).unwrap_or_else(|| "–".into())
}

/// The cases of every run as a table.
pub fn table(report: &RunReport) -> String {
    let mut out = String::new();
    let roofline = reports::roofline::any_roofline(report);
    for run in &report.runs {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        let mut header = vec!["case", "status", "timer", "sampling", "median ms", "±95% CI", "p95 ms", "cv", "n (stop)", "outliers", "GFLOP/s", "GB/s", "max abs err"];
        if roofline {
            header.insert(12, "of peak");
        }
        t.set_header(header);
        for c in &run.cases {
            let h = c.headline();
            // A CPU bench's wall clock says how fine it is: its medians are never below one step.
            let timer = match (c.timer.map(reports::Timer::short), c.timer_resolution_ms) {
                (Some(t), Some(res)) => format!("{t} ({:.3} µs step)", res * 1e3),
                (t, _) => t.unwrap_or("–").to_string(),
            };
            let mut row = vec![
                Cell::new(c.label()),
                Cell::new(c.status.as_str()),
                Cell::new(timer),
                Cell::new(c.sampling_label()).set_alignment(CellAlignment::Right),
                Cell::new(opt(h.map(|s| s.median), 4)).set_alignment(CellAlignment::Right),
                Cell::new(reports::format_ci(h.and_then(|s| s.ci_half_width_pct)))
                    .set_alignment(CellAlignment::Right),
                Cell::new(opt(h.map(|s| s.p95), 4)).set_alignment(CellAlignment::Right),
                Cell::new(h.map(|s| format!("{:.1}%", s.cv * 100.0)).unwrap_or_else(|| "–".into()))
                    .set_alignment(CellAlignment::Right),
                Cell::new(match (h, c.stopped_by) {
                    (Some(s), Some(stop)) => format!("{} ({})", s.n, stop.describe()),
                    _ => "–".into(),
                })
                .set_alignment(CellAlignment::Right),
                Cell::new(h.map(|s| s.outliers.describe()).unwrap_or_else(|| "–".into())).set_alignment(CellAlignment::Right),
                Cell::new(opt(c.gflops, 2)).set_alignment(CellAlignment::Right),
                Cell::new(opt(c.gbps, 2)).set_alignment(CellAlignment::Right),
                Cell::new(c.correctness.as_ref().map(|v| format!("{:.1e}", v.max_abs_err)).unwrap_or_else(|| "–".into()))
                    .set_alignment(CellAlignment::Right),
            ];
            if roofline {
                row.insert(12, Cell::new(reports::roofline::format_roofline(c)).set_alignment(CellAlignment::Right));
            }
            t.add_row(row);
        }
        let title = match &run.browser_info {
            Some(b) => format!("{} {} ({})", b.name, b.version, run.platform),
            None => format!("{} ({})", run.browser, run.platform),
        };
        // An unavailable platform's cases are all the same line: say why once instead.
        match &run.unavailable {
            Some(why) => {
                let _ = writeln!(out, "{title}\nunavailable: {why}");
            }
            None => {
                let _ = writeln!(out, "{title}\n{t}");
            }
        }
        let _ = writeln!(out, "{}", totals(run));
        if let Some(p) = &run.roofline {
            let _ = writeln!(out, "roofline: {}", p.describe());
        }
        if let Some(l) = &run.completion_latency {
            let _ = writeln!(out, "completion latency: {}", l.describe());
        }
        if let Some(m) = run.memory_growth() {
            let _ = writeln!(out, "memory: {}", m.describe());
        }
        let _ = writeln!(out, "{}", phases(run));
    }
    out += &models(report);
    out += &phased(report);
    out += &flags(report);
    for warning in reports::adapter::software_adapter_warnings(report) {
        let _ = writeln!(out, "warning: {warning}");
    }
    if let Some(cmp) = &report.baseline {
        out += &baseline_table(cmp);
    }
    out
}

/// The cases with a rate (models' tokens and sentences, benches' elements) of every run; empty
/// when no case has a throughput.
pub fn models(report: &RunReport) -> String {
    let rows = reports::model_rows(report);
    if rows.is_empty() {
        return String::new();
    }
    let note = reports::vs_f32_note(&rows);
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    let mut header = vec!["case", "run", "median ms", "rate", "per item", "dispatches", "status"];
    header.extend(note.map(|_| "vs f32"));
    t.set_header(header);
    for m in rows {
        let mut row = vec![
            Cell::new(&m.case.id),
            Cell::new(&m.run),
            Cell::new(format!("{} ({})", m.median, m.timer)).set_alignment(CellAlignment::Right),
            Cell::new(&m.rate).set_alignment(CellAlignment::Right),
            Cell::new(&m.per_item).set_alignment(CellAlignment::Right),
            Cell::new(&m.dispatches).set_alignment(CellAlignment::Right),
            Cell::new(m.case.status.as_str()),
        ];
        row.extend(note.map(|_| Cell::new(m.vs_f32.as_deref().unwrap_or("–"))));
        t.add_row(row);
    }
    let note = note.map(|n| format!("{n}\n")).unwrap_or_default();
    format!("rates (models, and benches that declare elements)\n{t}\n{note}")
}

/// The cases timed in phases (`--cold-start`, `--from-text`), a table a kind; empty when there
/// are none.
pub fn phased(report: &RunReport) -> String {
    let mut out = String::new();
    for table in reports::phased_tables(report) {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        t.set_header(vec!["case", "run", table.median_header, "min–max", table.count_header, "phases (median ms)", "status"]);
        for c in table.rows {
            t.add_row(vec![
                Cell::new(&c.case.id),
                Cell::new(&c.run),
                Cell::new(&c.median).set_alignment(CellAlignment::Right),
                Cell::new(&c.spread).set_alignment(CellAlignment::Right),
                Cell::new(c.count).set_alignment(CellAlignment::Right),
                Cell::new(&c.phases),
                Cell::new(c.case.status.as_str()),
            ]);
        }
        out += &format!("{}\n{t}\n", table.about);
    }
    out
}

/// The comparison with a baseline as a table, then its counts and the regression gate's verdict.
pub fn baseline_table(cmp: &reports::baseline::BaselineComparison) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(["run", "case", "timer", "baseline ms", "new ms", "change [95% CI]", "verdict"]);
    for c in &cmp.cases {
        let (old, new, change) = match &c.change {
            Some(ch) => (format!("{:.4}", ch.old_median), format!("{:.4}", ch.new_median), ch.describe()),
            None => ("–".into(), "–".into(), "–".into()),
        };
        let verdict = c.class().map(|k| k.as_str().to_string()).unwrap_or_else(|| c.note.clone().unwrap_or_default());
        t.add_row(vec![
            Cell::new(&c.run),
            Cell::new(&c.id),
            Cell::new(c.timer.map(reports::Timer::short).unwrap_or("–")),
            Cell::new(old).set_alignment(CellAlignment::Right),
            Cell::new(new).set_alignment(CellAlignment::Right),
            Cell::new(change).set_alignment(CellAlignment::Right),
            Cell::new(verdict),
        ]);
    }
    let n = cmp.counts();
    let mut s = format!(
        "compared with baseline `{}` ({}), noise threshold {}%\n{t}\n{} improved, {} regressed, {} unchanged, {} not compared, {} only in the baseline, {} only in the new run\n",
        cmp.name, cmp.baseline_created_at, cmp.noise_pct, n.improved, n.regressed, n.unchanged, n.not_compared, n.only_baseline, n.only_new
    );
    // Under a gate, its failures list them.
    for change in cmp.hardware_changes.iter().filter(|_| cmp.fail_on_regression_pct.is_none()) {
        let _ = writeln!(s, "{}", change.describe());
    }
    if let Some(limit) = cmp.fail_on_regression_pct {
        let failing = cmp.gate_failures();
        if failing.is_empty() {
            let _ = writeln!(s, "regression gate passed: no case regressed by more than {limit}%");
        } else {
            let regressed = cmp.failing().count();
            let changed = cmp.hardware_changes.len();
            let _ = writeln!(s, "REGRESSION GATE FAILED: {regressed} case(s) regressed by more than {limit}%, {changed} run(s) on other hardware than the baseline's:");
            for f in failing {
                let _ = writeln!(s, "  {f}");
            }
        }
    }
    s
}

/// The cross-browser flags, when the report holds several runs.
pub fn flags(report: &RunReport) -> String {
    let mut s = String::new();
    for f in reports::probe::clock_flags(report) {
        let _ = writeln!(s, "flagged {} ({}): {}", f.id, f.run, f.why);
    }
    let Some(cmp) = reports::compare::compare_runs(report) else { return s };
    for c in cmp.flagged() {
        let _ = writeln!(s, "flagged {}: {}", c.id, c.reasons().join("; "));
    }
    if s.is_empty() {
        s = format!("across {}: nothing flagged (no correctness disagreement among runs that measured each case, no run ranked for speed more than 2× slower)\n", cmp.runs.join(", "));
    }
    if let Some(note) = cmp.software_note() {
        let _ = writeln!(s, "{note}");
    }
    s
}

/// `12 passed, 1 wrong, …` for a run.
pub fn totals(run: &PlatformRun) -> String {
    let c = run.counts();
    let mut parts = vec![format!("{} passed", c.passed)];
    for (n, what) in [(c.failed, "wrong"), (c.timed_out, "timed out"), (c.crashed, "crashed"), (c.device_lost, "device lost"), (c.error, "error"), (c.not_run, "not run"), (c.unsupported, "unsupported here"), (c.unchecked, "unchecked (no independent reference)")] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    let mut s = parts.join(", ");
    if let Some(f) = &run.failure {
        s += &format!("\nrun failed: {f}");
    }
    s
}

/// Where the time went: the run's phases, then its cases' (the platform's phases and harness's
/// own, what none accounts for, and the time a case took beyond its timed samples).
pub fn phases(run: &PlatformRun) -> String {
    let p = &run.phases;
    let mut s = format!(
        "phases: bundle {:.0} ms, server {:.0} ms, browser start {:.0} ms, cases {:.0} ms",
        p.bundle_ms, p.server_ms, p.browser_start_ms, p.cases_ms
    );
    if let Some(time) = reports::describe_case_times(run.cases.iter().filter_map(|c| c.case_time.as_ref())) {
        let _ = write!(s, "\ncase time: {time}");
    }
    s
}

/// The variants `harness run --tune` measured: per browser and case, the correct ones fastest
/// first with the winner marked, then the ones excluded and why.
pub fn tuning(rankings: &[crate::plan::tuning::Ranking]) -> String {
    let mut out = String::new();
    for r in rankings {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        t.set_header(["", "variant", "median ms", "GFLOP/s", "vs winner"]);
        let best = r.passed.first().map(|p| p.1);
        for (i, (variant, median, gflops)) in r.passed.iter().enumerate() {
            t.add_row(vec![
                Cell::new(if i == 0 { "winner" } else { "" }),
                Cell::new(variant),
                Cell::new(reports::format_ms(*median)).set_alignment(CellAlignment::Right),
                Cell::new(opt(*gflops, 1)).set_alignment(CellAlignment::Right),
                Cell::new(best.map(|b| format!("×{:.2}", median / b)).unwrap_or_default()).set_alignment(CellAlignment::Right),
            ]);
        }
        for (variant, status) in &r.excluded {
            t.add_row(vec![Cell::new("excluded"), Cell::new(variant), Cell::new(status.as_str()), Cell::new("–"), Cell::new("–")]);
        }
        let _ = writeln!(out, "tuning {} on {}\n{t}", r.case, r.title);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_s_error_against_f32_gets_a_column_and_its_meaning_only_where_some_case_has_one() {
        let mut report: RunReport = serde_json::from_str(include_str!("../../../docs/hardware/h100-native/minilm-results.json")).unwrap();
        assert!(!models(&report).contains("vs f32"), "f32 models have none");
        let drift = kernels::check::Drift { dtype: kernels::Dtype::Q8_0, min_cosine: 0.9995, worst_row: Some(0), max_abs_err: 0.004, max_rms_err: 0.02 };
        report.runs[0].cases.iter_mut().find(|c| c.throughput.is_some()).unwrap().correctness.as_mut().unwrap().vs_f32 = Some(drift);
        let text = models(&report);
        assert!(text.contains("vs f32") && text.contains("cos 0.99950, max Δ 4.0e-3 (2.0% of row RMS)"), "{text}");
        assert!(text.contains(reports::VS_F32_NOTE), "{text}");
    }

    #[test]
    fn the_terminal_summary_warns_of_a_software_adapter_on_a_gpu_machine() {
        // Chrome's run of the committed H100 evidence, its adapter swapped for SwiftShader, as
        // `--gpu-flags off` gives on that machine.
        let mut report: RunReport = serde_json::from_str(include_str!("../../../docs/hardware/h100-chrome/matmul-results.json")).unwrap();
        assert!(!table(&report).contains("software adapter"), "the H100 itself is not warned about");
        let chrome = &mut report.runs[0];
        chrome.adapter = Some(kernels::wire::AdapterReport {
            available: true,
            vendor: "google".into(),
            architecture: "swiftshader".into(),
            is_fallback_adapter: Some(true),
            ..Default::default()
        });
        chrome.browser_info.as_mut().unwrap().gpu_flags.clear();
        let text = table(&report);
        let warning = text.lines().find(|l| l.starts_with("warning: chrome/webgpu ran on a software adapter")).unwrap_or_else(|| panic!("{text}"));
        assert!(warning.contains("NVIDIA H100") && warning.contains("--gpu-flags") && warning.contains("harness doctor"), "{warning}");
    }
}
