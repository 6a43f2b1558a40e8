//! What a kernel is: everything needed to run, time and check it on any platform.

use crate::check::Tolerance;
use crate::dtype::Dtype;
use crate::suite::Suite;
use crate::prng::Prng;
use crate::shape::Shape;

/// Threads per workgroup of the one-dimensional kernels (elementwise, activations, rope).
pub const LINEAR_WORKGROUP: u32 = 256;

/// Largest workgroup count per dispatch dimension that WebGPU guarantees.
pub const MAX_GROUPS_PER_DIM: u32 = 65_535;

/// Input buffers are padded to a multiple of this many bytes: one `vec4<f32>`.
pub const INPUT_ALIGN: usize = 16;

/// A deliberate failure a self-test kernel injects in the page, so tests can prove that the harness
/// notices it. Real kernels have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The case never finishes: it must be reported as timed out and the run must go on.
    Hang,
    /// The page throws a JavaScript exception: its message and stack must reach the report.
    Throw,
    /// The case destroys its GPU device before it runs: it must be reported as `deviceLost`,
    /// and the next case must run on a fresh device.
    LoseDevice,
}

/// One WGSL compute kernel with its inputs, reference and cost model.
///
/// Binding layout, shared by every kernel so one dispatcher serves them all: `@binding(0)` is a
/// uniform of `params()` (u32 words; floats as their bits), `@binding(1..=n)` the read-only
/// inputs, `@binding(n+1)` the read-write output, all in `@group(0)`, entry point `main`. Input
/// buffers are zero-padded to a multiple of [`INPUT_ALIGN`] bytes, so a shader may bind them as
/// `array<vec4<f32>>`.
pub trait Kernel: Send + Sync {
    /// Stable name used in plans, filters and reports, such as `matmul_tiled`.
    fn name(&self) -> &'static str;
    /// One line saying what it computes, including any formula choice.
    fn summary(&self) -> &'static str;
    /// Names of the shape's dimensions, such as `["M", "K", "N"]`.
    fn dims(&self) -> &'static [&'static str];
    /// The shapes this kernel runs at in a suite.
    fn shapes(&self, suite: Suite) -> Vec<Shape>;
    /// Values of every input (stored as the [`input_dtype`](Kernel::input_dtype) unless
    /// [`input_bytes`](Kernel::input_bytes) packs them otherwise).
    fn input_lens(&self, shape: &Shape) -> Vec<usize>;
    /// Length in f32 elements of the output buffer.
    fn output_len(&self, shape: &Shape) -> usize;
    /// The uniform parameters (u32 words) the shader reads.
    fn params(&self, shape: &Shape) -> Vec<u32>;
    /// WGSL source.
    fn wgsl(&self) -> String;
    /// Workgroups to dispatch.
    fn workgroups(&self, shape: &Shape) -> [u32; 3];
    /// The exact answer in f64 from the f32 inputs, computed independently of the shader.
    fn reference(&self, shape: &Shape, inputs: &[Vec<f32>]) -> Vec<f64>;
    /// The same algorithm on the CPU in f32: the CPU baseline (`--platform wasm`) and the
    /// plausibility yardstick of `harness verify`.
    fn cpu(&self, shape: &Shape, inputs: &[Vec<f32>]) -> Vec<f32>;
    /// How far a correct f32 GPU result may stray from the reference.
    fn tolerance(&self, shape: &Shape) -> Tolerance;
    /// Floating-point operations of one dispatch (for GFLOP/s).
    fn flops(&self, shape: &Shape) -> f64;

    /// How the input buffers store their values: f32 unless the kernel is an f16 form, which
    /// needs the adapter's `shader-f16` ([`Dtype::feature`]).
    fn input_dtype(&self) -> Dtype {
        Dtype::F32
    }

    /// The bytes of input `index` (its `values`, from [`inputs`](Kernel::inputs)) as its buffer
    /// holds them: by default each value stored as the [`input_dtype`](Kernel::input_dtype). A
    /// kernel whose shader reads a packed layout (quantized weights) encodes it here; the reference
    /// and the CPU kernel still receive the values.
    fn input_bytes(&self, _shape: &Shape, _index: usize, values: &[f32]) -> Vec<u8> {
        self.input_dtype().encode(values)
    }

    /// The WebGPU features its shader needs (`shader-f16`): by default what its
    /// [`input_dtype`](Kernel::input_dtype) needs. A device without one reports the case
    /// `unsupported`.
    fn features(&self) -> Vec<&'static str> {
        self.input_dtype().feature().into_iter().collect()
    }

    /// Bytes one dispatch must move at least: every input read once, the output (f32) written once.
    fn bytes(&self, shape: &Shape) -> f64 {
        let inputs: usize = self.input_lens(shape).iter().sum();
        (self.input_dtype().size() * inputs + 4 * self.output_len(shape)) as f64
    }

    /// Seeded inputs; by default uniform in `[-1, 1)`, each rounded by
    /// [`round_input`](Kernel::round_input) so the reference sees exactly what the GPU reads.
    fn inputs(&self, shape: &Shape, seed: u64) -> Vec<Vec<f32>> {
        let mut inputs: Vec<Vec<f32>> = self.input_lens(shape).into_iter().enumerate().map(|(i, len)| Prng::new(seed, i as u64).fill(len, -1.0, 1.0)).collect();
        for (i, values) in inputs.iter_mut().enumerate() {
            self.round_input(shape, i, values);
        }
        inputs
    }

    /// Input `index`'s `values` rounded to what its buffer holds ([`input_bytes`](Kernel::input_bytes)
    /// stores them without further loss): by default each value to the
    /// [`input_dtype`](Kernel::input_dtype).
    fn round_input(&self, _shape: &Shape, _index: usize, values: &mut [f32]) {
        let dtype = self.input_dtype();
        values.iter_mut().for_each(|v| *v = dtype.round(*v));
    }

    /// A fault this kernel injects; only self-test kernels have one.
    fn fault(&self) -> Option<Fault> {
        None
    }

    /// Self-test kernels prove the harness catches failures; suites leave them out.
    fn is_selftest(&self) -> bool {
        false
    }
}

