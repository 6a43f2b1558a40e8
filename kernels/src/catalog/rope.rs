use super::shapes;
use crate::check::Tolerance;
use crate::kernel::{linear_workgroups, pad_params, Kernel};
use crate::suite::Suite;
use crate::real::Real;
use crate::shape::Shape;

/// Rotary position embedding.
pub static ROPE: Rope = Rope;

/// Frequency base, as in Llama.
pub const BASE: f32 = 10_000.0;

/// RoPE of `x[seq, heads, dim]` at positions `offset..offset+seq` (rotate-half pairing): with
/// `seq = 1` and a large offset it is one KV-cache decode step.
pub struct Rope;

impl Rope {
    fn compute<T: Real>(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<T> {
        let (heads, dim, offset) = (s.dim(1) as usize, s.dim(2) as usize, s.dim(3) as usize);
        let half = dim / 2;
        let x = &inputs[0];
        let mut y = vec![T::lit(0.0); x.len()];
        for (row, chunk) in x.chunks(dim).enumerate() {
            let pos = T::lit((row / heads + offset) as f64);
            for i in 0..half {
                let theta = pos * T::of(BASE).powf(T::lit(-2.0 * i as f64 / dim as f64));
                let (sn, cs) = theta.sin_cos();
                let (x0, x1) = (T::of(chunk[i]), T::of(chunk[i + half]));
                y[row * dim + i] = x0 * cs - x1 * sn;
                y[row * dim + i + half] = x1 * cs + x0 * sn;
            }
        }
        y
    }
}

impl Kernel for Rope {
    fn name(&self) -> &'static str {
        "rope"
    }
    fn summary(&self) -> &'static str {
        "rotary position embedding, rotate-half pairs, base 10000, positions from an offset"
    }
    fn dims(&self) -> &'static [&'static str] {
        &["seq", "heads", "dim", "offset"]
    }
    fn shapes(&self, suite: Suite) -> Vec<Shape> {
        match suite {
            Suite::Quick => shapes(&[&[4, 2, 64, 0], &[1, 4, 64, 100]]),
            Suite::Default => shapes(&[&[128, 32, 128, 0], &[1, 32, 128, 1000]]),
            Suite::Full => shapes(&[&[2048, 32, 128, 0], &[1, 32, 128, 4000]]),
        }
    }
    fn input_lens(&self, s: &Shape) -> Vec<usize> {
        vec![self.output_len(s)]
    }
    fn output_len(&self, s: &Shape) -> usize {
        (s.dim(0) * s.dim(1) * s.dim(2)) as usize
    }
    fn params(&self, s: &Shape) -> Vec<u32> {
        pad_params(vec![s.dim(0), s.dim(1), s.dim(2), s.dim(3), BASE.to_bits()])
    }
    fn wgsl(&self) -> String {
        include_str!("../../wgsl/rope.wgsl").into()
    }
    fn workgroups(&self, s: &Shape) -> [u32; 3] {
        linear_workgroups(self.output_len(s) / 2)
    }
    fn reference(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f64> {
        self.compute::<f64>(s, inputs)
    }
    fn cpu(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f32> {
        self.compute::<f32>(s, inputs)
    }
    fn tolerance(&self, s: &Shape) -> Tolerance {
        // WGSL allows sin and cos an absolute error of 2^-11 on [-pi, pi]; the f32 angle's own
        // error grows with the position.
        let max_pos = (s.dim(0) + s.dim(3)) as f64;
        Tolerance { abs: 1e-3 + 1.5e-6 * max_pos, rel: 1e-4 }
    }
    fn flops(&self, s: &Shape) -> f64 {
        // Per pair: angle (pow, multiply, reduce ~6), sin, cos, 4 multiplies, 2 adds.
        14.0 * (self.output_len(s) / 2) as f64
    }
}
