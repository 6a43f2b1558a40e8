// --platform transformers: transformers.js's pipeline('feature-extraction') on MiniLM or on a
// user's Hugging Face folder (--hf-model), its pipeline('image-classification') on a user's
// image classifier's folder, or its pipeline('automatic-speech-recognition') on a user's CTC
// speech model's folder, driven by the WASM runner (page/src/text.rs) through globalThis.harnessTransformers. The harness server
// serves transformers.js's bundle and the WASM of the onnxruntime-web build it pins under
// /transformers/ only for a transformers run.
//
// The model folder transformers.js loads (config.json, tokenizer.json, tokenizer_config.json or
// preprocessor_config.json, onnx/model.onnx and its external data) is handed over as bytes: for MiniLM, the ONNX file is the
// one harness writes of its own graph, with BERT's signature, in the page; a user's folder comes
// as it is, from the harness server. No file is fetched from anywhere else: remote models, the
// browser cache and transformers.js's WASM cache are off.

import { windowed, packed, UNTIMED } from './gpu-timer.js';

// Each pipeline gets a model id of its own: transformers.js keeps what it read of a model id
// (its config, and so which files it asks for) for the page's life, so a second folder under
// the first one's id would be asked for the first one's files (an image model for a tokenizer).
let pipelines = 0;
const FOLDER = '/harness-models/';

let tjs = null;
let pipe = null;
let last = null;
// An image pipeline's model run, timed from inside the pipeline's own call (see classify).
let step = null;
// A speech pipeline's model runs, one a clip, each timed and its logits kept (see transcribe).
let runs = [];

