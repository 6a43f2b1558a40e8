// A WebGPU of plain objects for the GPU timer's unit tests: it records what the timer asks of it,
// and a fake GPU runs each submitted command buffer in order, writing timestamps from a clock that
// advances by each pass's `ns` (its label, `ns=…`) and by GAP_NS between passes.

/// Idle GPU time between two passes, ns.
export const GAP_NS = 50n;

export function fakeWebGpu({ timestampQuery = true, subgroups = false } = {}) {
  const gpu = { clock: 1000n, querySets: 0, passDescs: [] };
  class GPUBuffer {
    constructor(size) {
      this.bytes = new Uint8Array(size);
    }
    async mapAsync() {}
    getMappedRange(offset = 0, size = this.bytes.length - offset) {
      return this.bytes.buffer.slice(offset, offset + size);
    }
    unmap() {}
  }
  class GPUQuerySet {
    constructor(count) {
      this.values = new BigUint64Array(count);
      gpu.querySets++;
    }
  }
  class GPUComputePassEncoder {
    constructor(commands, desc) {
      commands.push(['pass', desc]);
    }
    end() {}
  }
  class GPUCommandEncoder {
    constructor() {
      this.commands = [];
    }
    beginComputePass(desc) {
      gpu.passDescs.push(desc);
      return new GPUComputePassEncoder(this.commands, desc);
    }
    beginRenderPass(desc) {
      this.commands.push(['render', desc]);
      return { end() {} };
    }
    copyBufferToBuffer(src, srcOffset, dst, dstOffset, size) {
      this.commands.push(['copy', src, srcOffset, dst, dstOffset, size]);
    }
    resolveQuerySet(set, first, count, dst, offset) {
      this.commands.push(['resolve', set, first, count, dst, offset]);
    }
    finish() {
      return { commands: this.commands };
    }
  }
  class GPUQueue {
    submit(buffers) {
      for (const b of buffers) {
        for (const [op, ...a] of b.commands) {
          if (op === 'pass') {
            const [desc] = a;
            const ns = BigInt(/ns=(\d+)/.exec(desc?.label ?? '')?.[1] ?? 100);
            const w = desc?.timestampWrites;
            gpu.clock += GAP_NS;
            if (w) w.querySet.values[w.beginningOfPassWriteIndex] = gpu.clock;
            gpu.clock += ns;
            if (w) w.querySet.values[w.endOfPassWriteIndex] = gpu.clock;
          } else if (op === 'resolve') {
            const [set, first, count, dst, offset] = a;
            new BigUint64Array(dst.bytes.buffer, offset, count).set(set.values.subarray(first, first + count));
          } else if (op === 'copy') {
            const [src, so, dst, dof, size] = a;
            dst.bytes.set(src.bytes.subarray(so, so + size), dof);
          }
        }
      }
    }
    async onSubmittedWorkDone() {}
  }
  class GPUDevice {
    constructor(features) {
      this.features = new Set(features);
      this.queue = new GPUQueue();
    }
    createCommandEncoder() {
      return new GPUCommandEncoder();
    }
    createQuerySet({ count }) {
      return new GPUQuerySet(count);
    }
    createBuffer({ size }) {
      return new GPUBuffer(size);
    }
    // A compiler that rejects `enable subgroups;` on a device without the feature, as Tint does,
    // and warns on a line holding `warn`. Its info comes a tick later, as a browser's does.
    createShaderModule({ code }) {
      const messages = code.split('\n').flatMap((line, i) => {
        if (line.includes('enable subgroups;') && !this.features.has('subgroups')) {
          return [{ type: 'error', lineNum: i + 1, linePos: 8, message: "extension 'subgroups' is not allowed in the current environment" }];
        }
        return line.includes('warn') ? [{ type: 'warning', lineNum: i + 1, linePos: 1, message: 'a warning' }] : [];
      });
      return { getCompilationInfo: () => new Promise((resolve) => setTimeout(() => resolve({ messages }), 5)) };
    }
  }
  class GPUAdapter {
    constructor() {
      this.features = new Set([...(timestampQuery ? ['timestamp-query'] : []), 'shader-f16', ...(subgroups ? ['subgroups'] : [])]);
    }
    async requestDevice(desc) {
      gpu.requested = desc;
      return new GPUDevice(desc?.requiredFeatures ?? []);
    }
  }
  const GPUBufferUsage = { MAP_READ: 1, COPY_SRC: 4, COPY_DST: 8, QUERY_RESOLVE: 512 };
  const GPUMapMode = { READ: 1 };
  return { gpu, globals: { GPUAdapter, GPUDevice, GPUCommandEncoder, GPUQueue, GPUBufferUsage, GPUMapMode } };
}
