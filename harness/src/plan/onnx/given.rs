//! `--inputs FILE`: real inputs for the `--onnx` models instead of seeded ones, read from a NumPy
//! `.npz` (`numpy.savez`) or a safetensors file, each array named after the model input it feeds.
//! An array's shape fixes the input's dynamic dims; its values are converted to the input's
//! element type and written, as little-endian bytes, into a cache folder the harness serves them
//! from, so the page and the reference read the same bytes.

use super::read::{Dim, Input};
use super::OnnxError;
use kernels::own_model::{Elem, InputData};
use std::path::{Path, PathBuf};

/// One array of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// Its name: the input it feeds.
    pub name: String,
    /// Its shape.
    pub shape: Vec<u64>,
    /// Its values.
    pub values: Values,
}

/// An array's values, by kind: converted to the input's own type when it is fed.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// Floating point (f16, bf16, f32, f64).
    Float(Vec<f32>),
    /// Integers.
    Int(Vec<i64>),
    /// Booleans.
    Bool(Vec<bool>),
}

/// The given inputs: the file and its arrays.
#[derive(Debug, Clone)]
pub struct Given {
    /// The file, as the user named it.
    pub path: PathBuf,
    /// Its fingerprint: the cached bytes are named by it.
    pub fingerprint: String,
    /// Its arrays.
    pub arrays: Vec<Array>,
}

fn error(path: &Path, why: impl std::fmt::Display) -> OnnxError {
    OnnxError::Given(format!("--inputs {}: {why}", path.display()))
}

impl Given {
    /// Reads `path`: `.npz` or `.safetensors`, by its name.
    pub fn read(path: &Path) -> Result<Given, OnnxError> {
        let fingerprint = super::read::fingerprint(path).map_err(|e| error(path, format!("cannot be read: {e}")))?;
        let mut arrays = match path.extension().and_then(|e| e.to_str()) {
            Some("npz") => read_npz(path)?,
            Some("safetensors") => read_safetensors(path)?,
            _ => return Err(error(path, "not a .npz (numpy.savez) or .safetensors file; name each array after the model input it feeds")),
        };
        if arrays.is_empty() {
            return Err(error(path, "it holds no arrays"));
        }
        // In name order: neither a .npz's zip directory nor a safetensors header is read back in
        // one order every time, and messages naming an array must not change from run to run.
        arrays.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Given { path: path.to_path_buf(), fingerprint, arrays })
    }

    /// The array named `name`.
    pub fn array(&self, name: &str) -> Option<&Array> {
        self.arrays.iter().find(|a| a.name == name)
    }

    /// The dynamic dims `input`'s array fixes (`(name, value)`), or why it does not fit the input.
    pub fn dims_of(&self, input: &Input, model: &str) -> Result<Vec<(String, u64)>, OnnxError> {
        let Some(array) = self.array(&input.name) else { return Ok(Vec::new()) };
        let wrong = || error(&self.path, format!("array `{}` is {:?}; input `{}` of {model} is {}", array.name, array.shape, input.name, show(&input.dims)));
        if array.shape.len() != input.dims.len() {
            return Err(wrong());
        }
        let mut dims = Vec::new();
        for (d, &size) in input.dims.iter().zip(&array.shape) {
            match d {
                Dim::Fixed(v) if *v != size => return Err(wrong()),
                Dim::Fixed(_) => {}
                Dim::Named(n) => dims.push((n.clone(), size)),
            }
        }
        Ok(dims)
    }

    /// `input`'s values as its element type `elem`, written into `dir` as little-endian bytes:
    /// the file's path.
    pub fn write(&self, input: &str, elem: Elem, dir: &Path) -> Result<PathBuf, OnnxError> {
        let array = self.array(input).expect("only inputs the file has are written");
        let data = convert(array, elem).map_err(|why| error(&self.path, why))?;
        let name: String = input.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        let path = dir.join(format!("{}-{name}-{}.bin", self.fingerprint, elem.name()));
        std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, data.to_le_bytes())).map_err(|e| error(&self.path, format!("writing {}: {e}", path.display())))?;
        Ok(path)
    }
}

/// Where given inputs' bytes are kept: `HARNESS_INPUT_CACHE`, else the user's cache folder
/// (`~/.cache/harness/inputs`), else the system's temporary folder.
pub fn cache_dir() -> PathBuf {
    crate::plan::cache_dir("HARNESS_INPUT_CACHE", "inputs").unwrap_or_else(|| std::env::temp_dir().join("harness-inputs"))
}

fn show(dims: &[Dim]) -> String {
    let each: Vec<String> = dims.iter().map(|d| match d {
        Dim::Fixed(v) => v.to_string(),
        Dim::Named(n) => n.clone(),
    })
    .collect();
    format!("[{}]", each.join(", "))
}

