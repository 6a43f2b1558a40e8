//! Each feature of the model followed through `results.json` (valid against the JSON Schema) and
//! every writer: the HTML report, the Markdown summary, JUnit.

use crate::testdata::*;
use crate::*;
use kernels::model::decoder::Phase;
use serde_json::Value;

#[test]
fn an_engine_profile_sums_its_kernels_by_op_the_slowest_first() {
    let k = |op: &str, ms: f64| kernels::wire::EngineKernel { op: op.into(), node: format!("{op}_node"), ms };
    let p = EngineProfile::of(&[k("Softmax", 0.5), k("MatMul", 1.0), k("MatMul", 2.0), k("Add", 0.25)]).unwrap();
    assert_eq!((p.gpu_ms, p.kernels), (3.75, 4));
    let ops: Vec<(&str, usize, f64)> = p.by_op.iter().map(|o| (o.op.as_str(), o.count, o.ms)).collect();
    assert_eq!(ops, [("MatMul", 2, 3.0), ("Softmax", 1, 0.5), ("Add", 1, 0.25)]);
    assert_eq!(EngineProfile::of(&[]), None);
    // In results.json, and valid there.
    let mut report = report_with(vec![("chrome", vec![model_case("minilm/1x16/seed=1", &[1.0, 1.1])])]);
    report.runs[0].cases[0].engine_profile = Some(p);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["runs"][0]["cases"][0]["engineProfile"]["byOp"][0]["op"], "MatMul");
    let errors = schema_errors(&json);
    assert!(errors.is_empty(), "{errors:?}");
    // In the HTML report, beside the case's own time of a whole run; no section without one.
    let html = html::render(&report).unwrap();
    let section = html.split("<h3>Profiles</h3>").nth(1).expect("a profiles section");
    let median = report.runs[0].cases[0].gpu.as_ref().map_or(report.runs[0].cases[0].wall.as_ref().unwrap().median, |g| g.median);
    assert!(section.contains("<code>minilm&#x2F;1x16&#x2F;seed=1</code> <span class=\"muted\">4 kernels, 3.750 ms summed; a whole run&#x27;s"), "{section}");
    assert!(section.contains(&format_ms(median)), "{section}");
    assert!(section.contains("<tr><td class=\"left\"><code>MatMul</code></td><td>2</td><td>3.000</td><td>80.0%</td></tr>"), "{section}");
    let plain = report_with(vec![("chrome", vec![model_case("minilm/1x16/seed=1", &[1.0, 1.1])])]);
    assert!(!html::render(&plain).unwrap().contains("<h3>Profiles</h3>"));
}

#[test]
fn the_features_a_cases_shaders_used_reach_results_json_and_both_reports() {
    let spec = encoder_spec();
    let m = kernels::wire::CaseMeasurement { features: vec!["shader-f16".into(), "chromium-experimental-subgroup-matrix".into()], ..measurement(&spec, &[1.0, 1.1], true) };
    let case = CaseReport::measured(&spec, &spec.info().unwrap(), m, verdict(true));
    let report = report_with(vec![("chrome", vec![case, model_case("a", &[1.0])])]);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["runs"][0]["cases"][0]["features"][1], "chromium-experimental-subgroup-matrix");
    let errors = schema_errors(&json);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(json["runs"][0]["cases"][1].get("features").is_none(), "absent where none");
    let used = "shader-f16 in 1 case, chromium-experimental-subgroup-matrix (tensor cores) in 1 case";
    assert_eq!(report.runs[0].features_used().as_deref(), Some(used));
    assert!(markdown::render(&report).contains(&format!("optional features its shaders used: {used}\n")));
    let html = html::render(&report).unwrap();
    assert!(html.contains(&format!("<dt>Optional features</dt><dd>{used}")), "{html}");
    assert!(html.contains("<small>uses <code>shader-f16</code> <code>chromium-experimental-subgroup-matrix</code></small>"));
    let plain = report_with(vec![("chrome", vec![model_case("a", &[1.0])])]);
    assert_eq!(plain.runs[0].features_used(), None);
    assert!(!markdown::render(&plain).contains("optional features") && !html::render(&plain).unwrap().contains("Optional features"));
}

