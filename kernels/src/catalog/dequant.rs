//! The WGSL that unpacks a weight matrix quantized in a GGUF block format
//! ([`crate::quant::QuantMatrix::gpu_layout`]), shared by `matvec`, which streams a row word by
//! word, and `matmul`, which loads its B tile four weights at a time: both read the same words
//! and scales the same way, so they cannot disagree on the layout.

use crate::quant::{QuantFormat, BLOCK};

/// For `format`: the constant `WORDS` (u32 words of one block's quants) and the functions that turn
/// a word into weights before their block's scale: `q8_0_values(q)` (its four int8), or
/// `q4_0_low(q)` and `q4_0_high(q)` (its four bytes' low and high nibbles, less 8: GGUF's q4_0
/// keeps weights j and j + 16 of a block in byte j). The block's scale is [`scale`]'s expression.
pub fn unpack(format: QuantFormat) -> String {
    let words = format.block_words();
    let values = match format {
        QuantFormat::Q8_0 => {
            "// A q8_0 word's four int8 (bytes 0..3), each shifted to the top and back: sign-extended.
fn q8_0_values(q: u32) -> vec4<f32> {
    return vec4<f32>(bitcast<vec4<i32>>(vec4<u32>(q) << vec4<u32>(24u, 16u, 8u, 0u)) >> vec4<u32>(24u));
}
"
        }
        QuantFormat::Q4_0 => {
            "// The low and the high nibbles of a q4_0 word's four bytes, less 8.
fn q4_0_low(q: u32) -> vec4<f32> {
    return vec4<f32>((vec4<u32>(q) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(15u)) - 8.0;
}
fn q4_0_high(q: u32) -> vec4<f32> {
    return vec4<f32>((vec4<u32>(q) >> vec4<u32>(4u, 12u, 20u, 28u)) & vec4<u32>(15u)) - 8.0;
}
"
        }
    };
    format!("const WORDS: u32 = {words}u;\nconst BLOCK: u32 = {BLOCK}u;\n{values}")
}

/// The WGSL expression of the f16 scale of block `s` of a matrix in array `w` of `vec`-word
/// elements (`u32` or `vec4<u32>`), whose scales start at word `first` (after every row's
/// quants), two to a word.
pub fn scale(w: &str, vec: u32, first: &str, s: &str) -> String {
    let word = format!("{first} + ({s}) / 2u");
    let read = if vec == 1 { format!("{w}[{word}]") } else { format!("{w}[({word}) / 4u][({word}) % 4u]") };
    format!("unpack2x16float({read})[({s}) % 2u]")
}

/// The WGSL of `b_vec`, `b_element` and their helpers for `matmul` with B `[N,K]` quantized as
/// `format`: the `vec` (1 or 4) weights at (row, col) of B, dequantized.
pub fn matmul_b_reads(format: QuantFormat, vec: u32) -> String {
    let quads = match format {
        QuantFormat::Q8_0 => "    return q8_0_values(b_word(row * words + col / 4u));",
        QuantFormat::Q4_0 => {
            "    let j = col % BLOCK;
    let q = b_word(row * words + col / BLOCK * WORDS + j % 16u / 4u);
    if (j < 16u) {
        return q4_0_low(q);
    }
    return q4_0_high(q);"
        }
    };
    // B is bound as `vec4<u32>`s where the tile loads vec4s, as u32 words otherwise.
    let word = if vec == 4 { "b[i / 4u][i % 4u]" } else { "b[i]" };
    let b_vec = if vec == 4 { "b_scale(row, col) * b_quad(row, col)" } else { "b_one(row, col)" };
    format!(
        "{}
fn b_word(i: u32) -> u32 {{
    return {word};
}}
fn b_words() -> u32 {{
    return (p.k + BLOCK - 1u) / BLOCK * WORDS;
}}
fn b_scale(row: u32, col: u32) -> f32 {{
    let words = b_words();
    let s = row * (words / WORDS) + col / BLOCK;
    return {};
}}
// Weights (row, col .. col + 4) of B, col a multiple of 4, before their block's scale.
fn b_quad(row: u32, col: u32) -> vec4<f32> {{
    let words = b_words();
{quads}
}}
fn b_one(row: u32, col: u32) -> f32 {{
    return b_scale(row, col) * b_quad(row, col - col % 4u)[col % 4u];
}}
fn b_element(i: u32) -> f32 {{
    return b_one(i / p.k, i % p.k);
}}
fn b_vec(i: u32, row: u32, col: u32) -> Vec {{
    return {b_vec};
}}
",
        unpack(format),
        scale("b", vec, "p.n * words", "s")
    )
}

/// The WGSL of `b_vec` and `b_element` for `matmul` with a float B, read as stored.
pub const MATMUL_B_FLOAT_READS: &str = "fn b_element(i: u32) -> f32 {
    return lane(Vec(b[i / VEC]), i % VEC);
}
fn b_vec(i: u32, row: u32, col: u32) -> Vec {
    return Vec(b[i / VEC]);
}
";
