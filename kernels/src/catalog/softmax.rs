use super::shapes;
use crate::check::Tolerance;
use crate::kernel::{pad_params, Kernel};
use crate::suite::Suite;
use crate::prng::Prng;
use crate::real::Real;
use crate::shape::Shape;

/// Softmax over the last axis.
pub static SOFTMAX: Softmax = Softmax;

/// Numerically stable softmax of `x[rows, cols]` along `cols`, one workgroup per row.
pub struct Softmax;

/// Row offsets cycled over the rows: rows near ±1e4 overflow a naive `exp` in f32.
const ROW_OFFSETS: [f32; 4] = [0.0, 1.0e4, -1.0e4, 30.0];

impl Softmax {
    fn compute<T: Real>(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<T> {
        let cols = s.dim(1) as usize;
        inputs[0]
            .chunks(cols)
            .flat_map(|row| {
                let max = row.iter().fold(T::of(row[0]), |m, &v| m.max(T::of(v)));
                let e: Vec<T> = row.iter().map(|&v| (T::of(v) - max).exp()).collect();
                let mut sum = T::lit(0.0);
                for &v in &e {
                    sum += v;
                }
                e.into_iter().map(move |v| v / sum)
            })
            .collect()
    }
}

impl Kernel for Softmax {
    fn name(&self) -> &'static str {
        "softmax"
    }
    fn summary(&self) -> &'static str {
        "softmax over the last axis, max-subtracted (rows offset by ±1e4 included)"
    }
    fn dims(&self) -> &'static [&'static str] {
        &["rows", "cols"]
    }
    fn shapes(&self, suite: Suite) -> Vec<Shape> {
        match suite {
            Suite::Quick => shapes(&[&[8, 128], &[5, 1000]]),
            Suite::Default => shapes(&[&[256, 1024], &[64, 32000]]),
            Suite::Full => shapes(&[&[1024, 4096], &[128, 32000]]),
        }
    }
    fn input_lens(&self, s: &Shape) -> Vec<usize> {
        vec![s.product()]
    }
    fn output_len(&self, s: &Shape) -> usize {
        s.product()
    }
    fn params(&self, s: &Shape) -> Vec<u32> {
        pad_params(vec![s.dim(0), s.dim(1)])
    }
    fn wgsl(&self) -> String {
        include_str!("../../wgsl/softmax.wgsl").into()
    }
    fn workgroups(&self, s: &Shape) -> [u32; 3] {
        [s.dim(0), 1, 1]
    }
    fn inputs(&self, s: &Shape, seed: u64) -> Vec<Vec<f32>> {
        let (rows, cols) = (s.dim(0) as usize, s.dim(1) as usize);
        let mut rng = Prng::new(seed, 0);
        let x = (0..rows * cols)
            .map(|i| rng.uniform(-8.0, 8.0) + ROW_OFFSETS[(i / cols) % ROW_OFFSETS.len()])
            .collect();
        vec![x]
    }
    fn reference(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f64> {
        self.compute::<f64>(s, inputs)
    }
    fn cpu(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f32> {
        self.compute::<f32>(s, inputs)
    }
    fn tolerance(&self, _s: &Shape) -> Tolerance {
        Tolerance { abs: 1e-6, rel: 1e-4 }
    }
    fn flops(&self, s: &Shape) -> f64 {
        // max, subtract + exp + add, subtract + exp + divide.
        7.0 * s.product() as f64
    }
}
