//! A user's own ONNX file as a case (`harness run --onnx`): which file, its inputs (names, element
//! types, shapes with the `--dim`s given, and how each is filled) and its outputs. The page hands it
//! to onnxruntime-web; harness computes its reference natively with another engine. Inputs are made
//! here from the case's seed, so the page and the reference start from the same values without
//! sending them; inputs a user gave (`--inputs FILE.npz`) are served to the page as their bytes.

use crate::check::{CheckRule, Tolerance};
use crate::hf_pipeline::{Feeds, HfPipeline, Normalization};
use crate::info::CaseInfo;
pub use crate::feed::InputData;
use crate::prng::Prng;
use serde::{Deserialize, Serialize};

/// A user's ONNX model at one set of dims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnModel {
    /// The file's name, as in the case id (`model.onnx`).
    pub file: String,
    /// Where it is on the host (absolute): a replayed or resumed run serves it again.
    pub path: String,
    /// The key the harness server serves the file's bytes under.
    pub key: String,
    /// Its bytes, and a fingerprint of them: a changed file at the same path is another model.
    pub bytes: u64,
    /// FNV-1a of the file's bytes, in hex.
    pub fingerprint: String,
    /// Its external-data files (`model.onnx_data`): the location the model names, and the key the
    /// server serves it under.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub external: Vec<ExternalData>,
    /// The dims given, in the order the case id names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dims: Vec<(String, u64)>,
    /// The graph's inputs, in the graph's order.
    pub inputs: Vec<ModelInput>,
    /// The graph's outputs, in the graph's order.
    pub outputs: Vec<ModelOutput>,
    /// How the outputs are checked: each row of `row` values (the outputs' last dims' greatest
    /// common divisor) by cosine and per element in units of the row's RMS, as harness's models.
    pub check: CheckRule,
    /// Why nothing independent can check it, where that is known before it runs (an operator
    /// the reference engine lacks): it then reads `unchecked`, saying so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_reference: Option<String>,
    /// Where the file is a Hugging Face folder's (`--hf-model`): the pipeline transformers.js runs
    /// it in, whose output (not the file's) is what is checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<HfPipeline>,
}

/// One external-data file of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalData {
    /// The location the model's tensors name, relative to the model's folder.
    pub location: String,
    /// The key the harness server serves it under.
    pub key: String,
}

/// An ONNX tensor element type, named as onnxruntime-web names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Elem {
    /// `float`.
    Float32,
    /// `float16`.
    Float16,
    /// `int64`.
    Int64,
    /// `int32`.
    Int32,
    /// `int8`.
    Int8,
    /// `uint8`.
    Uint8,
    /// `bool`.
    Bool,
}

impl Elem {
    /// The element type of ONNX's `TensorProto.DataType` code, where onnxruntime-web takes it.
    pub fn of_onnx(code: i32) -> Option<Elem> {
        Some(match code {
            1 => Elem::Float32,
            2 => Elem::Uint8,
            3 => Elem::Int8,
            6 => Elem::Int32,
            7 => Elem::Int64,
            9 => Elem::Bool,
            10 => Elem::Float16,
            _ => return None,
        })
    }

    /// Its name, as onnxruntime-web's `Tensor` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Elem::Float32 => "float32",
            Elem::Float16 => "float16",
            Elem::Int64 => "int64",
            Elem::Int32 => "int32",
            Elem::Int8 => "int8",
            Elem::Uint8 => "uint8",
            Elem::Bool => "bool",
        }
    }

    /// Whether it holds floating-point values.
    pub fn is_float(self) -> bool {
        matches!(self, Elem::Float32 | Elem::Float16)
    }
}

