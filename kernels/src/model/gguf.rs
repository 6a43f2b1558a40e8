//! GGUF, llama.cpp's model file: a header of typed metadata (`llama.block_count`, …), a table of
//! tensors (name, shape, ggml type, offset) and their data, each aligned. Read here so that a
//! decoder can run the weights people actually ship (`tinyllama-1.1b-chat.Q4_0.gguf`), and
//! written, so that tests can make small files of known content.
//!
//! GGUF lists a tensor's dimensions innermost first (ggml's `ne`): a weight matrix of `n` rows of
//! `k` is `[k, n]`, the transpose of how PyTorch and safetensors write the same bytes.

use crate::quant::QuantFormat;

/// Every GGUF file starts with these bytes.
pub const MAGIC: &[u8; 4] = b"GGUF";

/// Alignment of the tensor data when `general.alignment` does not say.
const DEFAULT_ALIGNMENT: u64 = 32;

/// Why a GGUF file cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GgufError {
    /// The bytes are not GGUF, or a version this reader does not know.
    #[error("{0}")]
    Header(String),
    /// The file ends inside its header or a tensor's data.
    #[error("the file ends early (at byte {at}, reading {what}); is it complete?")]
    Truncated {
        /// Where the read was.
        at: usize,
        /// What was being read.
        what: String,
    },
    /// A value of a type GGUF does not define.
    #[error("metadata `{key}` has type {ty}, which GGUF does not define")]
    ValueType {
        /// The key.
        key: String,
        /// The type number.
        ty: u32,
    },
}

/// A metadata value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Any unsigned integer type, widened.
    Uint(u64),
    /// Any signed integer type, widened.
    Int(i64),
    /// `f32` or `f64`, widened.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A UTF-8 string (invalid bytes replaced).
    String(String),
    /// An array of values of one type.
    Array(Vec<Value>),
}

/// A tensor's element type: the ggml types harness reads, or another one by number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorType {
    /// `F32`.
    F32,
    /// `F16`.
    F16,
    /// `BF16`.
    Bf16,
    /// A block format harness dequantizes (`Q8_0`, `Q4_0`).
    Quant(QuantFormat),
    /// Any other ggml type (k-quants, i-quants, …), by its number.
    Other(u32),
}

impl TensorType {
    fn from_ggml(ty: u32) -> TensorType {
        match ty {
            0 => TensorType::F32,
            1 => TensorType::F16,
            2 => TensorType::Quant(QuantFormat::Q4_0),
            8 => TensorType::Quant(QuantFormat::Q8_0),
            30 => TensorType::Bf16,
            other => TensorType::Other(other),
        }
    }

    /// ggml's number for the type.
    pub fn ggml(self) -> u32 {
        match self {
            TensorType::F32 => 0,
            TensorType::F16 => 1,
            TensorType::Quant(QuantFormat::Q4_0) => 2,
            TensorType::Quant(QuantFormat::Q8_0) => 8,
            TensorType::Bf16 => 30,
            TensorType::Other(n) => n,
        }
    }

    /// ggml's name for the type (`Q4_K`), for messages.
    pub fn name(self) -> String {
        const NAMES: [&str; 31] = [
            "F32", "F16", "Q4_0", "Q4_1", "Q4_2", "Q4_3", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS",
            "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS", "I8", "I16", "I32", "I64", "F64", "IQ1_M", "BF16",
        ];
        NAMES.get(self.ggml() as usize).map_or_else(|| format!("type {}", self.ggml()), |n| n.to_string())
    }

    /// Bytes of `n` rows of `k` elements, where harness reads the type.
    fn bytes(self, n: usize, k: usize) -> Option<usize> {
        match self {
            TensorType::F32 => Some(4 * n * k),
            TensorType::F16 | TensorType::Bf16 => Some(2 * n * k),
            TensorType::Quant(f) => Some(n * f.row_bytes(k)),
            TensorType::Other(_) => None,
        }
    }
}

/// One entry of the tensor table.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    /// llama.cpp's name (`blk.0.attn_q.weight`).
    pub name: String,
    /// Dimensions, innermost (the row length) first.
    pub dims: Vec<u64>,
    /// Element type.
    pub ty: TensorType,
    /// Where the data starts, from the start of the data section.
    pub offset: u64,
}

impl TensorInfo {
    /// Elements in the tensor.
    pub fn len(&self) -> u64 {
        self.dims.iter().product()
    }

    /// Whether it holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements in a row: the innermost dimension.
    pub fn row(&self) -> u64 {
        self.dims.first().copied().unwrap_or(1)
    }
}

