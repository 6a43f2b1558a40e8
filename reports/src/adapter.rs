//! Telling a software WebGPU adapter (SwiftShader, llvmpipe/lavapipe, WARP) from the
//! adapter's own report, and warning when a browser got one on a machine with a hardware GPU:
//! its figures then measure the CPU.

use crate::model::{labels, RunReport};

pub use kernels::software::{software_names, software_sign, MESA_VENDOR, SOFTWARE_ADAPTERS};

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
    use kernels::wire::AdapterReport;

    /// SwiftShader as Chrome reports it, fallback flag aside.
    pub fn swiftshader() -> AdapterReport {
        AdapterReport { available: true, vendor: "google".into(), architecture: "swiftshader".into(), is_fallback_adapter: Some(false), ..Default::default() }
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
