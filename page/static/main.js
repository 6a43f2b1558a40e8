// The page's JavaScript: reports the adapter, forwards progress over the WebSocket, reports
// exceptions, and runs the WASM runner. Everything it learns goes to the harness server.
// The GPU timer first: it must wrap WebGPU before any engine asks for a device.
import './gpu-timer.js';
import './shader-errors.js';
import init, * as pkg from './pkg/page.js';
import './tfjs.js';
import './ort.js';
import './webnn.js';
import './precompile.js';
import './subgroup-matrix.js';
import './transformers.js';

const token = new URLSearchParams(location.search).get('token');
const status = document.getElementById('status');
const log = (line) => { document.getElementById('log').textContent += line + '\n'; };
let currentCase = null;

async function post(path, body) {
  const res = await fetch(`/api/${path}?token=${token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST /api/${path} answered ${res.status}`);
}

async function reportError(message, stack, fatal) {
  // A panicking bench (harness bench) aborts its WASM with `unreachable`; its hook left the
  // panic's own message here.
  if (globalThis.harnessPanic) {
    message = globalThis.harnessPanic;
    globalThis.harnessPanic = null;
  }
  const caseId = currentCase;
  const shaders = globalThis.harnessShaderErrors;
  if (shaders) {
    await shaders.settled();
    message = String(message) + shaders.take();
  }
  log(`error: ${message}`);
  // keepalive: the report must leave even if the page is being torn down.
  fetch(`/api/error?token=${token}`, {
    method: 'POST',
    keepalive: true,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message: String(message), stack: stack || null, caseId, fatal }),
  }).catch(() => {});
}

window.addEventListener('error', (e) => reportError(e.message, e.error && e.error.stack, true));
window.addEventListener('unhandledrejection', (e) => {
  const r = e.reason;
  reportError(r && r.message ? r.message : String(r), r && r.stack, true);
});

// Chromium's first start on a machine can come up without its GPU for a while: on the GPU machine
// the first browser of every lease got null, every later one the GPU (docs/hardware/h200-fused.md).
// So null is asked again, a second apart, before it stands.
const ADAPTER_TRIES = 5;

async function describeAdapter() {
  const base = { userAgent: navigator.userAgent, crossOriginIsolated: self.crossOriginIsolated === true };
  if (!navigator.gpu) return { ...base, available: false, reason: 'navigator.gpu is missing: WebGPU is disabled or unsupported' };
  let adapter = null;
  for (let i = 1; i <= ADAPTER_TRIES && !adapter; i++) {
    if (i > 1) {
      log(`requestAdapter() returned null; asking again (${i} of ${ADAPTER_TRIES})`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    adapter = await navigator.gpu.requestAdapter({ powerPreference: 'high-performance' });
  }
  if (!adapter) return { ...base, available: false, reason: `navigator.gpu.requestAdapter() returned null (asked ${ADAPTER_TRIES} times, a second apart)` };
  const info = adapter.info || (adapter.requestAdapterInfo ? await adapter.requestAdapterInfo() : {});
  const limits = {};
  for (const key in adapter.limits) {
    const v = adapter.limits[key];
    if (typeof v === 'number') limits[key] = v;
  }
  const fallback = info.isFallbackAdapter ?? adapter.isFallbackAdapter;
  return {
    ...base,
    available: true,
    vendor: info.vendor || '',
    architecture: info.architecture || '',
    device: info.device || '',
    description: info.description || '',
    isFallbackAdapter: typeof fallback === 'boolean' ? fallback : null,
    features: [...adapter.features].sort(),
    limits,
  };
}

function openProgress() {
  const proto = location.protocol === 'https:' ? 'wss' : 'ws';
  const ws = new WebSocket(`${proto}://${location.host}/api/events?token=${token}`);
  return new Promise((resolve) => {
    ws.onopen = () => resolve(ws);
    // Progress is a convenience: the run goes on without it.
    ws.onerror = () => resolve(null);
  });
}

// The adapter the run's platform uses: WebNN's context for a webnn or ort-webnn run, WebGPU's
// otherwise.
async function describePlatform() {
  const res = await fetch(`/api/plan?token=${token}`);
  if (!res.ok) throw new Error(`GET /api/plan answered ${res.status}`);
  const plan = await res.json();
  if (plan.platform !== 'webnn' && plan.platform !== 'ort-webnn') return { adapter: await describeAdapter(), webnn: false };
  status.textContent = 'asking for a WebNN context…';
  return { adapter: await harnessWebnn.describe(plan.webnn || {}), webnn: true };
}

async function main() {
  status.textContent = 'asking for a WebGPU adapter…';
  const { adapter, webnn } = await describePlatform();
  // The WASM runner reads it to tell a software adapter (a CPU), as the reports do.
  window.harnessAdapter = adapter;
  await post('adapter', adapter);
  // Without WebNN the harness settles the run as unavailable: there is nothing to run.
  if (webnn && !adapter.available) {
    status.textContent = `WebNN unavailable: ${adapter.reason}`;
    return;
  }
  // Without an adapter the harness stops a WebGPU run; the CPU baseline (--platform wasm) goes on.
  if (!adapter.available) status.textContent = `no WebGPU adapter: ${adapter.reason}`;
  else log(`adapter: ${adapter.vendor} ${adapter.architecture} ${adapter.description} fallback=${adapter.isFallbackAdapter}`);
  const ws = await openProgress();
  await init({ module_or_path: new URL('./pkg/page_bg.wasm', import.meta.url) });
  status.textContent = 'running…';
  // The catalogue's WASM exports `run`; a bench target's (harness bench) `harness_bench_run`.
  const run = pkg.run || pkg.harness_bench_run;
  await run(token, (json) => {
    const event = JSON.parse(json);
    if (event.type === 'caseStarted') {
      currentCase = event.caseId;
      status.textContent = `running ${currentCase}`;
    }
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(json);
  });
  currentCase = null;
  await post('done', {});
  status.textContent = 'done';
}

main().catch((e) => reportError(e && e.message ? e.message : String(e), e && e.stack, true));
