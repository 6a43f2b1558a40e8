//! The GPU clock probe: attached to a run, it samples the GPU's clocks, power, temperature and
//! throttle reasons on a background thread, so each case's timings can be put beside the clocks
//! they were measured at. A case measured while the GPU was throttled, or before it had ramped up,
//! is not comparable with the others (see [`reports::probe::below_clock`]).
//!
//! Sources, in the order [`ClockProbe::detect`] tries them: NVML ([`NvmlSource`]), a streaming
//! `nvidia-smi` ([`SmiSource`]), AMD and Intel sysfs ([`SysfsSource`]). [`StandInSource`] scripts
//! readings for tests and says so.

mod nvml;
mod smi;
mod standin;
mod sysfs;
#[cfg(test)]
mod tests;
mod throttle;

pub use nvml::NvmlSource;
pub use smi::SmiSource;
pub use standin::{StandInSource, STANDIN_ENV};
pub use sysfs::SysfsSource;

use reports::probe::{ClockStats, ProbeInfo, ProbeStatus, THROTTLE_THRESHOLD};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The time between samples unless asked otherwise: short enough that a case of a few hundred
/// ms gets several samples, long enough that reading costs the GPU nothing measurable.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(50);

/// Environment variable choosing which NVIDIA GPU the probe reads, by NVML / `nvidia-smi` index
/// (PCI bus order, not `CUDA_VISIBLE_DEVICES` order); 0 when unset. AMD and Intel sysfs read
/// the first card that has clock files.
pub const GPU_INDEX_ENV: &str = "HARNESS_PROBE_GPU";

/// One reading of a GPU's state. A value is `None` when the source does not report it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClockReading {
    /// SM (graphics, shader) clock, MHz.
    pub sm_mhz: Option<f64>,
    /// Memory clock, MHz.
    pub mem_mhz: Option<f64>,
    /// Board power draw, W.
    pub power_w: Option<f64>,
    /// GPU temperature, °C.
    pub temp_c: Option<f64>,
    /// Active throttle reasons by name (`sw_power_cap`, `gpu_idle`, …); empty when none are
    /// active or the source cannot tell.
    pub throttle: Vec<String>,
}

/// Something that reads a GPU's clocks when asked. Sources move to the probe's sampling thread,
/// hence `Send`.
pub trait ClockSource: Send {
    /// What reads the clocks (`NVML`, `nvidia-smi`, `AMD sysfs`, …), for the report.
    fn name(&self) -> String;
    /// The GPU read, as the source names it, when it names one.
    fn device(&self) -> Option<String>;
    /// True for scripted readings that come from no GPU, so a report never passes them off as
    /// measurements.
    fn is_stand_in(&self) -> bool;
    /// The GPU's state now.
    fn read(&mut self) -> Result<ClockReading, ProbeError>;
}

/// Why a clock source could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// NVML could not be loaded, or answered with an error.
    #[error("NVML: {0}")]
    Nvml(#[from] nvml_wrapper::error::NvmlError),
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A program could not be started.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A source said something other than what it should.
    #[error("unexpected {what}: {text:?}")]
    Parse {
        /// What was being read.
        what: String,
        /// What was found.
        text: String,
    },
    /// There is no GPU of the kind a source reads.
    #[error("{0}")]
    NotFound(String),
    /// A source stopped giving readings.
    #[error("{0}")]
    Stopped(String),
    /// A thread could not be started.
    #[error("cannot start a thread: {0}")]
    Thread(std::io::Error),
}

/// Lines the page's clock up with the probe's, so a case's timed samples are matched with the
/// clocks read while they ran.
///
/// Each case-started message carries the page's time; the smallest delay seen between that and
/// its arrival is the best estimate of the offset, since delays only add. A result's own send
/// time is no good for this: it is taken before a large output (64 MB for a 4096² matmul) is
/// encoded and uploaded, which takes seconds, and would slide the window into the idle time after
/// the case.
#[derive(Debug, Clone, Copy, Default)]
pub struct PageClock {
    offset_ms: Option<f64>,
}

impl PageClock {
    /// A message sent at `page_ms` on the page's clock arrived at `probe_ms` on the probe's.
    pub fn observe(&mut self, page_ms: f64, probe_ms: f64) {
        if page_ms > 0.0 && page_ms.is_finite() {
            let offset = probe_ms - page_ms;
            self.offset_ms = Some(self.offset_ms.map_or(offset, |o| o.min(offset)));
        }
    }

