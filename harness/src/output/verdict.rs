//! `harness verify`: does WebGPU (or native wgpu) run on real GPU hardware? The verdict rests on
//! evidence, every piece of which is printed: the adapter's own description and fallback flag,
//! a match against known software adapters, the browser's GPU diagnostics page, and a
//! plausibility measurement (a matmul on the adapter against the same matmul on the CPU).
//! Any sign of a software adapter decides for software, and a disagreement is said out loud.
//! Hardware needs a positive sign of it (`isFallbackAdapter: false`, or a plausibility speed-up
//! of at least 10×); without one, nor any sign of software, the verdict is inconclusive and
//! says what was missing and what would settle it. Exit status: 0 hardware, 1 software,
//! 2 unavailable, 3 inconclusive.

use kernels::wire::AdapterReport;
use reports::{CaseStatus, PlatformRun};
use serde::Serialize;

/// The verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Real GPU hardware: some evidence says so, none says software.
    Hardware,
    /// A software (CPU) implementation: some evidence says so, whatever the rest says.
    Software,
    /// No adapter at all.
    Unavailable,
    /// An adapter, but no evidence either way: neither hardware nor software is ruled out.
    Inconclusive,
}

impl Verdict {
    /// `harness verify`'s exit status, one per verdict so that a script can tell them apart:
    /// 0 hardware, 1 software, 2 unavailable, 3 inconclusive.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Hardware => 0,
            Verdict::Software => 1,
            Verdict::Unavailable => 2,
            Verdict::Inconclusive => 3,
        }
    }

    /// The word the terminal report opens with.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Hardware => "HARDWARE",
            Verdict::Software => "SOFTWARE",
            Verdict::Unavailable => "UNAVAILABLE",
            Verdict::Inconclusive => "INCONCLUSIVE",
        }
    }
}

/// The source of the adapter's own fallback flag, [`decide`]'s strongest evidence.
const FALLBACK_SOURCE: &str = "isFallbackAdapter";
/// The source of the plausibility measurement.
const PLAUSIBILITY_SOURCE: &str = "plausibility";

/// One piece of evidence and which way it points.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    /// What was looked at.
    pub source: String,
    /// What it showed.
    pub finding: String,
    /// `Some(true)`: software; `Some(false)`: hardware; `None`: neither.
    pub says_software: Option<bool>,
}

pub use reports::adapter::{software_names, MESA_VENDOR};

/// The adapter's vendor, architecture, device and description in one line; blank where the
/// browser hides them.
fn adapter_text(a: &AdapterReport) -> String {
    [&a.vendor, &a.architecture, &a.device, &a.description].map(|s| s.as_str()).join(" ")
}

/// Evidence from what the adapter says about itself.
pub fn adapter_evidence(a: &AdapterReport) -> Vec<Evidence> {
    let text = adapter_text(a);
    let mut ev = vec![Evidence {
        source: "adapter info".into(),
        finding: if text.trim().is_empty() { "empty (the browser hides it)".into() } else { text.trim().to_string() },
        says_software: None,
    }];
    ev.push(Evidence {
        source: FALLBACK_SOURCE.into(),
        finding: a.is_fallback_adapter.map(|b| b.to_string()).unwrap_or_else(|| "not reported".into()),
        says_software: a.is_fallback_adapter,
    });
    let names = software_names(&text);
    ev.push(Evidence {
        source: "known software adapters".into(),
        finding: if names.is_empty() { "no match".into() } else { format!("matches {}", names.join("; ")) },
        says_software: (!names.is_empty()).then_some(true),
    });
    if a.vendor == MESA_VENDOR {
        ev.push(Evidence { source: "vendor id".into(), finding: "0x10005 is Mesa's software vendor id".into(), says_software: Some(true) });
    }
    ev
}

/// Evidence from the browser's GPU diagnostics page `url` (chrome://gpu, about:support).
pub fn diagnostics_evidence(url: &str, lines: &[String]) -> Evidence {
    if lines.is_empty() {
        return Evidence {
            source: "browser GPU diagnostics".into(),
            finding: format!("{url} could not be read through WebDriver (Firefox refuses to open about: pages; -v shows why)"),
            says_software: None,
        };
    }
    let names = software_names(&lines.join("\n"));
    Evidence {
        source: "browser GPU diagnostics".into(),
        finding: if names.is_empty() {
            format!("{url}: no software adapter named in {} GPU-related lines", lines.len())
        } else {
            format!("{url} names {}", names.join("; "))
        },
        says_software: (!names.is_empty()).then_some(true),
    }
}

