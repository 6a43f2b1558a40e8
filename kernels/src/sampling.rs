//! The sampling policy every platform follows: one untimed first run (kept apart: it absorbs
//! lazy compilation and first use), untimed warm-ups, then timed samples until the count is
//! reached or the time budget is spent (after at least [`MIN_SAMPLES`]).

use crate::plan::MIN_SAMPLES;
use crate::wire::StopReason;
use std::future::Future;

/// Milliseconds on a monotonic clock: `performance.now()` in the browser, `Instant` natively.
pub fn now_ms() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        web_sys::window()
            .and_then(|w| w.performance())
            .map(|p| p.now())
            .unwrap_or(0.0)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        use std::sync::OnceLock;
        use std::time::Instant;
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
    }
}

/// Wall times of one case's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Walls {
    /// The first run, ms.
    pub first_ms: f64,
    /// All warm-ups together, ms.
    pub warmup_ms: f64,
    /// Each timed sample, ms.
    pub samples: Vec<f64>,
    /// What ended sampling.
    pub stopped_by: StopReason,
}

/// Runs `run` by the policy; `run(Some(i))` is timed sample `i`, `run(None)` an untimed run.
/// Each call returns its own wall time in ms.
pub async fn sample<E, F, Fut>(
    warmup: u32,
    samples: u32,
    max_time_ms: f64,
    mut run: F,
    mut on_sample: impl FnMut(u32),
) -> Result<Walls, E>
where
    F: FnMut(Option<u32>) -> Fut,
    Fut: Future<Output = Result<f64, E>>,
{
    let first_ms = run(None).await?;
    let mut warmup_ms = 0.0;
    for _ in 0..warmup {
        warmup_ms += run(None).await?;
    }
    let mut walls = Vec::with_capacity(samples as usize);
    let mut stopped_by = StopReason::SampleCount;
    for i in 0..samples {
        walls.push(run(Some(i)).await?);
        on_sample(i + 1);
        let spent: f64 = walls.iter().sum();
        if i + 1 < samples && i + 1 >= MIN_SAMPLES && spent >= max_time_ms {
            stopped_by = StopReason::MaxTime;
            break;
        }
    }
    Ok(Walls { first_ms, warmup_ms, samples: walls, stopped_by })
}
