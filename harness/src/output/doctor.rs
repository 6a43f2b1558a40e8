//! `harness doctor`'s diagnosis: the chain from the GPU to each browser's WebGPU adapter, link by
//! link, with the first broken one and its fix. Decided from what was found (the machine's GPU
//! stack, wgpu's native adapters, each browser's adapter), so tests can describe any machine.

use crate::measure::browser::BrowserKind;
use crate::measure::gpu_stack::{self, GpuStack, Link, LinkState};
use kernels::gpu::NativeAdapter;
use kernels::wire::AdapterReport;
use serde::Serialize;
use std::fmt::Write;

/// What one browser's page said about its WebGPU adapter.
#[derive(Debug, Clone)]
pub struct BrowserFinding {
    /// Which browser.
    pub kind: BrowserKind,
    /// The adapter the page reported; `None` when the browser did not start or the page never
    /// reported.
    pub adapter: Option<AdapterReport>,
    /// Why the browser or page failed, where it did.
    pub failure: Option<String>,
    /// Whether harness gave it the GPU flags (Chrome, Edge).
    pub gpu_flags: bool,
}

/// The whole chain and what it adds up to.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnosis {
    /// Every link, in order: GPU driver, Vulkan loader, ICD, libGLdispatch, native adapter, then
    /// each browser's adapter and its features.
    pub links: Vec<Link>,
    /// The first broken link's index in `links`.
    pub first_broken: Option<usize>,
    /// The browsers that reach a hardware GPU, by key.
    pub on_gpu: Vec<&'static str>,
    /// The browsers checked, by key.
    pub browsers: Vec<&'static str>,
    /// Exit status: 0 every browser checked reaches a hardware GPU, 1 not, 2 no browser to check.
    pub exit: u8,
}

/// Exit status when no browser is installed to check.
pub const EXIT_NO_BROWSER: u8 = 2;

/// Puts the chain together: `host` are the machine's links (`GpuStack::links` of `stack`),
/// `native` wgpu's adapters, `loader` what the Vulkan loader said where it offered no GPU
/// ([`crate::measure::loader`]), `browsers` what each page said.
pub fn diagnose(host: Vec<Link>, stack: &GpuStack, native: &[NativeAdapter], loader: &[String], browsers: &[BrowserFinding]) -> Diagnosis {
    let has_gpu = stack.has_gpu();
    let mut links = host;
    let host_broken = links.iter().any(|l| l.state == LinkState::Broken);
    links.push(native_link(stack, native, loader));
    let native_gpu = native.iter().any(|a| a.is_hardware());
    let mut on_gpu = Vec::new();
    for b in browsers {
        let (link, hardware) = browser_link(b, has_gpu, host_broken || !native_gpu);
        links.push(link);
        if hardware {
            on_gpu.push(b.kind.spec().key);
        }
        if let Some(a) = b.adapter.as_ref().filter(|a| a.available) {
            links.push(features_link(b.kind, a, hardware, native));
        }
    }
    let first_broken = links.iter().position(|l| l.state == LinkState::Broken);
    let exit = match (browsers.is_empty(), on_gpu.len() == browsers.len()) {
        (true, _) => EXIT_NO_BROWSER,
        (false, true) => 0,
        (false, false) => 1,
    };
    Diagnosis { links, first_broken, on_gpu, browsers: browsers.iter().map(|b| b.kind.spec().key).collect(), exit }
}

fn native_link(stack: &GpuStack, native: &[NativeAdapter], loader: &[String]) -> Link {
    let name = "native wgpu adapter";
    let has_gpu = stack.has_gpu();
    let list = native.iter().map(|a| format!("{} ({}, {})", a.name, a.device_type, a.backend)).collect::<Vec<_>>().join("; ");
    if let (false, true, Some(first)) = (native.iter().any(|a| a.is_hardware()), has_gpu, loader.first()) {
        let seen = if native.is_empty() { "wgpu finds no adapter at all".to_string() } else { format!("wgpu sees only {list}") };
        let said = loader.iter().find(|l| l.contains("cannot open shared object") || l.contains("undefined symbol")).unwrap_or(first);
        return Link::broken(name, format!("{seen}; the Vulkan loader said: {said}"), gpu_stack::driver_fix(stack.vendors().first().copied(), &loader.join("\n")));
    }
    match native.iter().find(|a| a.is_hardware()) {
        Some(a) => Link::ok(name, format!("{} ({}, {}, driver {})", a.name, a.device_type, a.backend, a.driver)),
        None if native.is_empty() => Link::broken(
            name,
            "wgpu finds no adapter at all",
            "the Vulkan loader offers no driver: mend the links above; `VK_LOADER_DEBUG=error,warn harness doctor` prints the loader's reasons",
        ),
        None if has_gpu => Link::broken(
            name,
            format!("wgpu sees only {list}: the Vulkan loader rejected the GPU's driver"),
            "`VK_LOADER_DEBUG=error,warn harness doctor` prints the loader's reasons; common ones are a driver whose user-space libraries do not match its kernel module (nvidia-smi then says \"Driver/library version mismatch\") and a library the ICD needs that is missing",
        ),
        None => Link::info(name, format!("{list}: software, as this machine has no GPU")),
    }
}

