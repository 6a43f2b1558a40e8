//! Model weights from a safetensors file: an 8-byte header length, a JSON table of tensors
//! (dtype, shape, byte range), then the data. Read natively from disk and, in the page, from the
//! bytes the harness serves.

use super::ModelError;
use std::collections::BTreeMap;

/// One tensor's entry in the table.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [usize; 2],
}

/// A parsed safetensors file.
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    bytes: Vec<u8>,
    data_start: usize,
    tensors: BTreeMap<String, Entry>,
}

impl Weights {
    /// Parses a whole safetensors file.
    pub fn parse(bytes: Vec<u8>) -> Result<Weights, ModelError> {
        let bad = |m: &str| ModelError::BadWeights(m.to_string());
        let len = bytes.get(..8).ok_or_else(|| bad("shorter than its header"))?;
        let len = u64::from_le_bytes(len.try_into().expect("8 bytes")) as usize;
        let header = bytes.get(8..8usize.saturating_add(len)).ok_or_else(|| bad("the header runs past the end"))?;
        let table: BTreeMap<String, serde_json::Value> =
            serde_json::from_slice(header).map_err(|e| ModelError::BadWeights(format!("header: {e}")))?;
        let mut tensors = BTreeMap::new();
        for (name, value) in table {
            if name == "__metadata__" {
                continue;
            }
            let entry: Entry = serde_json::from_value(value).map_err(|e| ModelError::BadWeights(format!("`{name}`: {e}")))?;
            if 8 + len + entry.data_offsets[1] > bytes.len() || entry.data_offsets[0] > entry.data_offsets[1] {
                return Err(ModelError::BadWeights(format!("`{name}` lies outside the file")));
            }
            tensors.insert(name, entry);
        }
        Ok(Weights { bytes, data_start: 8 + len, tensors })
    }

    /// Tensor `name` as f32 values, checked to have `len` of them.
    pub fn f32s(&self, name: &str, len: usize) -> Result<Vec<f32>, ModelError> {
        let e = self.tensors.get(name).ok_or_else(|| ModelError::MissingTensor(name.to_string()))?;
        let bad = |problem: String| ModelError::BadTensor { name: name.to_string(), problem };
        if e.dtype != "F32" {
            return Err(bad(format!("dtype {} (only F32 is supported)", e.dtype)));
        }
        let count: usize = e.shape.iter().product();
        if count != len || e.data_offsets[1] - e.data_offsets[0] != 4 * len {
            return Err(bad(format!("shape {:?}, expected {len} values", e.shape)));
        }
        let data = &self.bytes[self.data_start + e.data_offsets[0]..self.data_start + e.data_offsets[1]];
        Ok(crate::wire::le_bytes_to_f32s(data))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A safetensors file of `tensors` (name, shape, values), as a writer would make it.
    pub fn safetensors(tensors: &[(&str, Vec<usize>, Vec<f32>)]) -> Vec<u8> {
        let mut header = serde_json::Map::new();
        let mut data = Vec::new();
        for (name, shape, values) in tensors {
            let start = data.len();
            data.extend(crate::wire::f32s_to_le_bytes(values));
            header.insert(name.to_string(), serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [start, data.len()]}));
        }
        let header = serde_json::to_vec(&header).unwrap();
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend(header);
        out.extend(data);
        out
    }

    #[test]
    fn reads_tensors_and_names_what_is_wrong() {
        let w = Weights::parse(safetensors(&[("a", vec![2, 2], vec![1.0, 2.0, 3.0, 4.0])])).unwrap();
        assert_eq!(w.f32s("a", 4).unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(w.f32s("b", 4), Err(ModelError::MissingTensor("b".into())));
        assert!(w.f32s("a", 3).unwrap_err().to_string().contains("expected 3"));
        assert!(Weights::parse(vec![1, 2, 3]).is_err());
        assert!(Weights::parse(b"\x10\0\0\0\0\0\0\0{not json}".to_vec()).is_err());
    }
}