/// How an input's values are made from the case's seed, or where they were given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Fill {
    /// Mean 0 and variance 1: the sum of twelve uniform values less six (Irwin–Hall), which
    /// needs no `ln` or `cos`, whose last bits differ between the browser's and the host's maths
    /// libraries: the page and the reference get the same bits.
    Normal,
    /// Integers uniform in `[lo, hi)`: token ids, say.
    Range {
        /// Least value.
        lo: i64,
        /// One past the greatest value.
        hi: i64,
    },
    /// All ones: attention masks.
    Ones,
    /// Given by the user (`--inputs`): the values as little-endian bytes of the input's element
    /// type (bool as one byte), in a file the harness serves under `key`.
    Given {
        /// The key the harness server serves the bytes under.
        key: String,
        /// The file on the host.
        path: String,
    },
    /// These integers, in order: what a tokenizer made of a pipeline's sentences (ids, mask,
    /// token types).
    Values {
        /// The values.
        values: Vec<i64>,
    },
    /// An image pipeline's `pixel_values` ([batch, 3, height, width]): the case's seeded images
    /// ([`crate::hf_pipeline::images`]) as the folder's image processor normalizes them.
    Pixels {
        /// The processor's rescaling and normalization.
        norm: Normalization,
    },
    /// A speech pipeline's `input_values` ([batch, samples]): the case's seeded clips
    /// ([`crate::hf_pipeline::audio`]) as the folder's feature extractor gives them.
    Audio {
        /// Whether each clip is brought to mean 0 and variance 1 (`do_normalize`).
        normalize: bool,
    },
}

/// One input of the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInput {
    /// Its name in the graph.
    pub name: String,
    /// Its element type.
    pub elem: Elem,
    /// Its shape, with the dims given.
    pub shape: Vec<u64>,
    /// How its values are made.
    pub fill: Fill,
}

/// One output of the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelOutput {
    /// Its name in the graph.
    pub name: String,
    /// Its element type.
    pub elem: Elem,
    /// Its values, where the shape is known before it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub len: Option<u64>,
}

/// The arithmetic a model's own tensors and operators put into it, which decides its check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// f32 throughout.
    F32,
    /// f16 tensors: each engine rounds each step its own legal way.
    F16,
    /// int8 arithmetic (quantize and integer-matmul operators).
    Int8,
}

impl Precision {
    /// Least cosine of a row, and the per-element bound in units of the row's RMS.
    ///
    /// - f32: harness's own models' bound.
    /// - f16: rounding moves outputs by about 1e-3 of their RMS a layer.
    /// - int8: a model quantized on the fly (`DynamicQuantizeLinear`) picks each activation's
    ///   scale from its minimum and maximum, so f32 sums added in another legal order move values
    ///   across a rounding step, and each such step moves a whole row of the next integer matmul,
    ///   layer after layer. On all-MiniLM-L6-v2 as torch exports it and `quantize_dynamic`
    ///   quantizes it (sequences of 128), onnxruntime-web's C++ WebGPU and CPU providers agree
    ///   with tract-onnx at least row cosines of 0.977 to 0.999 on an H200, in Chrome and Firefox,
    ///   where JSEP's rows are at −0.15 (wrong), and the int8 model itself is 0.83 from the f32
    ///   one: the rows' cosine, at 0.95, is the check; the element bound catches only what is no
    ///   longer the same output (a NaN, a blown-up row).
    pub fn check(self) -> (f64, Tolerance) {
        match self {
            Precision::F32 => (crate::model::MIN_COSINE, Tolerance { abs: 2e-4, rel: 0.0 }),
            Precision::F16 => (0.99, Tolerance { abs: 3e-2, rel: 0.0 }),
            Precision::Int8 => (0.95, Tolerance { abs: 2.0, rel: 0.0 }),
        }
    }
}

