//! GGUF's block-quantized weight formats `q8_0` and `q4_0`, as llama.cpp writes them: a weight
//! matrix stored in 8.5 or 4.5 bits a weight streams 3.8× or 7.1× fewer bytes than in f32, which is
//! what a decode step (one matvec per weight) is bound by.
//!
//! A row of K weights is cut into blocks of [`BLOCK`] = 32, each stored as one f16 scale `d` and
//! 32 small integers; a weight is `d · q`. K that is not a multiple of 32 has its last block padded
//! with zeros, which quantize to exactly 0 (GGUF itself requires whole blocks). Rows of a matrix
//! `[N, K]` are quantized independently, so a row is a whole number of blocks.
//!
//! Three layouts of the same values: GGUF's bytes ([`QuantFormat::quantize_row`],
//! [`QuantMatrix::gguf`]), f32 ([`QuantMatrix::dequantize`], what a reference multiplies), and
//! the GPU's ([`QuantMatrix::gpu_layout`]), which a WGSL shader reads as `array<u32>` without
//! `shader-f16`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Weights per block, in both formats (llama.cpp's `QK8_0` and `QK4_0`).
pub const BLOCK: usize = 32;

/// [`QuantMatrix::gpu_layout`] is a whole number of these bytes, so a shader may read it as
/// `array<vec4<u32>>`.
pub const GPU_ALIGN: usize = 16;

/// A GGUF block format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum QuantFormat {
    /// `q8_0`: a block is an f16 scale and 32 int8 `q`; a weight is `d · q`, `d = max|x| / 127`.
    #[serde(rename = "q8_0")]
    Q8_0,
    /// `q4_0`: a block is an f16 scale and 16 bytes, byte j holding element j in its low nibble and
    /// element j + 16 in its high one; a weight is `d · (nibble − 8)`, `d = −x_max / 8` where
    /// `x_max` is the element of largest magnitude, with its sign.
    #[serde(rename = "q4_0")]
    Q4_0,
}

/// Why weights cannot be quantized or read back; the message names the sizes or the value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QuantError {
    /// A name that is no format.
    #[error("`{0}` is not a quantization format; the formats are q8_0 and q4_0")]
    UnknownFormat(String),
    /// A matrix given more or fewer values than its shape holds.
    #[error("a [{n}, {k}] matrix holds {expected} weights, got {got}")]
    Values {
        /// Rows.
        n: usize,
        /// Weights per row.
        k: usize,
        /// `n · k`.
        expected: usize,
        /// What was given.
        got: usize,
    },
    /// Quantized bytes whose length is not what the format and shape need.
    #[error("{format} weights of {rows} row(s) of {k} are {expected} bytes in GGUF's layout, got {got}")]
    Bytes {
        /// The format.
        format: QuantFormat,
        /// Rows.
        rows: usize,
        /// Weights per row.
        k: usize,
        /// What the format needs.
        expected: usize,
        /// What was given.
        got: usize,
    },
    /// A NaN or infinite weight, which would make its whole block meaningless.
    #[error("weight {index} is {value}; only finite weights can be quantized")]
    NotFinite {
        /// Its index in the row or matrix given.
        index: usize,
        /// The value.
        value: f32,
    },
}

impl QuantFormat {
    /// Both formats.
    pub const ALL: [QuantFormat; 2] = [QuantFormat::Q8_0, QuantFormat::Q4_0];

