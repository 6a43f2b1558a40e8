// --platform ort-webgpu / ort-jsep: onnxruntime-web, driven by the WASM runner (page/src/ort.rs)
// through globalThis.harnessOrt, on the ONNX file harness wrote of the case's model graph. The
// harness server serves onnxruntime-web's dist/ folder under /ort/ only for an ort run.
//
// onnxruntime-web 1.30 has two WebGPU execution providers, each in its own bundle: the C++ one
// (ort.webgpu.min.js, with the asyncify WASM) and the JavaScript one, JSEP (ort.min.js, with the
// jsep WASM). Both register as 'webgpu', so a page loads exactly one.
import { script } from './tfjs.js';
import { settle } from './completion.js';
import { windowed, finished } from './gpu-timer.js';

const BUNDLES = { webgpu: 'ort/ort.webgpu.min.js', jsep: 'ort/ort.min.js' };

// The sessions of the case, each with its feeds, output names and last outputs: one for a model
// written as one ONNX file; a cold start of a CLIP-shaped pair loads its two encoders' files.
let parts = [];
let provider = null;
let buffers = [];
// The runs handed to ORT so far: each batch's runs wait for the batch before (see submit).
let queued = Promise.resolve();

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

globalThis.harnessOrt = {
  // Loads the bundle of execution provider `ep` ('webgpu' or 'jsep') (harness checked its version
  // before the browser started).
  async load(ep) {
    const bundle = BUNDLES[ep];
    if (!bundle) throw new Error(`unknown onnxruntime-web execution provider '${ep}' (harness knows webgpu and jsep)`);
    if (!globalThis.ort) await script(bundle, 'is --platform ort installed? see harness run --help');
    provider = ep;
    // The WASM files beside the bundle; one thread, so no SharedArrayBuffer (cross-origin
    // isolation) is needed: the CPU side only schedules the GPU's work.
    ort.env.wasm.wasmPaths = new URL('ort/', location.href).href;
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.proxy = false;
  },

  // Creates a session for each of `models` ([model, names, values, outputs]: the ONNX file as a
  // Uint8Array, and its inputs, names[i] getting values[i], a Float32Array or Int32Array), one
  // after the other or, with `parallel`, all at once; every output is left in a GPU buffer and
  // every input is uploaded into a GPU buffer of ORT's device, so a run moves no data between CPU
  // and GPU.
  async prepare(models, parallel) {
    await this.dispose();
    const load = async ([model, names, values, outputs]) => {
      const session = await ort.InferenceSession.create(model, {
        executionProviders: ['webgpu'],
        graphOptimizationLevel: 'all',
        preferredOutputLocation: 'gpu-buffer',
      });
      const device = ort.env.webgpu.device;
      if (!device) throw new Error('onnxruntime-web created its session without a WebGPU device (ort.env.webgpu.device is unset)');
      const feeds = {};
      names.forEach((name, i) => {
        const v = values[i];
        const dataType = v instanceof Int32Array ? 'int32' : 'float32';
        const buffer = device.createBuffer({ size: Math.ceil(v.byteLength / 16) * 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
        device.queue.writeBuffer(buffer, 0, v);
        buffers.push(buffer);
        feeds[name] = ort.Tensor.fromGpuBuffer(buffer, { dataType, dims: [v.length] });
      });
      return { session, feeds, outputNames: outputs, last: null };
    };
    if (parallel) parts = await Promise.all(models.map(load));
    else for (const m of models) parts.push(await load(m));
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
    const device = ort.env.webgpu.device;
    return settle(device, finished(device, runs), nudge).then((t) => new Float64Array([submittedMs, ...t]));
  },

  // ORT's own GPU time of one more run, kernel by kernel: [{op, node, ms}], or null where its
  // execution provider has no profile (the C++ one has none in the browser) or the device no
  // timestamp-query. JSEP then times each kernel between timestamps in a compute pass of its own
  // and reports the times once it has read its query buffer back, which reading the outputs forces.
  async profile() {
    const device = ort.env.webgpu.device;
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

  // The last run's outputs read back (ORT flushes its pending work first), concatenated.
  async output() {
    const read = [];
    for (const p of parts) {
      if (!p.last) throw new Error('no output: the session never ran');
      for (const name of p.outputNames) read.push(await p.last[name].getData());
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
