//! Memory in use over a run, harness's own and the browser's, and how it grew after warm-up: whether
//! harness leaks a little with every case.

use serde::{Deserialize, Serialize};

/// Memory in use once some cases of a run had settled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemorySample {
    /// Cases settled so far in the run (0: the page was up, no case yet).
    pub cases: usize,
    /// harness's resident set, KiB.
    pub harness_rss_kib: u64,
    /// The browser's proportional set (all its processes, shared pages split), KiB; absent
    /// natively and with a remote WebDriver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser_pss_kib: Option<u64>,
}

/// How memory changed over a run, from the end of its warm-up (the first tenth of its cases)
/// to its end.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryGrowth {
    /// Cases between the two samples.
    pub cases: usize,
    /// harness's resident set then and at the end, KiB.
    pub harness_kib: (u64, u64),
    /// The browser's proportional set then and at the end, KiB, where read.
    pub browser_kib: Option<(u64, u64)>,
    /// harness's growth per case after warm-up, KiB: the least-squares slope of its resident set
    /// over every sample from the end of warm-up on, which a leak of anything per case shows and
    /// the noise of a single sample does not.
    pub harness_kib_per_case: f64,
    /// The browser's, likewise, where read.
    pub browser_kib_per_case: Option<f64>,
}

impl MemoryGrowth {
    /// The fewest cases a run needs for its memory growth to be stated.
    pub const MIN_CASES: usize = 100;

    /// harness's growth per case above which it leaks, KiB. harness keeps each finished case's
    /// report (samples, statistics, check, phases): 3.2 KiB a case in a 200-case Chromium soak of
    /// `add` on an idle 2-core machine, 6.6 KiB with three busy loops beside it (CI's suite runs
    /// four tests at once, and failed the soak at a bound of 8). A leak of each case's inputs and
    /// output (12 to 48 KiB at the quick shapes) comes on top of the kept reports: the bound sits
    /// between the reports under load and the smallest such leak above the idle ones (15 KiB).
    pub const HARNESS_LEAK_KIB_PER_CASE: f64 = 10.0;

    /// Whether harness grew by more than [`Self::HARNESS_LEAK_KIB_PER_CASE`] a case.
    pub fn harness_leaks(&self) -> bool {
        self.harness_kib_per_case > Self::HARNESS_LEAK_KIB_PER_CASE
    }

    /// Growth of `(from, to)` in percent.
    pub fn percent((from, to): (u64, u64)) -> f64 {
        (to as f64 / from.max(1) as f64 - 1.0) * 100.0
    }

    /// `harness RSS 41.2 → 42.0 MiB (+1.9%), browser PSS 611 → 623 MiB (+2.0%) over the last 450 cases`.
    pub fn describe(&self) -> String {
        let part = |what: &str, kib: (u64, u64)| {
            format!("{what} {:.1} → {:.1} MiB ({:+.1}%)", kib.0 as f64 / 1024.0, kib.1 as f64 / 1024.0, Self::percent(kib))
        };
        let per_case = |kib: f64| format!(", {kib:+.1} KiB a case");
        let mut parts = vec![part("harness RSS", self.harness_kib) + &per_case(self.harness_kib_per_case)];
        parts.extend(self.browser_kib.map(|b| part("browser PSS", b) + &self.browser_kib_per_case.map(per_case).unwrap_or_default()));
        let leak = if self.harness_leaks() { format!(" (harness leaks: over {} KiB a case)", Self::HARNESS_LEAK_KIB_PER_CASE) } else { String::new() };
        format!("{} over the last {} cases, after warm-up{leak}", parts.join(", "), self.cases)
    }

    /// The growth over `memory`, a run's samples in order: what
    /// [`PlatformRun::memory_growth`](super::PlatformRun::memory_growth) says.
    pub(super) fn of(memory: &[MemorySample]) -> Option<MemoryGrowth> {
        let last = memory.last().filter(|s| s.cases >= MemoryGrowth::MIN_CASES)?;
        let warm = memory.iter().find(|s| s.cases * 10 >= last.cases).filter(|s| s.cases < last.cases)?;
        let after: Vec<&MemorySample> = memory.iter().filter(|s| s.cases >= warm.cases).collect();
        let harness: Vec<(f64, f64)> = after.iter().map(|s| (s.cases as f64, s.harness_rss_kib as f64)).collect();
        let browser: Option<Vec<(f64, f64)>> = after.iter().map(|s| s.browser_pss_kib.map(|k| (s.cases as f64, k as f64))).collect();
        Some(MemoryGrowth {
            cases: last.cases - warm.cases,
            harness_kib: (warm.harness_rss_kib, last.harness_rss_kib),
            browser_kib: warm.browser_pss_kib.zip(last.browser_pss_kib),
            harness_kib_per_case: slope(&harness),
            browser_kib_per_case: browser.as_deref().map(slope),
        })
    }
}

/// The least-squares slope of `points` (x, y); 0 where x does not vary.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (mx, my) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + (x - mx) * (y - my), b + (x - mx) * (x - mx)));
    if sxx > 0.0 { sxy / sxx } else { 0.0 }
}
