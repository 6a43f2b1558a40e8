//! The roofline probes: a STREAM-like copy that measures a target's memory bandwidth and a chain
//! of FMAs that measures its f32 throughput (and, where the adapter has `shader-f16`, its f16
//! throughput). Reports divide every other case's GB/s or GFLOP/s by the f32 probes' (the
//! `roofline` of a case in results.json); the f16 probe's GFLOP/s is reported beside them.

use super::shapes;
use crate::check::Tolerance;
use crate::dtype::Dtype;
use crate::kernel::{linear_workgroups, pad_params, Kernel};
use crate::real::Real;
use crate::shape::Shape;
use crate::suite::Suite;

/// `out = x` over a large f32 buffer, one vec4 per invocation: the memory-bandwidth probe.
pub static STREAM_COPY: StreamCopy = StreamCopy;
/// Eight independent FMA chains per invocation: the f32-throughput probe.
pub static FMA_CHAIN: FmaChain = FmaChain { dtype: Dtype::F32 };
/// The same chains in f16 arithmetic: the f16-throughput probe (needs `shader-f16`).
pub static FMA_CHAIN_F16: FmaChain = FmaChain { dtype: Dtype::F16 };

/// The memory-bandwidth probe: a copy of `N` f32s (2 × 4 × N bytes moved, no FLOPs).
pub struct StreamCopy;

impl StreamCopy {
    /// The output's length: `N` rounded up to whole vec4s (the shader stores vec4s; past `N` it
    /// copies the input's zero padding).
    fn padded(s: &Shape) -> usize {
        s.product().next_multiple_of(4)
    }

