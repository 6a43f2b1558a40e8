//! CPU benches: a closure timed in batches of iterations long enough to dwarf the timer's
//! resolution (browsers coarsen `performance.now()`: 5 µs in a cross-origin-isolated Chrome page,
//! 20 µs to 1 ms in Firefox), by the same sampling policy as harness's kernels.

use kernels::sampling::{now_ms, sample, NoClock, Sample, Sampled, Sampling, Timed};
use std::hint::black_box;

/// A unit of iterations lasts at least this many timer ticks, so one tick is at most 1% of it.
const TICKS_PER_UNIT: f64 = 100.0;
/// Most iterations in one unit: an empty closure compiled to nothing never reaches 100 ticks.
const MAX_UNIT: u64 = 1 << 32;

/// What a bench's output is, for its check: its values as f64.
pub trait Output {
    /// The values, in order.
    fn values(&self) -> Vec<f64>;
}

macro_rules! scalar_output {
    ($($t:ty),*) => {$(
        impl Output for $t {
            fn values(&self) -> Vec<f64> {
                vec![*self as f64]
            }
        }
    )*};
}
scalar_output!(f32, f64, u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

impl Output for () {
    fn values(&self) -> Vec<f64> {
        Vec::new()
    }
}

impl<T: Output> Output for [T] {
    fn values(&self) -> Vec<f64> {
        self.iter().flat_map(Output::values).collect()
    }
}

impl<T: Output> Output for Vec<T> {
    fn values(&self) -> Vec<f64> {
        self.as_slice().values()
    }
}

impl<T: Output, const N: usize> Output for [T; N] {
    fn values(&self) -> Vec<f64> {
        self.as_slice().values()
    }
}

impl<T: Output + ?Sized> Output for &T {
    fn values(&self) -> Vec<f64> {
        (**self).values()
    }
}

/// What [`Bencher::iter`] measured.
pub(crate) struct Measured {
    pub sampled: Sampled,
    pub output: Vec<f64>,
    /// The smallest step the clock takes, ms.
    pub resolution_ms: f64,
}

/// Times a CPU bench: handed to the bench's body, which calls [`Bencher::iter`] once.
pub struct Bencher<'a> {
    pub(crate) sampling: &'a Sampling,
    pub(crate) on_sample: &'a mut dyn FnMut(u32),
    pub(crate) measured: Option<Measured>,
}

impl Bencher<'_> {
    /// Times `work`, batched: the sampling policy's warm-up and samples, each a batch of
    /// iterations whose time is divided by their count. Its output after the timing is the
    /// bench's output, checked against the reference.
    pub fn iter<O: Output>(&mut self, mut work: impl FnMut() -> O) {
        let resolution_ms = timer_resolution_ms();
        let unit = unit_size(&mut work, resolution_ms);
        let mut timed = Units { work: &mut work, unit, resolution_ms };
        let sampling = self.sampling;
        let on_sample = &mut *self.on_sample;
        let sampled = poll_now(sample(sampling, &mut timed, &mut NoClock, on_sample));
        let Ok(mut sampled) = sampled;
        // The policy batched units; the report speaks of iterations.
        let per_iteration = |ms: &mut f64| *ms /= unit as f64;
        per_iteration(&mut sampled.first_ms);
        sampled.warmup.iter_mut().for_each(per_iteration);
        sampled.samples.iter_mut().for_each(|s| per_iteration(&mut s.wall_ms));
        sampled.batch = sampled.batch.saturating_mul(u32::try_from(unit).unwrap_or(u32::MAX));
        let output = work().values();
        self.measured = Some(Measured { sampled, output, resolution_ms });
    }
}

/// `unit` iterations of the work per dispatch of the sampling policy, timed per unit.
struct Units<'w, W> {
    work: &'w mut W,
    unit: u64,
    resolution_ms: f64,
}

impl<O: Output, W: FnMut() -> O> Timed for Units<'_, W> {
    type Error = std::convert::Infallible;

    async fn run(&mut self, batch: u32) -> Result<Sample, Self::Error> {
        let n = self.unit * batch as u64;
        let t0 = now_ms();
        for _ in 0..n {
            black_box((self.work)());
        }
        let mut elapsed = now_ms() - t0;
        // A batch that ended within one tick took at most one tick: reported as that, an upper
        // bound, never as zero.
        if elapsed < self.resolution_ms {
            elapsed = self.resolution_ms;
        }
        Ok(Sample::new(elapsed / batch as f64, None))
    }
}

/// Iterations per unit: doubled from one until a unit lasts [`TICKS_PER_UNIT`] ticks of the clock.
fn unit_size<O>(work: &mut impl FnMut() -> O, resolution_ms: f64) -> u64 {
    let mut unit = 1u64;
    while unit < MAX_UNIT {
        let t0 = now_ms();
        for _ in 0..unit {
            black_box(work());
        }
        let elapsed = now_ms() - t0;
        if elapsed >= TICKS_PER_UNIT * resolution_ms {
            break;
        }
        // Jump most of the way where the time is already measurable; double where it is not.
        let factor = match elapsed > 4.0 * resolution_ms {
            true => (TICKS_PER_UNIT * resolution_ms / elapsed).ceil() as u64,
            false => 2,
        };
        unit = unit.saturating_mul(factor.max(2)).min(MAX_UNIT);
    }
    unit
}

/// The clock's smallest step, ms: the least nonzero difference between readings taken back to
/// back.
pub(crate) fn timer_resolution_ms() -> f64 {
    let mut least = f64::INFINITY;
    for _ in 0..5 {
        let t0 = now_ms();
        let mut t1 = now_ms();
        let mut spins = 0u64;
        while t1 == t0 && spins < 100_000_000 {
            t1 = now_ms();
            spins += 1;
        }
        if t1 > t0 {
            least = least.min(t1 - t0);
        }
    }
    // A clock that never moved: say one millisecond rather than divide by nothing.
    if least.is_finite() { least } else { 1.0 }
}

/// Runs `future` to completion where it never waits: a CPU bench's sampling has nothing to wait
/// for (no GPU, no clock probe), so its first poll finishes it.
fn poll_now<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench(work: impl FnMut() -> f64) -> Measured {
        let sampling = Sampling { mode: kernels::SamplingMode::Steady, warmup: kernels::WarmupPolicy::Fixed(1), samples: 10, max_time_ms: 1e3, target_ci_pct: None, nudge: kernels::Nudge::Auto, profile: false, gpu_timer: Default::default(), timer_cost: false };
        let mut on_sample = |_| {};
        let mut b = Bencher { sampling: &sampling, on_sample: &mut on_sample, measured: None };
        b.iter(work);
        b.measured.unwrap()
    }

    #[test]
    fn an_empty_closure_has_a_positive_time_and_states_the_resolution() {
        let m = bench(|| 0.0);
        assert!(m.resolution_ms > 0.0);
        assert!(!m.sampled.samples.is_empty());
        for s in &m.sampled.samples {
            assert!(s.wall_ms > 0.0 && s.wall_ms.is_finite(), "{s:?}");
        }
        assert_eq!(m.output, [0.0]);
    }

    #[test]
    fn outputs_flatten_to_f64() {
        assert_eq!(vec![1.5f32, 2.0].values(), [1.5, 2.0]);
        assert_eq!([3u32; 2].values(), [3.0, 3.0]);
        assert!(().values().is_empty());
    }
}
