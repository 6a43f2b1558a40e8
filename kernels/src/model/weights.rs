//! Model weights from a file: safetensors (Hugging Face's, read by the format's own crate) or
//! GGUF (llama.cpp's, [`super::gguf`]); natively from disk and, in the page, from the bytes the
//! harness serves. The format is told by the file's first bytes.

use super::gguf::{Gguf, TensorType};
use super::ModelError;
use safetensors::tensor::Metadata;
use safetensors::{Dtype, SafeTensors};

/// A parsed weights file: its bytes and the table of tensors in them.
#[derive(Debug, Clone)]
pub struct Weights {
    bytes: Vec<u8>,
    table: Table,
}

#[derive(Debug, Clone)]
enum Table {
    Safetensors { data_start: usize, table: Box<Metadata> },
    Gguf(Box<Gguf>),
}

impl Weights {
    /// Parses a whole safetensors or GGUF file, checking that every tensor's bytes lie inside it.
    pub fn parse(bytes: Vec<u8>) -> Result<Weights, ModelError> {
        if bytes.starts_with(super::gguf::MAGIC) {
            let gguf = Gguf::parse(&bytes).map_err(|e| ModelError::BadWeights { format: "GGUF", problem: e.to_string() })?;
            return Ok(Weights { table: Table::Gguf(Box::new(gguf)), bytes });
        }
        let (header_len, table) =
            SafeTensors::read_metadata(&bytes).map_err(|e| ModelError::BadWeights { format: "safetensors", problem: e.to_string() })?;
        Ok(Weights { table: Table::Safetensors { data_start: size_of::<u64>() + header_len, table: Box::new(table) }, bytes })
    }

    /// The GGUF header, where the file is GGUF: its metadata says the model's shape.
    pub fn gguf(&self) -> Option<&Gguf> {
        match &self.table {
            Table::Gguf(g) => Some(g),
            Table::Safetensors { .. } => None,
        }
    }

    /// Tensor `name` as f32 values (dequantized from the file's type), checked to have `len` of
    /// them in rows of `row` (the innermost dimension, unless `row` is `len`).
    ///
    /// A llama's Q and K projections come out in Hugging Face's row order. llama.cpp's converter
    /// interleaves each head's rows (`permute` in convert_hf_to_gguf.py) so that its RoPE may
    /// rotate neighbouring pairs; the decoder here rotates halves, as the Hugging Face model does.
    pub fn f32s(&self, name: &str, len: usize, row: usize) -> Result<Vec<f32>, ModelError> {
        let bad = |problem: String| ModelError::BadTensor { name: name.to_string(), problem };
        match &self.table {
            Table::Safetensors { data_start, table } => {
                let info = table.info(name).ok_or_else(|| ModelError::MissingTensor(name.to_string()))?;
                if info.dtype != Dtype::F32 {
                    return Err(bad(format!("dtype {} (only F32 is supported)", info.dtype)));
                }
                let inner = info.shape.last().copied().unwrap_or(1);
                if info.shape.iter().product::<usize>() != len || (row != len && inner != row) {
                    return Err(bad(format!("shape {:?}, expected {len} values in rows of {row}", info.shape)));
                }
                let (start, end) = info.data_offsets;
                Ok(crate::wire::le_bytes_to_f32s(&self.bytes[data_start + start..data_start + end]))
            }
            Table::Gguf(g) => {
                let t = self.gguf_tensor(g, name, len, row)?;
                let values = g.f32s(&self.bytes, t).ok_or_else(|| bad(format!("type {} cannot be read", t.ty.name())))?;
                Ok(match llama_heads(g, name) {
                    Some(heads) => unpermute(&values, heads, row),
                    None => values,
                })
            }
        }
    }