    /// When `m`'s timed samples ran, on the probe's clock; for a platform that sent no start
    /// times, by its result's send time and `arrived_ms`.
    pub fn timed_span(&self, m: &kernels::wire::CaseMeasurement, arrived_ms: f64) -> Option<(f64, f64)> {
        self.offset_ms.and_then(|o| m.timed_span_on(o)).or_else(|| m.timed_span_at(arrived_ms))
    }
}

/// No clock source applies on this machine. Its message says which were tried and why each did
/// not apply, for the report's "no probe" line.
#[derive(Debug, thiserror::Error)]
#[error("no GPU clock probe: {}", .tried.join(", "))]
pub struct NoProbe {
    /// One phrase per source tried, in order.
    pub tried: Vec<String>,
}

/// The GPU to read (from [`GPU_INDEX_ENV`]).
fn gpu_index() -> Result<u32, ProbeError> {
    match std::env::var(GPU_INDEX_ENV) {
        Err(_) => Ok(0),
        Ok(text) => text.trim().parse().map_err(|_| ProbeError::Parse { what: format!("{GPU_INDEX_ENV} (a GPU index)"), text }),
    }
}

/// The first source that applies here: NVML, then `nvidia-smi` (streaming every `interval`),
/// then AMD, then Intel sysfs.
pub fn detect_source(interval: Duration) -> Result<Box<dyn ClockSource>, NoProbe> {
    let index = gpu_index().map_err(|e| NoProbe { tried: vec![e.to_string()] })?;
    let mut tried = Vec::new();
    match NvmlSource::open(index) {
        Ok(source) => return Ok(Box::new(source)),
        Err(e) => tried.push(nvml::why_not(&e)),
    }
    match SmiSource::open(index, interval) {
        Ok(source) => return Ok(Box::new(source)),
        Err(e) => tried.push(smi::why_not(&e)),
    }
    let drm = Path::new(sysfs::DRM);
    let amd = match SysfsSource::amd(drm) {
        Ok(source) => return Ok(Box::new(source)),
        Err(e) => e,
    };
    let intel = match SysfsSource::intel(drm) {
        Ok(source) => return Ok(Box::new(source)),
        Err(e) => e,
    };
    match (&amd, &intel) {
        (ProbeError::NotFound(_), ProbeError::NotFound(_)) => tried.push(format!("no AMD or Intel GPU in {}", drm.display())),
        _ => tried.extend([amd.to_string(), intel.to_string()]),
    }
    Err(NoProbe { tried })
}

/// A clock probe attached to a run: samples a [`ClockSource`] every interval on its own thread,
/// from [`ClockProbe::start`] until it is dropped, and answers what the clocks were between two
/// moments on its clock ([`ClockProbe::now_ms`]).
pub struct ClockProbe {
    info: ProbeInfo,
    interval: Duration,
    started: Instant,
    sampled: Arc<Mutex<Sampled>>,
    /// Dropping it wakes the sampling thread and ends it.
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// What the sampling thread has collected.
#[derive(Default)]
struct Sampled {
    /// (ms since start, reading), in time order.
    samples: Vec<(f64, ClockReading)>,
    failures: u64,
    last_error: Option<String>,
}

impl ClockProbe {
    /// Starts the first source that applies on this machine (see [`detect_source`]), sampling
    /// every [`DEFAULT_INTERVAL`].
    pub fn detect() -> Result<ClockProbe, NoProbe> {
        Self::detect_every(DEFAULT_INTERVAL)
    }

    /// [`ClockProbe::detect`], sampling every `interval`.
    pub fn detect_every(interval: Duration) -> Result<ClockProbe, NoProbe> {
        let source = detect_source(interval)?;
        ClockProbe::start(source, interval).map_err(|e| NoProbe { tried: vec![e.to_string()] })
    }

