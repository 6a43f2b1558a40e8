// --platform ort-webgpu / ort-jsep: onnxruntime-web, driven by the WASM runner (page/src/ort.rs)
// through globalThis.harnessOrt, on the ONNX file harness wrote of the case's model graph. The
// harness server serves onnxruntime-web's dist/ folder under /ort/ only for an ort run.
//
// onnxruntime-web 1.30 has two WebGPU execution providers, each in its own bundle: the C++ one
// (ort.webgpu.min.js, with the asyncify WASM) and the JavaScript one, JSEP (ort.min.js, with the
// jsep WASM). Both register as 'webgpu', so a page loads exactly one.
import { script } from './tfjs.js';
import { settle } from './completion.js';
import { windowed, finished, UNTIMED } from './gpu-timer.js';

// The CPU provider ('wasm') is in every bundle: it takes JSEP's, whose files harness serves. The
// WebNN provider is in JSEP's bundle and WASM.
const BUNDLES = { webgpu: 'ort/ort.webgpu.min.js', jsep: 'ort/ort.min.js', wasm: 'ort/ort.min.js', webnn: 'ort/ort.min.js' };
// Whether the loaded provider runs on ORT's WebGPU device (its GPU buffers, the page's GPU timer).
const onWebgpu = () => provider === 'webgpu' || provider === 'jsep';

// The types a tensor in a GPU buffer may have (onnxruntime-web's Tensor.fromGpuBuffer); inputs of
// other types (int8) are given from the page's memory.
const GPU_TYPES = new Set(['float32', 'float16', 'int32', 'int64', 'uint32', 'uint8', 'bool']);

// The sessions of the case, each with its feeds, output names and last outputs: one for a model
// written as one ONNX file; a cold start of a CLIP-shaped pair loads its two encoders' files.
let parts = [];
let provider = null;
let buffers = [];
// The runs handed to ORT so far: each batch's runs wait for the batch before (see submit).
let queued = Promise.resolve();