impl ModelInput {
    /// Its values for the case seeded `seed`; `index` is its place among the inputs, so inputs of
    /// one case differ.
    /// `given` holds the bytes of a [`Fill::Given`] input (what the page fetched or the host read);
    /// the others ignore it.
    pub fn data(&self, seed: u64, index: usize, given: Option<&[u8]>) -> Result<InputData, String> {
        let len = self.shape.iter().product::<u64>() as usize;
        let mut prng = Prng::new(seed, 0x0_4e4e_0000 + index as u64);
        Ok(match (&self.fill, self.elem) {
            (Fill::Given { path, .. }, elem) => {
                let bytes = given.ok_or_else(|| format!("input `{}`: its values ({path}) were not read", self.name))?;
                let values = elem.of_le_bytes(bytes);
                if values.len() != len {
                    return Err(format!("input `{}`: {} values given for its shape {:?} of {len}", self.name, values.len(), self.shape));
                }
                values
            }
            (Fill::Normal, elem) => elem.floats(normal(&mut prng, len)),
            (Fill::Values { values }, _) if values.len() != len => return Err(format!("input `{}`: {} values for its shape {:?} of {len}", self.name, values.len(), self.shape)),
            (Fill::Pixels { norm }, elem) => {
                let &[count, 3, height, width] = self.shape.as_slice() else {
                    return Err(format!("input `{}`: images are [batch, 3, height, width], not {:?}", self.name, self.shape));
                };
                let (height, width) = (height as usize, width as usize);
                elem.floats(crate::hf_pipeline::pixel_values(&crate::hf_pipeline::images(seed, count as usize, height, width), height, width, norm))
            }
            (&Fill::Audio { normalize }, elem) => {
                let &[count, samples] = self.shape.as_slice() else {
                    return Err(format!("input `{}`: audio is [batch, samples], not {:?}", self.name, self.shape));
                };
                let samples = samples as usize;
                elem.floats(crate::hf_pipeline::input_values(&crate::hf_pipeline::audio(seed, count as usize, samples), samples, normalize))
            }
            (fill, elem) => {
                let ints: Vec<i64> = match fill {
                    &Fill::Range { lo, hi } => {
                        let span = (hi - lo).max(1) as u64;
                        (0..len).map(|_| lo + (prng.next_u64() % span) as i64).collect()
                    }
                    Fill::Values { values } => values.clone(),
                    _ => vec![1; len],
                };
                match elem {
                    Elem::Float32 | Elem::Float16 => elem.floats(ints.iter().map(|&v| v as f32).collect()),
                    Elem::Int64 => InputData::I64(ints),
                    Elem::Int32 => InputData::I32(ints.iter().map(|&v| v as i32).collect()),
                    Elem::Int8 => InputData::I8(ints.iter().map(|&v| v as i8).collect()),
                    Elem::Uint8 | Elem::Bool => InputData::U8(ints.iter().map(|&v| v as u8).collect()),
                }
            }
        })
    }

    /// The file a [`Fill::Given`] input's bytes are in, and the key they are served under.
    pub fn given(&self) -> Option<(&str, &str)> {
        match &self.fill {
            Fill::Given { key, path } => Some((key, path)),
            _ => None,
        }
    }
}

impl Elem {
    /// `values` as an input of this float type: float16 (its bits) for `Float16`, else float32.
    pub fn floats(self, values: Vec<f32>) -> InputData {
        match self {
            Elem::Float16 => InputData::F16(values.into_iter().map(|v| half::f16::from_f32(v).to_bits()).collect()),
            _ => InputData::F32(values),
        }
    }

    /// Values of this type from their little-endian bytes (bool as one byte); a trailing partial
    /// value is dropped.
    pub fn of_le_bytes(self, bytes: &[u8]) -> InputData {
        use crate::feed::from_le as each;
        match self {
            Elem::Float32 => InputData::F32(each(bytes, f32::from_le_bytes)),
            Elem::Float16 => InputData::F16(each(bytes, u16::from_le_bytes)),
            Elem::Int64 => InputData::I64(each(bytes, i64::from_le_bytes)),
            Elem::Int32 => InputData::I32(each(bytes, i32::from_le_bytes)),
            Elem::Int8 => InputData::I8(bytes.iter().map(|&b| b as i8).collect()),
            Elem::Uint8 | Elem::Bool => InputData::U8(bytes.to_vec()),
        }
    }
}

/// `len` values of mean 0 and variance 1 (see [`Fill::Normal`]).
fn normal(prng: &mut Prng, len: usize) -> Vec<f32> {
    (0..len).map(|_| (0..12).map(|_| prng.uniform(0.0, 1.0)).sum::<f32>() - 6.0).collect()
}

impl OwnModel {
    /// The case id's shape part: the dims given (`batch_size=8,sequence_length=128`), or `static`.
    pub fn dims_label(&self) -> String {
        match self.dims.is_empty() {
            true => "static".into(),
            false => self.dims.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(","),
        }
    }

    /// The output holding element `index` of the outputs laid end to end, where their lengths are
    /// known; for a pipeline's, what the pipeline returns.
    pub fn output_at(&self, index: usize) -> Option<&str> {
        if let Some(p) = &self.pipeline {
            return ((index as u64) < self.batch() * p.width).then(|| p.task.output());
        }
        let mut end = 0u64;
        for o in &self.outputs {
            end += o.len?;
            if (index as u64) < end {
                return Some(&o.name);
            }
        }
        None
    }

