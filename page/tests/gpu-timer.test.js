// Unit tests of the page's GPU timer (static/gpu-timer.js) over a fake WebGPU: the pass
// bookkeeping and busy against span. Run by `node --test page/tests/` (harness's suite runs it:
// harness/tests/page_js.rs).
import test from 'node:test';
import assert from 'node:assert/strict';
import { GpuTimer, CHUNK_PASSES, timesOf } from '../static/gpu-timer.js';
import { fakeWebGpu, GAP_NS } from './fake-webgpu.js';

async function setUp(options) {
  const { gpu, globals } = fakeWebGpu(options);
  const timer = new GpuTimer(globals).install();
  const device = await new globals.GPUAdapter().requestDevice({ requiredFeatures: ['shader-f16'] });
  return { gpu, timer, device };
}

// Records `passes` compute passes of `ns` each into one encoder and submits it.
function submitPasses(device, passes, ns = 100) {
  const encoder = device.createCommandEncoder();
  for (let i = 0; i < passes; i++) encoder.beginComputePass({ label: `ns=${ns}` }).end();
  device.queue.submit([encoder.finish()]);
}

test('every device gets timestamp-query where the adapter has it, beside the features asked for', async () => {
  const { gpu, timer, device } = await setUp();
  assert.deepEqual(gpu.requested.requiredFeatures, ['shader-f16', 'timestamp-query']);
  assert.ok(device.features.has('timestamp-query'));
  assert.equal(timer.reason(device), null);
});

test('without timestamp-query on the adapter nothing is added, and the reason is said', async () => {
  const { gpu, timer, device } = await setUp({ timestampQuery: false });
  assert.deepEqual(gpu.requested.requiredFeatures, ['shader-f16']);
  assert.equal(timer.reason(device), 'the adapter has no timestamp-query');
  timer.enabled = true;
  const [, t] = await timer.around(async () => submitPasses(device, 2));
  assert.equal(t.untimed, 2);
  assert.equal(t.complete, false);
  assert.ok(Number.isNaN(t.spanMs));
});

test('passes across many encoders, more than one query set holds, each get a slot of their own', async () => {
  const { gpu, timer, device } = await setUp();
  timer.enabled = true;
  const perEncoder = CHUNK_PASSES * 2 + 3;
  const [, t] = await timer.around(async () => {
    submitPasses(device, perEncoder, 100);
    submitPasses(device, 5, 300);
  });
  const slots = gpu.passDescs.map((d) => [d.timestampWrites.querySet, d.timestampWrites.beginningOfPassWriteIndex]);
  const distinct = new Set(slots.map(([set, i]) => `${gpu.passDescs.findIndex((d) => d.timestampWrites.querySet === set)}:${i}`));
  assert.equal(distinct.size, perEncoder + 5, 'no two passes share a query');
  assert.equal(gpu.querySets, 4, 'three chunks for the first encoder, one for the second');
  assert.equal(t.timed, perEncoder + 5);
  assert.equal(t.busyMs * 1e6, perEncoder * 100 + 5 * 300);
  // Span: from the first pass's begin to the last's end, the gaps between passes included.
  assert.equal(t.spanMs * 1e6, perEncoder * 100 + 5 * 300 + (perEncoder + 5 - 1) * Number(GAP_NS));
  assert.equal(t.complete, true);
  // The chunks were given back: a second window takes no new query set.
  await timer.around(async () => submitPasses(device, CHUNK_PASSES));
  assert.equal(gpu.querySets, 4);
});

test('only the command buffers submitted in a window are its work; those outside give their chunks back', async () => {
  const { gpu, timer, device } = await setUp();
  timer.enabled = true;
  submitPasses(device, 3);
  await device.queue.onSubmittedWorkDone();
  await new Promise((r) => setTimeout(r, 0));
  // An encoder begun before the window and submitted in it belongs to the window.
  const early = device.createCommandEncoder();
  early.beginComputePass({ label: 'ns=700' }).end();
  const [, t] = await timer.around(async () => {
    device.queue.submit([early.finish()]);
    submitPasses(device, 1, 100);
  });
  assert.equal(t.timed, 2);
  assert.equal(t.busyMs * 1e6, 800);
  assert.equal(gpu.querySets, 2, "the outside encoder's chunk was reused");
});

test("a pass's own timestampWrites are kept, counted, and leave the window incomplete", async () => {
  const { gpu, timer, device } = await setUp();
  timer.enabled = true;
  const own = { querySet: device.createQuerySet({ count: 2 }), beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 };
  const [, t] = await timer.around(async () => {
    const encoder = device.createCommandEncoder();
    encoder.beginComputePass({ label: 'ns=100', timestampWrites: own }).end();
    encoder.beginComputePass({ label: 'ns=100' }).end();
    device.queue.submit([encoder.finish()]);
  });
  assert.equal(gpu.passDescs[0].timestampWrites, own);
  assert.equal(t.ownTimestamps, 1);
  assert.equal(t.timed, 1);
  assert.equal(t.complete, false);
});

test('render passes and copies are counted and leave the window incomplete', async () => {
  const { timer, device } = await setUp();
  timer.enabled = true;
  const [, t] = await timer.around(async () => {
    const encoder = device.createCommandEncoder();
    encoder.beginComputePass({}).end();
    encoder.beginRenderPass({}).end();
    const a = device.createBuffer({ size: 16 });
    encoder.copyBufferToBuffer(a, 0, device.createBuffer({ size: 16 }), 0, 16);
    device.queue.submit([encoder.finish()]);
  });
  assert.deepEqual([t.renderPasses, t.copies, t.timed, t.complete], [1, 1, 1, false]);
});

test('with the timer off passes are left alone and counted untimed', async () => {
  const { gpu, timer, device } = await setUp();
  const [, t] = await timer.around(async () => submitPasses(device, 2));
  assert.equal(gpu.passDescs[0].timestampWrites, undefined);
  assert.deepEqual([t.untimed, t.timed, t.complete], [2, 0, false]);
});

test('windows do not nest, and a failed window still gives its chunks back', async () => {
  const { gpu, timer, device } = await setUp();
  timer.enabled = true;
  timer.open();
  assert.throws(() => timer.open(), /do not nest/);
  await timer.close();
  await assert.rejects(timer.around(async () => {
    submitPasses(device, 1);
    throw new Error('the engine failed');
  }), /the engine failed/);
  await new Promise((r) => setTimeout(r, 0));
  await timer.around(async () => submitPasses(device, 1));
  assert.equal(gpu.querySets, 1);
});

test('busy against span on synthetic timestamps', () => {
  // Two overlapping passes (two queues' work seen at once) and a gap: busy counts each pass, span
  // the whole.
  const t = timesOf([[100n, 200n], [150n, 300n], [1000n, 1100n]]);
  assert.deepEqual([t.busyNs, t.spanNs, t.timed, t.invalid], [350, 1000, 3, 0]);
  // A zero begin and an end before its begin (drivers write those) are invalid, left out.
  const u = timesOf([[0n, 50n], [500n, 400n], [10n, 20n]]);
  assert.deepEqual([u.busyNs, u.spanNs, u.timed, u.invalid], [10, 10, 1, 2]);
  // Ticks past 2^53 ns keep their differences exact.
  const big = 1n << 60n;
  const v = timesOf([[big, big + 7n], [big + 10n, big + 12n]]);
  assert.deepEqual([v.busyNs, v.spanNs], [9, 12]);
  assert.ok(Number.isNaN(timesOf([]).spanNs));
});