/// The browser's adapter link, and whether it is a hardware GPU. `below_broken`: a link before
/// it is broken, which is then the fix.
fn browser_link(b: &BrowserFinding, has_gpu: bool, below_broken: bool) -> (Link, bool) {
    let spec = b.kind.spec();
    let name = format!("{} WebGPU adapter", spec.display);
    let chromium = b.kind != BrowserKind::Firefox;
    let fix_for_software = || -> String {
        match () {
            _ if !has_gpu => "none here: this machine has no hardware GPU (the first link)".into(),
            _ if below_broken => "mend the first broken link above: the browser reaches the GPU through the same driver".into(),
            _ if chromium && !b.gpu_flags => "leave --gpu-flags at auto (or on): without its Vulkan flags Chrome takes SwiftShader on Linux".into(),
            _ if chromium => format!("{} shows why the GPU process fell back (Graphics Feature Status, Log Messages); run as a user who may open the GPU's device files", spec.diagnostics_url),
            _ => format!("{} (Graphics) shows why WebGPU took the software adapter; harness sets dom.webgpu.enabled and gfx.webgpu.ignore-blocklist", spec.diagnostics_url),
        }
    };
    let Some(a) = b.adapter.as_ref().filter(|a| a.available) else {
        let why = b.adapter.as_ref().and_then(|a| a.reason.clone()).or_else(|| b.failure.clone()).unwrap_or_else(|| "no adapter reported".into());
        return (Link::broken(&name, format!("no adapter: {why}"), fix_for_software()), false);
    };
    let fallback = a.is_fallback_adapter.map(|f| format!("isFallbackAdapter {f}")).unwrap_or_else(|| "isFallbackAdapter not reported".into());
    let flags = if b.gpu_flags { "; with harness's GPU flags" } else { "" };
    match reports::adapter::software_sign(a) {
        Some(sign) => (Link::broken(&name, format!("{}: software ({sign}){flags}", a.label()), fix_for_software()), false),
        None => (Link::ok(&name, format!("{}, {fallback}{flags}", a.label())), true),
    }
}

/// What the adapter offers that harness's timing and f16 models use: said, never broken. Where a
/// Chromium adapter on the GPU (`hardware`) lacks f16 that the GPU has, why.
fn features_link(kind: BrowserKind, a: &AdapterReport, hardware: bool, native: &[NativeAdapter]) -> Link {
    let has = |f: &str| a.features.iter().any(|x| x == f);
    let mut finding = format!(
        "timestamp-query {}; shader-f16 {}",
        if has("timestamp-query") { "yes" } else { "no (GPU times unavailable: wall clock only)" },
        if has("shader-f16") { "yes" } else { "no (f16 cases read N/A)" }
    );
    let gpu_has_f16 = native.iter().any(|n| n.is_hardware() && n.features.iter().any(|f| f == "shader-f16"));
    if !has("shader-f16") && gpu_has_f16 && hardware && kind != BrowserKind::Firefox {
        finding += &format!("; the GPU has f16 (native wgpu offers it): {}", CHROMIUM_NO_F16);
    }
    Link::info(&format!("{} timestamps and f16", kind.spec().display), finding)
}

/// Why Chromium's Dawn offers no `shader-f16` on a GPU whose Vulkan driver has f16 (found on the
/// H100, docs/hardware/h100-chrome.md).
pub const CHROMIUM_NO_F16: &str = "Dawn blocks shader-f16 on NVIDIA GPUs under Vulkan (crbug.com/42251215, conformance failures on some drivers) unless Chrome starts with --enable-dawn-features=vulkan_enable_f16_on_nvidia, which harness adds with its GPU flags on an NVIDIA machine; a Chrome older than that toggle (late 2025) cannot lift the block";

