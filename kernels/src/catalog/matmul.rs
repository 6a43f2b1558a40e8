use super::shapes;
use crate::check::Tolerance;
use crate::kernel::{pad_params, Kernel};
use crate::suite::Suite;
use crate::real::Real;
use crate::shape::Shape;

/// One output element per invocation, reading A and B straight from storage.
pub static NAIVE: Matmul = Matmul { tiled: false };
/// 16x16 tiles of A and B staged in workgroup memory.
pub static TILED: Matmul = Matmul { tiled: true };

/// Dense f32 matrix multiply `C[M,N] = A[M,K] · B[K,N]`, row-major.
pub struct Matmul {
    tiled: bool,
}

impl Matmul {
    fn compute<T: Real>(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<T> {
        let (m, k, n) = (s.dim(0) as usize, s.dim(1) as usize, s.dim(2) as usize);
        let (a, b) = (&inputs[0], &inputs[1]);
        let mut c = vec![T::lit(0.0); m * n];
        for i in 0..m {
            let row = &mut c[i * n..(i + 1) * n];
            for p in 0..k {
                let av = T::of(a[i * k + p]);
                for (j, out) in row.iter_mut().enumerate() {
                    *out += av * T::of(b[p * n + j]);
                }
            }
        }
        c
    }
}

impl Kernel for Matmul {
    fn name(&self) -> &'static str {
        if self.tiled {
            "matmul_tiled"
        } else {
            "matmul_naive"
        }
    }
    fn summary(&self) -> &'static str {
        if self.tiled {
            "C = A·B, f32, 16x16 workgroup-memory tiles, any M×K×N"
        } else {
            "C = A·B, f32, one invocation per output element"
        }
    }
    fn dims(&self) -> &'static [&'static str] {
        &["M", "K", "N"]
    }
    fn shapes(&self, suite: Suite) -> Vec<Shape> {
        match suite {
            Suite::Quick => shapes(&[&[64, 64, 64], &[33, 70, 45]]),
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
        if self.tiled {
            include_str!("../../wgsl/matmul_tiled.wgsl").into()
        } else {
            include_str!("../../wgsl/matmul_naive.wgsl").into()
        }
    }
    fn workgroups(&self, s: &Shape) -> [u32; 3] {
        [s.dim(2).div_ceil(16), s.dim(0).div_ceil(16), 1]
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
