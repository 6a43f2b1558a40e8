// harness TEST STAND-IN for WebNN (navigator.ml). Only for harness's end-to-end tests, on machines
// whose browser has no WebNN backend: it is not a polyfill and not a WebNN backend. It installs
// navigator.ml (replacing any the browser has) and MLGraphBuilder, labels itself through
// `navigator.ml.standIn`, and computes a small subset of WebNN's operators in plain JavaScript with
// float32 semantics: data in Float32Array, each op's results rounded with Math.fround.
// With globalThis.harnessWebnnStandInFault === 'wrong', readTensor returns one element off by 0.5,
// so a test can prove that wrong answers are caught. Loaded as a classic script; loading it twice
// is harmless; also runs in node (for its own checks).
(() => {
  'use strict';
  const STAND_IN = 'harness test stand-in for WebNN: JavaScript arithmetic, not a WebNN backend';
  const nav = globalThis.navigator ?? (globalThis.navigator = {});
  if (nav.ml && nav.ml.standIn === STAND_IN) return; // already installed
  const f = Math.fround;

  const size = (shape) => shape.reduce((n, d) => n * d, 1);
  const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);
  const show = (shape) => `[${shape.join(', ')}]`;
  // Row-major strides of a shape.
  const strides = (shape) => {
    const s = new Array(shape.length);
    for (let i = shape.length - 1, acc = 1; i >= 0; i--) { s[i] = acc; acc *= shape[i]; }
    return s;
  };
  // A descriptor's shape (`shape`, or the older `dimensions`); only float32 is supported.
  function descShape(desc, what) {
    if (!desc || typeof desc !== 'object') throw new TypeError(`${what}: a descriptor is required`);
    if (desc.dataType !== 'float32') {
      throw new TypeError(`${what}: data type '${desc.dataType}' is not supported by the WebNN stand-in (float32 only)`);
    }
    const shape = desc.shape ?? desc.dimensions;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw new TypeError(`${what}: shape must be an array of non-negative integers`);
    }
    return shape.slice();
  }
  // Float32 view of caller data (Float32Array, any ArrayBufferView, or ArrayBuffer), not copied.
  function asFloat32(data, what) {
    if (data instanceof Float32Array) return data;
    if (data instanceof ArrayBuffer) return new Float32Array(data.slice(0, data.byteLength - (data.byteLength % 4)));
    if (ArrayBuffer.isView(data)) {
      if (data.byteLength % 4) throw new TypeError(`${what}: ${data.byteLength} bytes is not a whole number of float32s`);
      return new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
    }
    throw new TypeError(`${what}: expected an ArrayBuffer or ArrayBufferView`);
  }
  // Axes option: default `all`, each in range, no repeats.
  function checkAxes(axes, rank, all, what) {
    const list = axes === undefined ? all : Array.from(axes);
    if (!list.every((a) => Number.isInteger(a) && a >= 0 && a < rank) || new Set(list).size !== list.length) {
      throw new TypeError(`${what}: axes ${show(list)} are not distinct axes of a rank-${rank} operand`);
    }
    return list;
  }

  // A tensor: float32 data of its descriptor's shape.
  class MLTensor {
    constructor(desc) {
      const shape = descShape(desc, 'createTensor');
      Object.assign(this, { shape, dataType: 'float32', readable: !!desc.readable, writable: !!desc.writable });
      this.data = new Float32Array(size(shape));
    }
    destroy() {} // Frees nothing: the stand-in's tensors are garbage collected.
  }

  // A node of a graph under construction: its shape, the operands it reads, and how to compute it
  // from their data (`compute(...argsData)`); inputs have a name instead.
  class MLOperand {
    constructor(builder, shape, args, compute, name) {
      Object.assign(this, { shape, dataType: 'float32' });
      const hidden = { builder, args, compute, inputName: name };
      for (const [k, value] of Object.entries(hidden)) Object.defineProperty(this, k, { value });
    }
  }

  // A built graph: its inputs (name → shape), its outputs (name → operand), and the evaluation order.
  class MLGraph {
    constructor(inputs, outputs, order) { Object.assign(this, { inputs, outputs, order }); }
    destroy() {} // Frees nothing.
  }

  // A context: creates tensors and graphs' results, all on the CPU in JavaScript.
  class MLContext {
    constructor(options) { this.deviceType = options?.deviceType ?? 'cpu'; }
    // Resolves to a tensor of `desc` (float32 only, else rejects with a TypeError), zero-filled.
    async createTensor(desc) { return new MLTensor(desc); }
    // Copies `data` (read as float32) into `tensor`; TypeError on a size mismatch.
    writeTensor(tensor, data) {
      if (!(tensor instanceof MLTensor)) throw new TypeError('writeTensor: not an MLTensor');
      if (!tensor.writable) throw new TypeError('writeTensor: the tensor was not created writable');
      const src = asFloat32(data, 'writeTensor');
      if (src.length !== tensor.data.length) {
        throw new TypeError(`writeTensor: ${src.length} float32s for a tensor of ${tensor.data.length}`);
      }
      tensor.data.set(src);
    }
    // Resolves to a copy of the tensor's data; the 'wrong' fault adds 0.5 to element 7 (or 0).
    async readTensor(tensor) {
      if (!(tensor instanceof MLTensor)) throw new TypeError('readTensor: not an MLTensor');
      if (!tensor.readable) throw new TypeError('readTensor: the tensor was not created readable');
      const copy = tensor.data.slice();
      const at = copy.length > 7 ? 7 : 0;
      if (globalThis.harnessWebnnStandInFault === 'wrong' && copy.length > 0) copy[at] = f(copy[at] + 0.5);
      return copy.buffer;
    }
    // Computes `graph` now from the `inputs` tensors into the `outputs` tensors (name → MLTensor).
    dispatch(graph, inputs, outputs) {
      if (!(graph instanceof MLGraph)) throw new TypeError('dispatch: not an MLGraph');
      const bind = (given, wanted, what) => {
        for (const name of Object.keys(given ?? {})) {
          if (!(name in wanted)) throw new TypeError(`dispatch: the graph has no ${what} named '${name}'`);
        }
        for (const [name, shape] of Object.entries(wanted)) {
          const t = given?.[name];
          if (!(t instanceof MLTensor)) throw new TypeError(`dispatch: no MLTensor for ${what} '${name}'`);
          if (!sameShape(t.shape, shape)) {
            throw new TypeError(`dispatch: ${what} '${name}' is ${show(shape)}, the tensor ${show(t.shape)}`);
          }
        }
      };
      const outShapes = Object.fromEntries(Object.entries(graph.outputs).map(([k, op]) => [k, op.shape]));
      bind(inputs, graph.inputs, 'input');
      bind(outputs, outShapes, 'output');
      const values = new Map();
      for (const op of graph.order) {
        const named = op.inputName !== undefined;
        values.set(op, named ? inputs[op.inputName].data.slice() : op.compute(...op.args.map((a) => values.get(a))));
      }
      for (const [name, op] of Object.entries(graph.outputs)) outputs[name].data.set(values.get(op));
    }
    destroy() {} // Frees nothing.
    // What onnxruntime-web's WebNN provider asks before it hands an op over: float32 operands of
    // any rank for every operator the builder has (it checks each op's operands by name).
    opSupportLimits() {
      const operand = { dataTypes: ['float32'], rankRange: { min: 0, max: 8 } };
      const op = new Proxy({}, { get: (_, key) => (typeof key === 'string' ? operand : undefined) });
      const base = { preferredInputLayout: 'nchw', maxTensorByteLength: 2 ** 31, input: operand, constant: operand, output: operand };
      return new Proxy(base, {
        get: (t, key) => (key in t ? t[key] : typeof MLGraphBuilder.prototype[key] === 'function' && !String(key).startsWith('_') ? op : undefined),
      });
    }
  }

  // Builds graphs of the stand-in's operators over one context.
  class MLGraphBuilder {
    constructor(context) {
      if (!(context instanceof MLContext)) throw new TypeError('MLGraphBuilder: not a stand-in MLContext');
      this.context = context;
      this._names = new Set();
    }
    _operand(x, what) {
      if (!(x instanceof MLOperand) || x.builder !== this) throw new TypeError(`${what}: not an operand of this builder`);
      return x;
    }
    // A named graph input of `desc`'s shape.
    input(name, desc) {
      const shape = descShape(desc, 'input');
      if (typeof name !== 'string' || !name || this._names.has(name)) {
        throw new TypeError(`input: the name '${name}' is empty or already used`);
      }
      this._names.add(name);
      return new MLOperand(this, shape, [], null, name);
    }
    // A constant of `desc`'s shape (shape [] is a scalar) holding `data` as float32.
    constant(desc, data) {
      const shape = descShape(desc, 'constant');
      const values = asFloat32(data, 'constant').slice();
      if (values.length !== size(shape)) throw new TypeError(`constant: ${values.length} values for shape ${show(shape)}`);
      return new MLOperand(this, shape, [], () => values);
    }
    _binary(what, fn, a, b) {
      this._operand(a, what); this._operand(b, what);
      const rank = Math.max(a.shape.length, b.shape.length);
      const pad = (s) => [...new Array(rank - s.length).fill(1), ...s];
      const [sa, sb] = [pad(a.shape), pad(b.shape)];
      if (sa.some((d, i) => d !== sb[i] && d !== 1 && sb[i] !== 1)) {
        throw new TypeError(`${what}: shapes ${show(a.shape)} and ${show(b.shape)} do not broadcast`);
      }
      const shape = sa.map((d, i) => (d === 1 ? sb[i] : d));
      // Strides into each operand, 0 along its broadcast dimensions.
      const [ta, tb] = [sa, sb].map((s) => strides(s).map((st, i) => (s[i] === 1 ? 0 : st)));
      const out = strides(shape);
      return new MLOperand(this, shape, [a, b], (x, y) => {
        const r = new Float32Array(size(shape));
        for (let i = 0; i < r.length; i++) {
          let ia = 0, ib = 0;
          for (let d = 0, rest = i; d < rank; d++) {
            const c = Math.floor(rest / out[d]);
            rest -= c * out[d];
            ia += c * ta[d]; ib += c * tb[d];
          }
          r[i] = f(fn(x[ia], y[ib]));
        }
        return r;
      });
    }
    _unary(what, fn, x) {
      this._operand(x, what);
      return new MLOperand(this, x.shape.slice(), [x], (v) => v.map((e) => f(fn(e))));
    }
    // a [M,K] · b [K,N] → [M,N], each dot product accumulated in float32 over k in order.
    matmul(a, b) {
      this._operand(a, 'matmul'); this._operand(b, 'matmul');
      if (a.shape.length !== 2 || b.shape.length !== 2 || a.shape[1] !== b.shape[0]) {
        throw new TypeError(`matmul: the stand-in multiplies [M,K]·[K,N] only, not ${show(a.shape)}·${show(b.shape)}`);
      }
      const [M, K] = a.shape, N = b.shape[1];
      return new MLOperand(this, [M, N], [a, b], (x, y) => {
        const r = new Float32Array(M * N);
        for (let m = 0; m < M; m++) {
          for (let n = 0; n < N; n++) {
            let acc = 0;
            for (let k = 0; k < K; k++) acc = f(acc + f(x[m * K + k] * y[k * N + n]));
            r[m * N + n] = acc;
          }
        }
        return r;
      });
    }
    // Softmax along `axis` (default: the last), max-subtracted.
    softmax(x, axis) {
      this._operand(x, 'softmax');
      const rank = x.shape.length;
      const ax = axis === undefined ? rank - 1 : axis;
      if (!Number.isInteger(ax) || ax < 0 || ax >= rank) throw new TypeError(`softmax: axis ${axis} of a rank-${rank} operand`);
      const len = x.shape[ax], inner = size(x.shape.slice(ax + 1)), outer = size(x.shape.slice(0, ax));
      return new MLOperand(this, x.shape.slice(), [x], (v) => {
        const r = new Float32Array(v.length);
        for (let o = 0; o < outer; o++) {
          for (let i = 0; i < inner; i++) {
            const at = (j) => (o * len + j) * inner + i;
            let max = -Infinity, sum = 0;
            for (let j = 0; j < len; j++) max = Math.max(max, v[at(j)]);
            for (let j = 0; j < len; j++) { r[at(j)] = f(Math.exp(f(v[at(j)] - max))); sum = f(sum + r[at(j)]); }
            for (let j = 0; j < len; j++) r[at(j)] = f(r[at(j)] / sum);
          }
        }
        return r;
      });
    }
    // Groups x's elements by their coordinates off `axes`: group index and index within `axes`.
    _groups(shape, axes) {
      const st = strides(shape), keep = shape.map((d, i) => (axes.includes(i) ? 1 : d)), ks = strides(keep);
      const as = strides(axes.map((a) => shape[a]));
      const group = new Int32Array(size(shape)), within = new Int32Array(size(shape));
      for (let i = 0; i < group.length; i++) {
        for (let d = 0, rest = i; d < shape.length; d++) {
          const c = Math.floor(rest / st[d]);
          rest -= c * st[d];
          const k = axes.indexOf(d);
          if (k < 0) group[i] += c * ks[d]; else within[i] += c * as[k];
        }
      }
      return { group, within, keep, groups: size(keep), count: size(axes.map((a) => shape[a])) };
    }
    // Mean over `options.axes` (default all), keeping them as size-1 dims with `keepDimensions`.
    reduceMean(x, options = {}) {
      this._operand(x, 'reduceMean');
      const rank = x.shape.length;
      const axes = checkAxes(options.axes, rank, [...x.shape.keys()], 'reduceMean');
      const g = this._groups(x.shape, axes);
      const shape = options.keepDimensions ? g.keep : x.shape.filter((_, i) => !axes.includes(i));
      return new MLOperand(this, shape, [x], (v) => {
        const r = new Float32Array(g.groups);
        for (let i = 0; i < v.length; i++) r[g.group[i]] = f(r[g.group[i]] + v[i]);
        return r.map((s) => f(s / g.count));
      });
    }
    // (x - mean) / √(variance + epsilon) over `axes` (default all but the first), · scale + bias.
    layerNormalization(x, options = {}) {
      this._operand(x, 'layerNormalization');
      const rank = x.shape.length;
      const axes = checkAxes(options.axes, rank, [...x.shape.keys()].slice(1), 'layerNormalization');
      const eps = f(options.epsilon ?? 1e-5);
      const normShape = axes.map((a) => x.shape[a]);
      const { scale, bias } = options;
      for (const [key, p] of [['scale', scale], ['bias', bias]]) {
        if (p !== undefined && !sameShape(this._operand(p, 'layerNormalization').shape, normShape)) {
          throw new TypeError(`layerNormalization: ${key} is ${show(p.shape)}, the normalised dims ${show(normShape)}`);
        }
      }
      const g = this._groups(x.shape, axes);
      const args = [x, scale, bias].filter((p) => p !== undefined);
      return new MLOperand(this, x.shape.slice(), args, (v, ...params) => {
        const [sv, bv] = [scale && params.shift(), bias && params.shift()];
        const mean = new Float32Array(g.groups), variance = new Float32Array(g.groups);
        for (let i = 0; i < v.length; i++) mean[g.group[i]] = f(mean[g.group[i]] + v[i]);
        for (let j = 0; j < g.groups; j++) mean[j] = f(mean[j] / g.count);
        for (let i = 0; i < v.length; i++) {
          const d = f(v[i] - mean[g.group[i]]);
          variance[g.group[i]] = f(variance[g.group[i]] + f(d * d));
        }
        const denom = variance.map((s) => f(Math.sqrt(f(f(s / g.count) + eps))));
        const r = new Float32Array(v.length);
        for (let i = 0; i < v.length; i++) {
          let y = f(f(v[i] - mean[g.group[i]]) / denom[g.group[i]]);
          if (sv) y = f(y * sv[g.within[i]]);
          if (bv) y = f(y + bv[g.within[i]]);
          r[i] = y;
        }
        return r;
      });
    }
    // The same elements in `newShape`; TypeError where the element counts differ.
    reshape(x, newShape) {
      this._operand(x, 'reshape');
      const shape = Array.from(newShape ?? []);
      if (!shape.every((d) => Number.isInteger(d) && d >= 0) || size(shape) !== size(x.shape)) {
        throw new TypeError(`reshape: ${show(x.shape)} cannot become ${show(shape)}`);
      }
      return new MLOperand(this, shape, [x], (v) => v.slice());
    }
    // Resolves to the graph computing `outputs` (name → operand) from the inputs they depend on.
    async build(outputs) {
      const entries = Object.entries(outputs ?? {});
      if (!entries.length) throw new TypeError('build: no outputs');
      const order = [], seen = new Set(), inputs = {};
      const visit = (op) => {
        if (seen.has(op)) return;
        seen.add(op);
        op.args.forEach(visit);
        if (op.inputName !== undefined) inputs[op.inputName] = op.shape.slice();
        order.push(op);
      };
      for (const [name, op] of entries) {
        this._operand(op, `build: output '${name}'`);
        if (op.inputName !== undefined) throw new TypeError(`build: output '${name}' is an input`);
        visit(op);
      }
      return new MLGraph(inputs, Object.fromEntries(entries), order);
    }
  }

  // Element-wise operators, each a builder method of its name: the binary ones broadcast NumPy-style
  // (trailing dimensions aligned; a dimension of 1, or missing, broadcasts); results are float32.
  const BINARY = {
    add: (x, y) => x + y, // a + b
    sub: (x, y) => x - y, // a - b
    mul: (x, y) => x * y, // a * b
    div: (x, y) => x / y, // a / b
  };
  const UNARY = {
    relu: (e) => (e > 0 ? e : 0), // max(x, 0)
    tanh: Math.tanh, // tanh(x)
    sigmoid: (e) => 1 / (1 + Math.exp(-e)), // 1 / (1 + exp(-x))
    sqrt: Math.sqrt, // √x
    exp: Math.exp, // eˣ
    abs: Math.abs, // |x|
    neg: (e) => -e, // -x
  };
  for (const [name, fn] of Object.entries(BINARY)) {
    MLGraphBuilder.prototype[name] = function (a, b) { return this._binary(name, fn, a, b); };
  }
  for (const [name, fn] of Object.entries(UNARY)) {
    MLGraphBuilder.prototype[name] = function (x) { return this._unary(name, fn, x); };
  }

  const ml = {
    standIn: STAND_IN,
    // Resolves to a context; any options are accepted, `deviceType` is recorded.
    async createContext(options) { return new MLContext(options); },
  };
  Object.defineProperty(nav, 'ml', { value: ml, configurable: true, enumerable: true });
  for (const [name, value] of Object.entries({ MLGraphBuilder, MLContext, MLTensor, MLGraph, MLOperand })) {
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });
  }
})();
