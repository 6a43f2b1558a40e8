//! Model weights from a safetensors file, read by the format's own `safetensors` crate: natively
//! from disk and, in the page, from the bytes the harness serves.

use super::ModelError;
use safetensors::tensor::Metadata;
use safetensors::{Dtype, SafeTensors};

/// A parsed safetensors file: its bytes and the table of tensors in them.
#[derive(Debug, Clone)]
pub struct Weights {
    bytes: Vec<u8>,
    data_start: usize,
    table: Metadata,
}

impl Weights {
    /// Parses a whole safetensors file, checking that every tensor's bytes lie inside it.
    pub fn parse(bytes: Vec<u8>) -> Result<Weights, ModelError> {
        let (header_len, table) = SafeTensors::read_metadata(&bytes).map_err(|e| ModelError::BadWeights(e.to_string()))?;
        Ok(Weights { data_start: size_of::<u64>() + header_len, table, bytes })
    }

    /// Tensor `name` as f32 values, checked to have `len` of them.
    pub fn f32s(&self, name: &str, len: usize) -> Result<Vec<f32>, ModelError> {
        let info = self.table.info(name).ok_or_else(|| ModelError::MissingTensor(name.to_string()))?;
        let bad = |problem: String| ModelError::BadTensor { name: name.to_string(), problem };
        if info.dtype != Dtype::F32 {
            return Err(bad(format!("dtype {} (only F32 is supported)", info.dtype)));
        }
        if info.shape.iter().product::<usize>() != len {
            return Err(bad(format!("shape {:?}, expected {len} values", info.shape)));
        }
        let (start, end) = info.data_offsets;
        Ok(crate::wire::le_bytes_to_f32s(&self.bytes[self.data_start + start..self.data_start + end]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use safetensors::tensor::TensorView;

    /// A safetensors file of `tensors` (name, dtype, shape, little-endian bytes).
    fn safetensors(tensors: &[(&str, Dtype, Vec<usize>, Vec<u8>)]) -> Vec<u8> {
        let views = tensors.iter().map(|(name, dtype, shape, bytes)| (*name, TensorView::new(*dtype, shape.clone(), bytes).unwrap()));
        safetensors::serialize(views, None).unwrap()
    }

    #[test]
    fn reads_tensors_and_names_what_is_wrong() {
        let values = crate::wire::f32s_to_le_bytes(&[1.0, 2.0, 3.0, 4.0]);
        let w = Weights::parse(safetensors(&[("a", Dtype::F32, vec![2, 2], values.clone()), ("h", Dtype::F16, vec![2], vec![0; 4])])).unwrap();
        assert_eq!(w.f32s("a", 4).unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(w.f32s("b", 4), Err(ModelError::MissingTensor("b".into())));
        assert!(w.f32s("a", 3).unwrap_err().to_string().contains("expected 3"));
        assert!(w.f32s("h", 2).unwrap_err().to_string().contains("dtype F16 (only F32 is supported)"));
        assert!(Weights::parse(vec![1, 2, 3]).is_err());
        assert!(Weights::parse(b"\x10\0\0\0\0\0\0\0{not json}".to_vec()).is_err());
        let mut short = safetensors(&[("a", Dtype::F32, vec![2, 2], values)]);
        short.pop();
        let err = Weights::parse(short).unwrap_err().to_string();
        assert!(err.starts_with("not a safetensors file: "), "{err}");
    }

    #[test]
    fn reads_the_minilm_checkpoint() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/all-MiniLM-L6-v2/model.safetensors");
        let w = Weights::parse(std::fs::read(path).expect("ci/setup.sh provides the MiniLM weights")).unwrap();
        assert_eq!(w.f32s("embeddings.word_embeddings.weight", 30522 * 384).unwrap().len(), 30522 * 384);
        assert!(w.f32s("encoder.layer.5.output.LayerNorm.bias", 384).unwrap().iter().all(|v| v.is_finite()));
    }
}
