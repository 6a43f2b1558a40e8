//! `matvec_q8_0` and `matvec_q4_0`: `y[N] = W[N,K] · x[K]` with W stored in GGUF's block formats
//! ([`crate::quant`]) and dequantized in registers as the shader reads it: the decode step of a
//! llama.cpp-quantized model, streaming 8.5 or 4.5 bits a weight instead of 32.

use super::matvec::MATVEC;
use super::shapes;
use crate::check::Tolerance;
use crate::kernel::{pad_params, split_workgroups, Kernel};
use crate::quant::{QuantFormat, QuantMatrix};
use crate::shape::Shape;
use crate::suite::Suite;

/// `matvec_q8_0`: W in q8_0.
pub static MATVEC_Q8_0: QuantMatvec = QuantMatvec { format: QuantFormat::Q8_0 };
/// `matvec_q4_0`: W in q4_0.
pub static MATVEC_Q4_0: QuantMatvec = QuantMatvec { format: QuantFormat::Q4_0 };

/// Invocations per workgroup.
const WG: u32 = 64;
/// Outputs (rows of W) per workgroup.
const ROWS: u32 = 2;

/// `y = W·x` with W quantized in `format`, f32 arithmetic. The inputs are x (`K` f32) then W
/// (`N·K` values, quantized as they are stored), as a linear layer binds them. Bindings: 0 the
/// uniform `(K, N, blocks a row, the word where the scales start)`, 1 x as `array<vec4<f32>>`,
/// 2 W as `array<vec4<u32>>` in [`QuantMatrix::gpu_layout`], 3 y (`N` f32).
pub struct QuantMatvec {
    format: QuantFormat,
}

impl QuantMatvec {
    /// The catalogue's kernel for `format`.
    pub fn of(format: QuantFormat) -> &'static QuantMatvec {
        match format {
            QuantFormat::Q8_0 => &MATVEC_Q8_0,
            QuantFormat::Q4_0 => &MATVEC_Q4_0,
        }
    }

    /// The uniform of an `[n, k]` weight: K, N, blocks a row, and the first word of the scales in
    /// [`QuantMatrix::gpu_layout`]. What a model lowering binds at 0 beside its own buffers.
    pub fn params_of(&self, n: u32, k: u32) -> Vec<u32> {
        let blocks = QuantFormat::blocks(k as usize) as u32;
        pad_params(vec![k, n, blocks, n * blocks * self.format.block_words() as u32])
    }

    /// Workgroups for `n` outputs: one per [`ROWS`], split over y past 65535.
    pub fn workgroups_of(n: u32) -> [u32; 3] {
        split_workgroups(n.div_ceil(ROWS))
    }

    /// x and W (`inputs[1]`) as the GPU and the reference see them: W quantized, then
    /// dequantized; NaN where the inputs do not fit the shape, so the check fails rather than
    /// anything panicking. `matvec`'s reference and CPU kernel over these are this kernel's.
    fn dequantized(&self, s: &Shape, inputs: &[Vec<f32>]) -> [Vec<f32>; 2] {
        let (k, n) = (s.dim(0) as usize, s.dim(1) as usize);
        let w = QuantMatrix::quantize(self.format, n, k, &inputs[1]).map_or_else(|_| vec![f32::NAN; n * k], |m| m.dequantize());
        [inputs[0].clone(), w]
    }

    /// The WGSL the format reads its weights with: the type `Xs` of the x values a 16-byte chunk
    /// of quants multiplies, `load_x(i)` and `chunk_dot(q, xs)`, for `wgsl/quant_matvec.wgsl`.
    fn format_wgsl(&self) -> &'static str {
        match self.format {
            QuantFormat::Q8_0 => {
                "// Chunk i of a row holds its weights 16i .. 16i + 16: a block's 32 int8 are 2 chunks in order.
alias Xs = array<vec4<f32>, 4>;
fn load_x(i: u32) -> Xs {
    let v = 4u * i;
    return Xs(x4(v), x4(v + 1u), x4(v + 2u), x4(v + 3u));
}
// A word's four int8, each shifted to the top and back (sign-extending).
fn i8x4(q: u32) -> vec4<f32> {
    return vec4<f32>(bitcast<vec4<i32>>(vec4<u32>(q) << vec4<u32>(24u, 16u, 8u, 0u)) >> vec4<u32>(24u));
}
fn chunk_dot(q: vec4<u32>, xs: Xs) -> f32 {
    return dot(i8x4(q.x), xs[0]) + dot(i8x4(q.y), xs[1]) + dot(i8x4(q.z), xs[2]) + dot(i8x4(q.w), xs[3]);
}
"
            }
            QuantFormat::Q4_0 => {
                "// Chunk i of a row is block i's 16 bytes: its weights 0 .. 16 in their low nibbles, 16 .. 32 in
// their high ones (byte j holds weights j and j + 16).
alias Xs = array<vec4<f32>, 8>;
fn load_x(i: u32) -> Xs {
    let v = 8u * i;
    return Xs(x4(v), x4(v + 1u), x4(v + 2u), x4(v + 3u), x4(v + 4u), x4(v + 5u), x4(v + 6u), x4(v + 7u));
}
// The nibbles at bit `shift` of a word's four bytes, less 8.
fn u4x4(q: u32, shift: u32) -> vec4<f32> {
    return vec4<f32>((vec4<u32>(q) >> (vec4<u32>(0u, 8u, 16u, 24u) + shift)) & vec4<u32>(15u)) - 8.0;
}
fn chunk_dot(q: vec4<u32>, xs: Xs) -> f32 {
    let lo = dot(u4x4(q.x, 0u), xs[0]) + dot(u4x4(q.y, 0u), xs[1]) + dot(u4x4(q.z, 0u), xs[2]) + dot(u4x4(q.w, 0u), xs[3]);
    let hi = dot(u4x4(q.x, 4u), xs[4]) + dot(u4x4(q.y, 4u), xs[5]) + dot(u4x4(q.z, 4u), xs[6]) + dot(u4x4(q.w, 4u), xs[7]);
    return lo + hi;
}
"
            }
        }
    }
}