    /// The first input's first dim: a pipeline's sentences or images a call.
    pub fn batch(&self) -> u64 {
        self.inputs.first().and_then(|i| i.shape.first()).copied().unwrap_or(1)
    }

    /// The files the page fetches for it, by key: the model, its external data, the inputs given
    /// and a pipeline's folder files.
    pub fn served(&self) -> Vec<(String, std::path::PathBuf)> {
        let path = std::path::PathBuf::from(&self.path);
        let folder = path.parent().map(std::path::Path::to_path_buf).unwrap_or_default();
        let given = self.inputs.iter().filter_map(ModelInput::given).map(|(key, path)| (key.to_string(), std::path::PathBuf::from(path)));
        let pipeline = self.pipeline.iter().flat_map(HfPipeline::served);
        std::iter::once((self.key.clone(), path)).chain(self.external.iter().map(|e| (e.key.clone(), folder.join(&e.location)))).chain(given).chain(pipeline).collect()
    }

    /// What a report says of it before it runs.
    pub fn info(&self) -> CaseInfo {
        let inputs: Vec<String> = self.inputs.iter().map(|i| format!("{} {}{:?}", i.name, i.elem.name(), i.shape)).collect();
        let summary = match &self.pipeline {
            Some(p) => {
                let on = match p.task.feeds() {
                    Feeds::Texts => format!("{} sentence(s) tokenized", p.texts.len()),
                    Feeds::Images => format!("{} seeded image(s) processed", self.batch()),
                    Feeds::Audio => format!("{} seeded audio clip(s) processed", self.batch()),
                };
                format!("transformers.js's pipeline('{}') on {} ({:.1} MB), {on} to {}", p.task.name(), self.file, self.bytes as f64 / 1e6, inputs.join(", "))
            }
            None => format!("your ONNX model {} ({:.1} MB) on inputs {}", self.file, self.bytes as f64 / 1e6, inputs.join(", ")),
        };
        CaseInfo {
            summary,
            dims: self.dims.iter().map(|(n, _)| n.clone()).collect(),
            flops: 0.0,
            bytes: self.bytes as f64,
            rate: None,
            dispatches: None,
        }
    }

    /// The check: cosine and RMS-scaled per-element bounds, by `precision`, over rows of the
    /// outputs' common row.
    pub fn check_rule(precision: Precision, rows: &[u64]) -> CheckRule {
        let row = rows.iter().copied().fold(0, gcd).max(1) as usize;
        let (min, tol) = precision.check();
        CheckRule::Cosine { row, min, tol }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(elem: Elem, fill: Fill) -> ModelInput {
        ModelInput { name: "x".into(), elem, shape: vec![4, 1000], fill }
    }

    #[test]
    fn normal_inputs_have_mean_zero_and_variance_one_and_repeat_by_seed() {
        let InputData::F32(v) = input(Elem::Float32, Fill::Normal).data(7, 0, None).unwrap() else { panic!() };
        let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|&x| (f64::from(x) - mean).powi(2)).sum::<f64>() / v.len() as f64;
        assert!(mean.abs() < 0.05 && (var - 1.0).abs() < 0.1, "mean {mean}, variance {var}");
        assert_eq!(input(Elem::Float32, Fill::Normal).data(7, 0, None).unwrap(), InputData::F32(v.clone()));
        assert_ne!(input(Elem::Float32, Fill::Normal).data(7, 1, None).unwrap(), InputData::F32(v));
    }

    #[test]
    fn ids_fall_in_their_range_and_masks_are_ones() {
        let InputData::I64(ids) = input(Elem::Int64, Fill::Range { lo: 0, hi: 30522 }).data(1, 0, None).unwrap() else { panic!() };
        assert!(ids.iter().all(|&i| (0..30522).contains(&i)) && ids.iter().any(|&i| i > 20000));
        assert_eq!(input(Elem::Int64, Fill::Ones).data(1, 1, None).unwrap(), InputData::I64(vec![1; 4000]));
        assert_eq!(input(Elem::Bool, Fill::Ones).data(1, 1, None).unwrap(), InputData::U8(vec![1; 4000]));
    }

