//! Completion latency: how soon the browser reports submitted work done, and the nudges that make
//! a browser which reports completion on a timer (Firefox) report it within a few ms.

use super::error::GpuError;
use super::timing::median;
use super::Gpu;
use crate::sampling::now_ms;
use crate::wire::CompletionLatency;
#[cfg(target_arch = "wasm32")]
use std::sync::atomic::Ordering;

/// Rounds of each completion-latency measurement.
pub const LATENCY_ROUNDS: usize = 10;
/// A completion latency above this, ms, means the browser reports completion on a timer (Firefox:
/// its GPU process polls its devices every ~100 ms), and harness nudges while its steady batches
/// wait ([`nudges`]).
pub const NUDGE_ABOVE_MS: f64 = 20.0;
/// How often a nudge is submitted while a steady batch is waited for, ms (browsers clamp a timer
/// to about 4 ms once timers nest).
pub const NUDGE_EVERY_MS: i32 = 1;

/// Whether a browser whose completion latency is `latency_ms` is nudged while steady batches
/// wait: an empty command buffer submitted every [`NUDGE_EVERY_MS`]. Firefox polls its devices
/// on a 100 ms timer and after every submit (wgpu polls then), so without nudges a batch is seen
/// done up to a tick after the GPU finished it, and the GPU idles meanwhile; with them, within a
/// few ms, as in Chrome. Every engine harness drives there is nudged alike (static/completion.js).
pub fn nudges(latency_ms: f64) -> bool {
    latency_ms > NUDGE_ABOVE_MS
}

impl Gpu {
    /// Awaits `work`; with `nudge`, submits an empty command buffer every [`NUDGE_EVERY_MS`]
    /// meanwhile ([`nudges`]). Natively there is nothing to nudge: waits poll the device.
    pub(super) async fn settle<T>(&self, nudge: bool, work: impl std::future::Future<Output = T>) -> T {
        #[cfg(target_arch = "wasm32")]
        if nudge {
            let mut work = std::pin::pin!(work);
            loop {
                let tick = std::pin::pin!(pause(NUDGE_EVERY_MS));
                match futures_util::future::select(work.as_mut(), tick).await {
                    futures_util::future::Either::Left((done, _)) => return done,
                    futures_util::future::Either::Right(_) => {
                        self.queue.submit([self.device.create_command_encoder(&Default::default()).finish()]);
                        self.nudged.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
        let _ = nudge;
        work.await
    }

    /// Measures the completion latency of trivial work, [`LATENCY_ROUNDS`] rounds of each kind
    /// after one unrecorded round; where it is long ([`nudges`]) and `nudge` allows, measures it
    /// again nudged, and steady batches will be. Keeps the median `onSubmittedWorkDone` latency,
    /// not nudged, for sizing steady batches: a nudge changes how soon a finished batch is seen,
    /// not how long a batch is (batches of one short pass, sized by the nudged latency, left
    /// Firefox's GPU idle enough to stay at its idle clock: h200-nudge.md).
    pub async fn measure_latency(&mut self, nudge: crate::Nudge) -> Result<CompletionLatency, GpuError> {
        let (work_done_ms, map_async_ms) = self.latency_rounds(false).await?;
        self.latency_ms = median(&work_done_ms);
        self.nudge = nudge == crate::Nudge::Auto && nudges(self.latency_ms);
        let mut latency = CompletionLatency { work_done_ms, map_async_ms, ..Default::default() };
        if self.nudge {
            (latency.nudged_work_done_ms, latency.nudged_map_async_ms) = self.latency_rounds(true).await?;
        }
        Ok(latency)
    }

    /// Each round's ms from submit to `onSubmittedWorkDone` and to `mapAsync` resolved.
    async fn latency_rounds(&self, nudge: bool) -> Result<(Vec<f64>, Vec<f64>), GpuError> {
        let target = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("latency source"),
            size: 4,
            usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let readback = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("latency readback"),
            size: 4,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let (mut work_done, mut map_async) = (Vec::new(), Vec::new());
        for round in 0..=LATENCY_ROUNDS {
            let mut encoder = self.device.create_command_encoder(&Default::default());
            encoder.clear_buffer(&target, 0, None);
            let t0 = now_ms();
            let index = self.queue.submit([encoder.finish()]);
            self.settle(nudge, self.finished(index, self.done_after_submit())).await?;
            let done_ms = now_ms() - t0;

            let mut encoder = self.device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(&target, 0, &readback, 0, 4);
            let t0 = now_ms();
            self.queue.submit([encoder.finish()]);
            self.settle(nudge, self.map_read(&readback, 4)).await?;
            if round > 0 {
                work_done.push(done_ms);
                map_async.push(now_ms() - t0);
            }
        }
        Ok((work_done, map_async))
    }
}

/// Resolves after `ms` on the page's timer (at once where there is no window).
#[cfg(target_arch = "wasm32")]
pub(super) async fn pause(ms: i32) {
    let pause = js_sys::Promise::new(&mut |resolve, _| {
        let timer = web_sys::window().map(|w| w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms));
        if !matches!(timer, Some(Ok(_))) {
            let _ = resolve.call0(&resolve);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(pause).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_browser_that_reports_completion_on_a_timer_is_nudged_a_prompt_one_is_not() {
        // Firefox's poll timer (h100-firefox.md: 100.1 ms); Chrome and native wgpu, well under 1 ms.
        assert!(nudges(100.1));
        assert!(!nudges(0.05) && !nudges(NUDGE_ABOVE_MS));
        // Runs written before the setting existed were not nudged; a plan without it may be.
        assert_eq!((crate::Nudge::legacy(), crate::Nudge::default()), (crate::Nudge::Off, crate::Nudge::Auto));
        let plan: crate::RunPlan = serde_json::from_value(serde_json::json!({
            "platform": "webgpu", "mode": "steady", "warmup": 0, "samples": 3, "maxTimeMs": 1000.0, "targetCiPct": null, "cases": []
        }))
        .unwrap();
        assert_eq!(plan.sampling.nudge, crate::Nudge::Auto);
        // Steady batches only: an isolated sample waits as a one-off call does.
        let steady = plan.sampling;
        let isolated = crate::Sampling { mode: crate::SamplingMode::Isolated, ..steady };
        assert!(steady.nudged(true) && !steady.nudged(false) && !isolated.nudged(true));
    }
}