impl Kernel for QuantMatvec {
    fn name(&self) -> &'static str {
        match self.format {
            QuantFormat::Q8_0 => "matvec_q8_0",
            QuantFormat::Q4_0 => "matvec_q4_0",
        }
    }
    fn summary(&self) -> &'static str {
        match self.format {
            QuantFormat::Q8_0 => "y = W·x, W [N,K] in GGUF's q8_0 (blocks of 32: an f16 scale, 32 int8; 8.5 bits a weight) dequantized in registers, f32 arithmetic; a row's last block zero-padded where K is no multiple of 32; the reference reads the dequantized weights",
            QuantFormat::Q4_0 => "y = W·x, W [N,K] in GGUF's q4_0 (blocks of 32: an f16 scale, 32 nibbles; 4.5 bits a weight) dequantized in registers, f32 arithmetic; a row's last block zero-padded where K is no multiple of 32; the reference reads the dequantized weights",
        }
    }
    fn dims(&self) -> &'static [&'static str] {
        MATVEC.dims()
    }
    fn shapes(&self, suite: Suite) -> Vec<Shape> {
        match suite {
            Suite::Quick => shapes(&[&[256, 128], &[77, 33], &[33, 1], &[1, 33]]),
            Suite::Default => shapes(&[&[1024, 1024], &[4096, 1024], &[1001, 999]]),
            // TinyLlama's decode projections: attention, gate/up, down.
            Suite::Full => shapes(&[&[2048, 2048], &[2048, 5632], &[5632, 2048]]),
        }
    }
    fn input_lens(&self, s: &Shape) -> Vec<usize> {
        MATVEC.input_lens(s)
    }
    fn input_bytes(&self, s: &Shape, index: usize, values: &[f32]) -> Vec<u8> {
        let (k, n) = (s.dim(0) as usize, s.dim(1) as usize);
        match index {
            1 => QuantMatrix::quantize(self.format, n, k, values).map(|m| m.gpu_layout()).unwrap_or_default(),
            _ => crate::wire::f32s_to_le_bytes(values),
        }
    }
    fn output_len(&self, s: &Shape) -> usize {
        MATVEC.output_len(s)
    }
    fn params(&self, s: &Shape) -> Vec<u32> {
        self.params_of(s.dim(1), s.dim(0))
    }
    fn wgsl(&self) -> String {
        let constants = format!(
            "// Variant {format}, wg{WG}-r{ROWS}.\nconst WG: u32 = {WG}u;\nconst ROWS: u32 = {ROWS}u;\nconst CHUNKS: u32 = {chunks}u;\n",
            format = self.format,
            chunks = self.format.block_words() / 4,
        );
        let body = include_str!("../../wgsl/quant_matvec.wgsl");
        format!("{constants}{}\n{body}", self.format_wgsl())
    }
    fn workgroups(&self, s: &Shape) -> [u32; 3] {
        Self::workgroups_of(s.dim(1))
    }
    fn reference(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f64> {
        MATVEC.reference(s, &self.dequantized(s, inputs))
    }
    fn cpu(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f32> {
        MATVEC.cpu(s, &self.dequantized(s, inputs))
    }
    fn tolerance(&self, s: &Shape) -> Tolerance {
        // The reference multiplies the same dequantized weights, exact in f32: f32's accumulation.
        MATVEC.tolerance(s)
    }
    fn flops(&self, s: &Shape) -> f64 {
        MATVEC.flops(s)
    }
    fn bytes(&self, s: &Shape) -> f64 {
        let (k, n) = (s.dim(0) as usize, s.dim(1) as usize);
        (4 * k + self.format.gpu_bytes(n, k) + 4 * n) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_model_counts_the_quantized_weights() {
        let s = Shape(vec![2048, 5632]);
        let blocks = 5632.0 * 64.0;
        assert_eq!(MATVEC_Q8_0.bytes(&s), 4.0 * 2048.0 + blocks * 34.0 + 4.0 * 5632.0);
        assert_eq!(MATVEC_Q4_0.bytes(&s), 4.0 * 2048.0 + blocks * 18.0 + 4.0 * 5632.0);
        assert_eq!(MATVEC_Q4_0.flops(&s), 2.0 * 2048.0 * 5632.0);
    }

    #[test]
    fn the_weight_buffer_is_the_gpu_layout_and_the_uniform_finds_its_scales() {
        let s = Shape(vec![77, 33]);
        for k in [&MATVEC_Q8_0, &MATVEC_Q4_0] {
            let inputs = k.inputs(&s, 1);
            let w = k.input_bytes(&s, 1, &inputs[1]);
            assert_eq!(w, QuantMatrix::quantize(k.format, 33, 77, &inputs[1]).unwrap().gpu_layout());
            let [_, _, blocks, scales] = k.params(&s)[..] else { panic!() };
            assert_eq!((blocks, scales as usize), (3, 33 * 3 * k.format.block_words()));
            assert_eq!(w.len(), (4 * scales as usize + 2 * 33 * 3).next_multiple_of(16));
            assert_eq!(k.input_bytes(&s, 0, &inputs[0]).len(), 4 * 77);
            // The reference multiplies the dequantized weights, not the f32 ones.
            assert_ne!(k.reference(&s, &inputs), MATVEC.reference(&s, &inputs));
        }
    }
}
