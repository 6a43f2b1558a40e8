//! Which GPU timer timed a case, and what the page's GPU timer (`page/static/gpu-timer.js`) said
//! of the work it timed: GPU time for WebGPU code harness does not record itself (onnxruntime-web,
//! TensorFlow.js, transformers.js), and, as a check of the timer, for harness's own.
//!
//! The page's timer gives every compute pass without timestamps of its own a begin and an end
//! timestamp. A sample's work is the command buffers submitted in its window; its GPU time is then
//! known two ways: **busy**, the sum of its passes' times, and **span**, from its first pass's
//! begin to its last pass's end (idle gaps between passes included). Harness's own timestamps
//! bracket the one pass a batch is recorded in: span and busy alike.

use serde::{Deserialize, Serialize};

/// Which GPU timer times harness's own cases in a browser (`--gpu-timer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum GpuTimerChoice {
    /// Harness's own timestamps, written at the begin and end of the pass a batch is recorded in.
    #[default]
    Harness,
    /// The page's GPU timer alone, harness's own timestamps off: the check that the timer that
    /// times the engines agrees with harness's own.
    Page,
}

/// The timer behind a case's GPU times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum GpuTimerSource {
    /// Harness's own timestamps around the pass a batch is recorded in.
    Harness,
    /// The page's GPU timer, around every compute pass submitted in the sample's window.
    Page,
    /// Natively, work that submits its own command buffers: timestamp-only submissions on the
    /// same queue before and after each batch (a queue runs its submissions in order).
    Bracket,
}

impl GpuTimerSource {
    /// The source as tables name it.
    pub fn label(self) -> &'static str {
        match self {
            GpuTimerSource::Harness => "harness timestamps",
            GpuTimerSource::Page => "page GPU timer",
            GpuTimerSource::Bracket => "bracketing submissions",
        }
    }

    /// The headline GPU timer of a case timed by it, as tables name it.
    pub fn short(self) -> &'static str {
        match self {
            GpuTimerSource::Harness => "gpu",
            GpuTimerSource::Page => "gpu span·page",
            GpuTimerSource::Bracket => "gpu span·bracket",
        }
    }
}

/// What the page's timer said of one window: the work submitted while it was open.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WindowTimes {
    /// From the first timed pass's begin to the last's end, ms; `None` where no pass was timed.
    pub span_ms: Option<f64>,
    /// The timed passes' times summed, ms.
    pub busy_ms: Option<f64>,
    /// The window's counts.
    pub counts: TimerCounts,
}

/// Counts of the work in a window, or over a case's windows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimerCounts {
    /// Compute passes the timer timed.
    pub timed: u64,
    /// Timed passes whose timestamps were unusable (a zero begin, an end before its begin).
    pub invalid: u64,
    /// Compute passes in all.
    pub passes: u64,
    /// Compute passes with timestamps of their own, left alone.
    pub own_timestamps: u64,
    /// Render passes: not timed.
    pub render_passes: u64,
    /// Copies, clears and query resolves: not timed.
    pub copies: u64,
    /// Compute passes recorded while the timer was off, or on a device without timestamps.
    pub untimed: u64,
    /// Command buffers submitted.
    #[serde(default)]
    pub command_buffers: u64,
}

impl TimerCounts {
    /// Whether the work holds nothing the timer could not time.
    pub fn complete(&self) -> bool {
        self.timed > 0 && self.invalid + self.own_timestamps + self.render_passes + self.copies + self.untimed == 0
    }

    fn add(&mut self, o: &TimerCounts) {
        self.timed += o.timed;
        self.invalid += o.invalid;
        self.passes += o.passes;
        self.own_timestamps += o.own_timestamps;
        self.render_passes += o.render_passes;
        self.copies += o.copies;
        self.untimed += o.untimed;
        self.command_buffers += o.command_buffers;
    }