/// The kernel a case runs: a catalogue entry, or a variant built for that case (what a tuner
/// picked). Either way it is used as a `dyn Kernel`.
pub enum KernelRef {
    /// A catalogue kernel.
    Static(&'static dyn Kernel),
    /// A variant built for one case.
    Owned(Box<dyn Kernel>),
}

impl std::ops::Deref for KernelRef {
    type Target = dyn Kernel;

    fn deref(&self) -> &(dyn Kernel + 'static) {
        match self {
            KernelRef::Static(k) => *k,
            KernelRef::Owned(k) => k.as_ref(),
        }
    }
}

/// Workgroups for a one-dimensional kernel of `threads` invocations, split over x and y because one
/// dimension may hold at most 65535 workgroups. Shaders recover the index as
/// `gid.x + gid.y * num_workgroups.x * 256`.
pub fn linear_workgroups(threads: usize) -> [u32; 3] {
    split_workgroups(threads.div_ceil(LINEAR_WORKGROUP as usize) as u32)
}

/// `groups` workgroups (at least one) over x and y, as few along y as one dimension's limit of
/// 65535 allows. Shaders recover the workgroup's index as `wg.x + wg.y * num_workgroups.x`, and
/// skip those past `groups`.
pub fn split_workgroups(groups: u32) -> [u32; 3] {
    let groups = groups.max(1);
    if groups <= MAX_GROUPS_PER_DIM {
        [groups, 1, 1]
    } else {
        let x = MAX_GROUPS_PER_DIM;
        [x, groups.div_ceil(x), 1]
    }
}

/// Pads uniform words to a multiple of four (16 bytes), as uniform buffer layout requires.
pub fn pad_params(mut words: Vec<u32>) -> Vec<u32> {
    while words.len() % 4 != 0 || words.is_empty() {
        words.push(0);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_workgroups_cover_all_threads_within_limits() {
        for n in [1usize, 255, 256, 257, 65_535 * 256, 65_535 * 256 + 1, 40_000_000] {
            let [x, y, z] = linear_workgroups(n);
            assert!(x <= MAX_GROUPS_PER_DIM && y <= MAX_GROUPS_PER_DIM && z == 1);
            assert!(x as usize * y as usize * 256 >= n, "{n}");
        }
    }

    #[test]
    fn params_are_padded_to_16_bytes() {
        assert_eq!(pad_params(vec![1]).len(), 4);
        assert_eq!(pad_params(vec![1, 2, 3, 4]).len(), 4);
        assert_eq!(pad_params(vec![]).len(), 4);
    }
}
