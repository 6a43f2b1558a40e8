//! `--from-text`: MiniLM from sentences to embeddings read back, as a web app calls it, each
//! sample one call, timed in phases ([`kernels::sampling::sample_phases`]).
//!
//! On `webgpu`, harness's own path: the tokenizers crate in this WASM, on the same
//! tokenizer.json harness tokenised the case with natively (the ids must come out the same),
//! the ids and lengths written into the program's input buffers, one run, the embeddings read
//! back; pooling runs on the GPU within the run. On `transformers`, transformers.js's
//! `pipeline('feature-extraction')` step by step (`static/transformers.js`), on the ONNX file
//! harness writes of the same graph with BERT's signature, or on a user's Hugging Face folder
//! (`--hf-model`), every file of it fetched from the harness; an image classifier's folder runs
//! `pipeline('image-classification')` on images made here from the case's seed, the same bytes
//! harness's reference normalizes ([`kernels::hf_pipeline::images`]), and a CTC speech model's
//! `pipeline('automatic-speech-recognition')` on clips made so ([`kernels::hf_pipeline::audio`]).

use crate::engine::{describe, enable_timer, fetch_served, Completion};
use kernels::gpu_timer::{GpuTimerSource, GpuTimerUse, WindowTimes};
use kernels::hf_pipeline::{Feeds, Task};
use kernels::api::Api;
use kernels::gpu::{Gpu, GpuError, Prepared};
use kernels::model::encoder::{pack, EncoderCase};
use kernels::model::weights::Weights;
use kernels::program::{words_to_bytes, Program};
use kernels::sampling::{now_ms, sample_phases, ClockGate, Phased};
use kernels::wire::CaseMeasurement;
use kernels::{CaseSpec, RunPlan, Workload};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// Loads transformers.js from the harness server.
    #[wasm_bindgen(catch, js_namespace = harnessTransformers, js_name = load)]
    async fn load() -> Result<JsValue, JsValue>;
    /// Creates the pipeline of `task` on WebGPU over the model folder `files`
    /// (`{name: Uint8Array}`), the ONNX file's external data in the files `external` names
    /// (relative to `onnx/`).
    #[wasm_bindgen(catch, js_namespace = harnessTransformers, js_name = prepare)]
    async fn prepare(files: &js_sys::Object, external: &js_sys::Array, task: &str) -> Result<JsValue, JsValue>;
    /// One call on `texts`, its model's run with `timed` in a window of the page's GPU timer;
    /// resolves to `[tokenize, run, pool]` ms and the window's packed times.
    #[wasm_bindgen(catch, js_namespace = harnessTransformers, js_name = call)]
    async fn call(texts: &js_sys::Array, timed: bool) -> Result<JsValue, JsValue>;
    /// One image-classification call on `count` RGB images of `height` × `width` (`pixels`, one
    /// after another), its model's run with `timed` in a window of the page's GPU timer; resolves
    /// to `[preprocess, run, postprocess]` ms and the window's packed times.
    #[wasm_bindgen(catch, js_namespace = harnessTransformers, js_name = classify)]
    async fn classify(pixels: &js_sys::Uint8Array, count: u32, height: u32, width: u32, timed: bool) -> Result<JsValue, JsValue>;
    /// One automatic-speech-recognition call on `count` mono clips of `samples` (`audio`, one
    /// after another), its model runs with `timed` in a window of the page's GPU timer; resolves
    /// to `[preprocess, run, postprocess]` ms and the window's packed times.
    #[wasm_bindgen(catch, js_namespace = harnessTransformers, js_name = transcribe)]
    async fn transcribe(audio: &js_sys::Float32Array, count: u32, samples: u32, timed: bool) -> Result<JsValue, JsValue>;
    /// The last call's output (embeddings, each image's scores, or each clip's frames' logits), a
    /// `Float32Array`.
    #[wasm_bindgen(catch, js_namespace = harnessTransformers, js_name = output)]
    fn output() -> Result<JsValue, JsValue>;
    /// Releases the pipeline.
    #[wasm_bindgen(catch, js_namespace = harnessTransformers, js_name = dispose)]
    async fn dispose() -> Result<JsValue, JsValue>;
}

