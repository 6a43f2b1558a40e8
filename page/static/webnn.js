// --platform webnn: the browser's WebNN (navigator.ml), driven by the WASM runner
// (page/src/webnn.rs) through globalThis.harnessWebnn. Each case is a graph of WebNN operators
// (kernels/src/webnn.rs) built over the case's seeded inputs; a sample dispatches it `batch` times
// and reads the output back, on the wall clock.
import { script } from './tfjs.js';

let context = null;
let graph = null;
let inputs = {};
let output = null;
let last = null;

// WebNN's context options have changed name over the spec's drafts: unknown members are ignored.
function contextOptions(device) {
  return {
    deviceType: device,
    powerPreference: device === 'npu' ? 'low-power' : 'high-performance',
    accelerated: device !== 'cpu',
  };
}

// An operand's shape: an attribute in the current spec, a method in older builds.
const shapeOf = (operand) => (typeof operand.shape === 'function' ? operand.shape() : operand.shape);
// Tensor and operand descriptors: `shape` now, `dimensions` in older builds.
const descriptor = (shape, extra = {}) => ({ dataType: 'float32', shape, dimensions: shape, ...extra });

globalThis.harnessWebnn = {
  // The context `describe` created (onnxruntime-web's WebNN provider runs on it: --platform ort-webnn).
  context: () => context,

  // Creates the context run's cases use and describes it as the run's adapter: unavailable, with
  // the browser's own words, where navigator.ml is missing or the context is refused. With
  // `standIn` the tests' JavaScript stand-in is loaded first, and says so in the description.
  async describe(options) {
    const base = { userAgent: navigator.userAgent, crossOriginIsolated: self.crossOriginIsolated === true };
    const device = options.device || 'gpu';
    if (options.standIn) await script('webnn-standin.js', 'the WebNN stand-in is served only while HARNESS_WEBNN_STANDIN is set');
    if (!navigator.ml) {
      return { ...base, available: false, reason: 'navigator.ml is missing: this browser has no WebNN, or has it behind a flag' };
    }
    try {
      context = await navigator.ml.createContext(contextOptions(device));
    } catch (e) {
      const why = e && e.name ? `${e.name}: ${e.message}` : String(e);
      return { ...base, available: false, reason: `navigator.ml.createContext({deviceType: '${device}'}) rejected: ${why}` };
    }
    const standIn = navigator.ml.standIn;
    return {
      ...base,
      available: true,
      vendor: standIn ? 'stand-in' : '',
      architecture: device,
      device: `WebNN ${device}`,
      description: standIn || `WebNN context (deviceType ${device})`,
      isFallbackAdapter: null,
      features: [],
      limits: {},
    };
  },

  // Builds the case's graph (JSON of kernels::webnn::Graph) over its inputs (Float32Arrays in the
  // kernel's order) and uploads them; resolves to the ms from the first operator to the built graph.
  async prepare(graphJson, values) {
    this.dispose();
    if (!context) throw new Error('no WebNN context');
    const nodes = JSON.parse(graphJson).nodes;
    const t0 = performance.now();
    const builder = new MLGraphBuilder(context);
    const operands = [];
    const feeds = [];
    for (const n of nodes) {
      if (n.kind === 'input') {
        const name = `x${n.index}`;
        operands.push(builder.input(name, descriptor(n.shape)));
        feeds.push([name, n.shape, values[n.index]]);
      } else if (n.kind === 'scalar') {
        operands.push(builder.constant(descriptor([]), new Float32Array([n.value])));
      } else {
        if (typeof builder[n.op] !== 'function') throw new Error(`this browser's WebNN has no MLGraphBuilder.${n.op}()`);
        let options = n.options;
        if (options && typeof options === 'object' && !Array.isArray(options)) {
          options = { ...options };
          for (const key of ['scale', 'bias']) if (key in options) options[key] = operands[options[key]];
        }
        const args = n.args.map((i) => operands[i]);
        operands.push(options === undefined ? builder[n.op](...args) : builder[n.op](...args, options));
      }
    }
    const out = operands[operands.length - 1];
    graph = await builder.build({ out });
    const buildMs = performance.now() - t0;
    for (const [name, shape, value] of feeds) {
      inputs[name] = await context.createTensor(descriptor(shape, { writable: true }));
      context.writeTensor(inputs[name], value);
    }
    output = await context.createTensor(descriptor(shapeOf(out), { readable: true }));
    return buildMs;
  },

  // Dispatches the graph `batch` times and reads the output back: readTensor resolves once the
  // work is done. Resolves to [submittedMs, doneMs].
  async submit(batch) {
    const submittedMs = performance.now();
    for (let i = 0; i < batch; i++) context.dispatch(graph, inputs, { out: output });
    last = await context.readTensor(output);
    return new Float64Array([submittedMs, performance.now()]);
  },

  // The last output, as read back.
  output() {
    if (!last) throw new Error('no output: the graph never ran');
    return new Float32Array(last);
  },

  // Frees the case's tensors and graph.
  dispose() {
    for (const t of [...Object.values(inputs), output]) if (t && t.destroy) t.destroy();
    if (graph && graph.destroy) graph.destroy();
    inputs = {};
    output = null;
    graph = null;
    last = null;
  },
};
