//! What the Vulkan loader says when it offers no GPU although the machine has one: a child
//! harness asks wgpu for its adapters with `VK_LOADER_DEBUG` set, and the loader's errors and
//! warnings are read back from the child's stderr. A driver that is there, and even loads on its
//! own, can still fail inside the loader (NVIDIA's ICD without libglvnd's libraries), and only
//! the loader can say why.

use std::process::{Command, Stdio};

/// The argument that makes a child `harness doctor` only list wgpu's adapters (hidden).
pub const ADAPTERS_ONLY: &str = "--adapters-only";

/// Most lines of the loader's kept: the first say why.
const MOST_LINES: usize = 12;

/// The loader's errors and warnings while a child harness asked wgpu for its adapters, in order;
/// empty where it said nothing or the child could not run.
pub fn messages() -> Vec<String> {
    let Ok(exe) = std::env::current_exe() else { return Vec::new() };
    let out = Command::new(exe)
        .args(["doctor", ADAPTERS_ONLY])
        .env("VK_LOADER_DEBUG", "error,warn,driver")
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(out) => said(&String::from_utf8_lossy(&out.stderr)),
        Err(e) => {
            tracing::info!("could not ask the Vulkan loader in a child harness: {e}");
            Vec::new()
        }
    }
}

/// The loader's errors and warnings in `stderr`, and what the dynamic linker told it.
pub fn said(stderr: &str) -> Vec<String> {
    let mut said: Vec<String> = Vec::new();
    let lines = stderr.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "));
    for line in lines.filter(|l| ["ERROR", "WARNING", "cannot open shared object", "undefined symbol"].iter().any(|w| l.contains(w))) {
        // The loader scans its drivers once per instance: each reason once.
        if !said.contains(&line) && said.len() < MOST_LINES {
            said.push(line.chars().take(300).collect());
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loaders_errors_and_warnings_are_kept_and_its_chatter_left_out() {
        let stderr = "INFO:             Vulkan Loader Version 1.3.239\nWARNING: [Loader Message] Code 0 : terminator_CreateInstance: Failed to CreateInstance in ICD 0.  Skipping ICD.\nDRIVER:           Found ICD manifest file /usr/share/vulkan/icd.d/nvidia_icd.json\n";
        assert_eq!(said(stderr), ["WARNING: [Loader Message] Code 0 : terminator_CreateInstance: Failed to CreateInstance in ICD 0. Skipping ICD."]);
        // What it said on the H200 with only libvulkan1 and libglvnd0, each reason once.
        let h200 = said(include_str!("../../../docs/hardware/h200-phases/lease2/doctor-loader-two-packages.txt"));
        assert_eq!(h200, [
            "ERROR: loader_scanned_icd_add: Could not get 'vkCreateInstance' via 'vk_icdGetInstanceProcAddr' for ICD libGLX_nvidia.so.0",
            "ERROR | DRIVER: vkCreateInstance: Found no drivers!",
        ]);
    }
}
