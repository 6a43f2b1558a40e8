//! An ONNX model input's values, typed as onnxruntime-web and a native runtime take them: those of
//! the files harness writes of its own models ([`crate::model::onnx`]), and those made for a
//! user's own file ([`crate::own_model`]).

/// An input's values, typed as onnxruntime-web and the reference take them.
#[derive(Debug, Clone, PartialEq)]
pub enum InputData {
    /// float32.
    F32(Vec<f32>),
    /// float16, as bits.
    F16(Vec<u16>),
    /// int64.
    I64(Vec<i64>),
    /// int32.
    I32(Vec<i32>),
    /// int8.
    I8(Vec<i8>),
    /// uint8, and bool as 0 or 1.
    U8(Vec<u8>),
}

impl InputData {
    /// Elements.
    pub fn len(&self) -> usize {
        match self {
            InputData::F32(v) => v.len(),
            InputData::F16(v) => v.len(),
            InputData::I64(v) => v.len(),
            InputData::I32(v) => v.len(),
            InputData::I8(v) => v.len(),
            InputData::U8(v) => v.len(),
        }
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl InputData {
    /// Its values as little-endian bytes (bool as one byte), as
    /// [`crate::own_model::Elem::of_le_bytes`] reads them back.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            InputData::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            InputData::F16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            InputData::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            InputData::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            InputData::I8(v) => v.iter().map(|&x| x as u8).collect(),
            InputData::U8(v) => v.clone(),
        }
    }
}

/// Each `N`-byte value of `bytes`, read by `f` (a trailing partial value is dropped).
pub fn from_le<const N: usize, T>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
    bytes.chunks_exact(N).map(|c| f(c.try_into().expect("N bytes"))).collect()
}
