//! Telling a software WebGPU adapter (SwiftShader, llvmpipe/lavapipe, WARP) from the
//! adapter's own report, and warning when a browser got one on a machine with a hardware GPU:
//! its figures then measure the CPU.

use crate::model::{labels, RunReport};
use kernels::wire::AdapterReport;

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
pub const MESA_VENDOR: &str = "0x10005";

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

/// Why `a` is a software adapter, in words: a known software name (which says what it is), its
/// fallback flag (Firefox hides the name) or Mesa's software vendor id. `None` when it shows no
/// such sign (or is unavailable).
pub fn software_sign(a: &AdapterReport) -> Option<String> {
    if !a.available {
        return None;
    }
    if let Some(name) = software_names(&a.label()).first() {
        return Some((*name).to_string());
    }
    if a.is_fallback_adapter == Some(true) {
        return Some("isFallbackAdapter true".into());
    }
    (a.vendor == MESA_VENDOR).then(|| "Mesa's software vendor id 0x10005".into())
}

/// One warning per browser run of `report` whose WebGPU adapter is software while the machine
/// has a hardware GPU, with the likely cause and the command that finds it.
pub fn software_adapter_warnings(report: &RunReport) -> Vec<String> {
    let Some(gpu) = report.host.gpus.first() else { return Vec::new() };
    let mut warnings = Vec::new();
    for (run, label) in report.runs.iter().zip(labels(report)) {
        let Some(sign) = run.adapter.as_ref().and_then(software_sign) else { continue };
        let chromium = ["chrome", "edge", "msedge"].iter().any(|b| run.browser.contains(b));
        let gpu_flags = run.browser_info.as_ref().is_some_and(|i| !i.gpu_flags.is_empty());
        warnings.push(software_adapter_warning(&label, &sign, gpu, chromium, gpu_flags));
    }
    warnings
}

/// The warning for `label` (`chrome/webgpu`, `wgpu/native`) on a software adapter (`sign`)
/// while the machine has hardware GPU `gpu`: the likely cause, from whether the browser is
/// Chromium-based and got harness's GPU flags, and the command that finds the broken link.
pub fn software_adapter_warning(label: &str, sign: &str, gpu: &str, chromium: bool, gpu_flags: bool) -> String {
    let cause = match (chromium, gpu_flags) {
        (true, false) => "Chrome's GPU flags were not given (--gpu-flags off; for a remote browser, --gpu-flags on)",
        (true, true) => "Chrome's GPU process could not use Vulkan even with the GPU flags (chrome://gpu says why)",
        (false, _) => "the Vulkan loader found no driver for the GPU in this process's environment (VK_DRIVER_FILES, libGLdispatch), or the browser's blocklist",
    };
    format!("{label} ran on a software adapter ({sign}) although this machine has a hardware GPU ({gpu}): its figures measure the CPU. Likely cause: {cause}. Run `harness doctor` to find the broken link.")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::testdata;

    /// SwiftShader as Chrome reports it, fallback flag aside.
    pub fn swiftshader() -> AdapterReport {
        AdapterReport { available: true, vendor: "google".into(), architecture: "swiftshader".into(), is_fallback_adapter: Some(false), ..Default::default() }
    }

    #[test]
    fn warp_is_matched_as_a_word_only() {
        assert!(software_names("Microsoft WARP adapter").len() == 1);
        assert!(software_names("Warpath GPU").is_empty());
    }

    #[test]
    fn a_software_adapter_is_warned_about_only_where_the_host_has_a_gpu() {
        let cases = || vec![testdata::case("a", &[1.0], true, true)];
        let mut report = testdata::report_with(vec![("chrome", cases()), ("firefox", cases())]);
        for run in &mut report.runs {
            run.adapter = Some(swiftshader());
        }
        assert!(software_adapter_warnings(&report).is_empty(), "no GPU here: software is all there is");
        report.host.gpus = vec!["NVIDIA H100 80GB HBM3 (nvidia 580.159.04)".into()];
        let warnings = software_adapter_warnings(&report);
        assert_eq!(warnings.len(), report.runs.len(), "{warnings:?}");
        assert!(warnings[0].contains("SwiftShader") && warnings[0].contains("H100") && warnings[0].contains("harness doctor"), "{warnings:?}");
        // A hardware adapter is not warned about; nor is one that hides its name but says it is no fallback.
        for run in &mut report.runs {
            run.adapter = Some(AdapterReport { available: true, is_fallback_adapter: Some(false), ..Default::default() });
        }
        assert!(software_adapter_warnings(&report).is_empty());
    }
}