    /// GGUF's name: `q8_0` or `q4_0`.
    pub fn name(self) -> &'static str {
        match self {
            QuantFormat::Q8_0 => "q8_0",
            QuantFormat::Q4_0 => "q4_0",
        }
    }

    /// Bytes of one block's quants: 32 for q8_0, 16 for q4_0.
    pub fn quant_bytes(self) -> usize {
        match self {
            QuantFormat::Q8_0 => BLOCK,
            QuantFormat::Q4_0 => BLOCK / 2,
        }
    }

    /// Bytes of one block in GGUF's layout, the f16 scale first: 34 for q8_0, 18 for q4_0.
    pub fn block_bytes(self) -> usize {
        2 + self.quant_bytes()
    }

    /// Blocks of a row of `k` weights, the last one padded.
    pub fn blocks(k: usize) -> usize {
        k.div_ceil(BLOCK)
    }

    /// Bytes of a row of `k` weights in GGUF's layout.
    pub fn row_bytes(self, k: usize) -> usize {
        Self::blocks(k) * self.block_bytes()
    }

    /// u32 words of one block's quants in [`QuantMatrix::gpu_layout`]: 8 for q8_0, 4 for q4_0.
    pub fn block_words(self) -> usize {
        self.quant_bytes() / 4
    }

    /// Bytes of an `[n, k]` matrix in [`QuantMatrix::gpu_layout`]: every block's quants, then
    /// every block's f16 scale, padded to 16 bytes. What a kernel streams.
    pub fn gpu_bytes(self, n: usize, k: usize) -> usize {
        let blocks = n * Self::blocks(k);
        (blocks * self.block_bytes()).next_multiple_of(GPU_ALIGN)
    }

    /// A row of f32 weights in GGUF's layout, blocks of the f16 scale (little-endian) and the
    /// quants, computed as llama.cpp's `quantize_row_q8_0_ref` or `quantize_row_q4_0_ref` does;
    /// a last partial block is padded with zeros.
    pub fn quantize_row(self, row: &[f32]) -> Result<Vec<u8>, QuantError> {
        if let Some((index, &value)) = row.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(QuantError::NotFinite { index, value });
        }
        let mut out = Vec::with_capacity(self.row_bytes(row.len()));
        for chunk in row.chunks(BLOCK) {
            let mut block = [0.0f32; BLOCK];
            block[..chunk.len()].copy_from_slice(chunk);
            match self {
                QuantFormat::Q8_0 => quantize_q8_0(&block, &mut out),
                QuantFormat::Q4_0 => quantize_q4_0(&block, &mut out),
            }
        }
        Ok(out)
    }

    /// `rows` rows of `k` weights in GGUF's layout (`bytes`) back to f32, as llama.cpp's
    /// `dequantize_row_*` does, without the padding of each row's last block.
    pub fn dequantize(self, bytes: &[u8], rows: usize, k: usize) -> Result<Vec<f32>, QuantError> {
        self.check_bytes(rows, k, bytes.len())?;
        Ok(self.dequantize_rows(bytes, k))
    }

    /// Refuses `got` bytes unless they are `rows` rows of `k` in GGUF's layout.
    fn check_bytes(self, rows: usize, k: usize, got: usize) -> Result<(), QuantError> {
        let expected = rows * self.row_bytes(k);
        if got != expected {
            return Err(QuantError::Bytes { format: self, rows, k, expected, got });
        }
        Ok(())
    }

    /// Whole rows of `k` in GGUF's layout back to f32; `bytes` is a whole number of rows.
    fn dequantize_rows(self, bytes: &[u8], k: usize) -> Vec<f32> {
        let mut out = Vec::with_capacity(bytes.len() / self.row_bytes(k).max(1) * k);
        for row in self.rows(bytes, k) {
            let start = out.len();
            for (d, qs) in row {
                let d = half::f16::from_bits(d).to_f32();
                match self {
                    QuantFormat::Q8_0 => out.extend(qs.iter().map(|&q| d * f32::from(q as i8))),
                    QuantFormat::Q4_0 => {
                        out.extend(qs.iter().map(|&q| d * f32::from((q & 0x0F) as i8 - 8)));
                        out.extend(qs.iter().map(|&q| d * f32::from((q >> 4) as i8 - 8)));
                    }
                }
            }
            out.truncate(start + k);
        }
        out
    }

    /// The blocks of each row of `k` in GGUF's `bytes`, as (the scale's f16 bits, the quants).
    fn rows(self, bytes: &[u8], k: usize) -> impl Iterator<Item = impl Iterator<Item = (u16, &[u8])>> {
        bytes.chunks(self.row_bytes(k).max(1)).map(move |row| row.chunks(self.block_bytes()).map(|b| (u16::from_le_bytes([b[0], b[1]]), &b[2..])))
    }
}