/// A GPU this many times faster than the CPU on the plausibility matmul looks like hardware; a
/// software adapter runs on the same CPU and cannot be much faster.
pub const HARDWARE_SPEEDUP: f64 = 10.0;
/// At most this speed-up is consistent with a software adapter.
pub const SOFTWARE_SPEEDUP: f64 = 3.0;
/// A wall-clock time of which the completion latency is more than this share says nothing about
/// the GPU.
pub const MAX_LATENCY_SHARE: f64 = 0.1;

/// The plausibility case as measured on the adapter.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AdapterTimes {
    /// Median GPU-timestamp time per dispatch, ms, where the adapter has timestamps.
    pub gpu_ms: Option<f64>,
    /// Median wall time per dispatch, ms.
    pub wall_ms: Option<f64>,
    /// Dispatches per sample behind `wall_ms`.
    pub batch: u32,
    /// The platform's median completion latency, ms, where measured.
    pub latency_ms: Option<f64>,
}

impl AdapterTimes {
    /// The times of a run's first passed case, with the run's completion latency.
    pub fn of(run: &PlatformRun) -> AdapterTimes {
        let case = run.cases.iter().find(|c| c.status == CaseStatus::Passed);
        AdapterTimes {
            gpu_ms: case.and_then(|c| c.gpu.as_ref()).map(|s| s.median),
            wall_ms: case.and_then(|c| c.wall.as_ref()).map(|s| s.median),
            batch: case.and_then(|c| c.batch).unwrap_or(1),
            latency_ms: run.completion_latency.as_ref().and_then(|l| l.work_done_ms()),
        }
    }
}

/// Evidence from the same matmul `id` on the adapter (`gpu_where`) and on the CPU (`cpu` ms, on
/// `cpu_where`). GPU timestamps are the adapter's time where it has them; the wall clock counts
/// only where the completion latency is a small part of it, since a browser that reports
/// completion on a timer would otherwise make any GPU look as slow as a CPU.
pub fn plausibility_evidence(id: &str, gpu_where: &str, adapter: AdapterTimes, cpu_where: &str, cpu: Option<f64>) -> Evidence {
    let (timer, gpu) = match (adapter.gpu_ms, adapter.wall_ms) {
        (Some(g), _) => ("GPU timestamps", g),
        (None, Some(w)) => ("wall clock", w),
        (None, None) => return no_plausibility(format!("{id}: not measured on {gpu_where}")),
    };
    let Some(cpu) = cpu else {
        return no_plausibility(format!("{id}: not measured on {cpu_where}"));
    };
    let speedup = cpu / gpu;
    let mut says_software = if speedup >= HARDWARE_SPEEDUP {
        Some(false)
    } else if speedup <= SOFTWARE_SPEEDUP {
        Some(true)
    } else {
        None
    };
    let mut finding = format!(
        "{id}: {gpu:.3} ms on {gpu_where} ({timer}) vs {cpu:.3} ms on {cpu_where}: {speedup:.1}× (hardware ≥ {HARDWARE_SPEEDUP}×, software ≤ {SOFTWARE_SPEEDUP}×)"
    );
    if adapter.gpu_ms.is_none() {
        if let Some(latency) = adapter.latency_ms {
            let share = latency / (gpu * adapter.batch as f64);
            finding += &format!("; the completion latency ({latency:.3} ms) is {:.0}% of a sample of {} dispatches", share * 100.0, adapter.batch);
            if share > MAX_LATENCY_SHARE {
                finding += ": too much of it to judge the GPU by";
                says_software = None;
            }
        }
    }
    Evidence { source: PLAUSIBILITY_SOURCE.into(), finding, says_software }
}

fn no_plausibility(finding: String) -> Evidence {
    Evidence { source: PLAUSIBILITY_SOURCE.into(), finding, says_software: None }
}

/// The completion latency, shown as evidence about the browser: never a verdict.
pub fn latency_evidence(latency: Option<&reports::Latency>) -> Evidence {
    Evidence {
        source: "completion latency".into(),
        finding: latency.map(|l| l.describe()).unwrap_or_else(|| "not measured".into()),
        says_software: None,
    }
}