/// A parsed GGUF header: metadata and tensor table, and where the data starts in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Gguf {
    /// The format version (2 or 3).
    pub version: u32,
    /// Metadata in file order.
    pub metadata: Vec<(String, Value)>,
    /// Tensors in file order.
    pub tensors: Vec<TensorInfo>,
    /// Offset of the data section in the file.
    pub data_start: usize,
}

impl Gguf {
    /// Reads the header of the GGUF file `bytes` and checks that every tensor's data lies inside.
    pub fn parse(bytes: &[u8]) -> Result<Gguf, GgufError> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(4, "the magic")? != MAGIC {
            return Err(GgufError::Header("the file does not start with `GGUF`".into()));
        }
        let version = r.u32("the version")?;
        if !(2..=3).contains(&version) {
            return Err(GgufError::Header(format!("GGUF version {version}; harness reads versions 2 and 3")));
        }
        let tensor_count = r.u64("the tensor count")?;
        let kv_count = r.u64("the metadata count")?;
        let mut metadata = Vec::new();
        for _ in 0..kv_count {
            let key = r.string("a metadata key")?;
            let ty = r.u32(&key)?;
            let value = r.value(ty, &key)?;
            metadata.push((key, value));
        }
        let mut tensors = Vec::new();
        for _ in 0..tensor_count {
            let name = r.string("a tensor name")?;
            let n_dims = r.u32(&name)?;
            let dims = (0..n_dims).map(|_| r.u64(&name)).collect::<Result<Vec<u64>, _>>()?;
            let ty = TensorType::from_ggml(r.u32(&name)?);
            let offset = r.u64(&name)?;
            tensors.push(TensorInfo { name, dims, ty, offset });
        }
        let mut gguf = Gguf { version, metadata, tensors, data_start: 0 };
        let align = gguf.uint("general.alignment").unwrap_or(DEFAULT_ALIGNMENT).max(1);
        gguf.data_start = usize::try_from((r.at as u64).next_multiple_of(align)).map_err(|_| r.truncated("the data"))?;
        for t in &gguf.tensors {
            if let Some(range) = gguf.range(t) {
                if range.end > bytes.len() {
                    return Err(GgufError::Truncated { at: bytes.len(), what: format!("tensor `{}`", t.name) });
                }
            }
        }
        Ok(gguf)
    }

    /// Metadata `key`'s value.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Metadata `key` as an unsigned integer, if it is one.
    pub fn uint(&self, key: &str) -> Option<u64> {
        match self.get(key)? {
            Value::Uint(v) => Some(*v),
            Value::Int(v) => u64::try_from(*v).ok(),
            _ => None,
        }
    }

    /// Metadata `key` as a float, if it is a number.
    pub fn float(&self, key: &str) -> Option<f64> {
        match self.get(key)? {
            Value::Float(v) => Some(*v),
            Value::Uint(v) => Some(*v as f64),
            Value::Int(v) => Some(*v as f64),
            _ => None,
        }
    }

    /// Metadata `key` as a string, if it is one.
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.get(key)? {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The tensor called `name`.
    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// Where `t`'s data lies in the file, if harness reads its type.
    pub fn range(&self, t: &TensorInfo) -> Option<std::ops::Range<usize>> {
        let k = usize::try_from(t.row()).ok()?;
        let n = usize::try_from(t.len() / t.row().max(1)).ok()?;
        let start = self.data_start.checked_add(usize::try_from(t.offset).ok()?)?;
        Some(start..start.checked_add(t.ty.bytes(n, k)?)?)
    }

    /// Tensor `t` of the file `bytes` as f32, dequantized; `None` for a type harness does not read.
    pub fn f32s(&self, bytes: &[u8], t: &TensorInfo) -> Option<Vec<f32>> {
        let data = &bytes[self.range(t)?];
        let halves = |f: fn(u16) -> f32| data.chunks_exact(2).map(|b| f(u16::from_le_bytes([b[0], b[1]]))).collect();
        match t.ty {
            TensorType::F32 => Some(crate::wire::le_bytes_to_f32s(data)),
            TensorType::F16 => Some(halves(|h| half::f16::from_bits(h).to_f32())),
            TensorType::Bf16 => Some(halves(|h| half::bf16::from_bits(h).to_f32())),
            TensorType::Quant(f) => f.dequantize(data, (t.len() / t.row().max(1)) as usize, t.row() as usize).ok(),
            TensorType::Other(_) => None,
        }
    }
}

