//! End-to-end test of `harness run --roofline`: the probes run first natively (llvmpipe here),
//! their peaks and every case's fraction reach results.json, report.html and summary.md, and
//! `harness report merge` derives them again from a results.json that lacks them.

mod common;
use common::*;

#[test]
fn roofline_probes_run_first_and_every_report_shows_each_cases_fraction_of_its_peak() {
    let args = ["--roofline", "--filter", "matmul", "--suite", "quick", "--platform", "native", "--samples", "3", "--warmup", "1"];
    let (code, results, stderr) = run_checked("roofline", &args);
    assert_eq!(code, Some(0), "{stderr}");
    let run = &results["runs"][0];
    let cases = run["cases"].as_array().unwrap();
    let kernels: Vec<&str> = cases.iter().map(|c| c["kernel"].as_str().unwrap()).collect();
    let matmuls = kernels::catalog::find("matmul").unwrap().shapes(kernels::Suite::Quick).len();
    let expected: Vec<&str> = ["stream_copy", "stream_copy", "fma_chain", "fma_chain_f16"].into_iter().chain(std::iter::repeat_n("matmul", matmuls)).collect();
    assert_eq!(kernels, expected, "the probes run first, the f16 one beside the peaks");
    assert!(cases.iter().all(|c| c["status"] == "passed"), "{cases:#?}");

    // The peaks: the largest copy (2^16 floats, not the odd 1001) and the only f32 FMA shape (llvmpipe
    // has shader-f16, so the f16 chains pass too, and are divided by the f32 peak like any case).
    let peaks = &run["roofline"];
    assert_eq!(peaks["memory"]["case"], cases[0]["id"]);
    assert_eq!(peaks["memory"]["value"], cases[0]["gbps"]);
    assert_eq!(peaks["compute"]["value"], cases[2]["gflops"]);
    for c in &cases[3..] {
        let r = &c["roofline"];
        assert_eq!((&r["peakGbps"], &r["peakGflops"]), (&peaks["memory"]["value"], &peaks["compute"]["value"]), "{}", c["id"]);
        let (bound, fraction) = (r["bound"].as_str().unwrap(), r["fraction"].as_f64().unwrap());
        let (flops, bytes) = (c["flops"].as_f64().unwrap(), c["bytes"].as_f64().unwrap());
        let (peak_gbps, peak_gflops) = (r["peakGbps"].as_f64().unwrap(), r["peakGflops"].as_f64().unwrap());
        let expected = if flops / peak_gflops > bytes / peak_gbps { "compute" } else { "memory" };
        assert_eq!(bound, expected, "{}", c["id"]);
        let achieved = if bound == "compute" { c["gflops"].as_f64().unwrap() / peak_gflops } else { c["gbps"].as_f64().unwrap() / peak_gbps };
        assert!(fraction > 0.0 && (fraction - achieved).abs() < 1e-12, "{}: {fraction} vs {achieved}", c["id"]);
    }

    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("roofline");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap().replace("&#x2F;", "/");
    assert!(html.contains("<th>Of peak</th>") && html.contains("<dt>Roofline</dt>") && html.contains(" copy, "), "report.html shows it");
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("native roofline: ") && md.contains("| of peak |"), "{md}");

    // Rebuilt from a results.json without it: `harness report merge` derives the same roofline,
    // and its terminal summary shows the column and the peaks.
    let mut stripped = results.clone();
    stripped["runs"][0].as_object_mut().unwrap().remove("roofline");
    for c in stripped["runs"][0]["cases"].as_array_mut().unwrap() {
        c.as_object_mut().unwrap().remove("roofline");
    }
    let bare = out_dir("roofline-bare");
    std::fs::create_dir_all(&bare).unwrap();
    std::fs::write(bare.join("results.json"), serde_json::to_string(&stripped).unwrap()).unwrap();
    let merged = out_dir("roofline-merged");
    let out = harness(&["report", "merge", bare.to_str().unwrap(), "--out", merged.to_str().unwrap()]);
    let table = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(table.contains("of peak") && table.contains("roofline: ") && table.contains(" FMA ("), "{table}");
    assert!(table.contains("% mem") || table.contains("% FMA"), "{table}");
    let rebuilt = read_json(&merged.join("results.json"));
    assert_eq!(rebuilt["runs"][0]["roofline"], results["runs"][0]["roofline"]);
    assert_eq!(rebuilt["runs"][0]["cases"][3]["roofline"], results["runs"][0]["cases"][3]["roofline"]);
}
