use super::elementwise::vector_shapes;
use crate::check::Tolerance;
use crate::kernel::{linear_workgroups, pad_params, Kernel};
use crate::suite::Suite;
use crate::prng::Prng;
use crate::real::Real;
use crate::shape::Shape;

/// `max(x, 0)`.
pub static RELU: Activation = Activation { kind: Kind::Relu };
/// GELU, tanh approximation.
pub static GELU: Activation = Activation { kind: Kind::Gelu };
/// Hyperbolic tangent.
pub static TANH: Activation = Activation { kind: Kind::Tanh };
/// SiLU (swish): `x * sigmoid(x)`.
pub static SILU: Activation = Activation { kind: Kind::Silu };

#[derive(Clone, Copy)]
enum Kind {
    Relu,
    Gelu,
    Tanh,
    Silu,
}

/// An elementwise activation function.
pub struct Activation {
    kind: Kind,
}

const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;

impl Activation {
    fn compute<T: Real>(&self, _s: &Shape, inputs: &[Vec<f32>]) -> Vec<T> {
        let (zero, half, one) = (T::lit(0.0), T::lit(0.5), T::lit(1.0));
        let (c, k) = (T::lit(SQRT_2_OVER_PI), T::lit(0.044715));
        inputs[0]
            .iter()
            .map(|&x| {
                let v = T::of(x);
                match self.kind {
                    Kind::Relu => v.max(zero),
                    Kind::Gelu => half * v * (one + (c * (v + k * v * v * v)).tanh()),
                    Kind::Tanh => v.tanh(),
                    Kind::Silu => v / (one + (-v).exp()),
                }
            })
            .collect()
    }
}

impl Kernel for Activation {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Relu => "relu",
            Kind::Gelu => "gelu",
            Kind::Tanh => "tanh",
            Kind::Silu => "silu",
        }
    }
    fn summary(&self) -> &'static str {
        match self.kind {
            Kind::Relu => "relu(x) = max(x, 0)",
            Kind::Gelu => "gelu(x), tanh approximation: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))",
            Kind::Tanh => "tanh(x)",
            Kind::Silu => "silu(x) = x / (1 + e^(-x))",
        }
    }
    fn dims(&self) -> &'static [&'static str] {
        &["N"]
    }
    fn shapes(&self, suite: Suite) -> Vec<Shape> {
        vector_shapes(suite)
    }
    fn input_lens(&self, s: &Shape) -> Vec<usize> {
        vec![s.product()]
    }
    fn output_len(&self, s: &Shape) -> usize {
        s.product()
    }
    fn params(&self, s: &Shape) -> Vec<u32> {
        pad_params(vec![s.dim(0)])
    }
    fn wgsl(&self) -> String {
        let expr = match self.kind {
            Kind::Relu => "max(v, 0.0)",
            Kind::Gelu => "0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)))",
            Kind::Tanh => "tanh(v)",
            Kind::Silu => "v / (1.0 + exp(-v))",
        };
        include_str!("../../wgsl/unary.wgsl").replace("{{EXPR}}", expr)
    }
    fn workgroups(&self, s: &Shape) -> [u32; 3] {
        linear_workgroups(s.product())
    }
    fn inputs(&self, s: &Shape, seed: u64) -> Vec<Vec<f32>> {
        // Wide enough to reach the saturating tails.
        vec![Prng::new(seed, 0).fill(s.product(), -6.0, 6.0)]
    }
    fn reference(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f64> {
        self.compute::<f64>(s, inputs)
    }
    fn cpu(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f32> {
        self.compute::<f32>(s, inputs)
    }
    fn tolerance(&self, _s: &Shape) -> Tolerance {
        match self.kind {
            Kind::Relu => Tolerance { abs: 0.0, rel: 0.0 },
            _ => Tolerance { abs: 1e-5, rel: 1e-4 },
        }
    }
    fn flops(&self, s: &Shape) -> f64 {
        // Counted as written in the shader: relu 1, tanh ~1 transcendental, silu 3, gelu 9.
        let per = match self.kind {
            Kind::Relu | Kind::Tanh => 1.0,
            Kind::Silu => 3.0,
            Kind::Gelu => 9.0,
        };
        per * s.product() as f64
    }
}