#[test]
fn cases_from_text_get_a_table_of_their_phases_in_every_report() {
    let text = text_case(&[("tokenize", 0.5), ("run", 3.0), ("pool", 0.25)], 4);
    assert_eq!(text.id, "minilm/2x4/seed=1/from-text");
    let report = report_with(vec![("firefox", vec![text, model_case("minilm/1x16/seed=1", &[1.0, 1.1])])]);
    let tables = phased_tables(&report);
    assert_eq!(tables.len(), 1);
    let row = &tables[0].rows[0];
    assert_eq!((tables[0].title, row.median.as_str(), row.count), ("From text", "3.750", 4));
    assert_eq!(row.phases, "tokenize 0.5000 ms · run 3.000 ms · pool 0.2500 ms");
    let md = markdown::render(&report);
    assert!(md.contains("## From text") && md.contains("| ms a call (median) | min–max | calls |") && md.contains("tokenize 0.5000 ms"), "{md}");
    let html = html::render(&report).unwrap();
    assert!(html.contains("<h2>From text</h2>") && html.contains("run 3.000 ms"), "the HTML report has the table");
    let errors = schema_errors(&serde_json::to_value(&report).unwrap());
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn cold_starts_get_a_table_of_their_own_in_every_report_and_stay_out_of_the_models_table() {
    let marks = [("device", 100.0), ("fetch", 150.0), ("upload", 160.0), ("pipelines", 200.0), ("dispatch", 201.0), ("result", 300.0)];
    let cold = CaseReport::merge_cold(vec![cold_page(true, &marks, true), cold_page(true, &marks, true)]).unwrap();
    let report = report_with(vec![("chrome", vec![cold, model_case("minilm/1x16/seed=1", &[1.0, 1.1])])]);
    let tables = phased_tables(&report);
    assert_eq!(tables.len(), 1);
    let rows = &tables[0].rows;
    assert_eq!((tables[0].title, rows.len()), ("Cold start", 1));
    assert_eq!((rows[0].median.as_str(), rows[0].count), ("300.0", 2));
    assert!(model_rows(&report).iter().all(|m| m.case.cold_start.is_none()), "a first run is no rate");
    let md = markdown::render(&report);
    assert!(md.contains("## Cold start") && md.contains("/cold+precompile` | chrome/webgpu | 300.0 | 300.0–300.0 | 2 | device 100.0 ms"), "{md}");
    let html = html::render(&report).unwrap();
    assert!(html.contains("<h2>Cold start</h2>") && html.contains("device 100.0 ms · fetch 50.000 ms"), "the HTML report has the table");
    let errors = schema_errors(&serde_json::to_value(&report).unwrap());
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn your_onnx_models_get_a_table_across_providers_and_browsers_in_both_reports() {
    let report = h200_onnx();
    let md = markdown::render(&report);
    let section = &md[md.find("## Your ONNX models\n").expect("a table of the ONNX files")..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    assert!(section.contains("| case | ort-webgpu chrome | ort-webgpu firefox | ort-jsep chrome | ort-jsep firefox | ort-wasm chrome | ort-wasm firefox |"), "{section}");
    assert!(section.contains("| `model.onnx/batch_size=1,sequence_length=128` | 30.673 (wall, ±13.2%, 1.64×) | "), "one timer a row, the wall clock where ort-wasm has no GPU time: {section}");
    assert!(section.contains(" | **18.745** (wall, ±5.4%, fastest) | "), "{section}");
    assert!(section.contains(" | **failed** 151.5 (wall, ±6.7%, 1.86×) | "), "a failed cell stands out, with its ratio: {section}");
    assert!(section.contains(ONNX_NOTE), "{section}");
    assert!(md.find("## Your ONNX models").unwrap() < md.find("## Flagged").unwrap(), "{md}");
    let html = html::render(&report).unwrap().replace("&#x2F;", "/");
    let section = &html[html.find(r#"<section id="onnx">"#).expect("an ONNX section")..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains("<h2>Your ONNX models</h2>") && section.contains(r#"<table id="onnx-table" class="sortable">"#), "{section}");
    assert!(section.contains(r#"<th>ort-jsep <span class="muted">chrome</span></th>"#), "{section}");
    assert_eq!(section.matches("<tr data-case=").count(), 4, "{section}");
    assert!(section.contains(r#"<td class="passed fastest" data-sort="18.744999999995343">18.745 <small class="muted">wall, ±5.4%</small> <b>fastest</b></td>"#), "{section}");
    assert!(section.contains(r#"<td class="failed stands-out" data-sort="151.49499999999534" title="cosine similarity to the reference 0.988236 in row 40 is below 0.99"#) && section.contains(">failed 151.5 <small class=\"muted\">wall, ±6.7%</small> 1.86×</td>"), "{section}");
    assert_eq!(section.matches("<b>fastest</b>").count(), 3, "three rows have a passed cell: {section}");
    // Without ONNX files, neither report has the table.
    let plain = report_with(vec![("chrome", vec![model_case("a", &[1.0])])]);
    assert!(!markdown::render(&plain).contains("Your ONNX models") && !html::render(&plain).unwrap().contains("Your ONNX models"));
}

#[test]
fn an_onnx_cells_cpu_fallback_and_a_software_adapter_are_said_in_both_reports() {
    use kernels::placement::{ProviderNodes, CPU_PROVIDER};
    let mut report = h200_onnx();
    report.runs[0].cases[0].placement = vec![
        ProviderNodes { provider: CPU_PROVIDER.into(), nodes: 1, listed: vec!["Cast (/embeddings/Cast_3)".into()] },
        ProviderNodes { provider: "WebGpuExecutionProvider".into(), nodes: 5, listed: vec![] },
    ];
    report.runs[1].adapter = Some(crate::adapter::tests::swiftshader());
    let md = markdown::render(&report);
    let section = &md[md.find("## Your ONNX models\n").unwrap()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    assert!(section.contains("| `model.onnx/batch_size=1,sequence_length=128` | **30.673** (wall, ±13.2%, fastest) · CPU 1/6: Cast | "), "{section}");
    assert!(section.contains(" | 18.745 (wall, ±5.4%, software) | "), "chrome/ort-jsep on SwiftShader is shown, not ranked: {section}");
    assert!(section.contains("\nSpeed not compared for chrome/ort-jsep (SwiftShader"), "{section}");
    let html = html::render(&report).unwrap().replace("&#x2F;", "/");
    let section = &html[html.find(r#"<section id="onnx">"#).unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains(r#"<b>fastest</b><br><small class="cpu-fallback" title="On the CPU: Cast (/embeddings/Cast_3)">1 of 6 nodes on the CPU: Cast</small></td>"#), "{section}");
    assert!(section.contains("<p><b>Not ranked:</b> Speed not compared for chrome/ort-jsep (SwiftShader") && section.contains(">18.745 <small class=\"muted\">wall, ±5.4%</small> software</td>"), "{section}");
}

#[test]
fn a_case_below_the_reports_clock_is_flagged_in_every_report() {
    let cases = vec![case("a", &[1.0, 1.1], true, true), case("b", &[1.0, 1.2], true, true), case("c", &[1.0, 1.3], true, true)];
    let mut report = report_with(vec![("firefox", cases)]);
    report.runs[0].cases[0].clock = Some(clocked(1980.0));
    report.runs[0].cases[1].clock = Some(clocked(345.0));
    // A short window: 3 idle readings between bursts of work say nothing of the bursts' clock.
    report.runs[0].cases[2].clock = Some(ClockStats { samples: 3, ..clocked(345.0) });
    report.runs[0].probe = Some(ProbeStatus::Attached(ProbeInfo { source: "stand-in".into(), device: None, stand_in: true, interval_ms: 50.0 }));
    let flags = probe::clock_flags(&report);
    assert_eq!(flags.len(), 1, "only the case with enough samples: {flags:?}");
    assert!(flags[0].id.starts_with("b") && flags[0].why.contains("345 MHz") && flags[0].why.contains("1980 MHz"), "{flags:?}");
    let rule = probe::judging_rule();
    let html = html::render(&report).unwrap();
    assert!(html.contains("Measured below the clock") && html.contains("345 MHz"), "the HTML report flags it");
    assert!(html.contains("unknown (3 samples)") && html.contains(&rule), "the HTML report says which clock is unknown, and why");
    assert!(html.contains("a stand-in: scripted clocks"), "a stand-in probe is named as one");
    let md = markdown::render(&report);
    assert!(md.contains("## Flagged") && md.contains("below 90%") && !md.contains("- `c`"), "{md}");
    assert!(md.contains(&format!("{rule} (1 of 3 cases here)")), "{md}");
    // At 1800 MHz the second case is within 90% of the first: nothing to flag, and the
    // summary still says how clocks were judged.
    report.runs[0].cases[1].clock = Some(clocked(1800.0));
    assert!(probe::clock_flags(&report).is_empty());
    assert!(markdown::render(&report).contains(&rule));
    // The clocks validate against the schema and round-trip.
    let json = serde_json::to_value(&report).unwrap();
    let schema: serde_json::Value = serde_json::from_str(include_str!("../../schema/results.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(&json), "{:?}", validator.iter_errors(&json).map(|e| e.to_string()).collect::<Vec<_>>());
    let mut broken = json.clone();
    broken["runs"][0]["cases"][1]["clock"]["smMhzMedian"] = "fast".into();
    assert!(!validator.is_valid(&broken), "the clock is checked, not merely allowed");
}

#[test]
fn a_crashed_case_and_one_passed_on_a_retry_show_in_every_report() {
    let mut crashed = case("c", &[], true, false);
    crashed.status = CaseStatus::Crashed;
    crashed.message = Some("the WebDriver session failed: invalid session id".into());
    let mut retried = case("r", &[1.0, 1.1], true, true);
    retried.earlier_attempts = vec![Attempt { status: CaseStatus::Crashed, message: "chromedriver ended: signal: 9 (SIGKILL)".into() }];
    let report = report_with(vec![("chrome", vec![case("a", &[1.0], true, true), retried, crashed])]);
    let counts = report.runs[0].counts();
    assert_eq!((counts.passed, counts.crashed), (2, 1));
    assert!(!counts.all_passed());
    assert_eq!(report.runs[0].cases.iter().map(CaseReport::saw_a_crash).collect::<Vec<_>>(), [false, true, true]);

    let html = html::render(&report).unwrap().replace("&#x2F;", "/");
    assert!(html.contains("1 crashed</span>"), "the badge");
    assert!(html.contains("earlier attempt 1: crashed: chromedriver ended: signal: 9 (SIGKILL)"), "the attempts");
    let md = markdown::render(&report);
    assert!(md.contains("| crashed |") && md.contains("| 2 | 0 | 0 | 1 |"), "{md}");
    let junit = junit::render(&report);
    let doc = roxmltree::Document::parse(&junit).unwrap();
    assert_eq!(doc.root_element().attribute("errors"), Some("1"), "{junit}");

    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["runs"][0]["cases"][1]["earlierAttempts"][0]["status"], "crashed");
    assert!(json["runs"][0]["cases"][0].get("earlierAttempts").is_none(), "absent when there were none");
    let schema: serde_json::Value = serde_json::from_str(include_str!("../../schema/results.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(&json), "{:?}", validator.iter_errors(&json).map(|e| e.to_string()).collect::<Vec<_>>());
    let mut broken = json.clone();
    broken["runs"][0]["cases"][1]["earlierAttempts"][0]["status"] = "passed".into();
    assert!(!validator.is_valid(&broken), "an earlier attempt is one that crashed or timed out");
    let dir = tempfile::tempdir().unwrap();
    write_all(&report, dir.path()).unwrap();
    assert_eq!(read_results(&dir.path().join(RESULTS_JSON)).unwrap(), report);
}

#[test]
fn a_model_s_error_against_f32_reaches_results_json_the_html_and_the_markdown_and_validates() {
    let report = report_with(vec![("chrome", vec![model_case("llama.prefill", &[2.0]), f16_model_case("llama-f16.prefill", &[1.5])])]);
    let dir = tempfile::tempdir().unwrap();
    write_all(&report, dir.path()).unwrap();
    assert_eq!(read_results(&dir.path().join(RESULTS_JSON)).unwrap(), report);
    let json = serde_json::to_value(&report).unwrap();
    assert!(json["runs"][0]["cases"][0]["correctness"].get("vsF32").is_none(), "f32 has none");
    let vs = &json["runs"][0]["cases"][1]["correctness"]["vsF32"];
    assert_eq!((&vs["dtype"], &vs["minCosine"], &vs["maxAbsErr"], &vs["maxRmsErr"], &vs["worstRow"]), (&"f16".into(), &0.9998765.into(), &0.031.into(), &0.0091.into(), &3.into()));
    assert_schema_checks(
        &json,
        &[
            ("/runs/0/cases/1/correctness/vsF32/dtype", Value::from("bf16")),
            ("/runs/0/cases/1/correctness/vsF32/maxAbsErr", Value::from(-1.0)),
            ("/runs/0/cases/1/correctness/vsF32/minCosine", Value::from("close")),
        ],
    );

    let shown = "cos 0.99987, max Δ 3.1e-2 (0.91% of row RMS)";
    let page = html::render(&report).unwrap().replace("&#x2F;", "/");
    let models = &page[page.find(r#"<section id="models">"#).unwrap()..];
    let models = &models[..models.find("</section>").unwrap()];
    assert!(models.contains(">vs f32</th>") && models.contains(&format!("<td class=\"left\">{shown}</td>")), "{models}");
    assert!(models.contains("<td class=\"left\">–</td>"), "the f32 row has none: {models}");
    assert!(models.contains("the error the dtype itself causes, shown for reading and never a failure"), "{models}");
    let md = markdown::render(&report);
    assert!(md.contains("| status | check | vs f32 |") && md.contains(&format!("| passed | cos ≥ 0.99987 | {shown} |")), "{md}");
    assert!(md.contains("| passed | cos ≥ 0.99987 | – |") && md.contains(VS_F32_NOTE), "{md}");

    let f32_only = report_with(vec![("chrome", vec![model_case("llama.prefill", &[2.0])])]);
    assert!(!html::render(&f32_only).unwrap().contains("vs f32") && !markdown::render(&f32_only).contains("vs f32"), "no column without a narrower dtype");
}

#[test]
fn peaks_and_fractions_reach_results_json_the_html_and_the_markdown_and_validate() {
    let mut report = probed_report(vec![costed("add", 1, 5e8, 5e8), costed("matmul", 1, 2.5e9, 2.5e7)]);
    let plain = probed_report(vec![costed("add", 1, 5e8, 5e8)]);
    assert!(!html::render(&plain).unwrap().contains("Of peak") && !markdown::render(&plain).contains("of peak"), "no column without peaks");
    model::roofline::apply(&mut report);

    let dir = tempfile::tempdir().unwrap();
    write_all(&report, dir.path()).unwrap();
    let read = read_results(&dir.path().join(RESULTS_JSON)).unwrap();
    assert_eq!(read, report);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["runs"][0]["roofline"]["memory"]["value"], 1000.0);
    assert_eq!(json["runs"][0]["roofline"]["compute"]["case"], "fma_chain/1");
    assert_eq!(json["runs"][0]["cases"][3]["roofline"]["bound"], "memory");
    assert_eq!(json["runs"][0]["cases"][4]["roofline"]["fraction"], 0.25);
    assert_schema_checks(
        &json,
        &[
            ("/runs/0/cases/3/roofline/bound", Value::from("cache")),
            ("/runs/0/cases/3/roofline/fraction", Value::from(-0.5)),
            ("/runs/0/roofline/memory/value", Value::from("fast")),
            ("/runs/0/roofline/compute/timer", Value::from("sundial")),
        ],
    );

    // Tera escapes `/` in text as `&#x2F;`; browsers show it as `/`.
    let page = html::render(&report).unwrap().replace("&#x2F;", "/");
    assert!(page.contains("<th>Of peak</th>") && page.contains(">50% mem</td>") && page.contains(">25% FMA</td>"), "the case table");
    assert!(page.contains("<dt>Roofline</dt><dd>1.00 TB/s copy, 10.0 TFLOP/s FMA (GPU timestamps)"), "the run's peaks");
    assert!(page.contains("25.0% of 10.0 TFLOP/s; compute-bound"), "the hover says why");
    let md = markdown::render(&report);
    assert!(md.contains("- chrome/webgpu roofline: 1.00 TB/s copy, 10.0 TFLOP/s FMA (GPU timestamps)"), "{md}");
    assert!(md.contains("| GB/s | of peak |") && md.contains("| 500.00 | 50% mem |") && md.contains("| 25% FMA |"), "{md}");

    // Across runs, each cell carries its run's fraction.
    let mut two = report.clone();
    two.runs.push(two.runs[0].clone());
    two.runs[1].browser = "firefox".into();
    assert!(markdown::render(&two).contains("| `add/1` | gpu | 1.000 (×1.00, cv 0%, 50% mem) | 1.000 (×1.00, cv 0%, 50% mem) |"), "{}", markdown::render(&two));
}

#[test]
fn v4_results_with_workloads_sampling_and_latency_round_trip_and_validate() {
    let mut report = report_with(vec![("chrome", vec![model_case("prefill", &[2.0, 2.1, 1.9]), case("a", &[1.0], false, false)])]);
    report.runs[0].completion_latency = Some(Latency::new(kernels::wire::CompletionLatency {
        work_done_ms: vec![100.2, 100.3, 100.25],
        map_async_ms: vec![100.3, 100.35, 100.4],
        nudged_work_done_ms: vec![0.2, 0.3, 0.25],
        nudged_map_async_ms: vec![0.3, 0.35, 0.4],
    }));
    report.runs[0].cases[1].nudges = Some(12);
    report.settings.cases = vec![encoder_spec(), decoder_spec(Phase::Prefill), decoder_spec(Phase::Op("attention".into())), user_spec()];
    report.runs[0].cases[0].correctness.as_mut().unwrap().reference = Some("native wgpu (llvmpipe)".into());
    let dir = tempfile::tempdir().unwrap();
    write_all(&report, dir.path()).unwrap();
    assert_eq!(read_results(&dir.path().join(RESULTS_JSON)).unwrap(), report);

    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["schemaVersion"], SCHEMA_VERSION);
    assert_eq!(json["settings"]["sampling"], "steady");
    assert_eq!((&json["runs"][0]["cases"][1]["batch"], &json["runs"][0]["cases"][1]["inFlight"]), (&4.into(), &2.into()));
    assert_eq!(json["runs"][0]["completionLatency"]["workDone"]["median"], 100.25);
    assert_eq!(json["runs"][0]["completionLatency"]["nudgedWorkDone"]["median"], 0.25);
    assert_eq!((&json["runs"][0]["cases"][1]["nudges"], &json["settings"]["nudge"]), (&12.into(), &"auto".into()));
    assert!(json["runs"][0]["cases"][0].get("nudges").is_none(), "absent where none were");
    let latency = report.runs[0].completion_latency.as_ref().unwrap().describe();
    assert!(latency.contains("submit→onSubmittedWorkDone 100.2 ms") && latency.contains("nudged") && latency.contains("0.2500 ms"), "{latency}");
    // 16 tokens per run at a 2 ms median.
    assert_eq!(json["runs"][0]["cases"][0]["throughput"]["perSecond"], 16.0 / 2.0 * 1e3);
    assert!(json["runs"][0]["cases"][1].get("throughput").is_none());
    let errors = schema_errors(&json);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    // The new parts are checked, not merely allowed.
    for (pointer, bad) in [
        ("/settings/cases/0/workload/type", Value::from("gan")),
        ("/settings/cases/3/workload/buffers/0/ty", Value::from("f16")),
        ("/settings/cases/1/workload/dtype", Value::from("bf16")),
        ("/runs/0/cases/0/throughput/perRun", Value::from("many")),
        ("/runs/0/cases/0/correctness/cosineThreshold", Value::from("high")),
        ("/settings/sampling", Value::from("lukewarm")),
        ("/settings/nudge", Value::from("sometimes")),
        ("/runs/0/cases/1/nudges", Value::from(0)),
        ("/runs/0/cases/1/batch", Value::from(0)),
        ("/runs/0/completionLatency/samples/workDoneMs/0", Value::from(-1.0)),
        ("/runs/0/completionLatency/samples/nudgedWorkDoneMs/0", Value::from(-1.0)),
        ("/runs/0/completionLatency/nudgedMapAsync/median", Value::from("fast")),
    ] {
        let mut broken = json.clone();
        *broken.pointer_mut(pointer).unwrap() = bad;
        assert!(!schema_errors(&broken).is_empty(), "{pointer} must be checked");
    }
}

/// A tfjs run beside a webgpu run: the platform validates, a case it cannot run is
/// `unsupported` with its reason (skipped in junit, counted apart, not a failure), and the
/// cross-platform comparison puts tfjs next to webgpu for the same case.
#[test]
fn v5_tfjs_runs_with_unsupported_cases_validate_and_compare() {
    let rmsnorm = kernels::CaseSpec::new("rmsnorm", kernels::Shape(vec![2, 8]), 1);
    let reason = "not supported on tfjs: TensorFlow.js 4.22.0 has no op for `rmsnorm`";
    let unsupported = CaseReport::unmeasured(&rmsnorm, &rmsnorm.info().unwrap(), CaseStatus::Unsupported, Some(reason.into()));
    let mut report = report_with(vec![
        ("chrome", vec![case("a", &[1.0, 1.1], true, true)]),
        ("chrome", vec![case("a", &[2.0, 2.1], true, true), unsupported]),
    ]);
    report.runs[1].platform = "tfjs".into();
    report.settings.platforms = vec!["webgpu".into(), "tfjs".into()];
    let json = serde_json::to_value(&report).unwrap();
    let errors = schema_errors(&json);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert_eq!(json["runs"][1]["cases"][1]["status"], "unsupported");
    for (pointer, bad) in [("/runs/1/platform", Value::from("onnx")), ("/runs/1/cases/1/status", Value::from("skipped"))] {
        let mut broken = json.clone();
        *broken.pointer_mut(pointer).unwrap() = bad;
        assert!(!schema_errors(&broken).is_empty(), "{pointer} must be checked");
    }
    let counts = report.runs[1].counts();
    assert_eq!((counts.passed, counts.unsupported), (1, 1));
    assert!(counts.all_passed(), "an unsupported case is no failure");
    let junit = junit::render(&report);
    assert!(junit.contains("<skipped") && junit.contains("not supported on tfjs"), "{junit}");
    let cmp = compare::compare_runs(&report).unwrap();
    assert_eq!(cmp.runs, ["chrome/webgpu", "chrome/tfjs"]);
    let a = cmp.cases.iter().find(|c| c.id == "a").unwrap();
    assert_eq!(a.entries.iter().map(|e| e.ratio.map(|r| r.round())).collect::<Vec<_>>(), [Some(1.0), Some(2.0)]);
    assert!(markdown::render(&report).contains("| unsupported |"));
    assert!(html::render(&report).unwrap().contains("1 unsupported on tfjs"));
}

#[test]
fn the_users_browser_flags_round_trip_and_validate() {
    let mut report = report_with(vec![("chrome", vec![case("a", &[1.0], true, true)])]);
    let plain = serde_json::to_value(&report).unwrap();
    assert!(plain["settings"].get("browserArgs").is_none() && plain["settings"].get("browserPrefs").is_none(), "absent when none");
    report.settings.browser_args = vec!["chrome=--user-agent=a/1".into(), "--x".into()];
    report.settings.browser_prefs = vec!["firefox=a.b=true".into()];
    report.runs[0].browser_info = Some(BrowserInfo {
        name: "chrome".into(),
        version: "1".into(),
        path: None,
        flags: vec!["--headless=new".into(), "--user-agent=a/1".into(), "--x".into()],
        user_flags: vec!["--user-agent=a/1".into(), "--x".into()],
        gpu_flags: vec!["--use-vulkan=native".into()],
        environment: vec!["VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json (why)".into()],
        profile_seed: Some("startupCache and compatibility.ini from /root/.cache/harness/profile-seeds/firefox-1".into()),
    });
    report.host.gpus = vec!["NVIDIA H100 80GB HBM3 (nvidia 580.159.04)".into()];
    let dir = tempfile::tempdir().unwrap();
    write_all(&report, dir.path()).unwrap();
    assert_eq!(read_results(&dir.path().join(RESULTS_JSON)).unwrap(), report);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["settings"]["browserArgs"][0], "chrome=--user-agent=a/1");
    assert_eq!(json["runs"][0]["browserInfo"]["userFlags"][1], "--x");
    let errors = schema_errors(&json);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    for (pointer, bad) in [
        ("/settings/browserArgs/0", Value::from(3)),
        ("/settings/browserPrefs/0", Value::from("firefox")),
        ("/runs/0/browserInfo/userFlags", Value::from("--x")),
        ("/runs/0/browserInfo/gpuFlags", Value::from("--x")),
        ("/runs/0/browserInfo/environment/0", Value::from(1)),
        ("/host/gpus", Value::from("H100")),
    ] {
        let mut broken = json.clone();
        *broken.pointer_mut(pointer).unwrap() = bad;
        assert!(!schema_errors(&broken).is_empty(), "{pointer} must be checked");
    }
}

/// A browser on a software adapter on a machine with a GPU is warned about in summary.md and
/// in a banner atop report.html (the warning itself: `adapter`'s tests).
#[test]
fn a_software_adapter_on_a_gpu_machine_is_a_warning_in_the_markdown_and_a_banner_in_the_html() {
    let cases = || vec![case("a", &[1.0], true, true)];
    let mut report = report_with(vec![("chrome", cases()), ("firefox", cases())]);
    report.runs[0].adapter = Some(adapter::tests::swiftshader());
    let quiet = (markdown::render(&report), html::render(&report).unwrap());
    assert!(!quiet.0.contains("Warning") && !quiet.1.contains("banner failed"), "no GPU on the host: no warning");
    report.host.gpus = vec!["NVIDIA H100 80GB HBM3 (nvidia 580.159.04)".into()];
    let markdown = markdown::render(&report);
    assert!(markdown.contains("> **Warning:** chrome") && markdown.contains("SwiftShader"), "{markdown}");
    let html = html::render(&report).unwrap();
    assert!(html.contains("class=\"banner failed\"") && html.contains("harness doctor"), "the HTML report's banner");
}

#[test]
fn an_unavailable_platform_a_lost_device_and_memory_growth_show_in_every_report() {
    let mut lost = case("l", &[], true, false);
    lost.status = CaseStatus::DeviceLost;
    lost.message = Some("the GPU device was lost: reason `destroyed`".into());
    let mut unsupported = case("u", &[], true, false);
    unsupported.status = CaseStatus::Unsupported;
    let mut report = report_with(vec![("chrome", vec![case("a", &[1.0], true, true), lost]), ("chrome", vec![unsupported])]);
    report.runs[1].platform = "webnn".into();
    report.runs[1].status = RunStatus::Unavailable;
    report.runs[1].unavailable = Some("NotSupportedError: WebNN is not supported on this platform".into());
    // 200 cases: harness flat after warm-up, the browser up 10%.
    report.runs[0].memory = (0..=200)
        .map(|i| MemorySample { cases: i, harness_rss_kib: if i < 20 { 50_000 + i as u64 } else { 80_000 }, browser_pss_kib: Some(400_000 + 200 * i as u64) })
        .collect();
    let growth = report.runs[0].memory_growth().unwrap();
    assert_eq!((growth.cases, growth.harness_kib, growth.browser_kib), (180, (80_000, 80_000), Some((404_000, 440_000))));
    assert!(growth.describe().contains("(+0.0%)") && growth.describe().contains("(+8.9%)"), "{}", growth.describe());
    assert!(growth.harness_kib_per_case == 0.0 && (growth.browser_kib_per_case.unwrap() - 200.0).abs() < 1e-9, "{growth:?}");
    assert!(!growth.harness_leaks() && growth.describe().contains("+200.0 KiB a case"), "{}", growth.describe());
    let mut short = report.runs[0].clone();
    short.memory.truncate(50);
    assert_eq!(short.memory_growth(), None, "too few cases to tell");
    assert!(report.runs[1].counts().all_passed(), "an unavailable platform is no failure");
    assert!(!report.runs[0].counts().all_passed(), "a lost device is");

    let html = html::render(&report).unwrap();
    for want in ["1 device lost</span>", "WebNN is not supported", "browser PSS"] {
        assert!(html.contains(want), "html lacks {want}");
    }
    let md = markdown::render(&report);
    assert!(md.contains("| device lost |") && md.contains("unavailable: NotSupportedError") && md.contains("memory: harness RSS"), "{md}");
    let junit = junit::render(&report);
    assert!(junit.contains("GPU device lost"), "{junit}");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!((json["runs"][1]["status"].as_str(), json["runs"][0]["cases"][1]["status"].as_str()), (Some("unavailable"), Some("deviceLost")));
    let schema: serde_json::Value = serde_json::from_str(include_str!("../../schema/results.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(&json), "{:?}", validator.iter_errors(&json).map(|e| e.to_string()).collect::<Vec<_>>());
}
