// Tensor cores for wgpu: Chromium offers them to WebGPU as `chromium-experimental-subgroup-matrix`,
// which wgpu 30 has no name for, so it can neither ask for it nor report it. When the WASM runner
// (kernels' Gpu::new) arms this, wgpu's next requestDevice also asks for the feature, where the
// adapter has what harness's GEMM (kernels/src/catalog/matmul/subgroup_matrix.rs) needs: f16
// products with an f32 result at 16x16x16, `shader-f16`, room for its tiles, and subgroups no wider
// than its 32-wide ones. Nothing else on the page (tfjs, onnxruntime-web) is given it.
//
// The same request also asks for `subgroups` where the adapter has it, which wgpu 30 cannot name
// either: a framework set up on harness's device (cubecl-wgpu, burn's backend) writes `enable
// subgroups;` into its browser shaders whenever they read a subgroup builtin, and a device without
// the feature rejects them. harness's own subgroup variants still run natively only: wgpu cannot
// see the feature on the device.
const FEATURE = 'chromium-experimental-subgroup-matrix';
// Workgroup memory the GEMM's larger block takes (subgroup_matrix::WORKGROUP_BYTES), given by arm().
let armed = false;
let workgroupBytes = Infinity;

function usable(adapter) {
  const info = adapter.info || {};
  const configs = [...(info.subgroupMatrixConfigs || [])];
  return (
    adapter.features.has(FEATURE) &&
    adapter.features.has('shader-f16') &&
    adapter.limits.maxComputeWorkgroupStorageSize >= workgroupBytes &&
    (info.subgroupMaxSize || 0) > 0 &&
    32 % info.subgroupMaxSize === 0 &&
    configs.some((c) => c.componentType === 'f16' && c.resultComponentType === 'f32' && c.M === 16 && c.N === 16 && c.K === 16)
  );
}

if (globalThis.GPUAdapter) {
  const requestDevice = GPUAdapter.prototype.requestDevice;
  GPUAdapter.prototype.requestDevice = function (descriptor) {
    if (!armed) return requestDevice.call(this, descriptor);
    armed = false;
    const wanted = [...((descriptor && descriptor.requiredFeatures) || [])];
    if (this.features.has('subgroups')) wanted.push('subgroups');
    if (usable(this)) wanted.push('shader-f16', FEATURE);
    return requestDevice.call(this, { ...descriptor, requiredFeatures: [...new Set(wanted)] });
  };
}

// cubecl-wgpu's browser shaders call subgroup operations (`subgroupAdd`) where Tint's uniformity
// analysis cannot prove subgroup-uniform control flow, and Chromium rejects the module ("must only
// be called from subgroup uniform control flow"); naga, which compiles the same shaders natively,
// has no such analysis. WGSL's own directive turns that one rule off for a module, as it is
// natively: a module that enables subgroups and sets no subgroup_uniformity rule of its own gets
// `diagnostic(off, subgroup_uniformity);` first (its lines move down by one). Where the code is
// truly not uniform, the results are wrong and the check says so. Counted in `amended`.
const SUBGROUPS = /^\s*enable\s+[^;]*\bsubgroups\b/m;

/// `code` with the subgroup_uniformity rule off where it enables subgroups and sets no rule of its
/// own; `null` where it is left as it is.
export function amend(code) {
  if (typeof code !== 'string' || !SUBGROUPS.test(code) || code.includes('subgroup_uniformity')) return null;
  return `diagnostic(off, subgroup_uniformity);\n${code}`;
}

if (globalThis.GPUDevice) {
  const create = GPUDevice.prototype.createShaderModule;
  GPUDevice.prototype.createShaderModule = function (descriptor) {
    const code = amend(descriptor?.code);
    if (code === null) return create.call(this, descriptor);
    globalThis.harnessSubgroupMatrix.amended++;
    return create.call(this, { ...descriptor, code });
  };
}

globalThis.harnessSubgroupMatrix = {
  // Shader modules given `diagnostic(off, subgroup_uniformity)` (see amend).
  amended: 0,
  // The next requestDevice (wgpu's) asks for the feature where the adapter can use it, with
  // `bytes` of workgroup memory, and for `subgroups` where the adapter has it.
  arm(bytes) {
    armed = true;
    workgroupBytes = bytes;
  },
  // Whether `device` has it.
  has(device) {
    return device.features.has(FEATURE);
  },
};
