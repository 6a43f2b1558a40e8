//! End-to-end tests of `harness run --hf-model DIR`: a Hugging Face model folder (a tiny BERT that
//! torch exported and a tokenizer that transformers trained from MiniLM's,
//! tests/onnx-models/make_tiny_bert.py) run through transformers.js's pipeline('feature-extraction')
//! in headless Chromium (SwiftShader here), each call timed as the runs from text are, and checked
//! against tract-onnx's run of the same file on the same tokens, mean-pooled and normalised
//! natively; a reference perturbed on disk fails the case, naming the embeddings; an image
//! classifier's folder (a tiny ViT torch exported, tests/onnx-models/make_tiny_vit.py) runs
//! through pipeline('image-classification') on seeded images, checked against tract-onnx's logits
//! on the same pixels, normalized natively, through softmax; a CTC speech model's folder (a tiny
//! Wav2Vec2 torch exported, tests/onnx-models/make_tiny_wav2vec2.py) runs through
//! pipeline('automatic-speech-recognition') on seeded clips, its frames' logits checked against
//! tract-onnx's on the same normalized samples; a folder of a task harness does not run is refused
//! before any browser starts.

mod common;
use common::*;
use serde_json::Value;

fn tiny_bert() -> String {
    workspace().join("harness/tests/onnx-models/tiny-bert").display().to_string()
}

fn tiny_vit() -> String {
    workspace().join("harness/tests/onnx-models/tiny-vit").display().to_string()
}

fn tiny_wav2vec2() -> String {
    workspace().join("harness/tests/onnx-models/tiny-wav2vec2").display().to_string()
}

/// The arguments of a run of a folder at two sentences (or images) a call in Chromium.
fn args(folder: &str) -> [&str; 14] {
    ["--hf-model", folder, "--batch", "2", "--browser", "chrome", "--platform", "transformers", "--samples", "3", "--warmup", "0", "--max-time", "1"]
}

#[test]
fn a_hugging_face_folder_runs_through_transformers_js_in_headless_chromium_and_passes() {
    let folder = tiny_bert();
    let (code, results, stderr) = run_checked("hf-model", &args(&folder));
    assert_eq!(code, Some(0), "{stderr}");
    let run = &results["runs"][0];
    assert_eq!(run["platform"], "transformers", "{run:#}");
    let c = &run["cases"][0];
    assert_eq!((&c["id"], &c["status"]), (&Value::from("tiny-bert/feature-extraction/batch=2"), &Value::from("passed")), "{c:#}");
    let check = &c["correctness"];
    assert_eq!(check["len"], 2 * 32, "two sentences' embeddings of 32: {c:#}");
    assert!(check["reference"].as_str().is_some_and(|r| r.contains("tract-onnx") && r.contains("mean pooling")), "{c:#}");
    // Timed as the runs from text are: a call a sample, in transformers.js's phases.
    let (calls, samples) = (c["fromText"]["calls"].as_array().unwrap(), c["samples"].as_array().unwrap());
    assert_eq!((calls.len(), samples.len()), (3, 3), "{c:#}");
    for call in calls {
        let names: Vec<&str> = call.as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["tokenize", "run", "pool"], "{c:#}");
    }
    assert_page_gpu_times(run, c);
}

#[test]
fn an_image_classifier_runs_through_transformers_js_on_seeded_images_and_passes() {
    let c = passes_whole(&tiny_vit(), "hf-model-vit", "tiny-vit/image-classification/batch=2", "softmax", &[]);
    assert_eq!(c["correctness"]["len"], 2 * 10, "two images' scores over 10 labels: {c:#}");
}

/// Runs `folder` at two inputs a call (`extra` arguments after): its case `id` passes, checked
/// against tract-onnx and the post-processing `reference` names, each call in the phases of a
/// pipeline called whole, its GPU timed by the page; the case.
fn passes_whole(folder: &str, name: &str, id: &str, reference: &str, extra: &[&str]) -> Value {
    let all: Vec<&str> = args(folder).into_iter().chain(extra.iter().copied()).collect();
    let (code, results, stderr) = run_checked(name, &all);
    let c = &results["runs"][0]["cases"][0];
    assert_eq!(code, Some(0), "{stderr}\n{c:#}");
    assert_eq!((&c["id"], &c["status"]), (&Value::from(id), &Value::from("passed")), "{c:#}");
    assert!(c["correctness"]["reference"].as_str().is_some_and(|r| r.contains("tract-onnx") && r.contains(reference)), "{c:#}");
    for call in c["fromText"]["calls"].as_array().unwrap() {
        let names: Vec<&str> = call.as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["preprocess", "run", "postprocess"], "{c:#}");
    }
    assert_page_gpu_times(&results["runs"][0], c);
    c.clone()
}

