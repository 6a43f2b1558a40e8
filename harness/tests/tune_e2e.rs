//! End-to-end tests of `harness run --tune`: every variant of `matmul` and `matvec` checked in real headless
//! Chromium (SwiftShader here) and natively (llvmpipe here), the winners kept in the tune cache,
//! and later runs taking each platform's winner from it, at the nearest shape tuned where it has
//! none at theirs; a cache that cannot be read is ignored.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// `harness run --tune-cache CACHE ARGS`, through [`run_checked`].
fn run(name: &str, cache: &Path, args: &[&str]) -> (Option<i32>, Value, String) {
    let mut all = vec!["--tune-cache", cache.to_str().unwrap()];
    all.extend_from_slice(args);
    run_checked(name, &all)
}

/// `(target, case)` for every case: the browser key, or `native`.
fn cases(results: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for run in results["runs"].as_array().unwrap() {
        let target = target_of(run);
        out.extend(run["cases"].as_array().unwrap().iter().map(|c| (target.clone(), c.clone())));
    }
    out
}

/// The target a run tunes for: its browser key, or `native`.
fn target_of(run: &Value) -> String {
    match run["platform"].as_str().unwrap() {
        "native" => "native".to_string(),
        _ => run["browser"].as_str().unwrap().to_string(),
    }
}

/// Whether the adapter of `target`'s run offers `subgroups`.
fn has_subgroups(results: &Value, target: &str) -> bool {
    results["runs"].as_array().unwrap().iter().any(|run| {
        target_of(run) == target && run["adapter"]["features"].as_array().unwrap().iter().any(|f| f == "subgroups")
    })
}

/// The quick shapes of the kernels `filter` selects, with few isolated samples (these tests check
/// answers and which variant is kept, not speed). Both tunable kernels have odd quick shapes (a
/// single element; matmul 13×17×19 and 33×70×45, matvec 37×1 and 77×33: K not a multiple of 4, N
/// prime to every tile), so every variant is checked past its tiles' edges, natively at each and
/// in the page at [`CHROMIUM_SHAPES`].
fn quick(filter: &str) -> Vec<&str> {
    vec!["--suite", "quick", "--filter", filter, "--sampling", "isolated", "--samples", "3", "--warmup", "0"]
}

/// The f32 kernels `--tune` searches (their f16 forms are unsupported on SwiftShader), with their
/// quick shapes.
fn tuned_kernels() -> Vec<(&'static str, Vec<Value>)> {
    ["matmul", "matvec"]
        .into_iter()
        .map(|k| (k, kernels::catalog::find(k).unwrap().shapes(kernels::Suite::Quick).iter().map(|s| serde_json::to_value(s).unwrap()).collect()))
        .collect()
}

/// The one odd quick shape of each tunable kernel that Chromium tunes at: SwiftShader compiles
/// each variant's pipeline for seconds, and natively every variant is checked at every quick shape
/// through the same WGSL. Past every tile's edges: K not a multiple of 4, N prime to every tile.
const CHROMIUM_SHAPES: &str = "matmul@33x70x45,matvec@77x33";

