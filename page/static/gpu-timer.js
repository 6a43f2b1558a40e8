// The page's GPU timer: GPU time for any WebGPU code in the page, whoever records it (harness's own
// runner, onnxruntime-web, TensorFlow.js, transformers.js). It is installed before anything else
// loads (main.js imports it first) and wraps WebGPU's prototypes:
//
// - requestDevice: where the adapter has `timestamp-query`, every device gets it.
// - beginComputePass: while the timer is on, a pass with no `timestampWrites` of its own gets a
//   begin and an end timestamp, in a query set of the timer's (a chunk of CHUNK_PASSES passes;
//   an encoder with more passes takes more chunks). Passes that set their own are left alone and
//   counted, as are render passes and copies, which the timer cannot time.
// - finish: the encoder's queries are resolved and copied into the chunk's readback buffer.
// - submit: the command buffers submitted while a window is open belong to it.
//
// A window's GPU time, read once its work is done, is known two ways: busy, the sum of its passes'
// times; and span, from its first pass's begin to its last pass's end. A window holding work the
// timer could not time (own timestamps, render passes, copies, passes recorded while it was off)
// says so and is not complete.

/// Passes one chunk of queries holds (two timestamps a pass).
export const CHUNK_PASSES = 32;

const COPIES = ['copyBufferToBuffer', 'copyBufferToTexture', 'copyTextureToBuffer', 'copyTextureToTexture', 'clearBuffer', 'resolveQuerySet'];

/// Busy and span, ns, of `pairs` ([begin, end] BigInt ticks in ns, in any order): a pair with a
/// zero begin or an end before its begin (some drivers write those) is invalid and left out.
export function timesOf(pairs) {
  const valid = pairs.filter(([b, e]) => b > 0n && e >= b);
  if (valid.length === 0) return { busyNs: NaN, spanNs: NaN, timed: 0, invalid: pairs.length };
  let first = valid[0][0];
  let last = valid[0][1];
  let busy = 0n;
  for (const [b, e] of valid) {
    busy += e - b;
    if (b < first) first = b;
    if (e > last) last = e;
  }
  return { busyNs: Number(busy), spanNs: Number(last - first), timed: valid.length, invalid: pairs.length - valid.length };
}

/// A window's counts: what it holds beside the passes the timer timed.
function emptyCounts() {
  return { passes: 0, ownTimestamps: 0, renderPasses: 0, copies: 0, untimed: 0 };
}

/// The timer over WebGPU's classes in `g` (the page's globals, or fakes in a test).
export class GpuTimer {
  constructor(g) {
    this.g = g;
    this.enabled = false;
    this.window = null;
    // device -> { device, timestamps, reason, free: [chunk] }
    this.devices = new WeakMap();
    // encoder -> { dev, chunks: [chunk], slots: [[chunk, index]], counts }
    this.encoders = new WeakMap();
    // command buffer -> encoder's record
    this.buffers = new WeakMap();
    this.original = {};
  }

