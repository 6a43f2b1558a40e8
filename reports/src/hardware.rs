//! The hardware a case's time measures: the CPU (a [CPU platform](cpu_platform), a CPU bench) or the run's
//! WebGPU or native wgpu adapter. Cross-run ratios and baseline changes are only made between
//! times of the same kind of hardware: a software adapter's times measure the CPU through an
//! emulator, and a time taken on another adapter or CPU says nothing of a change in the code.

use crate::adapter::software_sign;
use crate::model::{CaseReport, PlatformRun};
use kernels::wire::AdapterReport;
use kernels::Platform;

/// What timed a case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimedOn<'a> {
    /// The host's CPU, by design: its name as the host reported it.
    Cpu(&'a str),
    /// The run's adapter.
    Adapter(&'a AdapterReport),
    /// Nothing harness can name: WebNN (its backend is not the WebGPU adapter), or no adapter
    /// reported.
    Unknown,
}

/// Whether `platform` (a run's, as reports spell it) runs on the CPU by design, whatever adapter
/// its page got: harness's WASM, and onnxruntime-web's CPU provider (`ort-wasm`). Its times are
/// the CPU's, never a software adapter's.
pub fn cpu_platform(platform: &str) -> bool {
    [Platform::Wasm, Platform::OrtWasm].iter().any(|p| p.as_str() == platform)
}

/// What timed `case` in `run`. A CPU bench states its clock's step, which nothing on a GPU has.
pub fn timed_on<'a>(run: &'a PlatformRun, case: &CaseReport) -> TimedOn<'a> {
    if cpu_platform(&run.platform) || case.timer_resolution_ms.is_some() {
        return TimedOn::Cpu(&run.host.cpu);
    }
    match (&run.adapter, run.platform.as_str()) {
        (_, "webnn") | (None, _) => TimedOn::Unknown,
        (Some(a), _) => TimedOn::Adapter(a),
    }
}

impl TimedOn<'_> {
    /// Why this time is no measure of GPU speed: the software adapter it ran on, in words.
    pub fn software(&self) -> Option<String> {
        match self {
            TimedOn::Adapter(a) => software_sign(a),
            _ => None,
        }
    }

    /// `(was, now)` in words where `self` (the baseline's) and `now` are plainly different
    /// hardware: different CPUs; a software adapter and a hardware one; or adapters that name
    /// different vendors, architectures or devices (a driver update, which changes only the
    /// description, is the same hardware). Hardware that hides its name (Firefox's adapters)
    /// cannot be told apart, and counts as the same.
    pub fn changed_to(&self, now: &TimedOn) -> Option<(String, String)> {
        match (self, now) {
            (TimedOn::Cpu(was), TimedOn::Cpu(now)) => (!was.is_empty() && !now.is_empty() && was != now).then(|| (was.to_string(), now.to_string())),
            (TimedOn::Adapter(was), TimedOn::Adapter(now)) => {
                if !was.available || !now.available {
                    return None;
                }
                let key = |a: &AdapterReport| [&a.vendor, &a.architecture, &a.device].map(|s| s.trim().to_lowercase());
                let named = |k: &[String; 3]| k.iter().any(|s| !s.is_empty());
                let (k_was, k_now) = (key(was), key(now));
                let differ = software_sign(was).is_some() != software_sign(now).is_some() || (named(&k_was) && named(&k_now) && k_was != k_now);
                differ.then(|| (describe(was), describe(now)))
            }
            _ => None,
        }
    }
}

/// An adapter in words: its description (the fullest of its names; its label where it gives
/// none), and whether it is a software one.
fn describe(a: &AdapterReport) -> String {
    let name = match a.description.trim() {
        "" => a.label(),
        description => description.to_string(),
    };
    match software_sign(a) {
        Some(sign) => format!("{name}, software: {sign}"),
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::tests::swiftshader;
    use crate::testdata::{case, report_with};

    #[test]
    fn ort_wasm_is_timed_on_the_cpu_whatever_its_adapter_as_wasm_is() {
        let mut report = report_with(vec![("chrome", vec![case("a", &[1.0], true, false)])]);
        let run = &mut report.runs[0];
        run.adapter = Some(swiftshader());
        for (platform, cpu) in [("wasm", true), ("ort-wasm", true), ("ort-webgpu", false), ("webgpu", false)] {
            run.platform = platform.into();
            assert_eq!(cpu_platform(platform), cpu, "{platform}");
            let on = timed_on(run, &run.cases[0]);
            assert_eq!(matches!(on, TimedOn::Cpu(_)), cpu, "{platform}: {on:?}");
            assert_eq!(on.software().is_some(), !cpu, "{platform}: a CPU platform's time is no software adapter's");
        }
    }
}