/// llama.cpp's `quantize_row_q8_0_ref` for one block: `d = amax / 127`, `q = round(x / d)`
/// (half away from zero, multiplying by the f32 inverse of the unrounded `d` as it does).
fn quantize_q8_0(block: &[f32; BLOCK], out: &mut Vec<u8>) {
    let amax = block.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let d = amax / 127.0;
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    out.extend(half::f16::from_f32(d).to_le_bytes());
    out.extend(block.iter().map(|&x| (x * id).round() as i8 as u8));
}

/// llama.cpp's `quantize_row_q4_0_ref` for one block: `d = x_max / −8` from the first element of
/// largest magnitude, `q = min(15, trunc(x / d + 8.5))`.
fn quantize_q4_0(block: &[f32; BLOCK], out: &mut Vec<u8>) {
    let (mut amax, mut max) = (0.0f32, 0.0f32);
    for &v in block {
        if amax < v.abs() {
            amax = v.abs();
            max = v;
        }
    }
    let d = max / -8.0;
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    out.extend(half::f16::from_f32(d).to_le_bytes());
    let q = |x: f32| ((x * id + 8.5) as i8).min(15) as u8;
    let (lo, hi) = block.split_at(BLOCK / 2);
    out.extend(lo.iter().zip(hi).map(|(&a, &b)| q(a) | q(b) << 4));
}

impl fmt::Display for QuantFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for QuantFormat {
    type Err = QuantError;

    fn from_str(s: &str) -> Result<Self, QuantError> {
        QuantFormat::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| QuantError::UnknownFormat(s.to_string()))
    }
}

/// A weight matrix `[n, k]` (row-major, PyTorch's and GGUF's layout) quantized row by row: the
/// form a model stores a weight in, from which both the GPU's buffer and the reference's f32
/// values come.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantMatrix {
    format: QuantFormat,
    n: usize,
    k: usize,
    gguf: Vec<u8>,
}