/// The encoder a from-text case runs.
fn encoder(case: &CaseSpec) -> Result<&EncoderCase, String> {
    match &case.workload {
        Some(Workload::Encoder(e)) if !e.texts.is_empty() => Ok(e),
        _ => Err(format!("{}: only MiniLM runs from text (--model minilm --from-text)", case.id)),
    }
}

/// A file of the encoder's folder, fetched from the harness (`tokenizer.json`, …).
async fn folder_file(api: &Api, e: &EncoderCase, name: &str) -> Result<Vec<u8>, String> {
    api.get_bytes(&format!("weights?name={}/{name}", e.weights)).await.map_err(|err| format!("fetching {name} of `{}`: {}", e.weights, describe(err)))
}

/// What a pipeline is called on.
enum Inputs {
    /// Sentences (feature-extraction).
    Texts(js_sys::Array),
    /// RGB images, one after another (image-classification).
    Images {
        /// Their bytes.
        pixels: js_sys::Uint8Array,
        /// How many.
        count: u32,
        /// Pixels down.
        height: u32,
        /// Pixels across.
        width: u32,
    },
    /// Mono clips at the feature extractor's rate, one after another
    /// (automatic-speech-recognition).
    Audio {
        /// Their samples.
        samples: js_sys::Float32Array,
        /// How many clips.
        count: u32,
        /// Samples a clip.
        each: u32,
    },
}

impl Inputs {
    /// The sentences `texts`, or for a task on images or audio the case's seeded images at the
    /// shape of `own`'s `pixel_values`, or its seeded clips at that of its `input_values`.
    fn of(case: &CaseSpec, own: Option<&kernels::own_model::OwnModel>, texts: &[String]) -> Result<Inputs, String> {
        let feeds = own.and_then(|o| o.pipeline.as_ref()).map_or(Feeds::Texts, |p| p.task.feeds());
        let input = |fill: fn(&kernels::own_model::Fill) -> bool| own.and_then(|o| o.inputs.iter().find(|i| fill(&i.fill))).map(|i| i.shape.as_slice());
        match feeds {
            Feeds::Texts => Ok(Inputs::Texts(texts.iter().map(|t| JsValue::from_str(t)).collect())),
            Feeds::Images => {
                let Some(&[count, 3, height, width]) = input(|f| matches!(f, kernels::own_model::Fill::Pixels { .. })) else {
                    return Err(format!("{}: an image pipeline's case has no `pixel_values` of [images, 3, height, width]", case.id));
                };
                let bytes = kernels::hf_pipeline::images(case.seed, count as usize, height as usize, width as usize);
                Ok(Inputs::Images { pixels: js_sys::Uint8Array::from(bytes.as_slice()), count: count as u32, height: height as u32, width: width as u32 })
            }
            Feeds::Audio => {
                let Some(&[count, each]) = input(|f| matches!(f, kernels::own_model::Fill::Audio { .. })) else {
                    return Err(format!("{}: a speech pipeline's case has no `input_values` of [clips, samples]", case.id));
                };
                let clips = kernels::hf_pipeline::audio(case.seed, count as usize, each as usize);
                Ok(Inputs::Audio { samples: js_sys::Float32Array::from(clips.as_slice()), count: count as u32, each: each as u32 })
            }
        }
    }
}

