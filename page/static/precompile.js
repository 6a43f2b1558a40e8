// Pipeline precompilation for a cold start (harness run --cold-start): wgpu 30 has no
// createComputePipelineAsync, so the WASM runner (kernels' Gpu::run_cold) hands the shaders here
// first; each pipeline is created on wgpu's own GPUDevice with createComputePipelineAsync, all at
// once, and kept. When wgpu then creates the same pipeline (same WGSL, same entry point, layout
// 'auto'), it gets one compiled ahead instead of a new one. Two encoders loaded at once may
// precompile the same shader: each key keeps a list, so each gets its own.
const ready = new Map();
let unused = 0;
// Set once a page precompiles: only then are shader modules' sources kept.
let active = false;
const codeOf = new WeakMap();
const key = (code, entry) => `${entry}\u0000${code}`;

if (globalThis.GPUDevice) {
  const createShaderModule = GPUDevice.prototype.createShaderModule;
  GPUDevice.prototype.createShaderModule = function (desc) {
    const module = createShaderModule.call(this, desc);
    if (active) codeOf.set(module, desc.code);
    return module;
  };
  const createComputePipeline = GPUDevice.prototype.createComputePipeline;
  GPUDevice.prototype.createComputePipeline = function (desc) {
    const k = unused && desc.layout === 'auto' ? key(codeOf.get(desc.compute.module), desc.compute.entryPoint) : null;
    const kept = k && ready.get(k);
    if (kept && kept.length) {
      unused--;
      return kept.pop();
    }
    return createComputePipeline.call(this, desc);
  };
}

globalThis.harnessPrecompile = {
  // Creates every [code, entryPoint] of `shaders` on `device` with createComputePipelineAsync,
  // all at once; resolves when every one is ready.
  compile(device, shaders) {
    active = true;
    return Promise.all(
      shaders.map(async ([code, entryPoint]) => {
        const module = device.createShaderModule({ code });
        const pipeline = await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint } });
        const k = key(code, entryPoint);
        if (!ready.has(k)) ready.set(k, []);
        ready.get(k).push(pipeline);
        unused++;
      }),
    );
  },
  // How many compiled pipelines wgpu has not taken yet.
  unused: () => unused,
};