impl QuantMatrix {
    /// `values` (`n · k` of them, row-major) quantized in `format`, each row on its own.
    pub fn quantize(format: QuantFormat, n: usize, k: usize, values: &[f32]) -> Result<QuantMatrix, QuantError> {
        if values.len() != n * k {
            return Err(QuantError::Values { n, k, expected: n * k, got: values.len() });
        }
        // Rows on every core natively (a seeded TinyLlama's 1.1 billion weights in q4_0); the
        // first row that cannot be quantized is the one named.
        let row_bytes = format.row_bytes(k);
        let mut gguf = vec![0u8; n * row_bytes];
        let first_error: std::sync::Mutex<Option<(usize, QuantError)>> = std::sync::Mutex::new(None);
        crate::rows::row_blocks(&mut gguf, row_bytes, 64, |first, block| {
            for (i, dst) in block.chunks_mut(row_bytes.max(1)).enumerate() {
                let r = first + i;
                match format.quantize_row(&values[r * k..][..k]) {
                    Ok(bytes) => dst.copy_from_slice(&bytes),
                    Err(e) => {
                        let mut error = first_error.lock().unwrap_or_else(|e| e.into_inner());
                        if error.as_ref().is_none_or(|(row, _)| r < *row) {
                            *error = Some((r, e));
                        }
                    }
                }
            }
        });
        if let Some((r, e)) = first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(match e {
                QuantError::NotFinite { index, value } => QuantError::NotFinite { index: r * k + index, value },
                other => other,
            });
        }
        Ok(QuantMatrix { format, n, k, gguf })
    }

    /// A matrix already quantized: `bytes` in GGUF's layout (a tensor's data in a GGUF file),
    /// refused unless it is exactly `n` rows of `k`.
    pub fn from_gguf(format: QuantFormat, n: usize, k: usize, bytes: Vec<u8>) -> Result<QuantMatrix, QuantError> {
        format.check_bytes(n, k, bytes.len())?;
        Ok(QuantMatrix { format, n, k, gguf: bytes })
    }

    /// Its format.
    pub fn format(&self) -> QuantFormat {
        self.format
    }

    /// Rows.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Weights per row.
    pub fn k(&self) -> usize {
        self.k
    }

    /// GGUF's bytes: each row's blocks in order, each block its f16 scale then its quants.
    pub fn gguf(&self) -> &[u8] {
        &self.gguf
    }

    /// The `n · k` weights it stands for, in f32 (exact: an f16 scale times a small integer): what
    /// a reference multiplies, so that it sees exactly what the GPU dequantizes.
    pub fn dequantize(&self) -> Vec<f32> {
        self.format.dequantize_rows(&self.gguf, self.k)
    }

    /// The bytes of the GPU's buffer, read by WGSL as `array<u32>` or `array<vec4<u32>>`
    /// (little-endian words). With `B = ceil(k / 32)` blocks a row, block `b` of row `r` is block
    /// `s = r·B + b`:
    ///
    /// - words `[s·W, (s+1)·W)`, `W` = [`block_words`](QuantFormat::block_words) (8 or 4), hold its
    ///   quants, GGUF's bytes unchanged: byte `j` of the block is bits `8·(j%4)..` of word `s·W + j/4`.
    ///   A row is `B·W` consecutive words (whole 16-byte chunks), so a workgroup reading a row reads
    ///   consecutive words;
    /// - after all `n·B` blocks' quants, from word `n·B·W` (a multiple of 4), the scales as f16
    ///   pairs: block `s`'s `d` is half `s % 2` (the low half first) of word `n·B·W + s/2`, which
    ///   WGSL's core `unpack2x16float` reads, so no `shader-f16` is needed;
    /// - zeros to a multiple of [`GPU_ALIGN`] bytes.
    pub fn gpu_layout(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.format.gpu_bytes(self.n, self.k));
        let blocks = || self.format.rows(&self.gguf, self.k).flatten();
        for (_, qs) in blocks() {
            out.extend_from_slice(qs);
        }
        for (d, _) in blocks() {
            out.extend(d.to_le_bytes());
        }
        out.resize(out.len().next_multiple_of(GPU_ALIGN), 0);
        out
    }

}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n · k` seeded weights in `[−range, range)` and their matrix in each format.
    fn seeded(n: usize, k: usize, range: f32) -> impl Iterator<Item = (QuantFormat, Vec<f32>, QuantMatrix)> {
        let x = crate::prng::Prng::new(3, 0).fill(n * k, -range, range);
        QuantFormat::ALL.into_iter().map(move |f| (f, x.clone(), QuantMatrix::quantize(f, n, k, &x).unwrap()))
    }

    fn f16_bytes(v: f32) -> [u8; 2] {
        half::f16::from_f32(v).to_le_bytes()
    }

    /// 0, 1, …, 31: q8_0's d is 31/127 and q = round(x·127/31), llama.cpp's bytes by hand.
    #[test]
    fn q8_0_of_0_to_31_is_gguf_s_bytes() {
        let x: Vec<f32> = (0..32).map(|i| i as f32).collect();
        let bytes = QuantFormat::Q8_0.quantize_row(&x).unwrap();
        let mut expected = f16_bytes(31.0 / 127.0).to_vec();
        let q = [
            0u8, 4, 8, 12, 16, 20, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61, 66, 70, 74, 78, 82, 86, 90, 94, 98, 102, 107, 111, 115, 119, 123, 127,
        ];
        expected.extend(q);
        assert_eq!(bytes, expected);
        assert_eq!(&bytes[..2], &[0xD0, 0x33], "f16 0.2441 = 0x33D0");
        let d = half::f16::from_bits(0x33D0).to_f32();
        let back = QuantFormat::Q8_0.dequantize(&bytes, 1, 32).unwrap();
        assert_eq!(back, q.iter().map(|&q| d * q as f32).collect::<Vec<_>>());
        assert_eq!(back[31], d * 127.0);
    }

    /// Negatives: the largest magnitude is −2 (q8_0 d = 2/127; q4_0 d = −2/−8 = 0.25, so −2 is
    /// nibble 0 and +1.75 the largest positive, nibble 15).
    #[test]
    fn blocks_with_negatives_are_gguf_s_bytes() {
        let mut x = [0.0f32; 32];
        x[..6].copy_from_slice(&[-2.0, 1.0, -0.5, 0.25, 1.75, -1.0]);
        x[16] = 0.5;
        x[17] = -0.125;
        let q8 = QuantFormat::Q8_0.quantize_row(&x).unwrap();
        assert_eq!(&q8[..2], &f16_bytes(2.0 / 127.0));
        // −2·63.5 = −127; 63.5, −31.75 → −32 (away from zero), 15.875 → 16, 111.125, −63.5 → −64.
        assert_eq!(&q8[2..8], &[(-127i8) as u8, 64, (-32i8) as u8, 16, 111, (-64i8) as u8]);
        assert_eq!(&q8[18..20], &[32, (-8i8) as u8]);

        let q4 = QuantFormat::Q4_0.quantize_row(&x).unwrap();
        assert_eq!(q4.len(), 18);
        assert_eq!(&q4[..2], &[0x00, 0x34], "d = 0.25");
        // x/d + 8.5 truncated: −2 → 0, 1 → 12, −0.5 → 6, 0.25 → 9, 1.75 → 15, −1 → 4, 0 → 8;
        // high nibbles: 0.5 → 10, −0.125 → 8 (−0.5 + 8.5), the padding's zeros 8.
        assert_eq!(&q4[2..8], &[0xA0, 0x8C, 0x86, 0x89, 0x8F, 0x84]);
        assert!(q4[8..].iter().all(|&b| b == 0x88));
        let back = QuantFormat::Q4_0.dequantize(&q4, 1, 32).unwrap();
        assert_eq!(&back[..6], &[-2.0, 1.0, -0.5, 0.25, 1.75, -1.0]);
        assert_eq!((back[16], back[17], back[31]), (0.5, 0.0, 0.0));
    }

    #[test]
    fn a_zero_block_is_a_zero_scale_and_zero_weights() {
        let zeros = [0.0f32; 32];
        let q8 = QuantFormat::Q8_0.quantize_row(&zeros).unwrap();
        assert!(q8.iter().all(|&b| b == 0));
        let q4 = QuantFormat::Q4_0.quantize_row(&zeros).unwrap();
        assert_eq!(&q4[..2], &[0x00, 0x80], "0 / −8 is −0, which llama.cpp stores too");
        assert!(q4[2..].iter().all(|&b| b == 0x88), "nibble 8 is zero");
        for format in QuantFormat::ALL {
            let bytes = format.quantize_row(&zeros).unwrap();
            assert_eq!(format.dequantize(&bytes, 1, 32).unwrap(), zeros);
        }
    }

    /// 33 weights are two blocks, the second padded with 31 zeros that come back as nothing.
    #[test]
    fn k_of_33_pads_its_last_block() {
        let x: Vec<f32> = (0..33).map(|i| (i as f32 - 16.0) / 8.0).collect();
        for format in QuantFormat::ALL {
            let bytes = format.quantize_row(&x).unwrap();
            assert_eq!(bytes.len(), 2 * format.block_bytes());
            assert_eq!(bytes.len(), format.row_bytes(33));
            let back = format.dequantize(&bytes, 1, 33).unwrap();
            assert_eq!(back.len(), 33);
            assert!((back[32] - 2.0).abs() <= 2.0 / 127.0, "{format}: {}", back[32]);
            let pad = &bytes[format.block_bytes() + 2..];
            match format {
                QuantFormat::Q8_0 => assert!(pad[1..].iter().all(|&b| b == 0)),
                QuantFormat::Q4_0 => assert!(pad[0] == 0x80 && pad[1..].iter().all(|&b| b == 0x88), "{pad:x?}"),
            }
            let m = QuantMatrix::quantize(format, 3, 33, &x.repeat(3)).unwrap();
            assert_eq!(m.dequantize(), back.repeat(3));
            assert_eq!(m.gpu_layout().len(), format.gpu_bytes(3, 33));
        }
    }

    /// Every weight within half a step (q8_0, round to nearest) or one step (q4_0, whose clamp at
    /// 15 can cost a whole step) of its block's `d`.
    #[test]
    fn quantization_error_is_bounded_by_the_step() {
        let (n, k) = (7, 100);
        for (format, x, m) in seeded(n, k, 3.0) {
            let back = m.dequantize();
            for (r, row) in x.chunks(k).enumerate() {
                let gguf = &m.gguf()[r * format.row_bytes(k)..];
                for (i, &v) in row.iter().enumerate() {
                    let block = &gguf[i / BLOCK * format.block_bytes()..];
                    let d = half::f16::from_le_bytes([block[0], block[1]]).to_f32().abs();
                    // f16 rounding of d moves the largest weight by up to 127·2^−11·d.
                    let bound = match format {
                        QuantFormat::Q8_0 => d / 2.0 + 127.0 * d / 2048.0,
                        QuantFormat::Q4_0 => d * (1.0 + 8.0 / 2048.0),
                    };
                    let err = (back[r * k + i] - v).abs();
                    assert!(err <= bound, "{format} [{r}, {i}]: {v} → {}, d {d}", back[r * k + i]);
                }
            }
        }
    }

    /// The GPU layout read the way the shader reads it gives the dequantized weights.
    #[test]
    fn the_gpu_layout_reads_back_as_the_dequantized_weights() {
        let (n, k) = (5, 77);
        for (format, _, m) in seeded(n, k, 1.0) {
            let bytes = m.gpu_layout();
            let words: Vec<u32> = bytes.chunks(4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).collect();
            let (blocks, w) = (QuantFormat::blocks(k), format.block_words());
            let scales = n * blocks * w;
            assert_eq!(words.len(), (scales + (n * blocks).div_ceil(2)).next_multiple_of(4));
            let weight = |r: usize, e: usize| {
                let s = r * blocks + e / BLOCK;
                let d = half::f16::from_bits((words[scales + s / 2] >> (16 * (s % 2))) as u16).to_f32();
                let j = e % BLOCK;
                let q = match format {
                    QuantFormat::Q8_0 => (words[s * w + j / 4] >> (8 * (j % 4))) as u8 as i8 as i32,
                    QuantFormat::Q4_0 => {
                        let byte = words[s * w + (j % 16) / 4] >> (8 * (j % 4));
                        ((byte >> (4 * (j / 16) as u32)) & 0xF) as i32 - 8
                    }
                };
                d * q as f32
            };
            let read: Vec<f32> = (0..n).flat_map(|r| (0..k).map(move |e| (r, e))).map(|(r, e)| weight(r, e)).collect();
            assert_eq!(read, m.dequantize(), "{format}");
        }
    }

    #[test]
    fn names_sizes_and_refusals() {
        for format in QuantFormat::ALL {
            assert_eq!(format.to_string().parse::<QuantFormat>(), Ok(format));
            assert_eq!(format.row_bytes(4096), 128 * format.block_bytes());
        }
        assert_eq!((QuantFormat::Q8_0.block_bytes(), QuantFormat::Q4_0.block_bytes()), (34, 18));
        assert_eq!(QuantFormat::Q8_0.gpu_bytes(2048, 2048), 2048 * 2048 * 34 / 32);
        let err = "q5_k".parse::<QuantFormat>().unwrap_err().to_string();
        assert!(err.contains("q5_k") && err.contains("q8_0 and q4_0"), "{err}");
        let err = QuantMatrix::quantize(QuantFormat::Q8_0, 2, 3, &[0.0; 5]).unwrap_err();
        assert_eq!(err, QuantError::Values { n: 2, k: 3, expected: 6, got: 5 });
        let err = QuantMatrix::quantize(QuantFormat::Q4_0, 2, 3, &[0.0, 1.0, 2.0, 3.0, f32::NAN, 0.0]).unwrap_err();
        assert!(matches!(err, QuantError::NotFinite { index: 4, .. }), "{err}");
        let err = QuantMatrix::from_gguf(QuantFormat::Q4_0, 2, 33, vec![0; 70]).unwrap_err().to_string();
        assert!(err.contains("q4_0 weights of 2 row(s) of 33 are 72 bytes in GGUF's layout, got 70"), "{err}");
        assert!(QuantFormat::Q8_0.dequantize(&[0; 33], 1, 32).is_err());
        // 127/64: d = 1/64, exact in f16.
        let m = QuantMatrix::from_gguf(QuantFormat::Q8_0, 1, 32, QuantFormat::Q8_0.quantize_row(&[1.984375; 32]).unwrap()).unwrap();
        assert_eq!(m.dequantize(), vec![1.984375; 32]);
        assert_eq!((m.n(), m.k(), m.format()), (1, 32, QuantFormat::Q8_0));
    }
}