/// A tensor to [`write`]: its name, its dimensions innermost first, its type and its data.
pub type TensorData<'a> = (&'a str, Vec<u64>, TensorType, Vec<u8>);

/// A GGUF version 3 file of `metadata` and `tensors`, the data aligned as `general.alignment`
/// says (32 bytes by default): for tests, and to hand a model made here to llama.cpp.
pub fn write(metadata: &[(&str, Value)], tensors: &[TensorData]) -> Vec<u8> {
    let align = metadata.iter().find_map(|(k, v)| match (*k, v) {
        ("general.alignment", Value::Uint(a)) => Some((*a).max(1)),
        _ => None,
    });
    let align = align.unwrap_or(DEFAULT_ALIGNMENT);
    let mut out = Vec::new();
    let string = |out: &mut Vec<u8>, s: &str| {
        out.extend((s.len() as u64).to_le_bytes());
        out.extend(s.as_bytes());
    };
    out.extend(MAGIC);
    out.extend(3u32.to_le_bytes());
    out.extend((tensors.len() as u64).to_le_bytes());
    out.extend((metadata.len() as u64).to_le_bytes());
    for (key, value) in metadata {
        string(&mut out, key);
        write_value(&mut out, value, true);
    }
    let mut offset = 0u64;
    for (name, dims, ty, data) in tensors {
        string(&mut out, name);
        out.extend((dims.len() as u32).to_le_bytes());
        dims.iter().for_each(|d| out.extend(d.to_le_bytes()));
        out.extend(ty.ggml().to_le_bytes());
        out.extend(offset.to_le_bytes());
        offset = (offset + data.len() as u64).next_multiple_of(align);
    }
    for (_, _, _, data) in tensors {
        out.resize(out.len().next_multiple_of(align as usize), 0);
        out.extend(data);
    }
    out
}

/// `value` as GGUF writes it: its type number (when `typed`), then its bytes. Integers are written
/// as u64/i64, floats as f32.
fn write_value(out: &mut Vec<u8>, value: &Value, typed: bool) {
    let ty: u32 = match value {
        Value::Uint(_) => 10,
        Value::Int(_) => 11,
        Value::Float(_) => 6,
        Value::Bool(_) => 7,
        Value::String(_) => 8,
        Value::Array(_) => 9,
    };
    if typed {
        out.extend(ty.to_le_bytes());
    }
    match value {
        Value::Uint(v) => out.extend(v.to_le_bytes()),
        Value::Int(v) => out.extend(v.to_le_bytes()),
        Value::Float(v) => out.extend((*v as f32).to_le_bytes()),
        Value::Bool(v) => out.push(*v as u8),
        Value::String(s) => {
            out.extend((s.len() as u64).to_le_bytes());
            out.extend(s.as_bytes());
        }
        Value::Array(items) => {
            let first = items.first().cloned().unwrap_or(Value::Uint(0));
            let mut head = Vec::new();
            write_value(&mut head, &first, true);
            out.extend(&head[..4]);
            out.extend((items.len() as u64).to_le_bytes());
            items.iter().for_each(|v| write_value(out, v, false));
        }
    }
}

