//! The roofline probes: a STREAM-like copy that measures a target's memory bandwidth and a chain
//! of FMAs that measures its f32 throughput. Reports divide every other case's GB/s or GFLOP/s
//! by the probes' (the `roofline` of a case in results.json).

use super::shapes;
use crate::check::Tolerance;
use crate::kernel::{linear_workgroups, pad_params, Kernel};
use crate::real::Real;
use crate::shape::Shape;
use crate::suite::Suite;

/// `out = x` over a large f32 buffer, one vec4 per invocation: the memory-bandwidth probe.
pub static STREAM_COPY: StreamCopy = StreamCopy;
/// Eight independent FMA chains per invocation: the f32-throughput probe.
pub static FMA_CHAIN: FmaChain = FmaChain;

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

/// The f32-throughput probe at shape `[threads, fmas]`: each of `threads` invocations runs
/// [`CHAINS`] chains of `fmas` FMAs seeded from its inputs and writes their sum
/// (2 × threads × 8 × fmas FLOPs).
pub struct FmaChain;

impl FmaChain {
    /// What the f32 chains compute, step by step (the CPU baseline).
    fn iterate<T: Real>(s: &Shape, inputs: &[Vec<f32>]) -> Vec<T> {
        let (a, b) = (T::of(A), T::of(B));
        inputs[0]
            .chunks(CHAINS)
            .map(|seeds| {
                let mut c: Vec<T> = seeds.iter().map(|&v| T::of(v)).collect();
                for _ in 0..s.dim(1) {
                    for v in &mut c {
                        *v = *v * a + b;
                    }
                }
                c.into_iter().fold(T::lit(0.0), |acc, v| acc + v)
            })
            .collect()
    }
}

impl Kernel for FmaChain {
    fn name(&self) -> &'static str {
        "fma_chain"
    }
    fn summary(&self) -> &'static str {
        "8 independent chains c = fma(c, 0.999, 0.0005) per invocation, summed: the f32-throughput probe of --roofline"
    }
    fn dims(&self) -> &'static [&'static str] {
        &["threads", "fmas"]
    }
    fn shapes(&self, suite: Suite) -> Vec<Shape> {
        // Full: 2^20 invocations fill an H100 (132 SMs × 2048 threads, ~4 times over) and its 69
        // GFLOP take over a millisecond at its ~52 TFLOP/s f32 peak.
        match suite {
            Suite::Quick => shapes(&[&[1024, 512]]),
            Suite::Default => shapes(&[&[1 << 17, 1024]]),
            Suite::Full => shapes(&[&[1 << 20, 4096]]),
        }
    }
    fn input_lens(&self, s: &Shape) -> Vec<usize> {
        vec![CHAINS * s.dim(0) as usize]
    }
    fn output_len(&self, s: &Shape) -> usize {
        s.dim(0) as usize
    }
    fn params(&self, s: &Shape) -> Vec<u32> {
        pad_params(vec![s.dim(0), s.dim(1), A.to_bits(), B.to_bits()])
    }
    fn wgsl(&self) -> String {
        include_str!("../../wgsl/fma_chain.wgsl").to_string()
    }
    fn workgroups(&self, s: &Shape) -> [u32; 3] {
        linear_workgroups(s.dim(0) as usize)
    }
    /// In closed form, `c_n = p + Aⁿ(c_0 − p)` with `p = B / (1 − A)`, so the reference shares no
    /// arithmetic with the chains and costs nothing at the full shape's 2^33 FMAs.
    fn reference(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f64> {
        let (a, b) = (f64::from(A), f64::from(B));
        let p = b / (1.0 - a);
        let decay = a.powi(s.dim(1) as i32);
        inputs[0].chunks(CHAINS).map(|seeds| seeds.iter().map(|&c| p + decay * (f64::from(c) - p)).sum()).collect()
    }
    fn cpu(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f32> {
        Self::iterate::<f32>(s, inputs)
    }
    fn tolerance(&self, _s: &Shape) -> Tolerance {
        // Each step rounds once (fused) or twice; the contraction bounds the sum of those errors
        // by 2 ulp / (1 − A) ≈ 1.2e-4 per chain, ≈ 1e-3 for the sum of eight.
        Tolerance { abs: 2e-3, rel: 0.0 }
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
        let stepped = FmaChain::iterate::<f64>(&s, &x);
        for (c, r) in closed.iter().zip(&stepped) {
            assert!((c - r).abs() < 1e-9, "{c} vs {r}");
        }
        let v = compare(&FMA_CHAIN.cpu(&s, &x), &closed, FMA_CHAIN.tolerance(&s));
        assert!(v.passed, "{v:?}");
        // A quarter of the tolerance is left: the f32 chains stay well inside it.
        assert!(v.max_abs_err < FMA_CHAIN.tolerance(&s).abs / 4.0, "{}", v.max_abs_err);
    }

    #[test]
    fn a_chain_cut_short_fails_the_check() {
        for suite in Suite::ALL {
            for s in FMA_CHAIN.shapes(suite) {
                let x = FMA_CHAIN.inputs(&Shape(vec![64, s.dim(1)]), 3);
                let full = FMA_CHAIN.reference(&Shape(vec![64, s.dim(1)]), &x);
                let short = FMA_CHAIN.reference(&Shape(vec![64, s.dim(1) / 2]), &x);
                let v = compare(&short, &full, FMA_CHAIN.tolerance(&s));
                assert!(!v.passed, "{suite} {s}: chains half as long must show");
            }
        }
    }

    #[test]
    fn fma_flops_count_two_per_fma() {
        assert_eq!(FMA_CHAIN.flops(&Shape(vec![1 << 20, 4096])), 2.0 * 8.0 * (1u64 << 32) as f64);
    }
}
