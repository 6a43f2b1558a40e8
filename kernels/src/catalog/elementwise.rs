use super::shapes;
use crate::check::Tolerance;
use crate::kernel::{linear_workgroups, pad_params, Kernel};
use crate::suite::Suite;
use crate::prng::Prng;
use crate::real::Real;
use crate::shape::Shape;

/// `out = a + b`.
pub static ADD: Binary = Binary { op: Op::Add };
/// `out = a - b`.
pub static SUB: Binary = Binary { op: Op::Sub };
/// `out = a * b`.
pub static MUL: Binary = Binary { op: Op::Mul };
/// `out = a / b`.
pub static DIV: Binary = Binary { op: Op::Div };

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

/// An elementwise binary operation on two f32 vectors.
pub struct Binary {
    op: Op,
}

/// The shapes of every one-dimensional elementwise kernel.
pub(super) fn vector_shapes(suite: Suite) -> Vec<Shape> {
    match suite {
        Suite::Quick => shapes(&[&[4096], &[1001]]),
        Suite::Default => shapes(&[&[1 << 20], &[(1 << 20) + 3]]),
        Suite::Full => shapes(&[&[1 << 24]]),
    }
}

/// The binary-op WGSL with `expr` (over `x`, `y` and the index `i`) as the operation.
pub(super) fn binary_wgsl(expr: &str) -> String {
    include_str!("../../wgsl/binary.wgsl").replace("{{EXPR}}", expr)
}

impl Binary {
    fn compute<T: Real>(&self, _s: &Shape, inputs: &[Vec<f32>]) -> Vec<T> {
        let pairs = inputs[0].iter().zip(&inputs[1]).map(|(&x, &y)| (T::of(x), T::of(y)));
        match self.op {
            Op::Add => pairs.map(|(x, y)| x + y).collect(),
            Op::Sub => pairs.map(|(x, y)| x - y).collect(),
            Op::Mul => pairs.map(|(x, y)| x * y).collect(),
            Op::Div => pairs.map(|(x, y)| x / y).collect(),
        }
    }
}

impl Kernel for Binary {
    fn name(&self) -> &'static str {
        match self.op {
            Op::Add => "add",
            Op::Sub => "sub",
            Op::Mul => "mul",
            Op::Div => "div",
        }
    }
    fn summary(&self) -> &'static str {
        match self.op {
            Op::Add => "out = a + b, elementwise f32",
            Op::Sub => "out = a - b, elementwise f32",
            Op::Mul => "out = a * b, elementwise f32",
            Op::Div => "out = a / b, elementwise f32 (|b| in [0.5, 2))",
        }
    }
    fn dims(&self) -> &'static [&'static str] {
        &["N"]
    }
    fn shapes(&self, suite: Suite) -> Vec<Shape> {
        vector_shapes(suite)
    }
    fn input_lens(&self, s: &Shape) -> Vec<usize> {
        vec![s.product(); 2]
    }
    fn output_len(&self, s: &Shape) -> usize {
        s.product()
    }
    fn params(&self, s: &Shape) -> Vec<u32> {
        pad_params(vec![s.dim(0)])
    }
    fn wgsl(&self) -> String {
        binary_wgsl(match self.op {
            Op::Add => "x + y",
            Op::Sub => "x - y",
            Op::Mul => "x * y",
            Op::Div => "x / y",
        })
    }
    fn workgroups(&self, s: &Shape) -> [u32; 3] {
        linear_workgroups(s.product())
    }
    fn inputs(&self, s: &Shape, seed: u64) -> Vec<Vec<f32>> {
        let a = Prng::new(seed, 0).fill(s.product(), -1.0, 1.0);
        let mut rng = Prng::new(seed, 1);
        let b = match self.op {
            // Keep divisors away from zero so the check measures division, not overflow.
            Op::Div => (0..s.product())
                .map(|_| {
                    let m = rng.uniform(0.5, 2.0);
                    if rng.next_u64() & 1 == 0 {
                        m
                    } else {
                        -m
                    }
                })
                .collect(),
            _ => rng.fill(s.product(), -1.0, 1.0),
        };
        vec![a, b]
    }
    fn reference(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f64> {
        self.compute::<f64>(s, inputs)
    }
    fn cpu(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f32> {
        self.compute::<f32>(s, inputs)
    }
    fn tolerance(&self, _s: &Shape) -> Tolerance {
        // Correctly rounded except division, which WGSL allows 2.5 ULP.
        Tolerance { abs: 1e-6, rel: 2e-6 }
    }
    fn flops(&self, s: &Shape) -> f64 {
        s.product() as f64
    }
}