/// `array`'s values as `elem`: floats for a float input, integers (in range) for an integer one,
/// booleans for a bool one.
fn convert(array: &Array, elem: Elem) -> Result<InputData, String> {
    let kind = match &array.values {
        Values::Float(_) => "floating-point",
        Values::Int(_) => "integer",
        Values::Bool(_) => "boolean",
    };
    let mismatch = || format!("array `{}` is {kind}; the model's input is {}: save it as that type", array.name, elem.name());
    let ints = |v: &[i64], lo: i64, hi: i64| match v.iter().find(|&&x| x < lo || x > hi) {
        Some(x) => Err(format!("array `{}` holds {x}, outside {}'s range", array.name, elem.name())),
        None => Ok(()),
    };
    Ok(match (&array.values, elem) {
        (Values::Float(v), Elem::Float32 | Elem::Float16) => elem.floats(v.clone()),
        (Values::Int(v), Elem::Int64) => InputData::I64(v.clone()),
        (Values::Int(v), Elem::Int32) => {
            ints(v, i32::MIN.into(), i32::MAX.into())?;
            InputData::I32(v.iter().map(|&x| x as i32).collect())
        }
        (Values::Int(v), Elem::Int8) => {
            ints(v, i8::MIN.into(), i8::MAX.into())?;
            InputData::I8(v.iter().map(|&x| x as i8).collect())
        }
        (Values::Int(v), Elem::Uint8) => {
            ints(v, 0, u8::MAX.into())?;
            InputData::U8(v.iter().map(|&x| x as u8).collect())
        }
        (Values::Bool(v), Elem::Bool | Elem::Uint8) => InputData::U8(v.iter().map(|&b| u8::from(b)).collect()),
        _ => return Err(mismatch()),
    })
}

/// The arrays of a `numpy.savez` file.
fn read_npz(path: &Path) -> Result<Vec<Array>, OnnxError> {
    use npyz::{DType, TypeChar};
    let mut archive = npyz::npz::NpzArchive::open(path).map_err(|e| error(path, format!("not a NumPy .npz archive ({e})")))?;
    let names: Vec<String> = archive.array_names().map(String::from).collect();
    let mut arrays = Vec::new();
    for name in names {
        let npy = archive.by_name(&name).map_err(|e| error(path, format!("array `{name}`: {e}")))?.ok_or_else(|| error(path, format!("array `{name}` is missing")))?;
        let shape = npy.shape().to_vec();
        let DType::Plain(ts) = npy.dtype() else { return Err(error(path, format!("array `{name}` is a structured array; save plain numbers"))) };
        let read = |e: std::io::Error| error(path, format!("array `{name}`: {e}"));
        let values = match (ts.type_char(), ts.size_field()) {
            (TypeChar::Float, 2) => Values::Float(npy.into_vec::<half::f16>().map_err(read)?.into_iter().map(f32::from).collect()),
            (TypeChar::Float, 4) => Values::Float(npy.into_vec::<f32>().map_err(read)?),
            (TypeChar::Float, 8) => Values::Float(npy.into_vec::<f64>().map_err(read)?.into_iter().map(|x| x as f32).collect()),
            (TypeChar::Int, 1) => Values::Int(npy.into_vec::<i8>().map_err(read)?.into_iter().map(i64::from).collect()),
            (TypeChar::Int, 2) => Values::Int(npy.into_vec::<i16>().map_err(read)?.into_iter().map(i64::from).collect()),
            (TypeChar::Int, 4) => Values::Int(npy.into_vec::<i32>().map_err(read)?.into_iter().map(i64::from).collect()),
            (TypeChar::Int, 8) => Values::Int(npy.into_vec::<i64>().map_err(read)?),
            (TypeChar::Uint, 1) => Values::Int(npy.into_vec::<u8>().map_err(read)?.into_iter().map(i64::from).collect()),
            (TypeChar::Uint, 2) => Values::Int(npy.into_vec::<u16>().map_err(read)?.into_iter().map(i64::from).collect()),
            (TypeChar::Uint, 4) => Values::Int(npy.into_vec::<u32>().map_err(read)?.into_iter().map(i64::from).collect()),
            (TypeChar::Bool, 1) => Values::Bool(npy.into_vec::<bool>().map_err(read)?),
            _ => return Err(error(path, format!("array `{name}` is of NumPy type {}, which no ONNX input harness feeds takes", ts))),
        };
        arrays.push(Array { name, shape, values });
    }
    Ok(arrays)
}

/// The tensors of a safetensors file.
fn read_safetensors(path: &Path) -> Result<Vec<Array>, OnnxError> {
    use kernels::feed::from_le as each;
    use safetensors::Dtype;
    let bytes = std::fs::read(path).map_err(|e| error(path, e))?;
    let file = safetensors::SafeTensors::deserialize(&bytes).map_err(|e| error(path, format!("not a safetensors file ({e})")))?;
    let mut arrays = Vec::new();
    for (name, view) in file.tensors() {
        let data = view.data();
        let values = match view.dtype() {
            Dtype::F16 => Values::Float(each(data, |b| half::f16::from_le_bytes(b).to_f32())),
            Dtype::BF16 => Values::Float(each(data, |b| half::bf16::from_le_bytes(b).to_f32())),
            Dtype::F32 => Values::Float(each(data, f32::from_le_bytes)),
            Dtype::F64 => Values::Float(each(data, |b| f64::from_le_bytes(b) as f32)),
            Dtype::I8 => Values::Int(data.iter().map(|&b| i64::from(b as i8)).collect()),
            Dtype::I16 => Values::Int(each(data, |b| i64::from(i16::from_le_bytes(b)))),
            Dtype::I32 => Values::Int(each(data, |b| i64::from(i32::from_le_bytes(b)))),
            Dtype::I64 => Values::Int(each(data, i64::from_le_bytes)),
            Dtype::U8 => Values::Int(data.iter().map(|&b| i64::from(b)).collect()),
            Dtype::BOOL => Values::Bool(data.iter().map(|&b| b != 0).collect()),
            other => return Err(error(path, format!("tensor `{name}` is {other:?}, which no ONNX input harness feeds takes"))),
        };
        arrays.push(Array { name, shape: view.shape().iter().map(|&d| d as u64).collect(), values });
    }
    arrays.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(arrays)
}
