//! The terminal reporter that shows a run's events: a progress bar while cases run and one line
//! per finished case. It only consumes events; it never touches processes.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use crate::measure::events::{Reporter, RunEvent};
use kernels::Sampling;
use reports::{CaseReport, CaseStatus, Timer};
use std::time::Duration;

/// Progress on stderr: a bar on a terminal, plain lines elsewhere (CI logs).
pub struct TerminalReporter {
    bar: ProgressBar,
    sampling: Option<Sampling>,
    /// What reports errors in the run under way: a browser's page, or the native worker.
    source: &'static str,
}

impl Default for TerminalReporter {
    fn default() -> Self {
        Self::new()
    }
}

impl TerminalReporter {
    /// A reporter drawing on stderr.
    pub fn new() -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
        bar.enable_steady_tick(Duration::from_millis(120));
        TerminalReporter { bar, sampling: None, source: "page" }
    }

    fn line(&self, text: String) {
        if self.bar.is_hidden() {
            eprintln!("{text}");
        } else {
            self.bar.println(text);
        }
    }
}

/// `0.0123 ms gpu ±2.1% (median of 30, …)` for a measured case: the median, its 95% CI
/// half-width, and how it was sampled.
pub fn timing_phrase(case: &CaseReport) -> String {
    if let (Some(cold), Some(w)) = (&case.cold_start, &case.wall) {
        let precompiled = if cold.precompile { ", pipelines precompiled" } else { "" };
        return format!(
            "first result {} ms (median of {} fresh pages, {}–{} ms{precompiled}): {}",
            reports::format_ms(w.median),
            w.n,
            reports::format_ms(w.min),
            reports::format_ms(w.max),
            cold.phases_line()
        );
    }
    match case.headline() {
        Some(h) => {
            let timer = case.timer.map(Timer::short).unwrap_or("wall");
            let ci = h.ci_half_width_pct.map(|w| format!(" {}", reports::format_ci(Some(w)))).unwrap_or_default();
            let stop = case.stopped_by.map(|s| format!(", stopped by {}", s.describe())).unwrap_or_default();
            let outliers = match h.outliers.total() {
                0 => String::new(),
                n => format!(", {n} outliers"),
            };
            let batch = match case.sampling_label() {
                l if l == "–" => String::new(),
                l => format!(", {l}"),
            };
            let clock = match reports::probe::format_sm(case.clock.as_ref()) {
                c if c == "–" => String::new(),
                c => format!(", SM {c}"),
            };
            let phases = case.from_text.as_ref().map(|t| format!(": a call {}", reports::phases_line(&t.median_phases))).unwrap_or_default();
            let fallback = kernels::placement::fallback_words(&case.placement).map(|w| format!("; {w}")).unwrap_or_default();
            format!("{} ms {timer}{ci} (median of {}{batch}, cv {:.1}%{outliers}{stop}{clock}){phases}{fallback}", reports::format_ms(h.median), h.n, h.cv * 100.0)
        }
        None => String::new(),
    }
}

impl Reporter for TerminalReporter {
    fn event(&mut self, event: RunEvent<'_>) {
        match event {
            RunEvent::RunStarted { platform, .. } => {
                self.source = if *platform == *kernels::Platform::Native.as_str() { "native" } else { "page" };
            }
            RunEvent::Step(what) => {
                self.bar.set_message(what.to_string());
                if self.bar.is_hidden() {
                    eprintln!("{what}…");
                }
            }
            RunEvent::Planned { browser, cases, sampling } => {
                self.sampling = Some(*sampling);
                self.bar.set_length(cases as u64);
                self.bar.set_position(0);
                self.bar.set_style(
                    ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {prefix} {msg}")
                        .expect("valid template")
                        .progress_chars("=> "),
                );
                self.bar.set_prefix(browser.to_string());
                self.line(format!("running {cases} case{} on {browser}", if cases == 1 { "" } else { "s" }));
            }
            RunEvent::Adapter(a) if a.available => self.line(format!(
                "adapter: {} {} {} {} (fallback adapter: {})",
                a.vendor,
                a.architecture,
                a.device,
                a.description,
                a.is_fallback_adapter.map(|b| b.to_string()).unwrap_or_else(|| "not reported".into())
            )),
            RunEvent::Adapter(a) => self.line(format!(
                "no WebGPU adapter: {}",
                a.reason.as_deref().unwrap_or("no reason given")
            )),
            RunEvent::Latency(l) => self.line(format!("completion latency: {}", l.describe())),
            RunEvent::CaseStarted(id) => self.bar.set_message(id.to_string()),
            RunEvent::SampleDone { case_id, done } => {
                let of = match self.sampling {
                    Some(Sampling { target_ci_pct: Some(t), .. }) => format!(" (until the CI is within ±{t}%)"),
                    Some(s) => format!("/{}", s.samples),
                    None => String::new(),
                };
                self.bar.set_message(format!("{case_id} sample {done}{of}"))
            }
            RunEvent::CaseFinished(case) => {
                self.bar.inc(1);
                let tag = match case.status {
                    CaseStatus::Passed => "PASS   ",
                    CaseStatus::Failed => "WRONG  ",
                    CaseStatus::TimedOut => "TIMEOUT",
                    CaseStatus::Crashed => "CRASHED",
                    CaseStatus::DeviceLost => "LOST   ",
                    CaseStatus::Error => "ERROR  ",
                    CaseStatus::NotRun => "NOT RUN",
                    CaseStatus::Unsupported => "N/A    ",
                    CaseStatus::Unchecked => "UNCHECK",
                };
                let mut line = format!("{tag} {}  {}", case.label(), timing_phrase(case));
                if let Some(m) = &case.message {
                    line += &format!("\n        {m}");
                }
                self.line(line);
            }
            RunEvent::PageError(e) => {
                let mut line = format!("{} error: {}", self.source, e.message);
                if let Some(stack) = &e.stack {
                    line += &format!("\n{stack}");
                }
                self.line(line);
            }
            RunEvent::RunFinished(run) => {
                self.bar.set_message("");
                if let Some(f) = &run.failure {
                    self.line(format!("{} run failed: {f}", run.browser));
                }
            }
        }
    }
}

impl Drop for TerminalReporter {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
