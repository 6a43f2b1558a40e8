//! A results.json as the history keeps it: the run's key (commit, dirty state, branch, time, host)
//! and one point per measured case, each on its like-for-like series ([`SeriesKey`]): one case on
//! one platform, browser and hardware, with one timer and sampling mode. The hardware is named
//! without its driver, so a driver update (or a new browser version) is marked on the series, not
//! split from it; a software adapter, a CPU and each GPU model are series of their own.

use reports::hardware::{timed_on, TimedOn};
use reports::model::{CaseReport, CaseStatus, PlatformRun, RunReport};

/// What identifies a run of harness: where its code came from, when and where it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct RunKey {
    /// The commit harness was built from (`git describe`'s hash), where known.
    pub commit: Option<String>,
    /// Whether the working tree had changes not committed.
    pub dirty: bool,
    /// The branch, where known (a run records it; an imported file does not say).
    pub branch: Option<String>,
    /// When the run began (RFC 3339, as results.json's `createdAt`).
    pub time: String,
    /// The machine: its OS, CPU and first GPU, in one line.
    pub host: String,
}

/// The like-for-like series a point belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SeriesKey {
    /// The case id (`matmul/1024x1024x1024/seed=1`).
    pub case: String,
    /// The platform (`webgpu`, `ort-webgpu`, `native`…).
    pub platform: String,
    /// The browser (`chrome`, `firefox`, `wgpu` for native).
    pub browser: String,
    /// What timed it, without driver or browser version ([`hardware`]).
    pub hardware: String,
    /// The timer of its median (`gpu`, `gpu span·page`, `wall`).
    pub timer: String,
    /// How it was sampled (`steady`, `isolated`).
    pub sampling: String,
}

/// One case's measurement in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Its series.
    pub series: SeriesKey,
    /// The median, ms.
    pub median_ms: f64,
    /// The median's 95% bootstrap interval, ms, where there were two samples or more.
    pub ci_ms: Option<(f64, f64)>,
    /// How many samples.
    pub samples: usize,
    /// The check's outcome (`passed`, `failed`, `unchecked`).
    pub status: String,
    /// The browser's version, where reported: a change is marked on the series.
    pub browser_version: Option<String>,
    /// The GPU driver, where reported: a change is marked on the series.
    pub driver: Option<String>,
    /// The median SM clock while it ran, MHz, where a probe read it.
    pub clock_mhz: Option<f64>,
    /// Items a second at the median, and the item (`token`, `sentence`), where the case has one.
    pub throughput: Option<(f64, String)>,
}

/// A run ready to be stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    /// Its key.
    pub key: RunKey,
    /// Its points, one a measured case.
    pub points: Vec<Point>,
}

impl RunRecord {
    /// The record of `report`, on `branch` where known. Cases with no time (not run, crashed,
    /// unsupported) have no point; a failed check keeps its point, marked failed.
    pub fn of(report: &RunReport, branch: Option<String>) -> RunRecord {
        let revision = report.harness.git_revision.as_deref().or(report.harness.build_revision.as_deref());
        let (commit, dirty) = match revision {
            Some(r) => match r.strip_suffix("-dirty") {
                Some(clean) => (Some(clean.to_string()), true),
                None => (Some(r.to_string()), false),
            },
            None => (None, false),
        };
        let host = &report.host;
        let gpu = host.gpus.first().map(|g| format!(", {}", without_driver(g))).unwrap_or_default();
        let key = RunKey { commit, dirty, branch, time: report.created_at.clone(), host: format!("{} {}, {}{gpu}", host.os, host.arch, host.cpu) };
        let points = report.runs.iter().flat_map(|run| run.cases.iter().filter_map(move |case| point(run, case))).collect();
        RunRecord { key, points }
    }
}