#[test]
fn every_matmul_and_matvec_variant_passes_in_chromium_and_natively_and_later_runs_use_the_winners() {
    let cache = out_dir("tune-cache").join("tune.json");
    // Natively at every quick shape, then Chromium at one shape a kernel, into the same cache.
    let mut native = vec!["--tune", "--platform", "native"];
    native.extend(quick("matmul,matvec"));
    let (code, native, stderr) = run("tune-native", &cache, &native);
    assert_eq!(code, Some(0), "{stderr}");
    let mut chromium = vec!["--tune", "--platform", "webgpu"];
    chromium.extend(quick(CHROMIUM_SHAPES));
    let (code, chromium, stderr) = run("tune", &cache, &chromium);
    assert_eq!(code, Some(0), "{stderr}");
    let tuned: Vec<(String, Value, bool)> = [&native, &chromium]
        .into_iter()
        .flat_map(|results| cases(results).into_iter().map(move |(target, c)| {
            let subgroups = has_subgroups(results, &target);
            (target, c, subgroups)
        }))
        .collect();
    // Every variant of each kernel: natively at every quick shape, in Chromium at its one shape.
    let tuned_kernels = tuned_kernels();
    let mut groups = 0;
    for (kernel, shapes) in &tuned_kernels {
        let variants = kernels::catalog::variants(kernel).len();
        for shape in shapes {
            let native_of = tuned.iter().filter(|(t, c, _)| t == "native" && c["kernel"] == *kernel && &c["shape"] == shape).count();
            assert_eq!(native_of, variants, "{kernel} at {shape} natively");
        }
        let chromium_shapes: Vec<&Value> = tuned.iter().filter(|(t, c, _)| t == "chrome" && c["kernel"] == *kernel).map(|(_, c, _)| &c["shape"]).collect();
        assert_eq!(chromium_shapes.len(), variants, "{kernel} in Chromium: {chromium_shapes:?}");
        groups += shapes.len() + 1;
    }
    let mut subgroup_cases = 0;
    for (target, c, subgroups) in &tuned {
        let variant = c["variant"].as_str().expect("every tuned case names its variant");
        assert!(c["id"].as_str().unwrap().ends_with(variant), "{}", c["id"]);
        // Subgroup variants are candidates only where the device has `subgroups`: natively where
        // the adapter offers it, never in a browser (wgpu 30's WebGPU backend cannot see it on the device).
        // Elsewhere they are unsupported, saying so, and every other variant still passes.
        if variant.ends_with("-sg") && (target != "native" || !subgroups) {
            assert_eq!(c["status"], "unsupported", "{target}: {c}");
            assert!(c["message"].as_str().unwrap().contains("subgroups"), "{target}: {c}");
            println!("{target}: {} unsupported (its device has no subgroups)", c["id"]);
        } else {
            assert_eq!(c["status"], "passed", "{target}: {} is wrong: {}", c["id"], c["message"]);
            subgroup_cases += usize::from(variant.ends_with("-sg"));
        }
    }
    println!("subgroup variants that ran and passed: {subgroup_cases}");

    // One cache holds both runs' winners: a tuning run replaces only what it tuned.
    let cache_json = read_json(&cache);
    let winners = cache_json["winners"].as_array().unwrap();
    assert_eq!(winners.len(), groups, "a winner per kernel, target and shape: {cache_json}");
    // The winner at `shape`, else (Chromium's other shapes) at the nearest shape tuned: its one.
    let winner = |target: &str, kernel: &Value, shape: &Value| -> String {
        let of: Vec<&Value> = winners.iter().filter(|w| w["target"] == target && &w["kernel"] == kernel).collect();
        let w = match of.iter().find(|w| &w["shape"] == shape) {
            Some(w) => w,
            None if of.len() == 1 => of[0],
            None => panic!("no {target} winner of {kernel} at {shape}: {of:?}"),
        };
        w["variant"].as_str().unwrap().to_string()
    };

    let mut args = vec!["--platform", "webgpu,native"];
    args.extend(quick("matmul,matvec"));
    let (code, results, stderr) = run("tuned", &cache, &args);
    assert_eq!(code, Some(0), "{stderr}");
    let used = cases(&results);
    assert_eq!(used.len(), 2 * tuned_kernels.iter().map(|(_, shapes)| shapes.len()).sum::<usize>());
    for (target, c) in &used {
        assert_eq!(c["variant"].as_str(), Some(winner(target, &c["kernel"], &c["shape"]).as_str()), "{target}: {c}");
        let id = c["id"].as_str().unwrap();
        assert!(!id.contains("-bm") && !id.contains("/wg"), "a cached variant keeps the default's id: {id}");
    }
    assert!(!stderr.contains("tuned on another adapter"), "each target ran its own adapter's winners:\n{stderr}");
    // The same cache carried to another machine: its native winners were tuned on another GPU.
    let mut elsewhere = cache_json.clone();
    for w in elsewhere["winners"].as_array_mut().unwrap().iter_mut().filter(|w| w["target"] == "native") {
        w["adapter"] = "a GPU of another machine".into();
    }
    let carried = out_dir("tune-carried").join("tune.json");
    std::fs::create_dir_all(carried.parent().unwrap()).unwrap();
    std::fs::write(&carried, elsewhere.to_string()).unwrap();
    let mut args = vec!["--platform", "native"];
    args.extend(quick("matmul,matvec"));
    let (code, _, carried_stderr) = run("tuned-elsewhere", &carried, &args);
    assert_eq!(code, Some(0), "a warning, not a failure: {carried_stderr}");
    let warning = carried_stderr.lines().find(|l| l.contains("tuned on another adapter")).unwrap_or_else(|| panic!("no warning:\n{carried_stderr}"));
    assert!(warning.starts_with("warning: wgpu/native ran matmul, matvec with variants tuned on another adapter or driver (a GPU of another machine)"), "{warning}");

    // The reports say which variant ran.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tuned");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let markdown = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    for (kernel, shapes) in &tuned_kernels {
        let native = winner("native", &serde_json::json!(kernel), &shapes[0]);
        assert!(html.contains(&format!("variant <code>{native}</code>")), "report.html names the {kernel} variant");
        assert!(markdown.contains(&format!("[{native}]")), "summary.md names the {kernel} variant:\n{markdown}");
    }
}