/// The links of this machine's GPU stack ([`GpuStack::links`](crate::measure::gpu_stack::GpuStack::links)),
/// looked at when no adapter was granted: each with what was found and, where broken, the fix.
pub fn gpu_stack_evidence(links: &[crate::measure::gpu_stack::Link]) -> Vec<Evidence> {
    links
        .iter()
        .map(|l| Evidence {
            source: l.name.clone(),
            finding: match (&l.fix, l.state) {
                (Some(fix), _) => format!("BROKEN: {}; fix: {fix}", l.finding),
                (None, crate::measure::gpu_stack::LinkState::Fixed) => format!("fixed by harness: {}", l.finding),
                (None, _) => l.finding.clone(),
            },
            says_software: None,
        })
        .collect()
}

/// What `harness verify` prints with `--json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// hardware, software, unavailable or inconclusive.
    pub verdict: Verdict,
    /// Why: the evidence that decided, or, when inconclusive, what was missing and what would
    /// settle it.
    pub reason: String,
    /// `browser/platform` checked.
    pub checked: String,
    /// The adapter as reported.
    pub adapter: Option<AdapterReport>,
    /// Every piece of evidence.
    pub evidence: Vec<Evidence>,
    /// The diagnostics lines read, if any.
    pub diagnostics: Vec<String>,
    /// Whether the browser's WebNN is available, as [`webnn_finding`] words it; checked beside
    /// WebGPU in a browser.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webnn: Option<String>,
}

/// What a webnn run of the plausibility case says of WebNN in its browser: unavailable and why,
/// or available, on which context, and whether the case's answer was right.
pub fn webnn_finding(run: &reports::PlatformRun) -> String {
    if let Some(why) = &run.unavailable {
        return format!("unavailable: {why}");
    }
    if let Some(f) = &run.failure {
        return format!("failed: {f}");
    }
    let context = run.adapter.as_ref().map(|a| a.description.clone()).unwrap_or_default();
    let cases: Vec<String> = run.cases.iter().map(|c| format!("{} {}", c.id, c.status.as_str())).collect();
    format!("available ({context}): {}", cases.join(", "))
}

impl Report {
    /// The human-readable summary.
    pub fn render(&self) -> String {
        let mut s = format!("{}: {}\n  {}\n", self.checked, self.verdict.word(), self.reason);
        for e in &self.evidence {
            let mark = match e.says_software {
                Some(true) => "software",
                Some(false) => "hardware",
                None => "-",
            };
            s += &format!("  [{mark:>8}] {}: {}\n", e.source, e.finding);
        }
        if let Some(w) = &self.webnn {
            s += &format!("  WebNN: {w}\n");
        }
        s
    }
}

/// Decides from the evidence, and says when it disagrees: software on any sign of software,
/// hardware only on a sign of hardware, inconclusive on neither (saying what would settle it).
pub fn decide(adapter: Option<&AdapterReport>, evidence: &[Evidence]) -> (Verdict, String) {
    let a = match adapter {
        None => return (Verdict::Unavailable, "no adapter report".into()),
        Some(a) if !a.available => {
            return (Verdict::Unavailable, format!("no adapter: {}", a.reason.clone().unwrap_or_default()))
        }
        Some(a) => a,
    };
    let soft: Vec<&str> = evidence.iter().filter(|e| e.says_software == Some(true)).map(|e| e.source.as_str()).collect();
    let hard: Vec<&str> = evidence.iter().filter(|e| e.says_software == Some(false)).map(|e| e.source.as_str()).collect();
    match (soft.is_empty(), hard.is_empty()) {
        (false, true) => (Verdict::Software, format!("software: {}", soft.join(", "))),
        (false, false) => (
            Verdict::Software,
            format!("the evidence disagrees ({} say software, {} say hardware); deciding for software", soft.join(", "), hard.join(", ")),
        ),
        (true, false) => (Verdict::Hardware, format!("hardware: {}", hard.join(", "))),
        (true, true) => (Verdict::Inconclusive, inconclusive_reason(a, evidence)),
    }
}

