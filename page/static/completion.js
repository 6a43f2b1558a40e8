// Waiting for GPU work in a browser that reports completion on a timer. Firefox's GPU process
// polls its devices every ~100 ms, and also whenever a queue is submitted to (wgpu polls then):
// a batch of work is seen done up to a tick after the GPU finished it, and the GPU idles
// meanwhile. Where the runner measured such a latency (kernels::gpu::nudges), every engine's
// steady batches are nudged alike: harness's own (kernels::gpu::Gpu::settle) and these.

// How often a nudge is submitted, ms (a nested timer is clamped to about 4 ms).
const NUDGE_EVERY_MS = 1;

// Resolves (or rejects) as `promise` does; with `nudge`, submits an empty command buffer to
// `device`'s queue every NUDGE_EVERY_MS until then.
export async function settle(device, promise, nudge) {
  if (!nudge) return promise;
  let settled = false;
  const done = promise.finally(() => {
    settled = true;
  });
  while (!settled) {
    await Promise.race([done, new Promise((resolve) => setTimeout(resolve, NUDGE_EVERY_MS))]);
    if (!settled) {
      device.queue.submit([device.createCommandEncoder().finish()]);
      // Counted for the report (page/src/engine.rs reads it).
      globalThis.harnessNudges = (globalThis.harnessNudges ?? 0) + 1;
    }
  }
  return done;
}