    /// Starts sampling `source` every `interval` (at least 1 ms) on a background thread. The
    /// first sample is taken at once.
    pub fn start(source: Box<dyn ClockSource>, interval: Duration) -> Result<ClockProbe, ProbeError> {
        let interval = interval.max(Duration::from_millis(1));
        let info = ProbeInfo {
            source: source.name(),
            device: source.device(),
            stand_in: source.is_stand_in(),
            interval_ms: interval.as_secs_f64() * 1e3,
        };
        let started = Instant::now();
        let sampled = Arc::new(Mutex::new(Sampled::default()));
        let (stop, stopped) = mpsc::channel();
        let shared = sampled.clone();
        let thread = std::thread::Builder::new()
            .name("clock-probe".into())
            .spawn(move || sample(source, started, interval, &shared, &stopped))
            .map_err(ProbeError::Thread)?;
        Ok(ClockProbe { info, interval, started, sampled, stop: Some(stop), thread: Some(thread) })
    }

    /// Milliseconds since the probe started: the clock samples are stamped with, so a case's
    /// start and end taken from it can be passed to [`ClockProbe::window`].
    pub fn now_ms(&self) -> f64 {
        ms(self.started.elapsed())
    }

    /// Statistics of the samples taken from `from_ms` to `to_ms` (bounds included, on
    /// [`ClockProbe::now_ms`]'s clock). When none falls inside, as for a window shorter than the
    /// interval, the nearest sample stands in for it if it lies within one interval of the
    /// window. `None` when there is no such sample or `from_ms > to_ms`.
    pub fn window(&self, from_ms: f64, to_ms: f64) -> Option<ClockStats> {
        if from_ms.is_nan() || to_ms.is_nan() || from_ms > to_ms {
            return None;
        }
        let sampled = self.lock();
        let samples = &sampled.samples;
        let first = samples.partition_point(|(t, _)| *t < from_ms);
        let end = samples.partition_point(|(t, _)| *t <= to_ms);
        if first < end {
            let inside: Vec<&ClockReading> = samples[first..end].iter().map(|(_, r)| r).collect();
            return Some(clock_stats(&inside));
        }
        let before = first.checked_sub(1).map(|i| (from_ms - samples[i].0, &samples[i].1));
        let after = samples.get(first).map(|(t, r)| (t - to_ms, r));
        let (distance, nearest) = [before, after].into_iter().flatten().min_by(|a, b| a.0.total_cmp(&b.0))?;
        (distance <= ms(self.interval)).then(|| clock_stats(&[nearest]))
    }

    /// How often it reads the clocks.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// The most recent reading, if any.
    pub fn latest(&self) -> Option<ClockReading> {
        self.lock().samples.last().map(|(_, r)| r.clone())
    }

    /// The highest SM clock seen so far: the reference for judging which cases ran below the
    /// run's clock.
    pub fn max_sm_mhz(&self) -> Option<f64> {
        self.lock().samples.iter().filter_map(|(_, r)| r.sm_mhz).reduce(f64::max)
    }

    /// Every sample so far, (ms since start, reading), in time order: the run's clock timeline.
    pub fn samples(&self) -> Vec<(f64, ClockReading)> {
        self.lock().samples.clone()
    }

    /// How many reads failed, and the last failure's message: failed reads leave no sample.
    pub fn failures(&self) -> (u64, Option<String>) {
        let sampled = self.lock();
        (sampled.failures, sampled.last_error.clone())
    }

    /// Whether the SM clock has settled at working speed: the latest reading is within
    /// [`THROTTLE_THRESHOLD`] of the highest seen. `None` before any SM clock was read.
    pub fn steady(&self) -> Option<bool> {
        let latest = self.latest()?.sm_mhz?;
        Some(latest >= THROTTLE_THRESHOLD * self.max_sm_mhz()?)
    }

    /// The source and interval, for the report.
    pub fn info(&self) -> ProbeInfo {
        self.info.clone()
    }

