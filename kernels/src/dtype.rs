//! The element types a kernel's inputs can be stored in. f32 is the default everywhere; f16
//! halves the bytes a memory-bound kernel moves, where the adapter has WebGPU's `shader-f16`.

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
}

impl Dtype {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::F16 => 2,
        }
    }

    /// The WGSL scalar type.
    pub fn wgsl(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F16 => "f16",
        }
    }

    /// The WebGPU feature a shader storing this type needs, if any.
    pub fn feature(self) -> Option<&'static str> {
        match self {
            Dtype::F32 => None,
            Dtype::F16 => Some("shader-f16"),
        }
    }

    /// The WGSL type of `vec` consecutive values of this type: `f16`, `vec4<f32>`, ….
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
        }
    }

    /// `v` rounded to this type (to nearest, ties to even) and widened back: what the GPU will
    /// read, so references can be computed from exactly that.
    pub fn round(self, v: f32) -> f32 {
        match self {
            Dtype::F32 => v,
            Dtype::F16 => half::f16::from_f32(v).to_f32(),
        }
    }

    /// `values` as little-endian bytes of this type.
    pub fn encode(self, values: &[f32]) -> Vec<u8> {
        match self {
            Dtype::F32 => crate::wire::f32s_to_le_bytes(values),
            Dtype::F16 => values.iter().flat_map(|&v| half::f16::from_f32(v).to_le_bytes()).collect(),
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.wgsl())
    }
}

impl FromStr for Dtype {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "f32" => Ok(Dtype::F32),
            "f16" => Ok(Dtype::F16),
            _ => Err(format!("unknown dtype `{s}`: the dtypes are f32 and f16")),
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
        assert!("bf16".parse::<Dtype>().unwrap_err().contains("f32 and f16"));
    }
}