    /// What the timer could not time, in words (`2 copies, 1 render pass`); empty where nothing.
    pub fn untimed_words(&self) -> String {
        let parts = [
            (self.own_timestamps, "pass with its own timestamps", "passes with their own timestamps"),
            (self.render_passes, "render pass", "render passes"),
            (self.copies, "copy", "copies"),
            (self.untimed, "pass recorded with the timer off", "passes recorded with the timer off"),
            (self.invalid, "pass with unusable timestamps", "passes with unusable timestamps"),
        ];
        parts.iter().filter(|(n, ..)| *n > 0).map(|(n, one, many)| format!("{n} {}", if *n == 1 { one } else { many })).collect::<Vec<_>>().join(", ")
    }
}

/// Packed window times as `gpu-timer.js`'s `packed` hands them over.
pub const PACKED_LEN: usize = 11;

impl WindowTimes {
    /// The times `gpu-timer.js`'s `packed` gives: `[spanMs, busyMs, timed, invalid, passes,
    /// ownTimestamps, renderPasses, copies, untimed, complete, commandBuffers]`; `None` where `v`
    /// is shorter.
    pub fn unpack(v: &[f64]) -> Option<WindowTimes> {
        let v = v.get(..PACKED_LEN)?;
        let ms = |x: f64| (x.is_finite() && x >= 0.0).then_some(x);
        let n = |x: f64| x.max(0.0) as u64;
        Some(WindowTimes {
            span_ms: ms(v[0]),
            busy_ms: ms(v[1]),
            counts: TimerCounts {
                timed: n(v[2]),
                invalid: n(v[3]),
                passes: n(v[4]),
                own_timestamps: n(v[5]),
                render_passes: n(v[6]),
                copies: n(v[7]),
                untimed: n(v[8]),
                command_buffers: n(v[10]),
            },
        })
    }
}

/// How a case's GPU times were taken: which timer, and, for the page's, what its windows held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuTimerUse {
    /// The timer.
    pub source: GpuTimerSource,
    /// Why the case has no GPU time, where it has none (the adapter has no `timestamp-query`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Windows the page's timer read (calibration and warm-up included).
    #[serde(default)]
    pub windows: u64,
    /// Windows holding work the timer could not time: their GPU times leave that work out.
    #[serde(default)]
    pub incomplete: u64,
    /// What the windows held, in all.
    #[serde(default)]
    pub counts: TimerCounts,
    /// The timer's cost (`--gpu-timer-cost`), measured after the case's own samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<TimerCost>,
}

/// The page GPU timer's cost on a case: its throughput with the timer's timestamps on every pass
/// and without them, sampled alike (batches sized on the wall clock both ways), alternately, in
/// [`COST_ROUNDS`] rounds each, right after the case's own samples in the same page. Throughput is
/// the wall time of a sampling's timed samples (batches kept in flight, from the first's start to
/// the last's end) over the runs they hold: a browser that reports completions in bursts splits
/// single samples' walls unevenly, never a whole span's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimerCost {
    /// Wall ms a run with the timer on.
    pub with_ms: f64,
    /// Wall ms a run with it off.
    pub without_ms: f64,
    /// Runs timed each way.
    pub runs: u64,
}

/// Rounds of each way [`TimerCost`] alternates.
pub const COST_ROUNDS: usize = 2;

/// The timer's cost on a case: [`COST_ROUNDS`] rounds of `sample(true)` (the timer's timestamps
/// on) then `sample(false)` (off), each sampling's timed wall span and runs
/// ([`crate::sampling::Sampled::span_and_runs`]).
pub async fn measure_cost<E>(mut sample: impl AsyncFnMut(bool) -> Result<(f64, u64), E>) -> Result<Option<TimerCost>, E> {
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..COST_ROUNDS {
        with.push(sample(true).await?);
        without.push(sample(false).await?);
    }
    Ok(TimerCost::of(&with, &without))
}

impl TimerCost {
    /// The cost from samplings alternately with and without the timer (`with`, `without`: each
    /// sampling's timed wall span, ms, and runs).
    pub fn of(with: &[(f64, u64)], without: &[(f64, u64)]) -> Option<TimerCost> {
        let total = |s: &[(f64, u64)]| s.iter().fold((0.0, 0), |(ms, n), (m, r)| (ms + m, n + r));
        let ((w_ms, w_n), (o_ms, o_n)) = (total(with), total(without));
        (w_n > 0 && o_n > 0 && o_ms > 0.0).then(|| TimerCost { with_ms: w_ms / w_n as f64, without_ms: o_ms / o_n as f64, runs: w_n.min(o_n) })
    }