    #[test]
    fn given_inputs_are_their_bytes_and_must_fill_the_shape() {
        let given = |elem| ModelInput { name: "x".into(), elem, shape: vec![2], fill: Fill::Given { key: "k".into(), path: "/x.bin".into() } };
        let bytes: Vec<u8> = [7i64, -3].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(given(Elem::Int64).data(1, 0, Some(&bytes)).unwrap(), InputData::I64(vec![7, -3]));
        assert!(given(Elem::Int32).data(1, 0, Some(&bytes)).unwrap_err().contains("4 values given for its shape [2]"));
        assert!(given(Elem::Int64).data(1, 0, None).is_err(), "the bytes must have been read");
    }

    #[test]
    fn a_tokenizers_values_are_fed_as_they_are_and_must_fill_the_shape() {
        let ids = |shape| ModelInput { name: "input_ids".into(), elem: Elem::Int64, shape, fill: Fill::Values { values: vec![2, 293, 3, 0] } };
        assert_eq!(ids(vec![1, 4]).data(1, 0, None).unwrap(), InputData::I64(vec![2, 293, 3, 0]));
        assert!(ids(vec![2, 4]).data(1, 0, None).unwrap_err().contains("4 values for its shape [2, 4] of 8"));
    }

    #[test]
    fn pixels_are_the_seeded_images_normalized_in_planes() {
        let norm = Normalization { rescale: 1.0 / 255.0, mean: [0.5; 3], std: [0.5; 3] };
        let pixels = ModelInput { name: "pixel_values".into(), elem: Elem::Float32, shape: vec![2, 3, 4, 5], fill: Fill::Pixels { norm: norm.clone() } };
        let InputData::F32(values) = pixels.data(9, 0, None).unwrap() else { panic!("f32") };
        let bytes = crate::hf_pipeline::images(9, 2, 4, 5);
        assert_eq!(values, crate::hf_pipeline::pixel_values(&bytes, 4, 5, &norm));
        // The second image's green plane starts at its first pixel's green byte.
        assert_eq!(values[(3 + 1) * 20], (f64::from(bytes[4 * 5 * 3 + 1]) / 255.0 - 0.5) as f32 / 0.5);
        assert!(values.iter().all(|v| (-1.0..=1.0).contains(v)));
        let flat = ModelInput { shape: vec![2, 60], ..pixels };
        assert!(flat.data(9, 0, None).unwrap_err().contains("[batch, 3, height, width]"));
    }

    #[test]
    fn the_check_row_divides_every_output_and_an_element_is_named_by_its_output() {
        let (min, tol) = Precision::F32.check();
        assert_eq!(OwnModel::check_rule(Precision::F32, &[384, 384 * 8]), CheckRule::Cosine { row: 384, min, tol });
        assert!(matches!(OwnModel::check_rule(Precision::Int8, &[6, 4]), CheckRule::Cosine { row: 2, .. }));
        let out = |name: &str, len| ModelOutput { name: name.into(), elem: Elem::Float32, len };
        let mut m = OwnModel {
            file: "m.onnx".into(),
            path: "/m.onnx".into(),
            key: "onnx:0".into(),
            bytes: 1,
            fingerprint: "0".into(),
            external: vec![],
            dims: vec![("batch".into(), 2)],
            inputs: vec![],
            outputs: vec![out("a", Some(4)), out("b", Some(2))],
            check: OwnModel::check_rule(Precision::F32, &[2]),
            no_reference: None,
            pipeline: None,
        };
        assert_eq!((m.output_at(3), m.output_at(4), m.output_at(6)), (Some("a"), Some("b"), None));
        assert_eq!(m.dims_label(), "batch=2");
        m.outputs[0].len = None;
        assert_eq!(m.output_at(0), None);
        // A pipeline's output is what the pipeline returns: a row of `width` a sentence (or
        // image) of its batch.
        m.inputs = vec![ModelInput { name: "input_ids".into(), elem: Elem::Int64, shape: vec![2, 4], fill: Fill::Ones }];
        let task = crate::hf_pipeline::Task::FeatureExtraction;
        m.pipeline = Some(HfPipeline { task, folder: "/m".into(), files: vec![], texts: vec!["a".into(), "b".into()], output: "a".into(), width: 3 });
        assert_eq!((m.output_at(5), m.output_at(6)), (Some("embeddings"), None));
    }
}
