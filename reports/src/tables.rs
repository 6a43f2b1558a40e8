//! The tables every report shares (Models, Cold start, From text), each row formatted once from the
//! model so the HTML report, the Markdown summary and the terminal agree, with what each says
//! under it.

use crate::model::{format_check, format_ci, format_drift, format_ms, labels, phases_line, CaseReport, RunReport};
use kernels::wire::Phase;
use serde::Serialize;

/// What the Models tables' *vs f32* column means, said under every table that shows it.
pub const VS_F32_NOTE: &str = "vs f32: a model whose weights are stored in f16, q8_0 or q4_0, compared with the same model \
    in f32: the least cosine similarity of an output row, the largest absolute difference, and that difference as a share \
    of its row's RMS. It is the error the dtype itself causes, shown for reading and never a failure: the check beside it \
    compares with a reference over the same rounded weights.";

/// One model case (a case with a [`Throughput`](crate::model::Throughput)) of one run, formatted once for the Models
/// tables of every report (HTML, Markdown, terminal) so they agree.
#[derive(Debug, Clone, Serialize)]
pub struct ModelRow<'a> {
    /// The case.
    pub case: &'a CaseReport,
    /// The run's label (`chrome/webgpu`, see [`labels`]).
    pub run: String,
    /// `gpu` or `wall`: the timer of `median`.
    pub timer: &'static str,
    /// Median ms per run, or `–`.
    pub median: String,
    /// The median's 95% CI half-width (`±1.2%`), or `–`.
    pub ci: String,
    /// Items per second (`412.3 tokens/s`), or `–`.
    pub rate: String,
    /// Milliseconds per item (`2.425 ms/token`), or `–`.
    pub per_item: String,
    /// GPU dispatches per item (`287/token`), or `–`.
    pub dispatches: String,
    /// The check in brief ([`format_check`]), or `–` unchecked.
    pub check: String,
    /// For a model in f16, q8_0 or q4_0: its error against the f32 model ([`format_drift`]).
    pub vs_f32: Option<String>,
}

/// What the Models tables say under a *vs f32* column ([`VS_F32_NOTE`]), where some row has one.
pub fn vs_f32_note(rows: &[ModelRow<'_>]) -> Option<&'static str> {
    rows.iter().any(|r| r.vs_f32.is_some()).then_some(VS_F32_NOTE)
}

/// Every model case of every run, run by run: the rows of the Models tables. Empty when no case
/// has a throughput (kernel-only runs), so callers leave the section out.
pub fn model_rows(report: &RunReport) -> Vec<ModelRow<'_>> {
    let labels = labels(report);
    let mut rows = Vec::new();
    for (run, label) in report.runs.iter().zip(labels) {
        for case in run.cases.iter().filter(|c| c.cold_start.is_none()) {
            let Some(t) = &case.throughput else { continue };
            let h = case.headline();
            rows.push(ModelRow {
                case,
                run: label.clone(),
                timer: case.timer_label(),
                median: h.map(|s| format_ms(s.median)).unwrap_or_else(|| "–".into()),
                ci: format_ci(h.and_then(|s| s.ci_half_width_pct)),
                rate: t.format_rate(),
                per_item: t.format_ms_per_item(),
                dispatches: t.format_dispatches(),
                check: case.correctness.as_ref().map(format_check).unwrap_or_else(|| "–".into()),
                vs_f32: case.correctness.as_ref().and_then(|v| v.vs_f32.as_ref()).map(format_drift),
            });
        }
    }
    rows
}

/// One case of one run timed in phases (a cold start, a run from text), formatted once for the
/// phase tables of every report.
#[derive(Debug, Clone, Serialize)]
pub struct PhasedRow<'a> {
    /// The case.
    pub case: &'a CaseReport,
    /// The run's label (`chrome/webgpu`, see [`labels`]).
    pub run: String,
    /// Median ms of a sample (to the first result; a whole call), or `–`.
    pub median: String,
    /// `min–max` over the samples, or `–`.
    pub spread: String,
    /// Samples: fresh pages, or calls.
    pub count: usize,
    /// Each phase's median ([`phases_line`]), or `–`.
    pub phases: String,
}

/// A table of cases timed in phases, with what its columns and it mean.
#[derive(Debug, Clone, Serialize)]
pub struct PhasedTable<'a> {
    /// Its anchor in the HTML report (`cold-start`).
    pub id: &'static str,
    /// Its heading.
    pub title: &'static str,
    /// What a row measures, in a line (the terminal's heading).
    pub about: &'static str,
    /// What the median column holds.
    pub median_header: &'static str,
    /// What a sample is (`pages`).
    pub count_header: &'static str,
    /// What it means, said under it.
    pub note: &'static str,
    /// Its rows, run by run.
    pub rows: Vec<PhasedRow<'a>>,
}

/// The phase tables with any rows: cold starts (`harness run --cold-start`), then runs from text
/// (`--from-text`).
pub fn phased_tables(report: &RunReport) -> Vec<PhasedTable<'_>> {
    let cold = PhasedTable {
        id: "cold-start",
        title: "Cold start",
        about: "cold start (from a fresh page in a new profile to the first result read back)",
        median_header: "first result ms (median)",
        count_header: "pages",
        note: COLD_NOTE,
        rows: phased_rows(report, |c| c.cold_start.as_ref().map(|r| (r.pages.len(), r.median_phases.as_slice()))),
    };
    let text = PhasedTable {
        id: "from-text",
        title: "From text",
        about: "from text, images or audio (a pipeline's input to its output read back, one call a sample)",
        median_header: "ms a call (median)",
        count_header: "calls",
        note: TEXT_NOTE,
        rows: phased_rows(report, |c| c.from_text.as_ref().map(|r| (r.calls.len(), r.median_phases.as_slice()))),
    };
    [cold, text].into_iter().filter(|t| !t.rows.is_empty()).collect()
}