    /// Checks that tensor `name` is there with the shape [`f32s`](Weights::f32s) expects,
    /// without reading it.
    pub fn check(&self, name: &str, len: usize, row: usize) -> Result<(), ModelError> {
        match &self.table {
            Table::Gguf(g) => self.gguf_tensor(g, name, len, row).map(|_| ()),
            Table::Safetensors { .. } => self.f32s(name, len, row).map(|_| ()),
        }
    }

    /// GGUF's entry for `name`, refused unless it has `len` elements in rows of `row` and a type
    /// harness reads.
    fn gguf_tensor<'g>(&self, g: &'g Gguf, name: &str, len: usize, row: usize) -> Result<&'g super::gguf::TensorInfo, ModelError> {
        let bad = |problem: String| ModelError::BadTensor { name: name.to_string(), problem };
        let t = g.tensor(name).ok_or_else(|| ModelError::MissingTensor(name.to_string()))?;
        let rows = len / row.max(1);
        let expected = if row == len { vec![len as u64] } else { vec![row as u64, rows as u64] };
        if t.len() != len as u64 || (row != len && t.row() != row as u64) {
            return Err(bad(format!("shape {:?} in the file (GGUF order, row length first); the model needs {expected:?}", t.dims)));
        }
        if let TensorType::Other(_) = t.ty {
            return Err(bad(format!(
                "type {}; harness reads F32, F16, BF16, Q8_0 and Q4_0 (convert with `llama-quantize --allow-requantize IN OUT Q8_0`)",
                t.ty.name()
            )));
        }
        Ok(t)
    }
}

/// The heads of `name` where it is a llama's Q or K projection, whose rows GGUF interleaves.
fn llama_heads(g: &Gguf, name: &str) -> Option<usize> {
    if g.str("general.architecture") != Some("llama") {
        return None;
    }
    let heads = g.uint("llama.attention.head_count")?;
    let key = if name.ends_with(".attn_q.weight") {
        heads
    } else if name.ends_with(".attn_k.weight") {
        g.uint("llama.attention.head_count_kv").unwrap_or(heads)
    } else {
        return None;
    };
    usize::try_from(key).ok()
}

/// Undoes [`permute`].
fn unpermute(values: &[f32], heads: usize, k: usize) -> Vec<f32> {
    reorder(values, heads, k, false)
}

/// convert_hf_to_gguf.py's `permute` of a `[heads · hd, k]` projection in Hugging Face's row
/// order: row `j · hd/2 + i` of a head becomes GGUF's row `2i + j`.
pub(crate) fn permute(values: &[f32], heads: usize, k: usize) -> Vec<f32> {
    reorder(values, heads, k, true)
}

