//! Dense f32 matrix multiply: the naive and 16x16-tiled references, and `matmul`, the
//! register-blocked kernel whose tile sizes are [`MatmulParams`].

mod params;
pub mod subgroup_matrix;

pub use params::{candidates, BLayout, MatmulOptions, MatmulParams, ParamError, MAX_INVOCATIONS, MAX_WORKGROUP_BYTES};

use super::shapes;
use crate::check::Tolerance;
use crate::dtype::Dtype;
use crate::kernel::{pad_params, Kernel};
use crate::suite::Suite;
use crate::real::Real;
use crate::shape::Shape;

/// One output element per invocation, reading A and B straight from storage.
pub static NAIVE: Matmul = Matmul { variant: Variant::Naive, dtype: Dtype::F32 };
/// 16x16 tiles of A and B staged in workgroup memory.
pub static TILED: Matmul = Matmul { variant: Variant::Tiled, dtype: Dtype::F32 };
/// Register-blocked, in its default variant: the fast one (tuned on the H100, 26 TFLOP/s at 4096³,
/// 8.7× `matmul_tiled`; docs/hardware/h100-matmul.md).
pub static BLOCKED: Matmul = Matmul { variant: Variant::Blocked(MatmulParams::DEFAULT), dtype: Dtype::F32 };
/// `matmul_f16`: the register-blocked kernel with A and B stored in f16, f32 arithmetic.
pub static BLOCKED_F16: Matmul = Matmul { variant: Variant::Blocked(MatmulParams::DEFAULT), dtype: Dtype::F16 };

/// Dense f32 matrix multiply `C[M,N] = A[M,K] · B[K,N]`, row-major. Every variant shares the
/// shapes, inputs, reference and tolerance; only the shader differs.
pub struct Matmul {
    variant: Variant,
    /// How A and B are stored; only the register-blocked kernel has an f16 form.
    dtype: Dtype,
}

/// How a [`Matmul`] computes on the GPU.
enum Variant {
    Naive,
    Tiled,
    Blocked(MatmulParams),
}

impl Matmul {
    /// The register-blocked `matmul` (`matmul_f16` for `dtype` f16) with tile sizes `params`,
    /// refused if they cannot run.
    pub fn blocked(params: MatmulParams, dtype: Dtype) -> Result<Matmul, ParamError> {
        params.validate()?;
        Ok(Matmul { variant: Variant::Blocked(params), dtype })
    }

    fn compute<T: Real>(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<T> {
        let (m, k, n) = (s.dim(0) as usize, s.dim(1) as usize, s.dim(2) as usize);
        let (a, b) = (&inputs[0], &inputs[1]);
        let mut c = vec![T::lit(0.0); m * n];
        // Eight rows of C at a time read each row of B once for all eight: B (64 MB at 4096²)
        // streams from memory eight times less. Each element still sums over p in order.
        crate::rows::row_blocks(&mut c, n, 8, |i0, block| {
            for p in 0..k {
                let b_row = &b[p * n..(p + 1) * n];
                for (r, row) in block.chunks_mut(n).enumerate() {
                    let av = T::of(a[(i0 + r) * k + p]);
                    for (out, &bv) in row.iter_mut().zip(b_row) {
                        *out += av * T::of(bv);
                    }
                }
            }
        });
        c
    }
}

impl Kernel for Matmul {
    fn name(&self) -> &'static str {
        match self.variant {
            Variant::Naive => "matmul_naive",
            Variant::Tiled => "matmul_tiled",
            Variant::Blocked(_) if self.dtype == Dtype::F16 => "matmul_f16",
            Variant::Blocked(_) => "matmul",
        }
    }
    fn summary(&self) -> &'static str {
        match self.variant {
            Variant::Naive => "C = A·B, f32, one invocation per output element",
            Variant::Tiled => "C = A·B, f32, 16x16 workgroup-memory tiles, any M×K×N",
            Variant::Blocked(_) if self.dtype == Dtype::F16 => "C = A·B, A and B stored f16 (needs shader-f16), f32 arithmetic, register-blocked; the reference reads the same f16 values, so the tolerance is f32's",
            Variant::Blocked(_) => "C = A·B, f32, register-blocked: workgroup-memory tiles, a tile of outputs per invocation, vec4 loads where aligned, any M×K×N",
        }
    }
    fn dims(&self) -> &'static [&'static str] {
        &["M", "K", "N"]
    }
    fn shapes(&self, suite: Suite) -> Vec<Shape> {
        match suite {
            Suite::Quick => shapes(&[&[64, 64, 64], &[33, 70, 45], &[13, 17, 19], &[1, 1, 1]]),
            Suite::Default => shapes(&[&[256, 256, 256], &[512, 512, 512], &[500, 300, 700]]),
            Suite::Full => shapes(&[&[1024, 1024, 1024], &[2048, 2048, 2048], &[4096, 4096, 4096]]),
        }
    }
    fn input_lens(&self, s: &Shape) -> Vec<usize> {
        let (m, k, n) = (s.dim(0) as usize, s.dim(1) as usize, s.dim(2) as usize);
        vec![m * k, k * n]
    }
    fn output_len(&self, s: &Shape) -> usize {
        s.dim(0) as usize * s.dim(2) as usize
    }
    fn params(&self, s: &Shape) -> Vec<u32> {
        pad_params(vec![s.dim(0), s.dim(1), s.dim(2)])
    }
    fn wgsl(&self) -> String {
        match self.variant {
            Variant::Naive => include_str!("../../../wgsl/matmul_naive.wgsl").into(),
            Variant::Tiled => include_str!("../../../wgsl/matmul_tiled.wgsl").into(),
            Variant::Blocked(p) => p.wgsl_with(MatmulOptions { a_dtype: self.dtype, b_dtype: self.dtype, ..MatmulOptions::default() }),
        }
    }
    fn workgroups(&self, s: &Shape) -> [u32; 3] {
        match self.variant {
            Variant::Naive | Variant::Tiled => [s.dim(2).div_ceil(16), s.dim(0).div_ceil(16), 1],
            Variant::Blocked(p) => p.workgroups(s.dim(0), s.dim(2)),
        }
    }
    fn input_dtype(&self) -> Dtype {
        self.dtype
    }
    fn reference(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f64> {
        self.compute::<f64>(s, inputs)
    }
    fn cpu(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f32> {
        self.compute::<f32>(s, inputs)
    }
    fn tolerance(&self, s: &Shape) -> Tolerance {
        // f32 accumulation over K terms of magnitude < 1.
        Tolerance { abs: 2e-6 * s.dim(1) as f64, rel: 1e-5 }
    }
    fn flops(&self, s: &Shape) -> f64 {
        2.0 * s.dim(0) as f64 * s.dim(1) as f64 * s.dim(2) as f64
    }
}