globalThis.harnessTransformers = {
  // Loads transformers.js (harness checked its version before the browser started).
  async load() {
    if (tjs) return;
    try {
      tjs = await import(new URL('transformers/transformers.min.js', location.href).href);
    } catch (e) {
      throw new Error(`transformers.js did not load (${e.message}): is --platform transformers installed? see harness run --help`);
    }
    const onnx = tjs.env.backends.onnx;
    // The C++ WebGPU provider's WASM, beside the bundle; one thread, so no SharedArrayBuffer
    // (cross-origin isolation) is needed, as for --platform ort.
    onnx.wasm.wasmPaths = {
      mjs: new URL('transformers/ort-wasm-simd-threaded.asyncify.mjs', location.href).href,
      wasm: new URL('transformers/ort-wasm-simd-threaded.asyncify.wasm', location.href).href,
    };
    onnx.wasm.numThreads = 1;
    Object.assign(tjs.env, {
      allowRemoteModels: false,
      allowLocalModels: true,
      localModelPath: FOLDER,
      useBrowserCache: false,
      useWasmCache: false,
      useCustomCache: false,
    });
  },

  // Creates the pipeline of `task` on WebGPU over `files` ({name: Uint8Array}, names relative to
  // the model folder), the ONNX file's external data in the files `external` names (as the model
  // names them, relative to onnx/: torch writes `model.onnx.data`, which transformers.js's own
  // convention, `model.onnx_data`, would not find).
  async prepare(files, external = [], task = 'feature-extraction') {
    await this.dispose();
    const model = `harness/model-${++pipelines}`;
    const prefix = `${FOLDER}${model}/`;
    tjs.env.fetch = async (url) => {
      const path = String(url);
      const name = path.startsWith(prefix) ? path.slice(prefix.length) : null;
      if (name !== null && files[name]) return new Response(files[name], { headers: { 'content-length': String(files[name].byteLength) } });
      return new Response(`harness handed transformers.js no file ${path}`, { status: 404 });
    };
    const externalData = external.map((path) => ({ path, data: files[`onnx/${path}`] }));
    const session_options = externalData.length ? { externalData } : {};
    pipe = await tjs.pipeline(task, model, { device: 'webgpu', dtype: 'fp32', session_options });
    if (task === 'image-classification') {
      // The pipeline is called whole (classify); its model's run is timed, and windowed in the
      // page's GPU timer, from inside it.
      const model = pipe.model;
      const run = model._call;
      model._call = async (...args) => {
        let out;
        step.begun = performance.now();
        const { times } = await windowed(step.timed, async () => {
          out = await run.apply(model, args);
        });
        step.ended = performance.now();
        step.times = times;
        return out;
      };
    }
    if (task === 'automatic-speech-recognition') {
      // The pipeline takes each frame's argmax of the logits and decodes it: the logits are what
      // harness checks, as the argmax flips where two tokens tie within rounding.
      const model = pipe.model;
      const run = model._call;
      model._call = async (...args) => {
        const begun = performance.now();
        const out = await run.apply(model, args);
        runs.push({ begun, ended: performance.now(), logits: new Float32Array(out.logits.data) });
        return out;
      };
    }
  },

  // One call of the pipeline on `texts`, as its _call makes it (tokenizer with padding and
  // truncation, model, mean pooling over the mask, L2 normalisation), timed step by step, the
  // model's run with `timed` in a window of the page's GPU timer (gpu-timer.js): resolves to
  // [tokenize, run, pool] in ms and the window's packed times. The embeddings are kept for output().
  async call(texts, timed) {
    const t0 = performance.now();
    const inputs = pipe.tokenizer(texts, { padding: true, truncation: true });
    const t1 = performance.now();
    let outputs;
    const { times } = await windowed(timed, async () => {
      outputs = await pipe.model(inputs);
    });
    const t2 = performance.now();
    // The output the pipeline reads, in its order.
    const hidden = outputs.last_hidden_state ?? outputs.logits ?? outputs.token_embeddings;
    const pooled = tjs.mean_pooling(hidden, inputs.attention_mask).normalize(2, -1);
    const t3 = performance.now();
    last = pooled.data;
    return new Float64Array([t1 - t0, t2 - t1, t3 - t2, ...(times ? packed(await times) : UNTIMED)]);
  },

  // One call of the image-classification pipeline, `{top_k: labels}`, on `count` images of
  // `height` × `width` whose RGB bytes lie one after another in `pixels` (as big as the image
  // processor resizes to, so its resize leaves them as they are), the model's run with `timed` in
  // a window of the page's GPU timer: resolves to [preprocess, run, postprocess] in ms and the
  // window's packed times. Each image's scores are kept for output(), in label-id order.
  async classify(pixels, count, height, width, timed) {
    const id2label = pipe.model.config.id2label;
    const ids = new Map(Object.entries(id2label).map(([id, label]) => [label, Number(id)]));
    const labels = ids.size;
    step = { timed, begun: NaN, ended: NaN, times: null };
    const t0 = performance.now();
    const plane = height * width * 3;
    const images = [];
    for (let n = 0; n < count; n++) {
      images.push(new tjs.RawImage(new Uint8ClampedArray(pixels.buffer, pixels.byteOffset + n * plane, plane), width, height, 3));
    }
    const results = await pipe(images, { top_k: labels });
    const scores = new Float32Array(count * labels);
    results.forEach((image, n) => {
      for (const { label, score } of image) scores[n * labels + ids.get(label)] = score;
    });
    const t3 = performance.now();
    const { begun, ended, times } = step;
    last = scores;
    return new Float64Array([begun - t0, ended - begun, t3 - ended, ...(times ? packed(await times) : UNTIMED)]);
  },

  // One call of the automatic-speech-recognition pipeline on each of `count` mono clips of
  // `samples` (one after another in `audio`, at the feature extractor's rate, so nothing is
  // resampled), one clip a pipeline call as the pipeline itself loops over a batch, every call in
  // one window of the page's GPU timer when `timed` (its span holds the CPU's decoding between
  // clips; its busy time does not): resolves to [preprocess, run, postprocess] in ms, each summed
  // over the clips, and the window's packed times. Each clip's frames' logits are kept for
  // output().
  async transcribe(audio, count, samples, timed) {
    runs = [];
    const split = [0, 0, 0];
    const { times } = await windowed(timed, async () => {
      for (let n = 0; n < count; n++) {
        const clip = audio.slice(n * samples, (n + 1) * samples);
        const t0 = performance.now();
        await pipe(clip);
        const t3 = performance.now();
        const { begun, ended } = runs[runs.length - 1];
        split[0] += begun - t0;
        split[1] += ended - begun;
        split[2] += t3 - ended;
      }
    });
    const logits = new Float32Array(runs.reduce((sum, r) => sum + r.logits.length, 0));
    runs.reduce((at, r) => (logits.set(r.logits, at), at + r.logits.length), 0);
    last = logits;
    return new Float64Array([...split, ...(times ? packed(await times) : UNTIMED)]);
  },

  // The last call's output: a Float32Array of batch × hidden (embeddings), batch × labels
  // (scores) or clips × frames × vocabulary (logits).
  output() {
    if (!last) throw new Error('no output: the pipeline never ran');
    return last;
  },

  async dispose() {
    if (pipe) await pipe.dispose();
    pipe = null;
    last = null;
  },
};
