// Unit tests of onnxruntime-web's driver (static/ort.js) over a stand-in `ort` that records each
// session it creates: where the nodes went is read from a verbose session of its own, released
// before the measured session exists, so the measured one logs nothing while it is timed.
import test from 'node:test';
import assert from 'node:assert/strict';

const PLACED = '[V:onnxruntime:, session_state.cc:1380 VerifyEachNodeIsAssignedToAnEp]  All nodes placed on [CPUExecutionProvider]. Number of nodes: 2';
const created = [];
globalThis.location = { href: 'http://harness.test/' };
globalThis.ort = {
  env: { wasm: {}, webgpu: {} },
  Tensor: class {
    constructor(type, data, dims) {
      Object.assign(this, { type, data, dims });
    }
  },
  InferenceSession: {
    async create(model, options) {
      // ORT writes its log with console.error, as its WASM's stderr.
      if (options.logSeverityLevel === 0) console.error(`2026-12-03 ${PLACED}`);
      const session = { options, released: false, release: async () => { session.released = true; } };
      created.push(session);
      return session;
    },
  },
};
await import('../static/ort.js');

const model = [new Uint8Array([8, 1]), ['x'], [new Float32Array(4)], ['y'], [[1, 4]], ['float32'], [], {}];

test('the placement comes from a verbose session of its own; the measured session is not verbose', async () => {
  await harnessOrt.load('wasm');
  const lines = await harnessOrt.prepare([model], false, true);
  assert.equal(lines.length, 1);
  assert.match(lines[0], /All nodes placed on \[CPUExecutionProvider\]/);
  assert.equal(created.length, 2);
  assert.equal(created[0].options.logSeverityLevel, 0, 'the first session logs where its nodes went');
  assert.ok(created[0].released, 'and is released before the measured one is created');
  assert.equal(created[1].options.logSeverityLevel, undefined, 'the measured session logs at the default level');
  assert.ok(!created[1].released);
  await harnessOrt.dispose();
  assert.ok(created[1].released);
});

test('without a placement (a cold start) one session is created, not verbose', async () => {
  created.length = 0;
  assert.deepEqual(await harnessOrt.prepare([model], false, false), []);
  assert.equal(created.length, 1);
  assert.equal(created[0].options.logSeverityLevel, undefined);
  await harnessOrt.dispose();
});