/// The model folder transformers.js loads (`{name: Uint8Array}`), the names of its ONNX file's
/// external data, the pipeline's task and what a call is on: MiniLM's from-text case (its config
/// and tokenizer fetched, the ONNX file written here of its graph) or a user's Hugging Face folder
/// (`--hf-model`: every file fetched as it is).
async fn model_folder(case: &CaseSpec, weights: Option<&Weights>, api: &Api) -> Result<(js_sys::Object, js_sys::Array, Task, Inputs), String> {
    let files = js_sys::Object::new();
    let put = |name: &str, bytes: &js_sys::Uint8Array| js_sys::Reflect::set(&files, &name.into(), bytes).map(drop).map_err(describe);
    let external = js_sys::Array::new();
    if let Some(Workload::Onnx(own)) = &case.workload {
        let pipeline = own.pipeline.as_ref().ok_or_else(|| format!("{}: transformers.js runs a Hugging Face folder (--hf-model), not an ONNX file alone", case.id))?;
        for f in &pipeline.files {
            put(&f.name, &fetch_served(api, &f.key).await?)?;
        }
        put("onnx/model.onnx", &fetch_served(api, &own.key).await?)?;
        for e in &own.external {
            put(&format!("onnx/{}", e.location), &fetch_served(api, &e.key).await?)?;
            external.push(&JsValue::from_str(&e.location));
        }
        return Ok((files, external, pipeline.task, Inputs::of(case, Some(own), &pipeline.texts)?));
    }
    let e = encoder(case)?;
    for name in ["config.json", "tokenizer.json", "tokenizer_config.json"] {
        put(name, &js_sys::Uint8Array::from(folder_file(api, e, name).await?.as_slice()))?;
    }
    let onnx = kernels::model::onnx::export_bert(&e.graph(), weights).map_err(|err| err.to_string())?;
    put("onnx/model.onnx", &js_sys::Uint8Array::from(onnx.bytes.as_slice()))?;
    Ok((files, external, Task::FeatureExtraction, Inputs::of(case, None, &e.texts)?))
}

/// Harness's own call: tokenize in WASM, write the ids, run, read the embeddings back.
struct Harness<'a> {
    gpu: &'a Gpu,
    prepared: &'a Prepared,
    program: &'a Program,
    tokenizer: tokenizers::Tokenizer,
    encoder: &'a EncoderCase,
    output: Vec<u8>,
}

impl Phased for Harness<'_> {
    type Error = GpuError;

    async fn call(&mut self) -> Result<Vec<(&'static str, f64)>, GpuError> {
        let failed = |message: String| GpuError::Pipeline { kernel: self.encoder.model.clone(), message };
        let t0 = now_ms();
        let mut sentences = Vec::with_capacity(self.encoder.texts.len());
        for text in &self.encoder.texts {
            // Without character offsets, which an embedding does not use.
            let encoding = self.tokenizer.encode_fast(text.as_str(), true).map_err(|e| failed(format!("tokenizing: {e}")))?;
            sentences.push(encoding.get_ids().to_vec());
        }
        // Padded to the longest sentence, as transformers.js pads a batch.
        let longest = sentences.iter().map(Vec::len).max().unwrap_or(1) as u32;
        let (ids, lens) = pack(&sentences, longest);
        let t1 = now_ms();
        self.gpu.write_input(self.prepared, self.program, "ids", &words_to_bytes(&ids))?;
        self.gpu.write_input(self.prepared, self.program, "lens", &words_to_bytes(&lens))?;
        self.output = self.gpu.run_and_read(self.prepared).await?;
        let t2 = now_ms();
        if (&ids, &lens) != (&self.encoder.ids, &self.encoder.lens) {
            return Err(failed(format!("the page's tokenizer gave ids {ids:?} (lengths {lens:?}); harness's native one gave {:?} (lengths {:?})", self.encoder.ids, self.encoder.lens)));
        }
        Ok(vec![("tokenize", t1 - t0), ("run", t2 - t1)])
    }
}

