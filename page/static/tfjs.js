// --platform tfjs: TensorFlow.js's WebGPU backend, driven by the WASM runner (page/src/tfjs.rs)
// through globalThis.harnessTfjs. The harness server serves tf-core.min.js and
// tf-backend-webgpu.min.js under /tfjs/ only for a tfjs run; they are loaded on first use.

import { settle } from './completion.js';
import { windowed, finished } from './gpu-timer.js';

let inputs = [];
let run = null;
let last = null;

// Loads a classic script from the harness server; `hint` says what serves it.
export function script(src, hint = 'is --platform tfjs installed? see harness run --help') {
  return new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = src;
    s.onload = resolve;
    s.onerror = () => reject(new Error(`could not load ${src} from the harness server (${hint})`));
    document.head.appendChild(s);
  });
}

// Ends the backend's open compute pass and submits it. tfjs-webgpu 4.22 has no public flush;
// these are its own members, checked when loading.
function flush(backend) {
  if (backend.commandEncoder) {
    backend.endComputePassEncoder();
    backend.submitQueue();
  }
}

globalThis.harnessTfjs = {
  // Loads TensorFlow.js and selects its WebGPU backend.
  async load() {
    if (!globalThis.tf) {
      await script('tfjs/tf-core.min.js');
      await script('tfjs/tf-backend-webgpu.min.js');
    }
    // Every op on the GPU: by default tfjs-webgpu runs small ops on not-yet-uploaded tensors on the CPU.
    tf.env().set('WEBGPU_CPU_FORWARD', false);
    if (!(await tf.setBackend('webgpu'))) throw new Error('TensorFlow.js could not initialise its WebGPU backend (see the browser console)');
    await tf.ready();
    const backend = tf.backend();
    for (const member of ['submitQueue', 'endComputePassEncoder', 'queue']) {
      if (!(member in backend)) throw new Error(`tfjs-webgpu ${tf.version_core} lacks ${member}: harness drives tfjs 4.22`);
    }
  },

  // Tensors of the case's inputs (Float32Arrays, shapes as JSON) and the op tf[op] over them.
  prepare(op, shapes, values) {
    this.dispose();
    const dims = JSON.parse(shapes);
    inputs = values.map((v, i) => tf.tensor(v, dims[i], 'float32'));
    const f = tf[op];
    if (typeof f !== 'function') throw new Error(`TensorFlow.js has no tf.${op}`);
    run = () => f(...inputs);
  },

  // Runs the op `batch` times, back to back, keeping only the last output, and submits the work;
  // with `timed`, in a window of the page's GPU timer (gpu-timer.js). Resolves to [submittedMs,
  // doneMs, ...the window's packed times] once the GPU is done; with `nudge`, nudges the backend's
  // device until then (completion.js).
  submit(batch, timed, nudge) {
    const submittedMs = performance.now();
    const backend = tf.backend();
    const handed = windowed(timed, () => {
      for (let i = 0; i < batch; i++) {
        const y = run();
        if (last) last.dispose();
        last = y;
      }
      flush(backend);
    });
    return settle(backend.device, finished(backend.device, handed), nudge).then((t) => new Float64Array([submittedMs, ...t]));
  },

  // The last output, read back.
  async output() {
    if (!last) throw new Error('no output: the op never ran');
    return await last.data();
  },

  dispose() {
    for (const t of inputs) t.dispose();
    if (last) last.dispose();
    inputs = [];
    last = null;
    run = null;
  },
};
