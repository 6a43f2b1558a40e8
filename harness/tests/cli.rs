//! The command line's behaviour without a browser: help, listing and argument errors.

use std::process::Command;

fn harness(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_harness")).args(args).output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into(), String::from_utf8_lossy(&o.stderr).into())
}

#[test]
fn help_teaches_the_main_command_and_exit_codes() {
    let (code, out, _) = harness(&["run", "--help"]);
    assert_eq!(code, Some(0));
    for needle in ["--suite", "--filter", "--samples", "--browser-path", "--driver-path", "--browser-arg", "--browser-pref", "chrome=--enable-features=Vulkan", "Exit status", "runs/", "--roofline", "% mem"] {
        assert!(out.contains(needle), "`{needle}` missing from help:\n{out}");
    }
}

#[test]
fn verify_help_gives_every_exit_status_and_how_to_settle_an_inconclusive_verdict() {
    let (code, out, _) = harness(&["verify", "--help"]);
    assert_eq!(code, Some(0));
    for needle in ["0 hardware", "1 software", "2 unavailable", "3 inconclusive", "INCONCLUSIVE", "isFallbackAdapter false", "--platform native", "--timeout"] {
        assert!(out.contains(needle), "`{needle}` missing from help:\n{out}");
    }
}

#[test]
fn doctor_help_names_the_chain_and_every_exit_status() {
    let (code, out, _) = harness(&["doctor", "--help"]);
    assert_eq!(code, Some(0));
    for needle in ["0 every browser checked reaches a hardware GPU", "1 one does not", "2 no browser", "VK_DRIVER_FILES", "libGLdispatch", "--gpu-flags", "--json"] {
        assert!(out.contains(needle), "`{needle}` missing from help:\n{out}");
    }
}

#[test]
fn list_names_every_kernel_and_suites_list_cases() {
    let (code, out, _) = harness(&["list"]);
    assert_eq!(code, Some(0));
    for k in ["matmul", "matmul_f16", "matvec", "matvec_f16", "matvec_q8_0", "matvec_q4_0", "matmul_naive", "matmul_tiled", "add", "sub", "mul", "div", "relu", "gelu", "tanh", "silu", "softmax", "rmsnorm", "layernorm", "rope", "stream_copy", "fma_chain", "fma_chain_f16"] {
        assert!(out.lines().any(|l| l.split_whitespace().next() == Some(k)), "{k} missing:\n{out}");
    }
    let (_, cases, _) = harness(&["list", "--suite", "quick", "--filter", "matmul*"]);
    let matmuls = kernels::catalog::all().iter().filter(|k| k.name().starts_with("matmul")).map(|k| k.shapes(kernels::Suite::Quick).len()).sum::<usize>();
    assert_eq!(cases.lines().count(), matmuls, "{cases}");
    let (_, json, _) = harness(&["list", "--json"]);
    assert!(serde_json::from_str::<serde_json::Value>(&json).unwrap().is_array());
}

#[test]
fn a_filter_matching_nothing_names_the_known_kernels() {
    let (code, _, err) = harness(&["run", "--filter", "nosuchkernel"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("nosuchkernel") && err.contains("matmul_tiled"), "{err}");
}

#[test]
fn a_cold_start_without_a_model_says_to_add_one_and_conflicts_with_repeat() {
    let (code, _, err) = harness(&["run", "--suite", "quick", "--cold-start", "3"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--cold-start measures models") && err.contains("--model minilm"), "{err}");
    let (code, _, err) = harness(&["run", "--model", "minilm", "--cold-start", "3", "--repeat", "2"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--repeat"), "{err}");
}

#[test]
fn a_bad_bundle_folder_says_what_is_missing() {
    let dir = std::env::temp_dir();
    let (code, _, err) = harness(&["run", "--suite", "quick", "--bundle", dir.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("missing index.html"), "{err}");
}

#[test]
fn a_taken_port_names_the_flag() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let (code, _, err) = harness(&["run", "--suite", "quick", "--port", &port]);
    assert_eq!(code, Some(2));
    assert!(err.contains("in use") && err.contains("--port"), "{err}");
    assert!(!err.contains("building the page bundle"), "the port is taken before the bundle is built: {err}");
}

#[test]
fn browsers_lists_every_supported_browser_with_install_hints() {
    let (code, out, _) = harness(&["browsers", "--json"]);
    assert_eq!(code, Some(0));
    let found: serde_json::Value = serde_json::from_str(&out).unwrap();
    let keys: Vec<&str> = found.as_array().unwrap().iter().map(|b| b["browser"].as_str().unwrap()).collect();
    assert_eq!(keys, ["chrome", "firefox", "edge"]);
    for b in found.as_array().unwrap() {
        for part in ["executable", "driver"] {
            let p = &b[part];
            assert!(p["path"].is_string() != p["missing"].is_string(), "{b}: found or missing, never both");
        }
    }
    let (_, table, _) = harness(&["browsers"]);
    assert!(table.contains("usable with --browser"), "{table}");
}

#[test]
fn a_bare_path_with_several_browsers_asks_which_browser_it_is_for() {
    let (code, _, err) = harness(&["run", "--browser", "chrome,firefox", "--browser-path", "/usr/bin/chromium"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("chrome=/usr/bin/chromium"), "{err}");
}

#[test]
fn malformed_browser_args_and_prefs_are_clear_errors_before_any_browser_starts() {
    for command in ["run", "verify"] {
        let (code, _, err) = harness(&[command, "--browser-pref", "firefox=novalue"]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("firefox=novalue") && err.contains("NAME=VALUE") && err.contains("firefox=dom.webgpu.enabled=true"), "{err}");
        let (code, _, err) = harness(&[command, "--browser-arg", "safari=--x"]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("`safari`") && err.contains("chrome, firefox, edge"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let (_, help, _) = harness(&["verify", "--help"]);
    assert!(help.contains("--browser-arg") && help.contains("--browser-pref"), "{help}");
}

#[test]
fn a_gguf_file_of_another_shape_names_the_tensor_before_any_browser_starts() {
    use kernels::model::decoder::{DecoderCase, LlamaConfig, Phase};
    let dir = tempfile::tempdir().unwrap();
    let small = DecoderCase { model: "small".into(), config: LlamaConfig { hidden: 64, heads: 8, kv_heads: 2, ffn: 96, layers: 1 }, phase: Phase::Decode, ctx: 1, dtype: Default::default(), weights: None };
    let path = dir.path().join("small.gguf");
    std::fs::write(&path, small.to_gguf(1, kernels::model::gguf::TensorType::F32).unwrap()).unwrap();
    let (code, _, err) = harness(&["run", "--model", "tinyllama", "--weights", path.to_str().unwrap(), "--browser", "chrome"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("small.gguf") && err.contains("`blk.0.attn_norm.weight`") && err.contains("[64]") && err.contains("[2048]"), "{err}");
    assert!(!err.contains("panicked") && !err.contains("chromedriver"), "{err}");
}

#[path = "../build.rs"]
#[allow(dead_code)]
mod build_script;

/// The build revision follows an edit of any crate harness is made of, not only its own: the
/// build script reruns on every member's sources and the page's static files.
#[test]
fn the_build_revision_follows_every_members_sources() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let watched = build_script::watched(&root);
    for dir in ["harness/src", "kernels/src", "reports/src", "stats/src", "page/src", "page/static", "harness-bench/src"] {
        assert!(watched.contains(&root.join(dir)), "{dir} not watched: {watched:?}");
    }
}