    fn compute<T: Real>(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<T> {
        let mut out: Vec<T> = inputs[0].iter().map(|&v| T::of(v)).collect();
        out.resize(Self::padded(s), T::lit(0.0));
        out
    }
}

impl Kernel for StreamCopy {
    fn name(&self) -> &'static str {
        "stream_copy"
    }
    fn summary(&self) -> &'static str {
        "out = x, f32, one vec4 per invocation: the memory-bandwidth probe of --roofline"
    }
    fn dims(&self) -> &'static [&'static str] {
        &["N"]
    }
    fn shapes(&self, suite: Suite) -> Vec<Shape> {
        // The largest shape is the peak. Past the quick suite it outgrows an H100's 50 MB L2, so the
        // copy measures memory, not cache; full is WebGPU's default 128 MiB storage-binding limit.
        match suite {
            Suite::Quick => shapes(&[&[1 << 16], &[1001]]),
            Suite::Default => shapes(&[&[1 << 24]]),
            Suite::Full => shapes(&[&[1 << 25]]),
        }
    }
    fn input_lens(&self, s: &Shape) -> Vec<usize> {
        vec![s.product()]
    }
    fn output_len(&self, s: &Shape) -> usize {
        Self::padded(s)
    }
    fn params(&self, s: &Shape) -> Vec<u32> {
        pad_params(vec![(Self::padded(s) / 4) as u32])
    }
    fn wgsl(&self) -> String {
        include_str!("../../wgsl/stream_copy.wgsl").to_string()
    }
    fn workgroups(&self, s: &Shape) -> [u32; 3] {
        linear_workgroups(Self::padded(s) / 4)
    }
    fn reference(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f64> {
        self.compute::<f64>(s, inputs)
    }
    fn cpu(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f32> {
        self.compute::<f32>(s, inputs)
    }
    fn tolerance(&self, _s: &Shape) -> Tolerance {
        Tolerance { abs: 0.0, rel: 0.0 }
    }
    fn flops(&self, _s: &Shape) -> f64 {
        0.0
    }
    fn bytes(&self, s: &Shape) -> f64 {
        2.0 * 4.0 * s.product() as f64
    }
}

/// Independent chains per invocation (two vec4 accumulators in the shader).
const CHAINS: usize = 8;
/// The recurrence `c ← c·A + B` contracts towards `B / (1 − A)` = 0.5, so values stay in [-1, 1]
/// and f32 rounding errors fade instead of growing; with `A` this close to 1 the output still
/// depends on the input after thousands of steps, so a chain cut short fails the check.
const A: f32 = 0.999;
const B: f32 = 0.0005;
/// The f16 chains' `A` and `B`: exact in f16, the same fixed point 0.5, and a contraction strong
/// enough (1 / (1 − A) = 8) that f16's coarse rounding stays small. Such chains forget their input
/// within a few dozen steps, so the f16 probe's last chain counts instead (see [`FmaChain::counts`]).
const A16: f32 = 0.875;
const B16: f32 = 0.0625;
/// The counting chain's start is `-floor(|x| · COUNT_SCALE)`: an integer in `[-1024, 0]`, so with at
/// most [`MAX_COUNTED_FMAS`] steps of `c ← c·1 + 1` every value is an integer f16 holds exactly.
const COUNT_SCALE: f32 = 1024.0;
/// The longest chain the counter follows exactly (f16 holds every integer up to 2048).
const MAX_COUNTED_FMAS: u32 = 2048;

/// The throughput probe at shape `[threads, fmas]`: each of `threads` invocations runs [`CHAINS`]
/// chains of `fmas` FMAs in `dtype` seeded from its inputs and writes their sum (2 × threads × 8 ×
/// fmas FLOPs).
pub struct FmaChain {
    dtype: Dtype,
}

impl FmaChain {
    /// The recurrence's `(A, B)` in this probe's arithmetic.
    fn ab(&self) -> (f32, f32) {
        match self.dtype {
            Dtype::F32 | Dtype::Q8_0 | Dtype::Q4_0 => (A, B),
            Dtype::F16 => (A16, B16),
        }
    }

    /// Whether the last of the eight chains is a counter (`c ← fma(c, 1, 1)` from an integer the
    /// input gives): f16's, whose contracting chains forget both their input and how many steps
    /// they took, so only the counter makes a chain cut short, or a constant output, fail.
    fn counts(&self) -> bool {
        self.dtype == Dtype::F16
    }

    /// Chain `lane`'s `(A, B)` and its start from the seed `x`, as the shader takes them.
    fn lane(&self, lane: usize, x: f32) -> (f32, f32, f32) {
        let (a, b) = self.ab();
        if self.counts() && lane == CHAINS - 1 {
            (1.0, 1.0, -(x.abs() * COUNT_SCALE).floor())
        } else {
            (a, b, self.dtype.round(x))
        }
    }

    /// What the chains compute, step by step (the CPU baseline).
    fn iterate<T: Real>(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<T> {
        inputs[0]
            .chunks(CHAINS)
            .map(|seeds| {
                seeds.iter().enumerate().fold(T::lit(0.0), |acc, (lane, &x)| {
                    let (a, b, start) = self.lane(lane, x);
                    let (a, b) = (T::of(a), T::of(b));
                    acc + (0..s.dim(1)).fold(T::of(start), |c, _| c * a + b)
                })
            })
            .collect()
    }
}

impl Kernel for FmaChain {
    fn name(&self) -> &'static str {
        match self.dtype {
            Dtype::F32 | Dtype::Q8_0 | Dtype::Q4_0 => "fma_chain",
            Dtype::F16 => "fma_chain_f16",
        }
    }
    fn summary(&self) -> &'static str {
        match self.dtype {
            Dtype::F32 | Dtype::Q8_0 | Dtype::Q4_0 => "8 independent chains c = fma(c, 0.999, 0.0005) per invocation, summed: the f32-throughput probe of --roofline",
            Dtype::F16 => "8 independent chains per invocation in f16 (needs shader-f16), 7 of c = fma(c, 0.875, 0.0625) and one counting c = fma(c, 1, 1) from an integer the input gives, summed in f32: the f16-throughput probe of --roofline",
        }
    }
    fn features(&self) -> Vec<&'static str> {
        self.dtype.feature().into_iter().collect()
    }
    fn dims(&self) -> &'static [&'static str] {
        &["threads", "fmas"]
    }
    fn shapes(&self, suite: Suite) -> Vec<Shape> {
        // Full: 2^20 invocations fill an H100 (132 SMs × 2048 threads, ~4 times over) and its 69
        // GFLOP take over a millisecond at its ~52 TFLOP/s f32 peak. f16's counter follows at most
        // 2048 steps, so its full shape has twice the invocations and half the chain: the same FLOPs.
        match (suite, self.dtype) {
            (Suite::Quick, _) => shapes(&[&[1024, 512]]),
            (Suite::Default, _) => shapes(&[&[1 << 17, 1024]]),
            (Suite::Full, Dtype::F16) => shapes(&[&[1 << 21, MAX_COUNTED_FMAS]]),
            (Suite::Full, _) => shapes(&[&[1 << 20, 4096]]),
        }
    }
    fn input_lens(&self, s: &Shape) -> Vec<usize> {
        vec![CHAINS * s.dim(0) as usize]
    }
    fn output_len(&self, s: &Shape) -> usize {
        s.dim(0) as usize
    }
    fn params(&self, s: &Shape) -> Vec<u32> {
        let (a, b) = self.ab();
        let (a_w, b_w, _) = self.lane(CHAINS - 1, 0.0);
        pad_params(vec![s.dim(0), s.dim(1), a.to_bits(), b.to_bits(), a_w.to_bits(), b_w.to_bits(), self.counts() as u32])
    }
    fn wgsl(&self) -> String {
        let dtype = self.dtype;
        format!("{}alias F = {dtype};\n{}", Dtype::enables(&[dtype]), include_str!("../../wgsl/fma_chain.wgsl"))
    }
    fn workgroups(&self, s: &Shape) -> [u32; 3] {
        linear_workgroups(s.dim(0) as usize)
    }
    /// In closed form, `c_n = p + Aⁿ(c_0 − p)` with `p = B / (1 − A)` (the counter: `c_0 + n`), so
    /// the reference shares no arithmetic with the chains and costs nothing at the full shape's
    /// 2^33 FMAs.
    fn reference(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f64> {
        let n = s.dim(1) as i32;
        let closed = |(lane, &x): (usize, &f32)| {
            let (a, b, start) = self.lane(lane, x);
            let (a, b, start) = (f64::from(a), f64::from(b), f64::from(start));
            if a == 1.0 {
                // Past 2048, f16's `c + 1` rounds (to even) back to 2048: the counter stops there.
                return (start + b * f64::from(n)).min(f64::from(MAX_COUNTED_FMAS));
            }
            let p = b / (1.0 - a);
            p + a.powi(n) * (start - p)
        };
        inputs[0].chunks(CHAINS).map(|seeds| seeds.iter().enumerate().map(closed).sum()).collect()
    }
    fn cpu(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f32> {
        self.iterate::<f32>(s, inputs)
    }
    fn tolerance(&self, _s: &Shape) -> Tolerance {
        // Each step rounds once (fused) or twice; the contraction bounds the sum of those errors
        // by 2 ulp / (1 − A): f32 ≈ 1.2e-4 per chain, ≈ 1e-3 for the sum of eight; f16 (ulp 2^-10
        // near 1, 1 / (1 − A) = 8) ≈ 1.6e-2 per chain, plus the f16 additions of the sum.
        match self.dtype {
            Dtype::F32 | Dtype::Q8_0 | Dtype::Q4_0 => Tolerance { abs: 2e-3, rel: 0.0 },
            Dtype::F16 => Tolerance { abs: 0.15, rel: 0.0 },
        }
    }
    fn flops(&self, s: &Shape) -> f64 {
        2.0 * CHAINS as f64 * s.dim(0) as f64 * s.dim(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::compare;

    #[test]
    fn the_copy_reference_is_the_input_padded_to_whole_vec4s() {
        let s = Shape(vec![5]);
        let x = STREAM_COPY.inputs(&s, 1);
        let r = STREAM_COPY.reference(&s, &x);
        assert_eq!(r.len(), 8);
        assert!(r[..5].iter().zip(&x[0]).all(|(&r, &x)| r == f64::from(x)) && r[5..].iter().all(|&v| v == 0.0));
        assert_eq!(STREAM_COPY.params(&s)[0], 2);
        assert_eq!(STREAM_COPY.bytes(&Shape(vec![1 << 25])), 2.0 * 4.0 * (1 << 25) as f64);
        for suite in Suite::ALL {
            let largest = STREAM_COPY.shapes(suite).iter().map(|s| STREAM_COPY.bytes(s)).fold(0.0, f64::max);
            assert!(largest / 2.0 <= 128.0 * 1024.0 * 1024.0, "{suite}: each binding within WebGPU's default 128 MiB");
        }
    }

    #[test]
    fn the_closed_form_reference_is_the_f64_recurrence_and_the_f32_chains_meet_it() {
        let s = Shape(vec![512, 4096]);
        let x = FMA_CHAIN.inputs(&s, 7);
        let closed = FMA_CHAIN.reference(&s, &x);
        let stepped = FMA_CHAIN.iterate::<f64>(&s, &x);
        for (c, r) in closed.iter().zip(&stepped) {
            assert!((c - r).abs() < 1e-9, "{c} vs {r}");
        }
        let v = compare(&FMA_CHAIN.cpu(&s, &x), &closed, FMA_CHAIN.tolerance(&s));
        assert!(v.passed, "{v:?}");
        // A quarter of the tolerance is left: the f32 chains stay well inside it.
        assert!(v.max_abs_err < FMA_CHAIN.tolerance(&s).abs / 4.0, "{}", v.max_abs_err);
    }

    /// The f16 probe's chains as f16 arithmetic gives them: every product and sum rounded to f16
    /// (fused or not, the counter's `c·1 + 1` rounds once), summed in f32 as the shader does.
    fn f16_chains(s: &Shape, x: &[f32]) -> Vec<f32> {
        let f16 = |v: f32| Dtype::F16.round(v);
        x.chunks(CHAINS)
            .map(|seeds| {
                seeds
                    .iter()
                    .enumerate()
                    .map(|(lane, &v)| {
                        let (a, b, start) = FMA_CHAIN_F16.lane(lane, v);
                        (0..s.dim(1)).fold(f16(start), |c, _| f16(f16(c * a) + b))
                    })
                    .sum()
            })
            .collect()
    }

    #[test]
    fn f16_chains_rounded_at_every_step_meet_their_reference() {
        for s in Suite::ALL.iter().flat_map(|&suite| FMA_CHAIN_F16.shapes(suite)) {
            let s = Shape(vec![256, s.dim(1)]);
            let x = FMA_CHAIN_F16.inputs(&s, 5);
            let v = compare(&f16_chains(&s, &x[0]), &FMA_CHAIN_F16.reference(&s, &x), FMA_CHAIN_F16.tolerance(&s));
            assert!(v.passed && v.max_abs_err < FMA_CHAIN_F16.tolerance(&s).abs / 4.0, "{s}: {v:?}");
        }
        assert_eq!(FMA_CHAIN_F16.features(), ["shader-f16"]);
        assert!(FMA_CHAIN_F16.wgsl().starts_with("enable f16;\nalias F = f16;") && FMA_CHAIN.wgsl().starts_with("alias F = f32;"));
        // The counter is the f16 probe's alone; the f32 chains are eight alike.
        assert_eq!(FMA_CHAIN_F16.params(&Shape(vec![1, 8]))[4..7], [1f32.to_bits(), 1f32.to_bits(), 1]);
        assert_eq!(FMA_CHAIN.params(&Shape(vec![1, 8]))[4..7], [A.to_bits(), B.to_bits(), 0]);
    }

    #[test]
    fn a_chain_cut_short_fails_the_check() {
        for chain in [&FMA_CHAIN, &FMA_CHAIN_F16] {
            for suite in Suite::ALL {
                for s in chain.shapes(suite) {
                    let full_shape = Shape(vec![64, s.dim(1)]);
                    let x = chain.inputs(&full_shape, 3);
                    let full = chain.reference(&full_shape, &x);
                    // Half the chain; f16's counter also shows a single loop trip (8 FMAs) missing.
                    let shorter = if chain.counts() { vec![s.dim(1) / 2, s.dim(1) - 8] } else { vec![s.dim(1) / 2] };
                    for fmas in shorter {
                        let short = chain.reference(&Shape(vec![64, fmas]), &x);
                        assert!(!compare(&short, &full, chain.tolerance(&s)).passed, "{} {suite} {s}: {fmas} FMAs must show", chain.name());
                    }
                }
            }
        }
    }

    #[test]
    fn an_f16_output_that_ignores_its_input_fails_the_check() {
        let s = FMA_CHAIN_F16.shapes(Suite::Full).remove(0);
        let s = Shape(vec![256, s.dim(1)]);
        let x = FMA_CHAIN_F16.inputs(&s, 9);
        let expected = FMA_CHAIN_F16.reference(&s, &x);
        // The best constant a kernel could write: the mean of the right answers.
        let mean = expected.iter().sum::<f64>() / expected.len() as f64;
        let v = compare(&vec![mean; expected.len()], &expected, FMA_CHAIN_F16.tolerance(&s));
        assert!(!v.passed && v.mismatches > expected.len() / 2, "{v:?}");
    }

    #[test]
    fn fma_flops_count_two_per_fma() {
        assert_eq!(FMA_CHAIN.flops(&Shape(vec![1 << 20, 4096])), 2.0 * 8.0 * (1u64 << 32) as f64);
    }
}