  /// Wraps the prototypes' methods; the originals stay in `this.original`.
  install() {
    const g = this.g;
    const timer = this;
    const wrap = (proto, name, make) => {
      const orig = proto[name];
      if (typeof orig !== 'function') return;
      this.original[name] = orig;
      proto[name] = make(orig);
    };
    wrap(g.GPUAdapter.prototype, 'requestDevice', (orig) => async function (desc) {
      const has = this.features.has('timestamp-query');
      const required = Array.from(desc?.requiredFeatures ?? []);
      const add = has && !required.includes('timestamp-query');
      const device = await orig.call(this, add ? { ...desc, requiredFeatures: [...required, 'timestamp-query'] } : desc);
      timer.devices.set(device, {
        device,
        timestamps: has,
        reason: has ? null : 'the adapter has no timestamp-query',
        free: [],
      });
      return device;
    });
    wrap(g.GPUDevice.prototype, 'createCommandEncoder', (orig) => function (desc) {
      const encoder = orig.call(this, desc);
      const dev = timer.devices.get(this);
      if (dev) timer.encoders.set(encoder, { dev, chunks: [], slots: [], counts: emptyCounts() });
      return encoder;
    });
    const E = g.GPUCommandEncoder.prototype;
    wrap(E, 'beginComputePass', (orig) => function (desc) {
      const enc = timer.encoders.get(this);
      if (!enc) return orig.call(this, desc);
      enc.counts.passes++;
      if (desc && desc.timestampWrites) {
        enc.counts.ownTimestamps++;
        return orig.call(this, desc);
      }
      if (!timer.enabled || !enc.dev.timestamps) {
        enc.counts.untimed++;
        return orig.call(this, desc);
      }
      const [chunk, index] = timer.slot(enc);
      return orig.call(this, {
        ...desc,
        timestampWrites: { querySet: chunk.set, beginningOfPassWriteIndex: 2 * index, endOfPassWriteIndex: 2 * index + 1 },
      });
    });
    wrap(E, 'beginRenderPass', (orig) => function (desc) {
      const enc = timer.encoders.get(this);
      if (enc) enc.counts.renderPasses++;
      return orig.call(this, desc);
    });
    for (const name of COPIES) {
      wrap(E, name, (orig) => function (...args) {
        const enc = timer.encoders.get(this);
        if (enc) enc.counts.copies++;
        return orig.apply(this, args);
      });
    }
    wrap(E, 'finish', (orig) => function (desc) {
      const enc = timer.encoders.get(this);
      if (enc) {
        for (const chunk of enc.chunks) {
          timer.original.resolveQuerySet.call(this, chunk.set, 0, 2 * chunk.used, chunk.resolve, 0);
          timer.original.copyBufferToBuffer.call(this, chunk.resolve, 0, chunk.readback, 0, 16 * chunk.used);
        }
      }
      const buffer = orig.call(this, desc);
      if (enc) timer.buffers.set(buffer, enc);
      return buffer;
    });
    wrap(g.GPUQueue.prototype, 'submit', (orig) => function (buffers) {
      const list = Array.from(buffers);
      const result = orig.call(this, list);
      for (const buffer of list) {
        const enc = timer.buffers.get(buffer);
        if (!enc) continue;
        timer.buffers.delete(buffer);
        if (timer.window) timer.window.encoders.push(enc);
        else timer.discard(enc);
      }
      return result;
    });
    return this;
  }

  /// The next free query slot of `enc`: [chunk, index]. A chunk is the encoder's until its
  /// window was read.
  slot(enc) {
    let chunk = enc.chunks[enc.chunks.length - 1];
    if (!chunk || chunk.used === CHUNK_PASSES) {
      chunk = enc.dev.free.pop() ?? this.chunk(enc.dev.device);
      chunk.used = 0;
      enc.chunks.push(chunk);
    }
    const at = [chunk, chunk.used++];
    enc.slots.push(at);
    return at;
  }

  /// A new chunk on `device`: a query set of CHUNK_PASSES passes, its resolve buffer and a
  /// buffer to read it from.
  chunk(device) {
    const { GPUBufferUsage: U } = this.g;
    const size = 16 * CHUNK_PASSES;
    return {
      set: device.createQuerySet({ label: 'harness gpu timer', type: 'timestamp', count: 2 * CHUNK_PASSES }),
      resolve: device.createBuffer({ label: 'harness gpu timer resolve', size, usage: U.QUERY_RESOLVE | U.COPY_SRC }),
      readback: device.createBuffer({ label: 'harness gpu timer readback', size, usage: U.MAP_READ | U.COPY_DST }),
      used: 0,
    };
  }

  /// Gives `enc`'s chunks back once its work is done: it was submitted outside a window.
  discard(enc) {
    if (enc.chunks.length === 0) return;
    const { dev, chunks } = enc;
    enc.chunks = [];
    dev.device.queue.onSubmittedWorkDone().then(() => dev.free.push(...chunks), () => {});
  }

  /// Why a device of this page cannot be timed, or null where the first adapter's devices can.
  /// `device`, where given, is the one asked about.
  reason(device) {
    const dev = device && this.devices.get(device);
    if (device && !dev) return 'the device was created before the GPU timer was installed';
    return dev ? dev.reason : null;
  }

  /// Opens a window: the command buffers submitted until `close` are its work.
  open() {
    if (this.window) throw new Error('a GPU timer window is already open: windows do not nest');
    this.window = { encoders: [] };
  }

