//! The element types a kernel's inputs can be stored in. f32 is the default everywhere; f16
//! halves the bytes a memory-bound kernel moves, where the adapter has WebGPU's `shader-f16`;
//! GGUF's block formats q8_0 and q4_0 ([`crate::quant`]) store a weight matrix in 8.5 and 4.5 bits
//! a value, by rows of blocks, and need no feature.

use crate::quant::{QuantError, QuantFormat, QuantMatrix};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How input values are stored in GPU buffers. Arithmetic stays f32 either way: f16 kernels
/// accumulate in f32, so only the inputs' rounding differs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// IEEE binary32.
    #[default]
    F32,
    /// IEEE binary16, which needs the `shader-f16` feature.
    F16,
    /// GGUF's q8_0: blocks of 32 int8 and an f16 scale, for the weights of linear layers.
    #[serde(rename = "q8_0")]
    Q8_0,
    /// GGUF's q4_0: blocks of 32 4-bit values and an f16 scale, for the weights of linear layers.
    #[serde(rename = "q4_0")]
    Q4_0,
}

impl Dtype {
    /// Bytes per element of a float type; a quantized one packs below a byte and is measured by
    /// [`storage_bytes`](Dtype::storage_bytes).
    pub fn size(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::F16 => 2,
            Dtype::Q8_0 | Dtype::Q4_0 => 1,
        }
    }

    /// The block format of a quantized type.
    pub fn quant(self) -> Option<QuantFormat> {
        match self {
            Dtype::Q8_0 => Some(QuantFormat::Q8_0),
            Dtype::Q4_0 => Some(QuantFormat::Q4_0),
            Dtype::F32 | Dtype::F16 => None,
        }
    }

    /// Bytes of `values` values in rows of `row` stored as this type (a quantized row is a whole
    /// number of blocks, in [`QuantMatrix::gpu_layout`]).
    pub fn storage_bytes(self, values: usize, row: usize) -> usize {
        match self.quant() {
            Some(q) => q.gpu_bytes(values / row.max(1), row),
            None => self.size() * values,
        }
    }

    /// The WGSL scalar type: a quantized matrix is read as `u32` words.
    pub fn wgsl(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F16 => "f16",
            Dtype::Q8_0 | Dtype::Q4_0 => "u32",
        }
    }

    /// Its name: `f32`, `f16`, `q8_0`, `q4_0`.
    pub fn name(self) -> &'static str {
        match self.quant() {
            Some(q) => q.name(),
            None => self.wgsl(),
        }
    }

    /// The WebGPU feature a shader storing this type needs, if any.
    pub fn feature(self) -> Option<&'static str> {
        match self {
            Dtype::F16 => Some("shader-f16"),
            Dtype::F32 | Dtype::Q8_0 | Dtype::Q4_0 => None,
        }
    }

    /// The WGSL type of `vec` consecutive values of this type: `f16`, `vec4<f32>`, …; of a
    /// quantized type, `vec` consecutive u32 words, which the kernel unpacks itself.
    pub fn vector(self, vec: u32) -> String {
        match vec {
            1 => self.wgsl().to_string(),
            _ => format!("vec{vec}<{}>", self.wgsl()),
        }
    }

    /// The `enable` directives a shader storing `dtypes` starts with.
    pub fn enables(dtypes: &[Dtype]) -> &'static str {
        if dtypes.contains(&Dtype::F16) {
            "enable f16;\n"
        } else {
            ""
        }
    }

    /// A name's suffix for this type: empty for f32, `_f16` otherwise (`matmul_f16`).
    pub fn suffix(self) -> &'static str {
        match self {
            Dtype::F32 => "",
            Dtype::F16 => "_f16",
            Dtype::Q8_0 => "_q8_0",
            Dtype::Q4_0 => "_q4_0",
        }
    }

    /// `v` rounded to this type (to nearest, ties to even) and widened back: what the GPU will
    /// read, so references can be computed from exactly that. A quantized type rounds whole
    /// blocks, not single values ([`round_rows`](Dtype::round_rows)): here it keeps `v`.
    pub fn round(self, v: f32) -> f32 {
        match self {
            Dtype::F16 => half::f16::from_f32(v).to_f32(),
            Dtype::F32 | Dtype::Q8_0 | Dtype::Q4_0 => v,
        }
    }

    /// `values`, in rows of `row`, rounded to this type as the GPU will read them: a quantized
    /// type quantizes each row and dequantizes it back.
    pub fn round_rows(self, values: &mut [f32], row: usize) -> Result<(), QuantError> {
        match self.quant() {
            Some(q) => {
                let exact = QuantMatrix::quantize(q, values.len() / row.max(1), row, values)?.dequantize();
                values.copy_from_slice(&exact);
            }
            None if self != Dtype::F32 => values.iter_mut().for_each(|v| *v = self.round(*v)),
            None => {}
        }
        Ok(())
    }

    /// `values` as little-endian bytes of this type, in rows of `row` (a quantized type's
    /// [`QuantMatrix::gpu_layout`]).
    pub fn encode_rows(self, values: &[f32], row: usize) -> Result<Vec<u8>, QuantError> {
        match self.quant() {
            Some(q) => Ok(QuantMatrix::quantize(q, values.len() / row.max(1), row, values)?.gpu_layout()),
            None => Ok(self.encode(values)),
        }
    }

    /// `values` as little-endian bytes of this float type (a quantized type: as f32; see
    /// [`encode_rows`](Dtype::encode_rows)).
    pub fn encode(self, values: &[f32]) -> Vec<u8> {
        match self {
            Dtype::F16 => values.iter().flat_map(|&v| half::f16::from_f32(v).to_le_bytes()).collect(),
            Dtype::F32 | Dtype::Q8_0 | Dtype::Q4_0 => crate::wire::f32s_to_le_bytes(values),
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dtype {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "f32" => Ok(Dtype::F32),
            "f16" => Ok(Dtype::F16),
            "q8_0" => Ok(Dtype::Q8_0),
            "q4_0" => Ok(Dtype::Q4_0),
            _ => Err(format!("unknown dtype `{s}`: the dtypes are f32, f16, q8_0 and q4_0")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_rounds_to_nearest_and_encodes_two_bytes_each() {
        assert_eq!(Dtype::F16.round(1.0 + 1.0 / 4096.0), 1.0);
        assert_eq!(Dtype::F16.round(0.1), 0.099975586);
        assert_eq!(Dtype::F32.round(0.1), 0.1);
        assert_eq!(Dtype::F16.encode(&[1.0, -2.0]), vec![0x00, 0x3c, 0x00, 0xc0]);
        assert_eq!(Dtype::F32.encode(&[1.0]), 1.0f32.to_le_bytes().to_vec());
        assert_eq!("f16".parse::<Dtype>(), Ok(Dtype::F16));
        assert!("bf16".parse::<Dtype>().unwrap_err().contains("f32, f16, q8_0 and q4_0"));
    }
}