#[test]
fn a_ctc_speech_model_runs_through_transformers_js_on_seeded_clips_and_passes() {
    // Two seconds of audio a call through SwiftShader: over the default 60 s case timeout when the
    // suite's other tests load both cores.
    let c = passes_whole(&tiny_wav2vec2(), "hf-model-wav2vec2", "tiny-wav2vec2/automatic-speech-recognition/batch=2", "CTC", &["--timeout", "300"]);
    assert_eq!(c["correctness"]["len"].as_u64().map(|n| n % (2 * 32)), Some(0), "two clips' frames of 32 logits: {c:#}");
}

/// Two folders in one run share a page: the second (an image model) must be asked for its own
/// files, not for the first's tokenizer (transformers.js kept what it read of a model id).
#[test]
fn a_text_folder_then_an_image_folder_in_one_run_both_pass() {
    let folders = format!("{},{}", tiny_bert(), tiny_vit());
    let (code, results, stderr) = run_checked("hf-model-two", &["--hf-model", &folders, "--batch", "1", "--browser", "chrome", "--platform", "transformers", "--samples", "2", "--warmup", "0", "--max-time", "1"]);
    let cases = results["runs"][0]["cases"].as_array().unwrap();
    let statuses: Vec<(&str, &str)> = cases.iter().map(|c| (c["id"].as_str().unwrap(), c["status"].as_str().unwrap())).collect();
    assert_eq!(statuses, [("tiny-bert/feature-extraction/batch=1", "passed"), ("tiny-vit/image-classification/batch=1", "passed")], "{stderr}\n{cases:#?}");
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_perturbed_reference_fails_the_case_naming_the_embeddings() {
    let cache = tempfile::tempdir().unwrap();
    let env = [("HARNESS_REFERENCE_CACHE", cache.path().to_str().unwrap())];
    let folder = tiny_bert();
    let (code, results, stderr) = run_checked_with("hf-model-kept", &args(&folder), &env);
    assert_eq!((code, &results["runs"][0]["cases"][0]["status"]), (Some(0), &Value::from("passed")), "{stderr}");
    // The kept reference: the two sentences' embeddings, 2×32 values; one of the second's moves.
    let kept: Vec<_> = std::fs::read_dir(cache.path()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("tiny-bert")).collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let mut bytes = std::fs::read(&kept[0]).unwrap();
    assert_eq!(bytes.len(), 64 * 8);
    let at = 40 * 8;
    let value = f64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    bytes[at..at + 8].copy_from_slice(&(value + 1.0).to_le_bytes());
    std::fs::write(&kept[0], bytes).unwrap();
    let (code, results, stderr) = run_checked_with("hf-model-perturbed", &args(&folder), &env);
    let c = &results["runs"][0]["cases"][0];
    assert_eq!((code, &c["status"]), (Some(1), &Value::from("failed")), "{stderr}");
    assert!(c["message"].as_str().unwrap().starts_with("output `embeddings`"), "{c:#}");
    assert_eq!(c["correctness"]["worstRow"], 1, "{c:#}");
}

/// A folder of a task harness does not run yet is refused by name, with exit status 2, before
/// any browser starts; so is one without its ONNX file.
#[test]
fn a_folder_harness_cannot_run_is_refused_before_any_browser_starts() {
    let asr = tempfile::tempdir().unwrap();
    std::fs::write(asr.path().join("config.json"), r#"{"architectures": ["WhisperForConditionalGeneration"], "model_type": "whisper"}"#).unwrap();
    let bare = tempfile::tempdir().unwrap();
    for name in ["config.json", "tokenizer.json", "tokenizer_config.json"] {
        std::fs::copy(workspace().join("harness/tests/onnx-models/tiny-bert").join(name), bare.path().join(name)).unwrap();
    }
    for (folder, expected) in [(asr.path(), "pipeline('automatic-speech-recognition'), which harness does not run yet"), (bare.path(), "no onnx/model.onnx in it")] {
        let out = harness(&["run", "--hf-model", folder.to_str().unwrap(), "--browser", "chrome", "--platform", "transformers"]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(expected), "{stderr}");
        assert!(!stderr.contains("starting"), "no browser starts: {stderr}");
    }
    let help = text(&harness(&["run", "--help"]).stdout);
    assert!(help.contains("--hf-model <DIR>") && help.contains("feature-extraction") && help.contains("onnx/model.onnx"), "{help}");
}