  /// Closes the window; resolves, once its work is done, to what `read` says of it.
  close() {
    const w = this.window;
    this.window = null;
    if (!w) return Promise.reject(new Error('no GPU timer window is open'));
    return this.read(w.encoders);
  }

  /// Reads the timestamps of `encoders`' passes and gives their chunks back: { busyMs, spanMs,
  /// timed, invalid, passes, ownTimestamps, renderPasses, copies, untimed, commandBuffers,
  /// complete }.
  async read(encoders) {
    const { GPUMapMode } = this.g;
    const chunks = encoders.flatMap((e) => e.chunks);
    await Promise.all(chunks.map((c) => c.readback.mapAsync(GPUMapMode.READ, 0, 16 * c.used)));
    const ticks = new Map();
    for (const c of chunks) {
      ticks.set(c, new BigUint64Array(c.readback.getMappedRange(0, 16 * c.used).slice(0)));
      c.readback.unmap();
    }
    const pairs = [];
    const counts = emptyCounts();
    for (const e of encoders) {
      for (const [chunk, index] of e.slots) {
        const t = ticks.get(chunk);
        pairs.push([t[2 * index], t[2 * index + 1]]);
      }
      for (const k in counts) counts[k] += e.counts[k];
      e.dev.free.push(...e.chunks);
      e.chunks = [];
    }
    const t = timesOf(pairs);
    counts.commandBuffers = encoders.length;
    const untimedWork = counts.ownTimestamps + counts.renderPasses + counts.copies + counts.untimed + t.invalid;
    return { busyMs: t.busyNs / 1e6, spanMs: t.spanNs / 1e6, timed: t.timed, invalid: t.invalid, ...counts, complete: t.timed > 0 && untimedWork === 0 };
  }

  /// Closes the window; resolves, once its work is done, to its times as `packed` gives them, in
  /// a Float64Array (for the WASM runner).
  closePacked() {
    return this.close().then((t) => new Float64Array(packed(t)));
  }

  /// Turns timestamps on or off for the passes recorded from now on.
  enable(on) {
    this.enabled = on;
  }

  /// Runs `work` (an async function) in a window; resolves to [work's result, the window's
  /// times].
  async around(work) {
    let result;
    const { times } = await windowed(true, async () => {
      result = await work();
    }, this);
    return [result, await times];
  }
}

/// The window's times as engines hand them to the WASM runner (page/src/engine.rs): [spanMs,
/// busyMs, timed, invalid, passes, ownTimestamps, renderPasses, copies, untimed, complete,
/// commandBuffers] (kernels/src/gpu_timer.rs reads them).
export function packed(t) {
  return [t.spanMs, t.busyMs, t.timed, t.invalid, t.passes, t.ownTimestamps, t.renderPasses, t.copies, t.untimed, t.complete ? 1 : 0, t.commandBuffers];
}

/// Packed times of no window: the timer was off.
export const UNTIMED = [NaN, NaN, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/// An engine's batch: runs `work` (a function, async or not), with `timed` in a window of
/// `timer` (the page's). Resolves, once `work` handed its work over, to { times }: a promise of the
/// window's times, or null. A synchronous `work`'s window closes before this returns, so the next
/// batch can open its own at once.
export function windowed(timed, work, timer = globalThis.harnessGpuTimer) {
  if (!timed) return Promise.resolve(work()).then(() => ({ times: null }));
  timer.open();
  let result;
  try {
    result = work();
  } catch (e) {
    timer.close().catch(() => {});
    return Promise.reject(e);
  }
  if (typeof result?.then !== 'function') return Promise.resolve({ times: timer.close() });
  return result.then(
    () => ({ times: timer.close() }),
    (e) => {
      timer.close().catch(() => {});
      throw e;
    },
  );
}

/// Once `handed` (what `windowed` returned) resolved and `device`'s queue finished everything
/// submitted so far: [doneMs, ...the window's packed times]. The times are read after doneMs is
/// taken, so reading them is not in the wall time.
export async function finished(device, handed) {
  const { times } = await handed;
  await device.queue.onSubmittedWorkDone();
  const doneMs = performance.now();
  return [doneMs, ...(times ? packed(await times) : UNTIMED)];
}

if (globalThis.GPUAdapter && !globalThis.harnessGpuTimer) {
  globalThis.harnessGpuTimer = new GpuTimer(globalThis).install();
}