/// Runs the from-text `case` on harness's WebGPU: its program built and its pipelines created
/// (outside the samples, like an app's setup), then each sample one call.
pub async fn run_harness(gpu: &mut Gpu, plan: &RunPlan, case: &CaseSpec, weights: Option<&Weights>, api: &Api, clock: &mut impl ClockGate, on_sample: impl FnMut(u32)) -> Result<CaseMeasurement, GpuError> {
    let failed = |message: String| GpuError::Pipeline { kernel: case.kernel.clone(), message };
    let e = encoder(case).map_err(failed)?;
    let json = folder_file(api, e, "tokenizer.json").await.map_err(failed)?;
    let mut tokenizer = tokenizers::Tokenizer::from_bytes(&json).map_err(|err| failed(format!("tokenizer.json: {err}")))?;
    tokenizer.with_padding(None);
    tokenizer.with_truncation(None).map_err(|err| failed(format!("tokenizer.json: {err}")))?;
    gpu.ready().await?;
    gpu.guarded(async |gpu: &Gpu| {
        let program = case.program(weights, gpu.caps()).map_err(|err| failed(err.to_string()))?;
        let prepared = gpu.prepare(&case.kernel, &program).await?;
        let mut work = Harness { gpu, prepared: &prepared, program: &program, tokenizer, encoder: e, output: Vec::new() };
        let (sampled, phases) = sample_phases(&plan.sampling, &mut work, clock, on_sample).await?;
        let output = CaseMeasurement::encode_bytes(&work.output);
        Ok(CaseMeasurement { split: Some(phases), features: program.features.clone(), ..CaseMeasurement::of_sampled(case.id.clone(), prepared.pipeline_ms, sampled, output) })
    })
    .await
}

/// transformers.js's call, through `static/transformers.js`.
struct Transformers {
    inputs: Inputs,
    /// The phases a call is timed in.
    phases: [&'static str; 3],
    /// Whether the page's GPU timer times each call's model run.
    timed: bool,
    /// What it said so far.
    gpu_timer: GpuTimerUse,
    /// The last call's window.
    last: Option<WindowTimes>,
}

impl Phased for Transformers {
    type Error = JsValue;

    async fn call(&mut self) -> Result<Vec<(&'static str, f64)>, JsValue> {
        let times = match &self.inputs {
            Inputs::Texts(texts) => call(texts, self.timed).await?,
            Inputs::Images { pixels, count, height, width } => classify(pixels, *count, *height, *width, self.timed).await?,
            Inputs::Audio { samples, count, each } => transcribe(samples, *count, *each, self.timed).await?,
        };
        let times = js_sys::Float64Array::new(&times).to_vec();
        let (phases, packed) = times.split_at(3.min(times.len()));
        self.last = WindowTimes::unpack(packed).filter(|_| self.timed);
        if let Some(w) = &self.last {
            self.gpu_timer.add(w);
        }
        Ok(self.phases.into_iter().zip(phases.iter().copied()).collect())
    }

    fn gpu_ms(&self) -> (Option<f64>, Option<f64>) {
        self.last.map(|w| (w.span_ms, w.busy_ms)).unwrap_or_default()
    }
}

/// Runs `case` on transformers.js, from text: the model folder handed over ([`model_folder`]),
/// the pipeline created, then each sample one call.
pub async fn run_transformers(plan: &RunPlan, case: &CaseSpec, weights: Option<&Weights>, api: &Api, completion: Option<Completion>, clock: &mut impl ClockGate, on_sample: impl FnMut(u32)) -> Result<CaseMeasurement, String> {
    let (files, external, task, inputs) = model_folder(case, weights, api).await?;
    let result = async {
        load().await?;
        let begun = now_ms();
        prepare(&files, &external, task.name()).await?;
        let pipeline_ms = now_ms() - begun;
        let timed = completion.is_some_and(|c| c.timestamps);
        let gpu_timer = completion.map(|c| c.gpu_timer()).unwrap_or_else(|| GpuTimerUse::unavailable(GpuTimerSource::Page, "no WebGPU adapter"));
        let mut work = Transformers { inputs, phases: task.phases(), timed, gpu_timer, last: None };
        enable_timer(timed)?;
        let sampled = sample_phases(&plan.sampling, &mut work, clock, on_sample).await;
        enable_timer(false)?;
        let (mut sampled, phases) = sampled?;
        sampled.gpu_timer = Some(work.gpu_timer);
        let values = js_sys::Float32Array::new(&output()?).to_vec();
        Ok::<_, JsValue>((pipeline_ms, sampled, phases, values))
    }
    .await;
    let released = dispose().await;
    let (pipeline_ms, sampled, phases, values) = result.map_err(describe)?;
    released.map_err(describe)?;
    Ok(CaseMeasurement { split: Some(phases), ..CaseMeasurement::of_sampled(case.id.clone(), pipeline_ms, sampled, CaseMeasurement::encode_output(&values)) })
}
