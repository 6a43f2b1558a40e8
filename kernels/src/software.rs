//! Telling a software WebGPU adapter (SwiftShader, llvmpipe/lavapipe, WARP: a CPU) from what it
//! reports of itself. The reports use it not to rank a CPU's times as a GPU's; the page and native
//! code use it to choose kernels for a CPU ([`crate::program::Caps::cpu`]).

use crate::wire::AdapterReport;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warp_is_matched_as_a_word_only() {
        assert!(software_names("Microsoft WARP adapter").len() == 1);
        assert!(software_names("Warpath GPU").is_empty());
    }
}