/// The rows of every case `pick` finds phases in (with their count of samples), run by run.
fn phased_rows<'a>(report: &'a RunReport, pick: impl Fn(&CaseReport) -> Option<(usize, &[Phase])>) -> Vec<PhasedRow<'a>> {
    let labels = labels(report);
    let mut rows = Vec::new();
    for (run, label) in report.runs.iter().zip(labels) {
        for case in &run.cases {
            let Some((count, phases)) = pick(case) else { continue };
            let w = case.wall.as_ref();
            rows.push(PhasedRow {
                case,
                run: label.clone(),
                median: w.map(|w| format_ms(w.median)).unwrap_or_else(|| "–".into()),
                spread: w.map(|w| format!("{}–{}", format_ms(w.min), format_ms(w.max))).unwrap_or_else(|| "–".into()),
                count,
                phases: if phases.is_empty() { "–".into() } else { phases_line(phases) },
            });
        }
    }
    rows
}

/// What the Cold start tables mean, said under each.
pub const COLD_NOTE: &str = "Each page is new, in a fresh browser profile (no HTTP or shader cache), timed from navigation (performance.timeOrigin) to the first output read back, which is then checked like any case. Phases, each from the end of the one before, median over the pages: harness's device (page, its WASM, adapter and device), fetch (weights), upload (program built, weights into GPU buffers), pipelines (created, and validated through an error scope, which waits for compilation), dispatch (first pass encoded and submitted), result (GPU done, output read back); onnxruntime-web's engine (page, WASM, ORT's script), fetch, onnx (the model file written in the page, what an app would fetch), session (InferenceSession.create), dispatch (first session.run), result; for your own ONNX file (--onnx), fetch is the file and its external data, and there is no onnx phase. +precompile: every pipeline created up front, all at once, with createComputePipelineAsync.";

/// What the From text tables mean, said under each.
pub const TEXT_NOTE: &str = "Sentences to L2-normalised embeddings read back into JavaScript or WASM, as a web app calls it: each sample one call, awaited, after the pipeline was created (wall clock). transformers.js: its pipeline('feature-extraction') step by step, tokenize (its tokenizer, padding to the longest sentence), run (pipe.model: inputs uploaded, onnxruntime-web's C++ WebGPU provider, the hidden states read back), pool (mean over the mask, then L2, in JavaScript). harness: tokenize (the tokenizers crate in the page's WASM, same padding), run (ids written, one pass, the embeddings read back; pooling runs on the GPU inside it). Both on the ONNX-equivalent graph of the same weights, checked against the same reference. A Hugging Face folder (--hf-model, DIR/feature-extraction/batch=N): transformers.js's calls as above, on the folder's own files, checked against its ONNX file run natively by tract-onnx on the same tokens, pooled and normalised in f64; an image classifier's (DIR/image-classification/batch=N) or a CTC speech model's (DIR/automatic-speech-recognition/batch=N) calls are the pipeline whole on N seeded images or one-second clips, in phases preprocess, run (the model's own call, timed from inside the pipeline) and postprocess, checked by each image's softmax scores or each clip's frames' logits.";

/// What the GPU timer table says under it.
pub const GPU_TIMER_NOTE: &str = "The page GPU timer (page/static/gpu-timer.js) gives every compute pass that has no timestamps \
    of its own a begin and an end timestamp, whoever records it. A sample's work is the command buffers submitted during it. \
    span: from its first pass's begin to its last pass's end, idle gaps included (the headline, as harness's own timestamps, \
    which bracket the one pass a batch is recorded in). busy: its passes' times summed. Passes with timestamps of their own, \
    render passes and copies are not timed: a window holding any is incomplete. Cost: the same case sampled again right after, \
    alternately with the timer's timestamps and without, twice each, batches sized on the wall clock both ways: wall time \
    per run over each way's timed samples (their throughput).";

/// One case of one run timed by the page GPU timer, or that says why it could not be.
#[derive(Debug, Clone, Serialize)]
pub struct GpuTimerRow<'a> {
    /// The case.
    pub case: &'a CaseReport,
    /// The run's label.
    pub run: String,
    /// Median span ms per run, or `–`.
    pub span: String,
    /// Median busy ms per run, or `–`.
    pub busy: String,
    /// Median wall ms per run, or `–`.
    pub wall: String,
    /// The timer's cost on wall time (`+0.4% (1.234 vs 1.229 ms a run)`), or `–` where not measured.
    pub cost: String,
    /// The timer and what it could not time, in words.
    pub timer: String,
}

/// Every case the page GPU timer timed (or could not), run by run.
pub fn gpu_timer_rows(report: &RunReport) -> Vec<GpuTimerRow<'_>> {
    let ms = |s: Option<&stats::Summary>| s.map(|s| format_ms(s.median)).unwrap_or_else(|| "–".into());
    let labels = labels(report);
    let mut rows = Vec::new();
    for (run, label) in report.runs.iter().zip(labels) {
        for case in run.cases.iter() {
            let Some(t) = &case.gpu_timer else { continue };
            rows.push(GpuTimerRow {
                case,
                run: label.clone(),
                span: ms(case.gpu.as_ref()),
                busy: ms(case.busy.as_ref()),
                wall: ms(case.wall.as_ref()),
                cost: t.cost.map(|c| format!("{:+.1}% ({} vs {} ms a run)", c.pct(), format_ms(c.with_ms), format_ms(c.without_ms))).unwrap_or_else(|| "–".into()),
                timer: t.describe(),
            });
        }
    }
    rows
}
