// Unit tests of the page's shader-error keeper (static/shader-errors.js) and of the `subgroups`
// request (static/subgroup-matrix.js), over the fake WebGPU.
import test from 'node:test';
import assert from 'node:assert/strict';
import { ShaderErrors, KEPT, describe } from '../static/shader-errors.js';
import { fakeWebGpu } from './fake-webgpu.js';

const SUBGROUP_SHADER = 'enable subgroups;\n@compute @workgroup_size(32) fn main() {}';

function keeperOn({ features = [] } = {}) {
  const { globals } = fakeWebGpu();
  const errors = new ShaderErrors(globals).install();
  return { errors, device: new globals.GPUDevice(features) };
}

test("a rejected module's compiler errors are told with the next error, once", async () => {
  const { errors, device } = keeperOn();
  device.createShaderModule({ label: 'matmul_entry', code: SUBGROUP_SHADER });
  await errors.settled();
  const text = errors.take();
  assert.match(text, /the browser rejected shader code:/);
  assert.match(text, /matmul_entry:1:8: extension 'subgroups' is not allowed/);
  assert.equal(errors.take(), '', 'each rejection is told once');
});

test('warnings and accepted modules add nothing', async () => {
  const { errors, device } = keeperOn({ features: ['subgroups'] });
  device.createShaderModule({ code: SUBGROUP_SHADER });
  device.createShaderModule({ code: '// warn\n@compute @workgroup_size(1) fn main() {}' });
  await errors.settled();
  assert.equal(errors.take(), '');
});

test('settled waits for compilation info that comes after the pipeline error', async () => {
  const { errors, device } = keeperOn();
  device.createShaderModule({ label: 'late', code: SUBGROUP_SHADER });
  assert.equal(errors.take(), '', 'nothing is known before the info arrives');
  await errors.settled(1000);
  assert.match(errors.take(), /late:1:8/);
});

test('only the last KEPT rejected modules are kept', async () => {
  const { errors, device } = keeperOn();
  for (let i = 0; i < KEPT + 3; i++) device.createShaderModule({ label: `m${i}`, code: SUBGROUP_SHADER });
  await errors.settled();
  const lines = errors.take().split('\n').filter((l) => l.startsWith('m'));
  assert.deepEqual(lines.map((l) => l.split(':')[0]), Array.from({ length: KEPT }, (_, i) => `m${i + 3}`));
});

test('describe names an unlabelled module and keeps only errors', () => {
  const lines = describe(undefined, [
    { type: 'info', lineNum: 1, linePos: 1, message: 'i' },
    { type: 'error', lineNum: 3, linePos: 5, message: 'bad' },
  ]);
  assert.deepEqual(lines, ['shader:3:5: bad']);
});

test('an armed request asks for subgroups where the adapter has them, beside the features asked for', async () => {
  const { gpu, globals } = fakeWebGpu({ subgroups: true });
  // The module wraps the GPUAdapter it finds when it loads.
  globalThis.GPUAdapter = globals.GPUAdapter;
  await import('../static/subgroup-matrix.js');
  delete globalThis.GPUAdapter;
  const adapter = new globals.GPUAdapter();
  globalThis.harnessSubgroupMatrix.arm(16384);
  const armed = await adapter.requestDevice({ requiredFeatures: ['timestamp-query'] });
  assert.ok(armed.features.has('subgroups'), `asked: ${JSON.stringify(gpu.requested)}`);
  assert.ok(armed.features.has('timestamp-query'));
  // Only wgpu's (armed) request is changed; an engine's own is left alone.
  assert.ok(!(await adapter.requestDevice({ requiredFeatures: [] })).features.has('subgroups'));
  // An adapter without subgroups is not asked for them (the device would be refused).
  const without = new globals.GPUAdapter();
  without.features.delete('subgroups');
  globalThis.harnessSubgroupMatrix.arm(16384);
  assert.deepEqual(gpu.requested.requiredFeatures, []);
  await without.requestDevice({ requiredFeatures: ['timestamp-query'] });
  assert.deepEqual(gpu.requested.requiredFeatures, ['timestamp-query']);
});

test("a module that enables subgroups gets the subgroup_uniformity rule off; others are left alone", async () => {
  const { amend } = await import('../static/subgroup-matrix.js');
  const code = 'enable f16, subgroups;\nfn f() { let x = subgroupAdd(1u); }';
  assert.equal(amend(code), `diagnostic(off, subgroup_uniformity);\n${code}`);
  assert.equal(amend('@compute @workgroup_size(1) fn main() {}'), null);
  assert.equal(amend(`diagnostic(warning, subgroup_uniformity);\n${code}`), null, "the module's own rule stands");
  assert.equal(amend(undefined), null);
});