    /// How much slower a run is with the timer, percent.
    pub fn pct(&self) -> f64 {
        (self.with_ms / self.without_ms - 1.0) * 100.0
    }
}

impl GpuTimerUse {
    /// The page's timer, no window read yet.
    pub fn page() -> Self {
        GpuTimerUse { source: GpuTimerSource::Page, unavailable: None, windows: 0, incomplete: 0, counts: TimerCounts::default(), cost: None }
    }

    /// No GPU time, and why.
    pub fn unavailable(source: GpuTimerSource, why: impl Into<String>) -> Self {
        GpuTimerUse { unavailable: Some(why.into()), source, ..GpuTimerUse::page() }
    }

    /// `source` on an adapter with `timestamp-query` (`timestamps`), or no GPU time because it
    /// has none.
    pub fn for_adapter(source: GpuTimerSource, timestamps: bool) -> Self {
        match timestamps {
            true => GpuTimerUse { source, ..GpuTimerUse::page() },
            false => GpuTimerUse::unavailable(source, "the adapter has no timestamp-query"),
        }
    }

    /// Whether the timer times anything (it does not where `unavailable` says why).
    pub fn times(&self) -> bool {
        self.unavailable.is_none()
    }

    /// Counts one more window.
    pub fn add(&mut self, w: &WindowTimes) {
        self.windows += 1;
        self.incomplete += u64::from(!w.counts.complete());
        self.counts.add(&w.counts);
    }

    /// The timer in a few words, for a report: `page GPU timer, span (busy beside it)`, with what
    /// it could not time.
    pub fn describe(&self) -> String {
        if let Some(why) = &self.unavailable {
            return format!("no GPU time: {why}");
        }
        let mut words = self.source.label().to_string();
        if self.source == GpuTimerSource::Page {
            words += &format!(": {} passes timed over {} windows", self.counts.timed, self.windows);
            let untimed = self.counts.untimed_words();
            if self.incomplete > 0 {
                words += &format!("; {} windows incomplete, holding {untimed} the timer cannot time", self.incomplete);
            }
        }
        words
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_times_unpack_and_a_window_with_copies_is_incomplete() {
        let w = WindowTimes::unpack(&[2.0, 1.5, 3.0, 0.0, 3.0, 0.0, 0.0, 2.0, 0.0, 0.0, 1.0]).unwrap();
        assert_eq!((w.span_ms, w.busy_ms, w.counts.copies, w.counts.complete()), (Some(2.0), Some(1.5), 2, false));
        let none = WindowTimes::unpack(&[f64::NAN, f64::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
        assert_eq!((none.span_ms, none.counts.complete()), (None, false));
        assert!(WindowTimes::unpack(&[1.0]).is_none());
        let mut used = GpuTimerUse::page();
        used.add(&w);
        used.add(&WindowTimes { counts: TimerCounts { timed: 4, passes: 4, ..Default::default() }, ..w });
        assert_eq!((used.windows, used.incomplete, used.counts.timed), (2, 1, 7));
        assert!(used.describe().contains("1 windows incomplete, holding 2 copies"), "{}", used.describe());
    }

    #[test]
    fn the_cost_alternates_with_and_without_the_timer_and_compares_throughputs() {
        let mut calls = Vec::new();
        let cost = pollster::block_on(measure_cost(async |on: bool| {
            calls.push(on);
            // 100 runs a sampling: 1.1 ms a run with the timer, 1.0 without.
            Ok::<_, ()>((if on { 110.0 } else { 100.0 }, 100))
        }))
        .unwrap()
        .unwrap();
        assert_eq!(calls, [true, false].repeat(COST_ROUNDS));
        assert_eq!((cost.runs, (cost.pct() * 1e9).round() / 1e9), (100 * COST_ROUNDS as u64, 10.0));
        assert_eq!(GpuTimerUse::for_adapter(GpuTimerSource::Page, false).unavailable.as_deref(), Some("the adapter has no timestamp-query"));
        assert!(GpuTimerUse::for_adapter(GpuTimerSource::Bracket, true).times());
    }
}
