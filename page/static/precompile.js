// Pipeline precompilation for a cold start (harness run --cold-start): wgpu 30 has no
// createComputePipelineAsync, so the WASM runner (kernels' Gpu::run_cold) hands the shaders here
// first; each pipeline is created on wgpu's own GPUDevice with createComputePipelineAsync, all at
// once, and kept. When wgpu then creates the same pipeline (same WGSL, same entry point, layout
// 'auto'), it gets the one compiled ahead instead of a new one.
const ready = new Map();
const codeOf = new WeakMap();
const key = (code, entry) => `${entry}\u0000${code}`;

if (globalThis.GPUDevice) {
  const createShaderModule = GPUDevice.prototype.createShaderModule;
  GPUDevice.prototype.createShaderModule = function (desc) {
    const module = createShaderModule.call(this, desc);
    if (ready.size) codeOf.set(module, desc.code);
    return module;
  };
  const createComputePipeline = GPUDevice.prototype.createComputePipeline;
  GPUDevice.prototype.createComputePipeline = function (desc) {
    const k = ready.size && desc.layout === 'auto' ? key(codeOf.get(desc.compute.module), desc.compute.entryPoint) : null;
    const kept = k && ready.get(k);
    if (kept) {
      ready.delete(k);
      return kept;
    }
    return createComputePipeline.call(this, desc);
  };
}

globalThis.harnessPrecompile = {
  // Creates every [code, entryPoint] of `shaders` on `device` with createComputePipelineAsync,
  // all at once; resolves when every one is ready.
  compile(device, shaders) {
    return Promise.all(
      shaders.map(async ([code, entryPoint]) => {
        const module = device.createShaderModule({ code });
        ready.set(key(code, entryPoint), await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint } }));
      }),
    );
  },
  // How many compiled pipelines wgpu has not taken yet.
  unused: () => ready.size,
};