/// The point of `case` in `run`, where it was timed.
fn point(run: &PlatformRun, case: &CaseReport) -> Option<Point> {
    let summary = case.headline()?;
    if !matches!(case.status, CaseStatus::Passed | CaseStatus::Failed | CaseStatus::Unchecked) || !summary.median.is_finite() {
        return None;
    }
    let series = SeriesKey {
        case: case.id.clone(),
        platform: run.platform.clone(),
        browser: run.browser.clone(),
        hardware: hardware(run, case),
        timer: case.timer_label().to_string(),
        sampling: case.sampling.map_or("–", |s| s.as_str()).to_string(),
    };
    Some(Point {
        series,
        median_ms: summary.median,
        ci_ms: summary.median_ci.map(|i| (i.low, i.high)),
        samples: summary.n,
        status: case.status.as_str().to_string(),
        browser_version: run.browser_info.as_ref().map(|b| b.version.clone()).filter(|v| !v.is_empty()),
        driver: driver(run),
        clock_mhz: case.clock.as_ref().and_then(|c| c.sm_mhz_median),
        throughput: case.throughput.as_ref().and_then(|t| t.per_second.map(|s| (s, t.item.clone()))),
    })
}

/// What timed `case` in `run`, named so that a driver or browser update keeps the name and other
/// hardware does not: `CPU …` for the CPU; `software: … on CPU` for a software adapter
/// (SwiftShader, lavapipe, llvmpipe), which measures that CPU; else the GPU's name. A browser that hides its adapter's name (Firefox)
/// is named by the host's GPU where the run listed it, and otherwise as an unnamed adapter on
/// the host's CPU, which never shares a series with a named GPU.
pub fn hardware(run: &PlatformRun, case: &CaseReport) -> String {
    match timed_on(run, case) {
        TimedOn::Cpu(cpu) => format!("CPU {cpu}"),
        TimedOn::Adapter(a) => {
            if let Some(sign) = kernels::software::software_sign(a) {
                // A software adapter measures the CPU it emulates on: its name and the host's CPU.
                let name = match kernels::software::software_names(&a.label()).first() {
                    Some(_) => sign.split(',').next().unwrap_or_default().to_string(),
                    None => "an unnamed fallback adapter".to_string(),
                };
                return format!("software: {name} on {}", run.host.cpu);
            }
            let named = [&a.description, &a.device, &a.architecture, &a.vendor].into_iter().map(|s| without_driver(s)).find(|s| !s.is_empty());
            match (named, run.host.gpus.first()) {
                (Some(name), _) if !a.description.trim().is_empty() => name,
                (_, Some(gpu)) => without_driver(gpu),
                (Some(name), None) => name,
                (None, None) => format!("unnamed adapter on {}", run.host.cpu),
            }
        }
        TimedOn::Unknown => format!("{} (its device unnamed) on {}", run.platform, run.host.cpu),
    }
}

/// `name` without the driver wgpu or the host appends: `NVIDIA H200 (Vulkan; driver: NVIDIA
/// 580.159.04)` and `NVIDIA H200 (nvidia 580.159.04)` are both `NVIDIA H200`.
fn without_driver(name: &str) -> String {
    name.split(" (").next().unwrap_or_default().trim().to_string()
}

/// The GPU driver `run` reports: native wgpu's, from its adapter's description, or the host's.
fn driver(run: &PlatformRun) -> Option<String> {
    let in_parens = |s: &str| s.split_once(" (").map(|(_, rest)| rest.trim_end_matches(')').to_string());
    run.adapter.as_ref().and_then(|a| in_parens(&a.description)).or_else(|| run.host.gpus.first().and_then(|g| in_parens(g)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_driver_is_cut_from_a_name_and_kept_apart() {
        assert_eq!(without_driver("NVIDIA H200 (Vulkan; driver: NVIDIA 580.159.04)"), "NVIDIA H200");
        assert_eq!(without_driver("NVIDIA H100 80GB HBM3 (nvidia 580.159.04)"), "NVIDIA H100 80GB HBM3");
        assert_eq!(without_driver("NVIDIA H200"), "NVIDIA H200");
    }
}