fn reorder(values: &[f32], heads: usize, k: usize, to_gguf: bool) -> Vec<f32> {
    let rows = values.len() / k.max(1);
    let hd = rows / heads.max(1);
    if heads == 0 || hd % 2 != 0 || rows % heads != 0 {
        return values.to_vec();
    }
    let mut out = vec![0.0; values.len()];
    for r in 0..rows {
        let (h, within) = (r / hd, r % hd);
        let (i, j) = (within / 2, within % 2);
        let (gguf, hf) = (r, h * hd + j * (hd / 2) + i);
        let (from, to) = if to_gguf { (hf, gguf) } else { (gguf, hf) };
        out[to * k..(to + 1) * k].copy_from_slice(&values[from * k..(from + 1) * k]);
    }
    out
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
        assert_eq!(w.f32s("a", 4, 2).unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(w.f32s("b", 4, 4), Err(ModelError::MissingTensor("b".into())));
        assert!(w.f32s("a", 3, 3).unwrap_err().to_string().contains("expected 3"));
        assert!(w.f32s("a", 4, 1).unwrap_err().to_string().contains("in rows of 1"), "the innermost dimension is the row");
        assert!(w.f32s("h", 2, 2).unwrap_err().to_string().contains("dtype F16 (only F32 is supported)"));
        assert!(Weights::parse(vec![1, 2, 3]).is_err());
        assert!(Weights::parse(b"\x10\0\0\0\0\0\0\0{not json}".to_vec()).is_err());
        let mut short = safetensors(&[("a", Dtype::F32, vec![2, 2], values)]);
        short.pop();
        let err = Weights::parse(short).unwrap_err().to_string();
        assert!(err.starts_with("not a safetensors file: "), "{err}");
    }

    /// A tiny llama GGUF: `attn_q` (2 heads of 4 rows of 2) interleaved as llama.cpp's converter
    /// writes it, a transposed `ffn_down`, and a k-quant.
    fn llama_gguf() -> Vec<u8> {
        use crate::model::gguf::{write, TensorType, Value};
        let hf: Vec<f32> = (0..16).map(|i| i as f32).collect();
        // convert_hf_to_gguf.py's permute: reshape(heads, 2, hd/2, k).swapaxes(1, 2).
        let mut gguf_order = Vec::new();
        for h in 0..2 {
            for i in 0..2 {
                for j in 0..2 {
                    let r = h * 4 + j * 2 + i;
                    gguf_order.extend_from_slice(&hf[r * 2..r * 2 + 2]);
                }
            }
        }
        let meta = [
            ("general.architecture", Value::String("llama".into())),
            ("llama.attention.head_count", Value::Uint(2)),
            ("llama.attention.head_count_kv", Value::Uint(2)),
        ];
        write(&meta, &[
            ("blk.0.attn_q.weight", vec![2, 8], TensorType::F32, crate::wire::f32s_to_le_bytes(&gguf_order)),
            ("blk.0.attn_v.weight", vec![2, 8], TensorType::F32, crate::wire::f32s_to_le_bytes(&gguf_order)),
            ("blk.0.ffn_down.weight", vec![8, 2], TensorType::F32, crate::wire::f32s_to_le_bytes(&hf)),
            ("blk.0.ffn_up.weight", vec![256], TensorType::Other(12), vec![0; 144]),
        ])
    }

    #[test]
    fn gguf_tensors_read_in_hugging_face_s_order_and_misfits_are_named() {
        let w = Weights::parse(llama_gguf()).unwrap();
        let hf: Vec<f32> = (0..16).map(|i| i as f32).collect();
        assert_eq!(w.f32s("blk.0.attn_q.weight", 16, 2).unwrap(), hf, "Q's rows un-interleaved");
        assert_ne!(w.f32s("blk.0.attn_v.weight", 16, 2).unwrap(), hf, "V is stored as it is");
        assert_eq!(w.f32s("blk.0.ffn_down.weight", 16, 8).unwrap(), hf);
        let err = w.check("blk.0.ffn_down.weight", 16, 2).unwrap_err().to_string();
        assert!(err.contains("`blk.0.ffn_down.weight`") && err.contains("[8, 2]") && err.contains("[2, 8]"), "{err}");
        let err = w.check("blk.0.ffn_up.weight", 256, 256).unwrap_err().to_string();
        assert!(err.contains("Q4_K") && err.contains("llama-quantize"), "{err}");
        assert_eq!(w.check("blk.1.attn_q.weight", 16, 2), Err(ModelError::MissingTensor("blk.1.attn_q.weight".into())));
        let mut cut = llama_gguf();
        cut.truncate(cut.len() - 200);
        let err = Weights::parse(cut).unwrap_err().to_string();
        assert!(err.starts_with("not a GGUF file") && err.contains("ends early"), "{err}");
    }

    #[test]
    fn reads_the_minilm_checkpoint() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/all-MiniLM-L6-v2/model.safetensors");
        let w = Weights::parse(std::fs::read(path).expect("ci/setup.sh provides the MiniLM weights")).unwrap();
        assert_eq!(w.f32s("embeddings.word_embeddings.weight", 30522 * 384, 30522 * 384).unwrap().len(), 30522 * 384);
        assert!(w.f32s("encoder.layer.5.output.LayerNorm.bias", 384, 384).unwrap().iter().all(|v| v.is_finite()));
    }
}