/// A cursor over the file's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn truncated(&self, what: &str) -> GgufError {
        GgufError::Truncated { at: self.at, what: what.to_string() }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], GgufError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| self.truncated(what))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], GgufError> {
        Ok(self.take(N, what)?.try_into().expect("take returns N bytes"))
    }

    fn u32(&mut self, what: &str) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &str) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    fn string(&mut self, what: &str) -> Result<String, GgufError> {
        let len = usize::try_from(self.u64(what)?).map_err(|_| self.truncated(what))?;
        Ok(String::from_utf8_lossy(self.take(len, what)?).into_owned())
    }

    fn value(&mut self, ty: u32, key: &str) -> Result<Value, GgufError> {
        Ok(match ty {
            0 => Value::Uint(self.array::<1>(key)?[0].into()),
            1 => Value::Int((self.array::<1>(key)?[0] as i8).into()),
            2 => Value::Uint(u16::from_le_bytes(self.array(key)?).into()),
            3 => Value::Int(i16::from_le_bytes(self.array(key)?).into()),
            4 => Value::Uint(self.u32(key)?.into()),
            5 => Value::Int(i32::from_le_bytes(self.array(key)?).into()),
            6 => Value::Float(f32::from_le_bytes(self.array(key)?).into()),
            7 => Value::Bool(self.array::<1>(key)?[0] != 0),
            8 => Value::String(self.string(key)?),
            9 => {
                let item = self.u32(key)?;
                let n = self.u64(key)?;
                // Each item is at least a byte: a count beyond what is left is a broken file.
                if n > (self.bytes.len() - self.at) as u64 {
                    return Err(self.truncated(key));
                }
                Value::Array((0..n).map(|_| self.value(item, key)).collect::<Result<_, _>>()?)
            }
            10 => Value::Uint(self.u64(key)?),
            11 => Value::Int(i64::from_le_bytes(self.array(key)?)),
            12 => Value::Float(f64::from_le_bytes(self.array(key)?)),
            ty => return Err(GgufError::ValueType { key: key.to_string(), ty }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_bytes(v: &[f32]) -> Vec<u8> {
        crate::wire::f32s_to_le_bytes(v)
    }

    #[test]
    fn a_written_file_reads_back_with_its_metadata_and_every_type() {
        let values: Vec<f32> = (0..64).map(|i| i as f32 / 8.0 - 4.0).collect();
        let q8 = QuantFormat::Q8_0.quantize_row(&values[..32]).unwrap();
        let q4 = [QuantFormat::Q4_0.quantize_row(&values[..32]).unwrap(), QuantFormat::Q4_0.quantize_row(&values[32..]).unwrap()].concat();
        let f16: Vec<u8> = values[..6].iter().flat_map(|&v| half::f16::from_f32(v).to_le_bytes()).collect();
        let bf16: Vec<u8> = values[..2].iter().flat_map(|&v| half::bf16::from_f32(v).to_le_bytes()).collect();
        let meta = [
            ("general.architecture", Value::String("llama".into())),
            ("llama.block_count", Value::Uint(22)),
            ("llama.rope.freq_base", Value::Float(10_000.0)),
            ("tokenizer.ggml.tokens", Value::Array(vec![Value::String("<s>".into()), Value::String("</s>".into())])),
        ];
        let file = write(&meta, &[
            ("a", vec![3, 2], TensorType::F32, f32_bytes(&values[..6])),
            ("b", vec![32, 1], TensorType::Quant(QuantFormat::Q8_0), q8.clone()),
            ("c", vec![32, 2], TensorType::Quant(QuantFormat::Q4_0), q4.clone()),
            ("d", vec![6], TensorType::F16, f16),
            ("e", vec![2], TensorType::Bf16, bf16),
        ]);
        let g = Gguf::parse(&file).unwrap();
        assert_eq!((g.version, g.str("general.architecture"), g.uint("llama.block_count"), g.float("llama.rope.freq_base")), (3, Some("llama"), Some(22), Some(10_000.0)));
        assert_eq!(g.get("tokenizer.ggml.tokens"), Some(&meta[3].1));
        assert_eq!(g.data_start % 32, 0);
        let read = |name: &str| g.f32s(&file, g.tensor(name).unwrap()).unwrap();
        assert_eq!(read("a"), values[..6]);
        assert_eq!(read("b"), QuantFormat::Q8_0.dequantize(&q8, 1, 32).unwrap());
        assert_eq!(read("c"), QuantFormat::Q4_0.dequantize(&q4, 2, 32).unwrap());
        assert_eq!(read("d"), values[..6]);
        assert_eq!(read("e"), values[..2]);
        assert_eq!((g.tensor("a").unwrap().row(), g.tensor("c").unwrap().len()), (3, 64));
        assert_eq!(TensorType::Other(12).name(), "Q4_K");
    }

    #[test]
    fn a_broken_file_says_what_is_wrong() {
        let file = write(&[("general.alignment", Value::Uint(64))], &[("w", vec![4], TensorType::F32, f32_bytes(&[1.0; 4]))]);
        let g = Gguf::parse(&file).unwrap();
        assert_eq!(g.data_start % 64, 0, "general.alignment is honoured");
        let err = |bytes: &[u8]| Gguf::parse(bytes).unwrap_err().to_string();
        assert!(err(&file[..file.len() - 1]).contains("tensor `w`"), "{}", err(&file[..file.len() - 1]));
        assert!(err(&file[..30]).contains("ends early"));
        assert!(err(b"GGML\x03\0\0\0").contains("does not start with `GGUF`"));
        assert!(err(b"GGUF\x09\0\0\0").contains("version 9"));
        let mut bad_type = write(&[("k", Value::Bool(true))], &[]);
        let at = bad_type.len() - 5;
        bad_type[at..at + 4].copy_from_slice(&99u32.to_le_bytes());
        assert!(err(&bad_type).contains("metadata `k` has type 99"));
    }
}
