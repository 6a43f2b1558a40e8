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
    for run in &report.runs {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        t.set_header(["case", "status", "timer", "median ms", "p95 ms", "cv", "GFLOP/s", "GB/s", "max abs err"]);
        for c in &run.cases {
            let h = c.headline();
            let timer = c.timer.map(reports::Timer::short).unwrap_or("–");
            t.add_row(vec![
                Cell::new(&c.id),
                Cell::new(c.status.as_str()),
                Cell::new(timer),
                Cell::new(opt(h.map(|s| s.median), 4)).set_alignment(CellAlignment::Right),
                Cell::new(opt(h.map(|s| s.p95), 4)).set_alignment(CellAlignment::Right),
                Cell::new(h.map(|s| format!("{:.1}%", s.cv * 100.0)).unwrap_or_else(|| "–".into()))
                    .set_alignment(CellAlignment::Right),
                Cell::new(opt(c.gflops, 2)).set_alignment(CellAlignment::Right),
                Cell::new(opt(c.gbps, 2)).set_alignment(CellAlignment::Right),
                Cell::new(c.correctness.as_ref().map(|v| format!("{:.1e}", v.max_abs_err)).unwrap_or_else(|| "–".into()))
                    .set_alignment(CellAlignment::Right),
            ]);
        }
        let title = match &run.browser_info {
            Some(b) => format!("{} {} ({})", b.name, b.version, run.platform),
            None => format!("{} ({})", run.browser, run.platform),
        };
        let _ = writeln!(out, "{title}\n{t}");
        let _ = writeln!(out, "{}", totals(run));
        let _ = writeln!(out, "{}", phases(run));
    }
    out + &flags(report)
}

/// The cross-browser flags, when the report holds several runs.
pub fn flags(report: &RunReport) -> String {
    let Some(cmp) = reports::compare::compare_runs(report) else { return String::new() };
    let mut s = String::new();
    for c in cmp.flagged() {
        let _ = writeln!(s, "flagged {}: {}", c.id, c.reasons().join("; "));
    }
    if s.is_empty() {
        s = format!("across {}: nothing flagged (no correctness disagreement, no run more than 2× slower, among runs that measured each case)\n", cmp.runs.join(", "));
    }
    s
}

/// `12 passed, 1 wrong, …` for a run.
pub fn totals(run: &PlatformRun) -> String {
    let c = run.counts();
    let mut parts = vec![format!("{} passed", c.passed)];
    for (n, what) in [(c.failed, "wrong"), (c.timed_out, "timed out"), (c.error, "error"), (c.not_run, "not run")] {
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

/// Where the time went, and the harness's overhead per case beyond the timed samples.
pub fn phases(run: &PlatformRun) -> String {
    let p = &run.phases;
    let measured: Vec<_> = run.cases.iter().filter(|c| !c.samples.is_empty()).collect();
    // Everything the GPU was busy with: first dispatch, warm-ups and timed samples.
    let dispatched_ms: f64 = measured
        .iter()
        .map(|c| {
            c.first_dispatch_ms.unwrap_or(0.0)
                + c.warmup_ms.unwrap_or(0.0)
                + c.samples.iter().map(|s| s.wall_ms).sum::<f64>()
        })
        .sum();
    let mut s = format!(
        "phases: bundle {:.0} ms, server {:.0} ms, browser start {:.0} ms, cases {:.0} ms",
        p.bundle_ms, p.server_ms, p.browser_start_ms, p.cases_ms
    );
    if !measured.is_empty() {
        let _ = write!(
            s,
            "; harness overhead beyond dispatches {:.0} ms per case",
            (p.cases_ms - dispatched_ms).max(0.0) / measured.len() as f64
        );
    }
    s
}