/// Why evidence that says neither hardware nor software decides nothing, and what would.
fn inconclusive_reason(a: &AdapterReport, evidence: &[Evidence]) -> String {
    let mut silent = Vec::new();
    if a.is_fallback_adapter.is_none() {
        silent.push("the fallback flag (isFallbackAdapter) is not reported".to_string());
    }
    silent.push(match adapter_text(a).trim().is_empty() {
        true => "the browser hides the adapter's name".to_string(),
        false => format!("the adapter's name ({}) is no known software adapter, which does not make it hardware", a.label()),
    });
    silent.push(match evidence.iter().find(|e| e.source == PLAUSIBILITY_SOURCE) {
        Some(e) => format!("the plausibility measurement decides nothing ({})", e.finding),
        None => "the plausibility measurement was not taken".to_string(),
    });
    let last = silent.pop().unwrap_or_default();
    let missing = match silent.is_empty() {
        true => last,
        false => format!("{} and {last}", silent.join(", ")),
    };
    format!(
        "no evidence either way: {missing}. Either settles it: isFallbackAdapter, which Chrome \
         (`--browser chrome`) and wgpu on this machine's driver (`--platform native`) report; or a \
         plausibility speed-up of at least {HARDWARE_SPEEDUP}× (hardware) or at most \
         {SOFTWARE_SPEEDUP}× (software), which needs the matmul to finish (a longer `--timeout`) \
         and, where the completion latency swamps the wall clock, GPU timestamps (timestamp-query)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(vendor: &str, arch: &str, device: &str, description: &str, fallback: Option<bool>) -> AdapterReport {
        AdapterReport {
            available: true,
            vendor: vendor.into(),
            architecture: arch.into(),
            device: device.into(),
            description: description.into(),
            is_fallback_adapter: fallback,
            ..Default::default()
        }
    }

    fn verdict(a: &AdapterReport) -> Verdict {
        decide(Some(a), &adapter_evidence(a)).0
    }

    /// An adapter as Firefox reports one: no name, the fallback flag as given.
    fn nameless(fallback: Option<bool>) -> AdapterReport {
        AdapterReport { available: true, is_fallback_adapter: fallback, ..Default::default() }
    }

    /// The plausibility matmul `speedup` times faster on the adapter (GPU timestamps) than on the CPU.
    fn plausibility(speedup: f64) -> Evidence {
        let adapter = AdapterTimes { gpu_ms: Some(10.0), wall_ms: Some(10.0), batch: 1, latency_ms: Some(0.05) };
        plausibility_evidence("matmul_tiled", "firefox/webgpu", adapter, "the CPU", Some(10.0 * speedup))
    }

    /// `a`'s own evidence followed by `more`.
    fn evidence_of(a: &AdapterReport, more: impl IntoIterator<Item = Evidence>) -> Vec<Evidence> {
        adapter_evidence(a).into_iter().chain(more).collect()
    }

    #[test]
    fn every_row_of_the_verdict_table_decides_with_its_reason_and_exit_status() {
        let unavailable = AdapterReport { available: false, reason: Some("navigator.gpu.requestAdapter() returned null".into()), ..Default::default() };
        let rows = [
            ("no adapter report", None, vec![], Verdict::Unavailable, 2, "no adapter report"),
            ("no adapter granted", Some(unavailable), vec![], Verdict::Unavailable, 2, "no adapter: navigator.gpu.requestAdapter() returned null"),
            ("only software", Some(nameless(Some(true))), evidence_of(&nameless(Some(true)), [plausibility(1.5)]), Verdict::Software, 1, "software: isFallbackAdapter, plausibility"),
            (
                "software and hardware",
                Some(nameless(Some(false))),
                evidence_of(&nameless(Some(false)), [plausibility(1.5)]),
                Verdict::Software,
                1,
                "the evidence disagrees (plausibility say software, isFallbackAdapter say hardware); deciding for software",
            ),
            ("only hardware", Some(nameless(Some(false))), evidence_of(&nameless(Some(false)), [plausibility(5.0)]), Verdict::Hardware, 0, "hardware: isFallbackAdapter"),
            ("neither", Some(nameless(None)), evidence_of(&nameless(None), [plausibility(5.0)]), Verdict::Inconclusive, 3, "no evidence either way: "),
        ];
        for (row, adapter, evidence, expected, code, reason) in rows {
            let (v, why) = decide(adapter.as_ref(), &evidence);
            assert_eq!((v, v.exit_code()), (expected, code), "{row}: {why}");
            assert!(why.starts_with(reason), "{row}: {why}");
        }
    }

    #[test]
    fn each_verdict_has_its_own_exit_status_word_and_json_name() {
        let all = [
            (Verdict::Hardware, 0, "HARDWARE", "hardware"),
            (Verdict::Software, 1, "SOFTWARE", "software"),
            (Verdict::Unavailable, 2, "UNAVAILABLE", "unavailable"),
            (Verdict::Inconclusive, 3, "INCONCLUSIVE", "inconclusive"),
        ];
        for (v, code, word, json) in all {
            assert_eq!((v.exit_code(), v.word()), (code, word));
            assert_eq!(serde_json::to_value(v).ok(), Some(serde_json::Value::from(json)));
        }
    }

    #[test]
    fn no_evidence_either_way_is_inconclusive_and_says_what_is_missing() {
        let hidden = nameless(None);
        // Firefox-like: no name, no fallback flag, and no plausibility measurement at all.
        let (v, why) = decide(Some(&hidden), &adapter_evidence(&hidden));
        assert_eq!(v, Verdict::Inconclusive, "{why}");
        for said in ["isFallbackAdapter) is not reported", "hides the adapter's name", "plausibility measurement was not taken", "--platform native", "at least 10×", "at most 3×"] {
            assert!(why.contains(said), "{said}: {why}");
        }
        // Between 3× and 10× is neither: at either end of that range as in its middle.
        for speedup in [3.1, 5.0, 9.9] {
            let e = plausibility(speedup);
            assert_eq!(e.says_software, None, "{}", e.finding);
            let (v, why) = decide(Some(&hidden), &evidence_of(&hidden, [e]));
            assert_eq!(v, Verdict::Inconclusive, "{why}");
            assert!(why.contains(&format!("decides nothing (matmul_tiled: 10.000 ms on firefox/webgpu (GPU timestamps) vs {:.3} ms", 10.0 * speedup)), "{why}");
        }
        // Unmeasured: the CPU side did not finish, or the adapter side did not.
        let times = AdapterTimes { gpu_ms: Some(0.1), wall_ms: Some(0.2), batch: 1, latency_ms: None };
        for (e, said) in [
            (plausibility_evidence("matmul_tiled", "firefox/webgpu", times, "the CPU", None), "not measured on the CPU"),
            (plausibility_evidence("matmul_tiled", "firefox/webgpu", AdapterTimes::default(), "the CPU", Some(179.0)), "not measured on firefox/webgpu"),
        ] {
            let (v, why) = decide(Some(&hidden), &evidence_of(&hidden, [e]));
            assert_eq!(v, Verdict::Inconclusive, "{why}");
            assert!(why.contains(said), "{why}");
        }
        // A wall time that is all Firefox's completion timer judges nothing, so without the flag
        // nothing is left.
        let timer = AdapterTimes { gpu_ms: None, wall_ms: Some(99.9), batch: 1, latency_ms: Some(100.0) };
        let e = plausibility_evidence("matmul_tiled", "firefox/webgpu", timer, "the CPU", Some(179.0));
        let (v, why) = decide(Some(&hidden), &evidence_of(&hidden, [e, latency_evidence(None)]));
        assert_eq!(v, Verdict::Inconclusive, "{why}");
        assert!(why.contains("too much of it to judge the GPU by"), "{why}");
        // A name that is no known software adapter, without the flag, proves nothing either.
        let named = adapter("apple", "metal-3", "", "Apple M3 Max", None);
        let (v, why) = decide(Some(&named), &adapter_evidence(&named));
        assert_eq!(v, Verdict::Inconclusive, "{why}");
        assert!(why.contains("name (apple metal-3 Apple M3 Max) is no known software adapter") && !why.contains("hides"), "{why}");
        let report = Report { verdict: v, reason: why, checked: "safari/webgpu".into(), adapter: Some(named), evidence: vec![], diagnostics: vec![], webnn: None };
        assert!(report.render().starts_with("safari/webgpu: INCONCLUSIVE\n  no evidence either way"), "{}", report.render());
    }

    #[test]
    fn real_gpus_as_browsers_and_wgpu_report_them_are_hardware() {
        for a in [
            adapter("nvidia", "hopper", "", "NVIDIA H100 80GB HBM3", Some(false)),
            adapter("0x10de", "DiscreteGpu", "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090 (Vulkan; driver: NVIDIA 550.54)", Some(false)),
            adapter("amd", "rdna-3", "", "AMD Radeon RX 7900 XTX", Some(false)),
            adapter("intel", "xe-lpg", "", "Intel(R) Arc(TM) Graphics", Some(false)),
            adapter("apple", "metal-3", "", "Apple M3 Max", Some(false)),
            adapter("qualcomm", "adreno-7xx", "", "Qualcomm(R) Adreno(TM) 740 GPU", Some(false)),
        ] {
            let (v, why) = decide(Some(&a), &adapter_evidence(&a));
            assert_eq!((v, why.as_str()), (Verdict::Hardware, "hardware: isFallbackAdapter"), "{a:?}");
        }
    }

    #[test]
    fn software_adapters_are_software() {
        for a in [
            adapter("google", "swiftshader", "0xc0de", "SwiftShader Device (Subzero)", Some(true)),
            adapter("0x10005", "Cpu", "llvmpipe (LLVM 15.0.6, 256 bits)", "llvmpipe (Vulkan; driver: llvmpipe Mesa 22.3.6)", Some(true)),
            adapter("mesa", "", "", "lavapipe", None),
            adapter("microsoft", "", "", "Microsoft Basic Render Driver", None),
            adapter("", "", "", "softpipe", None),
        ] {
            assert_eq!(verdict(&a), Verdict::Software, "{a:?}");
        }
    }

    #[test]
    fn disagreement_is_said_and_decided_for_software() {
        let a = adapter("google", "", "", "SwiftShader Device", Some(false));
        let (v, why) = decide(Some(&a), &adapter_evidence(&a));
        assert_eq!(v, Verdict::Software);
        assert!(why.contains("disagrees"), "{why}");
    }

    #[test]
    fn the_h100_in_firefox_is_hardware_despite_its_completion_timer() {
        // Recorded on the GPU machine (bb30e8c): Firefox hides the adapter info, says
        // isFallbackAdapter false; the plausibility matmul read 99.9 ms on the wall clock (Firefox
        // resolves completion on a ~100 ms timer), 0.108 ms by GPU timestamps, 179 ms on the CPU.
        let a = AdapterReport { available: true, is_fallback_adapter: Some(false), features: vec!["timestamp-query".into()], ..Default::default() };
        let measured = AdapterTimes { gpu_ms: Some(0.108), wall_ms: Some(99.9), batch: 1, latency_ms: Some(100.0) };
        let mut ev = adapter_evidence(&a);
        ev.push(plausibility_evidence("matmul_tiled", "firefox/webgpu", measured, "the CPU", Some(179.0)));
        ev.push(latency_evidence(None));
        let (v, why) = decide(Some(&a), &ev);
        assert_eq!((v, why.as_str()), (Verdict::Hardware, "hardware: isFallbackAdapter, plausibility"));
        assert!(ev.iter().any(|e| e.finding.contains("GPU timestamps") && e.says_software == Some(false)), "{ev:?}");
        // Without timestamps, a wall time that is all completion latency judges nothing: it must
        // not outvote the adapter.
        let wall_only = AdapterTimes { gpu_ms: None, ..measured };
        let e = plausibility_evidence("matmul_tiled", "firefox/webgpu", wall_only, "the CPU", Some(179.0));
        assert_eq!(e.says_software, None, "{}", e.finding);
        let mut ev = adapter_evidence(&a);
        ev.push(e);
        assert_eq!(decide(Some(&a), &ev), (Verdict::Hardware, "hardware: isFallbackAdapter".to_string()));
        // A steady batch that dwarfs the latency is judged: 4096 dispatches of 0.11 ms behind a
        // 20 ms completion latency; behind 100 ms, the longest batch (500 ms) is still too short.
        let steady = AdapterTimes { gpu_ms: None, wall_ms: Some(0.11), batch: 4096, latency_ms: Some(20.0) };
        assert_eq!(plausibility_evidence("m", "f", steady, "c", Some(179.0)).says_software, Some(false));
        let timer = AdapterTimes { latency_ms: Some(100.0), ..steady };
        assert_eq!(plausibility_evidence("m", "f", timer, "c", Some(179.0)).says_software, None);
    }

    #[test]
    fn software_adapters_stay_software_on_their_timestamps() {
        // SwiftShader here: the GPU timestamps time CPU work, barely faster than WASM.
        let a = adapter("google", "swiftshader", "0xc0de", "SwiftShader Device (Subzero)", Some(true));
        let mut ev = adapter_evidence(&a);
        let measured = AdapterTimes { gpu_ms: Some(60.0), wall_ms: Some(61.0), batch: 1, latency_ms: Some(0.05) };
        ev.push(plausibility_evidence("matmul_tiled", "chrome/webgpu", measured, "the CPU", Some(120.0)));
        assert_eq!(ev.last().unwrap().says_software, Some(true));
        assert_eq!(decide(Some(&a), &ev).0, Verdict::Software);
        // lavapipe in Firefox hides its name, but says fallback and runs at CPU speed.
        let a = AdapterReport { available: true, is_fallback_adapter: Some(true), ..Default::default() };
        assert_eq!(verdict(&a), Verdict::Software);
    }
}
