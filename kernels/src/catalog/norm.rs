use super::shapes;
use crate::check::Tolerance;
use crate::kernel::{pad_params, Kernel};
use crate::suite::Suite;
use crate::prng::Prng;
use crate::real::Real;
use crate::shape::Shape;

/// RMSNorm, as in Llama.
pub static RMSNORM: Norm = Norm { center: false };
/// LayerNorm, as in BERT.
pub static LAYERNORM: Norm = Norm { center: true };

/// Epsilon added to the variance (or mean square) before the square root.
pub const EPS: f32 = 1e-5;

/// Row normalisation of `x[rows, cols]` with a weight (and for layernorm a bias) over `cols`.
pub struct Norm {
    center: bool,
}

impl Norm {
    fn compute<T: Real>(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<T> {
        let cols = s.dim(1) as usize;
        let n = T::lit(cols as f64);
        let w = &inputs[1];
        let zero = T::lit(0.0);
        inputs[0]
            .chunks(cols)
            .flat_map(|row| {
                let mut mean = zero;
                if self.center {
                    for &v in row {
                        mean += T::of(v);
                    }
                    mean = mean / n;
                }
                let mut var = zero;
                for &v in row {
                    let d = T::of(v) - mean;
                    var += d * d;
                }
                let inv = T::lit(1.0) / (var / n + T::of(EPS)).sqrt();
                row.iter()
                    .enumerate()
                    .map(move |(c, &v)| {
                        let b = if self.center { T::of(inputs[2][c]) } else { zero };
                        (T::of(v) - mean) * inv * T::of(w[c]) + b
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

impl Kernel for Norm {
    fn name(&self) -> &'static str {
        if self.center {
            "layernorm"
        } else {
            "rmsnorm"
        }
    }
    fn summary(&self) -> &'static str {
        if self.center {
            "layernorm: (x - mean) / sqrt(var + 1e-5) · w + b per row"
        } else {
            "rmsnorm: x / sqrt(mean(x²) + 1e-5) · w per row"
        }
    }
    fn dims(&self) -> &'static [&'static str] {
        &["rows", "cols"]
    }
    fn shapes(&self, suite: Suite) -> Vec<Shape> {
        match suite {
            Suite::Quick => shapes(&[&[8, 256], &[3, 1000]]),
            Suite::Default => shapes(&[&[512, 1024], &[128, 4096]]),
            Suite::Full => shapes(&[&[2048, 4096], &[4096, 2048]]),
        }
    }
    fn input_lens(&self, s: &Shape) -> Vec<usize> {
        let cols = s.dim(1) as usize;
        if self.center {
            vec![s.product(), cols, cols]
        } else {
            vec![s.product(), cols]
        }
    }
    fn output_len(&self, s: &Shape) -> usize {
        s.product()
    }
    fn params(&self, s: &Shape) -> Vec<u32> {
        pad_params(vec![s.dim(0), s.dim(1), EPS.to_bits()])
    }
    fn wgsl(&self) -> String {
        let (bindings, output) = if self.center {
            (
                "@group(0) @binding(3) var<storage, read> bias: array<f32>;\n\
                 @group(0) @binding(4) var<storage, read_write> y: array<f32>;",
                "(x[base + c] - mean) * inv * w[c] + bias[c]",
            )
        } else {
            (
                "@group(0) @binding(3) var<storage, read_write> y: array<f32>;",
                "x[base + c] * inv * w[c]",
            )
        };
        include_str!("../../wgsl/norm.wgsl")
            .replace("{{BINDINGS}}", bindings)
            .replace("{{CENTER}}", if self.center { "true" } else { "false" })
            .replace("{{OUTPUT}}", output)
    }
    fn workgroups(&self, s: &Shape) -> [u32; 3] {
        [s.dim(0), 1, 1]
    }
    fn inputs(&self, s: &Shape, seed: u64) -> Vec<Vec<f32>> {
        let cols = s.dim(1) as usize;
        let mut v = vec![
            Prng::new(seed, 0).fill(s.product(), -2.0, 2.0),
            Prng::new(seed, 1).fill(cols, 0.5, 1.5),
        ];
        if self.center {
            v.push(Prng::new(seed, 2).fill(cols, -0.5, 0.5));
        }
        v
    }
    fn reference(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f64> {
        self.compute::<f64>(s, inputs)
    }
    fn cpu(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f32> {
        self.compute::<f32>(s, inputs)
    }
    fn tolerance(&self, _s: &Shape) -> Tolerance {
        Tolerance { abs: 2e-5, rel: 1e-4 }
    }
    fn flops(&self, s: &Shape) -> f64 {
        let per = if self.center { 8.0 } else { 5.0 };
        per * s.product() as f64
    }
}
