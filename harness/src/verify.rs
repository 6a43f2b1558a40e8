//! `harness verify`: does WebGPU (or native wgpu) run on real GPU hardware? The verdict rests on
//! evidence, every piece of which is printed: the adapter's own description and fallback flag,
//! a match against known software adapters, the browser's GPU diagnostics page, and a
//! plausibility measurement (a matmul on the adapter against the same matmul on the CPU).
//! Any sign of a software adapter decides for software, and a disagreement is said out loud.

use kernels::wire::AdapterReport;
use reports::{CaseStatus, PlatformRun};
use serde::Serialize;

/// The verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Real GPU hardware.
    Hardware,
    /// A software (CPU) implementation.
    Software,
    /// No adapter at all.
    Unavailable,
}

impl Verdict {
    /// 0 hardware, 1 software, 2 unavailable.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Hardware => 0,
            Verdict::Software => 1,
            Verdict::Unavailable => 2,
        }
    }
}

/// Names software adapters report, lower case, with what they are.
pub const SOFTWARE_ADAPTERS: &[(&str, &str)] = &[
    ("swiftshader", "SwiftShader, Chrome's CPU Vulkan implementation"),
    ("llvmpipe", "Mesa llvmpipe, a CPU rasteriser"),
    ("lavapipe", "Mesa lavapipe, a CPU Vulkan implementation"),
    ("softpipe", "Mesa softpipe, a CPU rasteriser"),
    ("microsoft basic render driver", "WARP, Windows' CPU Direct3D"),
    ("warp", "WARP, Windows' CPU Direct3D"),
    ("software rasterizer", "a software rasteriser"),
    ("subzero", "SwiftShader's Subzero JIT"),
    ("software only", "the browser's own word: software only"),
];

/// Mesa's Vulkan vendor id (llvmpipe, lavapipe).
const MESA_VENDOR: &str = "0x10005";

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

/// The software adapters whose names appear in `text`.
pub fn software_names(text: &str) -> Vec<&'static str> {
    let lower = text.to_lowercase();
    SOFTWARE_ADAPTERS
        .iter()
        .filter(|(name, _)| {
            // "warp" must be a word: it is inside other names.
            if *name == "warp" {
                lower.split(|c: char| !c.is_alphanumeric()).any(|w| w == "warp")
            } else {
                lower.contains(name)
            }
        })
        .map(|(_, what)| *what)
        .collect()
}

/// Evidence from what the adapter says about itself.
pub fn adapter_evidence(a: &AdapterReport) -> Vec<Evidence> {
    let text = [&a.vendor, &a.architecture, &a.device, &a.description].map(|s| s.as_str()).join(" ");
    let mut ev = vec![Evidence {
        source: "adapter info".into(),
        finding: if text.trim().is_empty() { "empty (the browser hides it)".into() } else { text.trim().to_string() },
        says_software: None,
    }];
    ev.push(Evidence {
        source: "isFallbackAdapter".into(),
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

/// The wall-clock median of a run's first passed case.
pub fn passed_median(run: &PlatformRun) -> Option<f64> {
    run.cases.iter().find(|c| c.status == CaseStatus::Passed).and_then(|c| c.wall.map(|w| w.median))
}

/// Evidence from the same matmul `id` on the adapter (`gpu` ms, on `gpu_where`) and on the CPU
/// (`cpu` ms, on `cpu_where`); wall-clock medians.
pub fn plausibility_evidence(id: &str, gpu_where: &str, gpu: Option<f64>, cpu_where: &str, cpu: Option<f64>) -> Evidence {
    let (Some(gpu), Some(cpu)) = (gpu, cpu) else {
        return Evidence {
            source: "plausibility".into(),
            finding: format!("{id}: not measured on both {gpu_where} and {cpu_where}"),
            says_software: None,
        };
    };
    let speedup = cpu / gpu;
    let says_software = if speedup >= HARDWARE_SPEEDUP {
        Some(false)
    } else if speedup <= SOFTWARE_SPEEDUP {
        Some(true)
    } else {
        None
    };
    Evidence {
        source: "plausibility".into(),
        finding: format!(
            "{id}: {gpu:.3} ms on {gpu_where} vs {cpu:.3} ms on {cpu_where}: {speedup:.1}× (hardware ≥ {HARDWARE_SPEEDUP}×, software ≤ {SOFTWARE_SPEEDUP}×; wall-clock medians)"
        ),
        says_software,
    }
}

/// What `harness verify` prints with `--json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// hardware, software or unavailable.
    pub verdict: Verdict,
    /// Why, in one sentence.
    pub reason: String,
    /// `browser/platform` checked.
    pub checked: String,
    /// The adapter as reported.
    pub adapter: Option<AdapterReport>,
    /// Every piece of evidence.
    pub evidence: Vec<Evidence>,
    /// The diagnostics lines read, if any.
    pub diagnostics: Vec<String>,
}

impl Report {
    /// The human-readable summary.
    pub fn render(&self) -> String {
        let mut s = format!("{}: {}\n  {}\n", self.checked, self.verdict_word(), self.reason);
        for e in &self.evidence {
            let mark = match e.says_software {
                Some(true) => "software",
                Some(false) => "hardware",
                None => "-",
            };
            s += &format!("  [{mark:>8}] {}: {}\n", e.source, e.finding);
        }
        s
    }

    fn verdict_word(&self) -> &'static str {
        match self.verdict {
            Verdict::Hardware => "HARDWARE",
            Verdict::Software => "SOFTWARE",
            Verdict::Unavailable => "UNAVAILABLE",
        }
    }
}

/// Decides from the evidence, and says when it disagrees.
pub fn decide(adapter: Option<&AdapterReport>, evidence: &[Evidence]) -> (Verdict, String) {
    match adapter {
        None => return (Verdict::Unavailable, "no adapter report".into()),
        Some(a) if !a.available => {
            return (Verdict::Unavailable, format!("no adapter: {}", a.reason.clone().unwrap_or_default()))
        }
        _ => {}
    }
    let soft: Vec<&str> = evidence.iter().filter(|e| e.says_software == Some(true)).map(|e| e.source.as_str()).collect();
    let hard: Vec<&str> = evidence.iter().filter(|e| e.says_software == Some(false)).map(|e| e.source.as_str()).collect();
    match (soft.is_empty(), hard.is_empty()) {
        (false, true) => (Verdict::Software, format!("software: {}", soft.join(", "))),
        (false, false) => (
            Verdict::Software,
            format!("the evidence disagrees ({} say software, {} say hardware); deciding for software", soft.join(", "), hard.join(", ")),
        ),
        (true, false) => (Verdict::Hardware, format!("hardware: {}", hard.join(", "))),
        (true, true) => (Verdict::Hardware, "hardware: no sign of a software adapter".into()),
    }
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
            assert_eq!(verdict(&a), Verdict::Hardware, "{a:?}");
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
    fn no_adapter_is_unavailable() {
        let a = AdapterReport { available: false, reason: Some("navigator.gpu is missing".into()), ..Default::default() };
        assert_eq!(decide(Some(&a), &[]).0.exit_code(), 2);
    }

    #[test]
    fn warp_is_matched_as_a_word_only() {
        assert!(software_names("Microsoft WARP adapter").len() == 1);
        assert!(software_names("Warpath GPU").is_empty());
    }
}