    /// The samples; a panic on the sampling thread (in a source) leaves them usable.
    fn lock(&self) -> MutexGuard<'_, Sampled> {
        self.sampled.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for ClockProbe {
    /// Stops sampling and waits for the thread to end, which drops the source (ending any
    /// process it runs).
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The sampling thread: reads `source` every `interval` until `stop` is dropped.
fn sample(mut source: Box<dyn ClockSource>, started: Instant, interval: Duration, sampled: &Mutex<Sampled>, stop: &mpsc::Receiver<()>) {
    let mut next = Instant::now();
    loop {
        let before = started.elapsed();
        let reading = source.read();
        // A read can take milliseconds (a process, a driver call): stamp it in the middle.
        let at = ms((before + started.elapsed()) / 2);
        {
            let mut sampled = sampled.lock().unwrap_or_else(PoisonError::into_inner);
            match reading {
                Ok(r) => sampled.samples.push((at, r)),
                Err(e) => {
                    sampled.failures += 1;
                    sampled.last_error = Some(e.to_string());
                }
            }
        }
        // After a read slower than the interval, sample again at once rather than in a burst.
        next = (next + interval).max(Instant::now());
        match stop.recv_timeout(next.saturating_duration_since(Instant::now())) {
            Err(RecvTimeoutError::Timeout) => continue,
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Statistics of `readings` (at least one).
fn clock_stats(readings: &[&ClockReading]) -> ClockStats {
    let values = |field: fn(&ClockReading) -> Option<f64>| -> Vec<f64> { readings.iter().filter_map(|r| field(r)).collect() };
    let sm = values(|r| r.sm_mhz);
    let power = values(|r| r.power_w);
    let throttle: BTreeSet<&String> = readings.iter().flat_map(|r| &r.throttle).collect();
    ClockStats {
        samples: u32::try_from(readings.len()).unwrap_or(u32::MAX),
        sm_mhz_min: sm.iter().copied().reduce(f64::min),
        sm_mhz_median: median(sm.clone()),
        sm_mhz_max: sm.iter().copied().reduce(f64::max),
        mem_mhz_median: median(values(|r| r.mem_mhz)),
        power_w_median: median(power.clone()),
        power_w_max: power.into_iter().reduce(f64::max),
        temp_c_max: values(|r| r.temp_c).into_iter().reduce(f64::max),
        throttle_reasons: throttle.into_iter().cloned().collect(),
    }
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    (!values.is_empty()).then(|| stats::bootstrap::median_in_place(&mut values))
}

/// The probe an invocation attaches to its runs, or why none applies; shared by every browser
/// and the native run.
#[derive(Clone)]
pub struct RunProbe(Result<Arc<ClockProbe>, String>);

impl RunProbe {
    /// The first probe that applies on this machine, or why none does; the stand-in of
    /// [`STANDIN_ENV`] where that is set.
    pub fn detect() -> RunProbe {
        if let Ok(script) = std::env::var(STANDIN_ENV) {
            let started = StandInSource::from_script(&script).and_then(|s| ClockProbe::start(Box::new(s), DEFAULT_INTERVAL));
            return RunProbe(started.map(Arc::new).map_err(|e| e.to_string()));
        }
        match ClockProbe::detect() {
            Ok(p) => {
                tracing::info!("clock probe: {} ({})", p.info().source, p.info().device.unwrap_or_default());
                RunProbe(Ok(Arc::new(p)))
            }
            Err(why) => {
                tracing::info!("{why}");
                RunProbe(Err(why.to_string()))
            }
        }
    }

    /// A run with no probe, for `why`.
    pub fn none(why: &str) -> RunProbe {
        RunProbe(Err(why.to_string()))
    }

    /// The probe, where one is attached.
    pub fn probe(&self) -> Option<&ClockProbe> {
        self.0.as_ref().ok().map(|p| p.as_ref())
    }

    /// What a run records: the probe, or why there is none. A remote browser runs on another
    /// machine, whose GPU this one's probe does not see.
    pub fn status(&self, remote: bool) -> ProbeStatus {
        match (&self.0, remote) {
            (_, true) => ProbeStatus::Unavailable {
                reason: "the browser runs on a remote WebDriver host; the probe reads only this machine's GPU".into(),
            },
            (Ok(p), false) => ProbeStatus::Attached(p.info()),
            (Err(why), false) => ProbeStatus::Unavailable { reason: why.clone() },
        }
    }

    /// Whether the clock has settled, as a function the server answers `/api/clock` with.
    pub fn check(&self) -> Option<crate::measure::server::ClockCheck> {
        let probe = self.0.as_ref().ok()?.clone();
        Some(Arc::new(move || probe.steady()))
    }
}

impl std::fmt::Debug for RunProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Ok(p) => write!(f, "RunProbe({})", p.info().source),
            Err(why) => write!(f, "RunProbe(none: {why})"),
        }
    }
}

impl kernels::sampling::ClockGate for &RunProbe {
    async fn steady(&mut self) -> Option<bool> {
        self.probe().and_then(ClockProbe::steady)
    }
}
