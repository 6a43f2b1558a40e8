// Why the browser rejected a shader, for whoever reads the failure. A WGSL module the browser's
// compiler (Tint, naga in Firefox) rejects only becomes an error when a pipeline is made from it,
// and that error says just "[Invalid ShaderModule] is invalid due to a previous error": the
// compiler's own message goes to the console, which harness does not see. Engines and frameworks
// (cubecl-wgpu's panic on an uncaptured error, for one) then report only the pipeline's error.
//
// So every device's createShaderModule is wrapped: the module's compilation info is read, and the
// errors in it are kept until the page reports its next error, which then carries them.

/// Modules whose errors are kept, newest last: the first rejected module is the one that matters,
/// and a flood of them must not grow without bound.
export const KEPT = 4;

/// The compiler's errors of one module, as one line each: `label:line:column: message`. Warnings
/// and infos are left out: they do not stop a pipeline.
export function describe(label, messages) {
  return Array.from(messages)
    .filter((m) => m.type === 'error')
    .map((m) => `${label || 'shader'}:${m.lineNum}:${m.linePos}: ${m.message}`);
}

/// Keeps the compile errors of every shader module made on `g`'s devices (the page's globals, or
/// fakes in a test).
export class ShaderErrors {
  constructor(g) {
    this.g = g;
    this.kept = [];
    this.pending = new Set();
  }

  /// Wraps GPUDevice.prototype.createShaderModule.
  install() {
    const proto = this.g.GPUDevice.prototype;
    const orig = proto.createShaderModule;
    if (typeof orig !== 'function') return this;
    const errors = this;
    proto.createShaderModule = function (desc) {
      const module = orig.call(this, desc);
      // Firefox before 133 has no getCompilationInfo; there the pipeline's error stands alone.
      if (typeof module.getCompilationInfo === 'function') {
        const read = module
          .getCompilationInfo()
          .then((info) => errors.keep(describe(desc?.label, info.messages)), () => {})
          .finally(() => errors.pending.delete(read));
        errors.pending.add(read);
      }
      return module;
    };
    return this;
  }

  /// Keeps one module's error lines, if any.
  keep(lines) {
    if (lines.length === 0) return;
    this.kept.push(lines);
    if (this.kept.length > KEPT) this.kept.shift();
  }

  /// Resolves once every module made so far has its compilation info read, or after `ms`: the
  /// pipeline's error can come before the module's info.
  settled(ms = 1000) {
    return Promise.race([Promise.allSettled([...this.pending]), new Promise((r) => setTimeout(r, ms))]);
  }

  /// The kept errors as text to append to an error's message ('' when none), and forgets them:
  /// each rejection is told once.
  take() {
    if (this.kept.length === 0) return '';
    const text = this.kept.flat().join('\n');
    this.kept = [];
    return `\nthe browser rejected shader code:\n${text}`;
  }
}

// The page's (main.js's reportError) and the WASM runner's (kernels' Gpu::guarded, after an
// uncaptured error) way in: plain functions, as wasm-bindgen calls them without `this`.
if (globalThis.GPUDevice && !globalThis.harnessShaderErrors) {
  const errors = new ShaderErrors(globalThis).install();
  globalThis.harnessShaderErrors = { settled: (ms) => errors.settled(ms), take: () => errors.take() };
}