#[test]
fn a_corrupted_tune_cache_is_ignored_with_a_warning() {
    let dir = out_dir("tune-corrupt");
    std::fs::create_dir_all(&dir).unwrap();
    let cache = dir.join("tune.json");
    std::fs::write(&cache, "{\"version\": 1, \"winners\": [garbage").unwrap();
    let mut args = vec!["--platform", "native"];
    args.extend(quick("matmul"));
    let (code, results, stderr) = run("tune-corrupt-run", &cache, &args);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("tune.json") && stderr.contains("ignored"), "{stderr}");
    for (_, c) in cases(&results) {
        assert!(c.get("variant").is_none(), "the default runs: {c}");
    }
}

#[test]
fn tuning_nothing_tunable_or_only_the_cpu_is_a_clear_error() {
    let out = harness(&["run", "--tune", "--platform", "native", "--suite", "quick", "--filter", "add"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("--tune") && err.contains("matmul"), "{err}");
    let out = harness(&["run", "--tune", "--platform", "wasm", "--suite", "quick", "--filter", "matmul"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("--tune") && err.contains("--platform webgpu or native"), "{err}");
}

/// One odd shape of each f16 kernel (K not a multiple of 4, N prime to every tile): natively
/// (`native_gpu.rs`) every variant is checked at every quick shape through the same naga
/// compiler, so Firefox needs only to show that the f16 variants compile and run in its WebGPU.
const F16_SHAPES: &str = "matmul_f16@13x17x19,matvec_f16@77x33";

#[test]
fn every_f16_variant_passes_in_firefox_where_lavapipe_has_shader_f16() {
    let cache = out_dir("tune-f16-cache").join("tune.json");
    let mut args = vec!["--tune", "--browser", "firefox", "--platform", "webgpu"];
    args.extend(quick(F16_SHAPES));
    let (code, results, stderr) = run("tune-f16", &cache, &args);
    assert_eq!(code, Some(0), "{stderr}");
    let run = &results["runs"][0];
    assert!(run["adapter"]["features"].as_array().unwrap().iter().any(|f| f == "shader-f16"), "{}", run["adapter"]);
    let cases = run["cases"].as_array().unwrap();
    let expected: usize = ["matmul_f16", "matvec_f16"].iter().map(|k| kernels::catalog::variants(k).len()).sum();
    assert_eq!(cases.len(), expected);
    for shape in [[13, 17, 19].as_slice(), &[77, 33]] {
        assert!(cases.iter().any(|c| c["shape"] == serde_json::json!(shape)), "{shape:?} ran");
    }
    for c in cases {
        // Firefox offers no subgroups: those variants are unsupported there, and only those.
        let want = if c["variant"].as_str().unwrap().ends_with("-sg") { "unsupported" } else { "passed" };
        assert_eq!(c["status"], want, "{}: {}", c["id"], c["message"]);
    }
    println!("{} f16 variant cases in Firefox: every one without subgroups passed its f16 tolerance", cases.len());
}