// An IEEE binary16 value from its bits (onnxruntime-web hands float16 data over as Uint16Array).
function halfToFloat(bits) {
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  const sign = bits & 0x8000 ? -1 : 1;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

function release(outputs) {
  if (!outputs) return;
  for (const t of Object.values(outputs)) t.dispose?.();
}

// Runs every part's session once, keeping only its latest outputs.
async function runParts() {
  for (const p of parts) {
    const out = await p.session.run(p.feeds);
    release(p.last);
    p.last = out;
  }
}

// ORT's own log, which onnxruntime-web writes with console.error (the WASM's stderr), bound when
// its WASM starts: so the tap is laid once, before that, and records only while `prepare` creates
// a session for a placement. The lines kept are those that say where its nodes went (read by
// kernels/src/placement.rs).
const PLACEMENT_TAG = 'VerifyEachNodeIsAssignedToAnEp]';
let placementLines = null;
function tapLog() {
  if (console.error.harnessTap) return;
  const original = console.error;
  const tap = (...args) => {
    if (placementLines) {
      const line = args.join(' ');
      if (line.includes(PLACEMENT_TAG)) placementLines.push(line);
      // ORT's verbose log is long; only its placement reaches the console.
      else return;
    }
    original.apply(console, args);
  };
  tap.harnessTap = true;
  console.error = tap;
}

globalThis.harnessOrt = {
  // Loads the bundle of execution provider `ep` ('webgpu', 'jsep', 'wasm' or 'webnn') (harness
  // checked its version before the browser started).
  async load(ep) {
    const bundle = BUNDLES[ep];
    if (!bundle) throw new Error(`unknown onnxruntime-web execution provider '${ep}' (harness knows webgpu, jsep, wasm and webnn)`);
    if (!globalThis.ort) await script(bundle, 'is --platform ort installed? see harness run --help');
    provider = ep;
    tapLog();
    // The WASM files beside the bundle; one thread, so no SharedArrayBuffer (cross-origin
    // isolation) is needed: the CPU side only schedules the GPU's work.
    ort.env.wasm.wasmPaths = new URL('ort/', location.href).href;
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.proxy = false;
  },

  // Creates a session for each of `models` ([model, names, values, outputs, dims, types,
  // external, named]: the ONNX file as a Uint8Array; its inputs, names[i] getting values[i], a
  // typed array of shape dims[i] and ONNX type types[i] (flat, and float32 or int32 by its array,
  // where not given: harness's own models); external data as [location, Uint8Array] pairs; the
  // value of each named dynamic dim), one after the other or, with `parallel`, all at once. On
  // WebGPU every output is left in a GPU buffer and every input is uploaded into a GPU buffer of
  // ORT's device, so a run moves no data between CPU and GPU; on the CPU provider they are the
  // page's arrays, and so on WebNN, whose provider is given the MLContext harnessWebnn.describe
  // created (on --webnn-device's device). With `placement`, each model is first loaded at ORT's
  // verbose log level, alone, and the lines that say where its nodes went are returned (a cold
  // start leaves it off: it takes time).
  async prepare(models, parallel, placement) {
    await this.dispose();
    const gpu = onWebgpu();
    const webnn = provider === 'webnn' ? { name: 'webnn', context: harnessWebnn.context() } : null;
    const create = ([model, , , , , , external, named], verbose) =>
      ort.InferenceSession.create(model, {
        executionProviders: [gpu ? 'webgpu' : (webnn ?? 'wasm')],
        graphOptimizationLevel: 'all',
        ...(verbose ? { logSeverityLevel: 0 } : {}),
        // WebNN builds graphs of fixed shapes: ORT's WebNN provider takes no node with a dynamic
        // dim unless the session fixes it (the --dim values).
        ...(webnn && named ? { freeDimensionOverrides: named } : {}),
        ...(gpu ? { preferredOutputLocation: 'gpu-buffer' } : {}),
        ...(external?.length ? { externalData: external.map(([path, data]) => ({ path, data })) } : {}),
      });
    // A session created at the verbose level also logs every run, which would be timed: the
    // placement is read from sessions of its own, released before the measured ones are created.
    let placed = [];
    if (placement) {
      placementLines = [];
      try {
        for (const m of models) await (await create(m, true)).release();
        placed = placementLines;
      } finally {
        placementLines = null;
      }
    }
    const load = async (m) => {
      const [, names, values, outputs, dims, types] = m;
      const session = await create(m, false);
      const device = gpu ? ort.env.webgpu.device : null;
      if (gpu && !device) throw new Error('onnxruntime-web created its session without a WebGPU device (ort.env.webgpu.device is unset)');
      const feeds = {};
      names.forEach((name, i) => {
        const v = values[i];
        const dataType = types?.[i] ?? (v instanceof Int32Array ? 'int32' : 'float32');
        const shape = dims?.[i] ?? [v.length];
        if (!gpu || !GPU_TYPES.has(dataType)) {
          feeds[name] = new ort.Tensor(dataType, v, shape);
          return;
        }
        const buffer = device.createBuffer({ size: Math.ceil(v.byteLength / 16) * 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
        // writeBuffer takes whole 4-byte words.
        const words = new Uint8Array(Math.ceil(v.byteLength / 4) * 4);
        words.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
        device.queue.writeBuffer(buffer, 0, words);
        buffers.push(buffer);
        feeds[name] = ort.Tensor.fromGpuBuffer(buffer, { dataType, dims: shape });
      });
      return { session, feeds, outputNames: outputs, last: null };
    };
    if (parallel) parts = await Promise.all(models.map(load));
    else for (const m of models) parts.push(await load(m));
    return placed;
  },

  // Runs every session once (a cold start's first run), keeping the outputs.
  runOnce: runParts,

  // Runs the session `batch` times, keeping only the last outputs; with `timed`, in a window of the
  // page's GPU timer (gpu-timer.js). Resolves to [submittedMs, doneMs, ...the window's packed times]
  // once ORT's device finished the work submitted; with `nudge`, nudges that device
  // from submit to done (completion.js), ORT's own waits within its runs included. A session runs one run at a time
  // (two at once clobber its state: 'Session mismatch' in JSEP, a hang in the C++ provider), so
  // the batches kept in flight are chained: a batch's runs start once the previous batch's runs
  // were handed to the GPU, not once the GPU finished them. JSEP submits every 16 dispatches, so
  // up to 15 of a batch's last run go to the GPU with the next batch: steady batches still count
  // each run's work once. The GPU timer's windows follow the same rule: a window is the command
  // buffers submitted during its batch's runs.
  submit(batch, timed, nudge) {
    const submittedMs = performance.now();
    const runs = queued.then(() =>
      windowed(timed, async () => {
        for (let i = 0; i < batch; i++) await runParts();
      }),
    );
    queued = runs.catch(() => {});
    // The CPU and WebNN providers' runs are done when their promises resolve (outputs read back).
    if (!onWebgpu()) return runs.then(() => new Float64Array([submittedMs, performance.now(), ...UNTIMED]));
    const device = ort.env.webgpu.device;
    return settle(device, finished(device, runs), nudge).then((t) => new Float64Array([submittedMs, ...t]));
  },

  // ORT's own GPU time of one more run, kernel by kernel: [{op, node, ms}], or null where its
  // execution provider has no profile (the C++ one has none in the browser) or the device no
  // timestamp-query. JSEP then times each kernel between timestamps in a compute pass of its own
  // and reports the times once it has read its query buffer back, which reading the outputs forces.
  async profile() {
    const device = onWebgpu() ? ort.env.webgpu.device : null;
    if (!device) return null;
    // JSEP asks for Chromium's timestamps inside passes where the adapter has them, instead of timestamp-query.
    const timestamps = ['timestamp-query', 'chromium-experimental-timestamp-query-inside-passes'].some((f) => device.features.has(f));
    if (provider !== 'jsep' || !timestamps) return null;
    await queued;
    const kernels = [];
    ort.env.webgpu.profiling = {
      mode: 'default',
      ondata: (d) => kernels.push({ op: d.kernelType, node: d.kernelName, ms: (d.endTime - d.startTime) / 1e6 }),
    };
    try {
      await runParts();
      await this.output();
      // The last query buffer's times arrive in a callback after the readback: wait for them to stop.
      for (let seen = -1, waited = 0; kernels.length !== seen && waited < 3000; waited += 250) {
        seen = kernels.length;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    } finally {
      ort.env.webgpu.profiling = { mode: 'off' };
    }
    return kernels;
  },

  // The last run's outputs read back (ORT flushes its pending work first), concatenated as f32:
  // int64 and bool outputs as their numbers.
  async output() {
    const read = [];
    for (const p of parts) {
      if (!p.last) throw new Error('no output: the session never ran');
      for (const name of p.outputNames) {
        const tensor = p.last[name];
        const data = await tensor.getData();
        if (tensor.type === 'float16' && data instanceof Uint16Array) read.push(Array.from(data, halfToFloat));
        else if (data instanceof BigInt64Array || data instanceof BigUint64Array) read.push(Array.from(data, Number));
        else read.push(data);
      }
    }
    const out = new Float32Array(read.reduce((n, r) => n + r.length, 0));
    let at = 0;
    for (const r of read) {
      out.set(r, at);
      at += r.length;
    }
    return out;
  },

  async dispose() {
    await queued;
    queued = Promise.resolve();
    for (const p of parts) {
      release(p.last);
      await p.session.release();
    }
    parts = [];
    for (const b of buffers) b.destroy();
    buffers = [];
  },
};