/// The diagnosis for the terminal: each link on a line with its mark, fixes indented, and the
/// conclusion.
pub fn render(d: &Diagnosis) -> String {
    let mut s = String::new();
    for (i, l) in d.links.iter().enumerate() {
        let mark = match l.state {
            LinkState::Ok => "ok     ",
            LinkState::Fixed => "fixed  ",
            LinkState::Broken => "BROKEN ",
            LinkState::Info => "       ",
        };
        let _ = writeln!(s, "{mark}{}: {}", l.name, l.finding);
        if let Some(fix) = &l.fix {
            let first = if d.first_broken == Some(i) { " (the first broken link)" } else { "" };
            let _ = writeln!(s, "         fix{first}: {fix}");
        }
    }
    let _ = writeln!(s);
    let _ = match (d.exit, d.first_broken) {
        (EXIT_NO_BROWSER, _) => writeln!(s, "No browser to check: install one (`harness browsers` says how)."),
        (0, _) => writeln!(s, "Every browser checked ({}) reaches a hardware GPU.", d.browsers.join(", ")),
        (_, Some(i)) => writeln!(
            s,
            "Not every browser reaches a hardware GPU (on a hardware GPU: {}). First broken link: {}.",
            if d.on_gpu.is_empty() { "none".to_string() } else { d.on_gpu.join(", ") },
            d.links[i].name
        ),
        (_, None) => writeln!(s, "Not every browser reaches a hardware GPU."),
    };
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::gpu_stack::tests::{h100, software_only};
    use crate::measure::gpu_stack::GpuStack;

    fn native(name: &str, device_type: &str, f16: bool) -> NativeAdapter {
        NativeAdapter {
            name: name.into(),
            device_type: device_type.into(),
            backend: "Vulkan".into(),
            driver: "test".into(),
            features: if f16 { vec!["timestamp-query".into(), "shader-f16".into()] } else { vec!["timestamp-query".into()] },
        }
    }

    fn adapter(vendor: &str, architecture: &str, fallback: bool, f16: bool) -> Option<AdapterReport> {
        let mut features = vec!["timestamp-query".to_string()];
        if f16 {
            features.push("shader-f16".into());
        }
        Some(AdapterReport { available: true, vendor: vendor.into(), architecture: architecture.into(), is_fallback_adapter: Some(fallback), features, ..Default::default() })
    }

    fn finding(kind: BrowserKind, adapter: Option<AdapterReport>, gpu_flags: bool) -> BrowserFinding {
        BrowserFinding { kind, adapter, failure: None, gpu_flags }
    }

    fn on(machine: &dyn crate::measure::gpu_stack::Machine, native: &[NativeAdapter], browsers: &[BrowserFinding]) -> Diagnosis {
        let stack = GpuStack::detect(machine);
        let fixes = stack.env_fixes(machine);
        diagnose(stack.links(&fixes), &stack, native, &[], browsers)
    }

    fn first_broken(d: &Diagnosis) -> (String, String) {
        let l = &d.links[d.first_broken.expect("a broken link")];
        (l.name.clone(), l.fix.clone().unwrap_or_default())
    }

    #[test]
    fn on_the_h100_every_browser_on_the_gpu_exits_0_and_chromes_missing_f16_is_explained() {
        let gpu = [native("NVIDIA H100 80GB HBM3", "DiscreteGpu", true)];
        let browsers = [finding(BrowserKind::Chrome, adapter("nvidia", "hopper", false, false), true), finding(BrowserKind::Firefox, adapter("", "", false, true), false)];
        let d = on(&h100(), &gpu, &browsers);
        assert_eq!((d.exit, d.first_broken), (0, None), "{}", render(&d));
        assert_eq!(d.on_gpu, ["chrome", "firefox"]);
        let text = render(&d);
        assert!(text.contains("fixed  Vulkan driver") && text.contains("Every browser checked"), "{text}");
        assert!(text.contains("the GPU has f16"), "Chrome's missing f16 gets its reason: {text}");
    }

    #[test]
    fn a_software_only_machine_names_the_missing_gpu_and_exits_1() {
        let lvp = [native("llvmpipe (LLVM 15.0.6, 256 bits)", "Cpu", false)];
        let browsers = [finding(BrowserKind::Chrome, adapter("google", "swiftshader", true, true), false), finding(BrowserKind::Firefox, adapter("", "", true, true), false)];
        let d = on(&software_only(), &lvp, &browsers);
        assert_eq!(d.exit, 1);
        assert_eq!(first_broken(&d).0, "GPU driver");
        assert!(render(&d).contains("no hardware GPU"), "{}", render(&d));
        // No browser at all is its own status.
        assert_eq!(on(&software_only(), &lvp, &[]).exit, EXIT_NO_BROWSER);
    }

    #[test]
    fn a_gpu_without_an_icd_is_the_first_broken_link_and_the_browsers_point_at_it() {
        let machine = h100().without("/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json");
        let lvp = [native("llvmpipe", "Cpu", false)];
        let browsers = [finding(BrowserKind::Firefox, adapter("", "", true, true), false)];
        let d = on(&machine, &lvp, &browsers);
        assert_eq!(d.exit, 1);
        let (name, fix) = first_broken(&d);
        assert!(name.starts_with("Vulkan driver (ICD)") && fix.contains("nvidia-vulkan-icd"), "{name}: {fix}");
        let firefox = d.links.iter().find(|l| l.name.starts_with("Firefox")).unwrap();
        assert!(firefox.fix.as_deref().unwrap_or("").contains("first broken link"), "{firefox:?}");
    }

    #[test]
    fn an_icd_the_loader_rejects_breaks_at_the_native_adapter() {
        // The ICD is there and visible, its library found; yet wgpu sees only llvmpipe.
        let machine = h100().file("/usr/share/vulkan/icd.d/nvidia_icd.json", r#"{"ICD": {"library_path": "libGLX_nvidia.so.0"}}"#);
        let d = on(&machine, &[native("llvmpipe", "Cpu", false)], &[finding(BrowserKind::Chrome, adapter("google", "swiftshader", true, false), true)]);
        let (name, fix) = first_broken(&d);
        assert_eq!(name, "native wgpu adapter");
        assert!(fix.contains("VK_LOADER_DEBUG"), "{fix}");
    }

    /// The H200 with only libvulkan1 and libglvnd0 (docs/hardware/h200-phases.md): every file
    /// where the loader looks, the ICD's library loading on its own, yet no adapter. The first
    /// broken link is libglvnd's missing libraries, with their packages; the native adapter's says
    /// what the Vulkan loader said there (its real words, captured with VK_LOADER_DEBUG).
    #[test]
    fn on_the_h200_with_two_packages_the_missing_libraries_and_the_loaders_words_are_named() {
        let machine = crate::measure::gpu_stack::tests::h200_two_packages();
        let stack = GpuStack::detect(&machine);
        let loader = crate::measure::loader::said(include_str!("../../../docs/hardware/h200-phases/lease2/doctor-loader-two-packages.txt"));
        let d = diagnose(stack.links(&stack.env_fixes(&machine)), &stack, &[], &loader, &[]);
        let (name, fix) = first_broken(&d);
        assert!(name.starts_with("libglvnd's"), "{name}");
        assert!(fix.contains("libglx0 libegl1 libgl1 libopengl0 libgles2"), "{fix}");
        let native = d.links.iter().find(|l| l.name == "native wgpu adapter").unwrap();
        assert!(native.finding.contains("the Vulkan loader said: ERROR: loader_scanned_icd_add: Could not get 'vkCreateInstance'"), "{}", native.finding);
        // A library the loader names as one it could not open gets its own package.
        let named = ["ERROR: libGLX.so.0: cannot open shared object file: No such file or directory".to_string()];
        let d = diagnose(stack.links(&[]), &stack, &[], &named, &[]);
        let native = d.links.iter().find(|l| l.name == "native wgpu adapter").unwrap();
        assert!(native.fix.as_deref().unwrap_or_default().contains("`apt-get install libglx0` (libGLX.so.0)"), "{native:?}");
        // Without the loader's words, the old advice stands.
        let d = diagnose(stack.links(&[]), &stack, &[], &[], &[]);
        assert!(d.links.iter().find(|l| l.name == "native wgpu adapter").unwrap().fix.as_deref().unwrap_or_default().contains("VK_LOADER_DEBUG"));
    }

    #[test]
    fn chrome_without_its_gpu_flags_on_a_gpu_machine_is_told_to_keep_them() {
        let h100n = [native("NVIDIA H100 80GB HBM3", "DiscreteGpu", true)];
        let browsers = [finding(BrowserKind::Chrome, adapter("google", "swiftshader", true, false), false), finding(BrowserKind::Firefox, adapter("", "", false, true), false)];
        let d = on(&h100(), &h100n, &browsers);
        assert_eq!(d.exit, 1);
        assert_eq!(d.on_gpu, ["firefox"]);
        let (name, fix) = first_broken(&d);
        assert!(name.starts_with("Chrome") && fix.contains("--gpu-flags"), "{name}: {fix}");
        // SwiftShader's missing f16 is not Dawn's NVIDIA block.
        assert!(!render(&d).contains("Dawn blocks"), "{}", render(&d));
        // With the flags and still software, the fix points at chrome://gpu instead.
        let browsers = [finding(BrowserKind::Chrome, adapter("google", "swiftshader", true, false), true)];
        assert!(first_broken(&on(&h100(), &h100n, &browsers)).1.contains("chrome://gpu"));
    }
}
