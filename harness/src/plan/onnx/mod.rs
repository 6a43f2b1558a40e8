//! Your own ONNX model (`harness run --onnx FILE.onnx`): each file read before any browser
//! starts ([`read`]), its inputs made from the graph at every combination of the `--dim`s given,
//! and its reference computed natively by tract-onnx ([`reference`]), an engine that shares no
//! kernels with onnxruntime-web.

pub mod given;
pub mod read;
pub mod reference;

use kernels::own_model::{Elem, ExternalData, Fill, ModelInput, ModelOutput, OwnModel};
use kernels::{CaseSpec, Shape, Workload};
use given::Given;
use read::{Dim, OnnxFile};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What is wrong with an `--onnx` file or the options that go with it. Each is found before any
/// browser starts.
#[derive(Debug, thiserror::Error)]
pub enum OnnxError {
    /// The file cannot be read.
    #[error("--onnx {0}: {1}")]
    Read(String, String),
    /// It is not an ONNX model.
    #[error("--onnx {0}: not an ONNX model ({1}); pass a ModelProto file, as torch.onnx.export or optimum-cli export onnx write them")]
    NotOnnx(String, String),
    /// Its IR version is newer than onnxruntime-web reads.
    #[error("--onnx {model}: ONNX IR version {version}, newer than onnxruntime-web {} reads ({max} at most); save it at an older IR version (in Python: `model.ir_version = 10` before `onnx.save`, the version torch.onnx.export writes)", kernels::model::onnx::ORT_WEB_VERSION)]
    IrVersion {
        /// The model.
        model: String,
        /// Its IR version.
        version: i64,
        /// The newest onnxruntime-web reads.
        max: i64,
    },
    /// An external-data file it names is not beside it.
    #[error("--onnx {model}: its weights are in {file}, which is not there; keep the external-data file beside the model, under the name the model gives it")]
    MissingExternal {
        /// The model.
        model: String,
        /// The missing file.
        file: String,
    },
    /// The model is larger than the page can hold.
    #[error("--onnx {model}: {:.2} GB with its external data, over the {:.2} GB a page holds (onnxruntime-web's WASM heap is 4 GiB, the weights and activations together, and protobuf reads 2 GiB at most)", *bytes as f64 / 1e9, *limit as f64 / 1e9)]
    TooLarge {
        /// The model.
        model: String,
        /// Its size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// `--dim` or `--input` is not `NAME=VALUE`.
    #[error("{0}")]
    Syntax(String),
    /// A `--dim` names a dim no model has.
    #[error("--dim {name}: no input of {models} has a dim called `{name}`; its dynamic dims are: {known}")]
    UnknownDim {
        /// The name given.
        name: String,
        /// The models.
        models: String,
        /// The dims they have.
        known: String,
    },
    /// A model's input has a dynamic dim no `--dim` gives.
    #[error("--onnx {model}: input `{input}` has the dynamic dim `{dim}`; give it with --dim {dim}=VALUE (several values, comma-separated, make a sweep)")]
    MissingDim {
        /// The model.
        model: String,
        /// The input.
        input: String,
        /// The dim.
        dim: String,
    },
    /// An `--input` names no input of any model.
    #[error("--input {name}: no model has an input called `{name}`; their inputs are: {known}")]
    UnknownInput {
        /// The name given.
        name: String,
        /// The inputs there are.
        known: String,
    },
    /// `--inputs` cannot be read or does not fit the models.
    #[error("{0}")]
    Given(String),
    /// An input's element type is one onnxruntime-web cannot be fed.
    #[error("--onnx {model}: input `{input}` is of ONNX type {code}, which harness cannot feed onnxruntime-web (it feeds float, float16, int64, int32, int8, uint8 and bool)")]
    InputType {
        /// The model.
        model: String,
        /// The input.
        input: String,
        /// Its `TensorProto.DataType`.
        code: i32,
    },
}

/// The options of `--onnx` runs, as given.
#[derive(Debug, Clone, Default)]
pub struct OnnxOptions<'a> {
    /// The files.
    pub files: &'a [PathBuf],
    /// `--dim NAME=V[,V…]`.
    pub dims: &'a [String],
    /// `--input NAME=LO..HI`.
    pub inputs: &'a [String],
    /// `--inputs FILE`: real inputs, by name.
    pub given: Option<&'a Path>,
    /// Where the given inputs' bytes are written for the page and the reference: the user's cache
    /// ([`given::cache_dir`]) where `None`.
    pub given_dir: Option<&'a Path>,
}

/// The cases of every `--onnx` file at every combination of its dims, and the files the page
/// fetches by key.
pub fn cases(options: &OnnxOptions, seed: u64) -> Result<(Vec<CaseSpec>, HashMap<String, PathBuf>), OnnxError> {
    let files = options.files.iter().map(|p| OnnxFile::read(p)).collect::<Result<Vec<_>, _>>()?;
    let dims = parse_pairs(options.dims, "--dim", "NAME=VALUE[,VALUE…] (--dim batch_size=1,8)", |v| v.split(',').map(|n| n.trim().parse::<u64>().ok().filter(|&n| n > 0)).collect::<Option<Vec<u64>>>())?;
    let ranges = parse_pairs(options.inputs, "--input", "NAME=LO..HI (--input input_ids=0..30522)", |v| {
        let (lo, hi) = v.split_once("..")?;
        let (lo, hi) = (lo.trim().parse::<i64>().ok()?, hi.trim().parse::<i64>().ok()?);
        (hi > lo).then_some((lo, hi))
    })?;
    let models = || files.iter().map(|f| f.path.display().to_string()).collect::<Vec<_>>().join(", ");
    for (name, _) in &dims {
        if !files.iter().any(|f| f.named_dims().contains(name)) {
            let known: Vec<String> = files.iter().flat_map(|f| f.named_dims()).collect();
            return Err(OnnxError::UnknownDim { name: name.clone(), models: models(), known: or_none(&known) });
        }
    }
    for (name, _) in &ranges {
        if !files.iter().any(|f| f.inputs.iter().any(|i| &i.name == name)) {
            let known: Vec<String> = files.iter().flat_map(|f| f.inputs.iter().map(|i| i.name.clone())).collect();
            return Err(OnnxError::UnknownInput { name: name.clone(), known: or_none(&known) });
        }
    }
    let given = options.given.map(Given::read).transpose()?;
    if let Some(given) = &given {
        check_given(given, &files, &ranges)?;
    }
    let mut cases = Vec::new();
    let mut served = HashMap::new();
    let paths: Vec<&Path> = files.iter().map(|f| f.path.as_path()).collect();
    for (n, file) in files.iter().enumerate() {
        let key = format!("onnx{n}");
        let dims = match &given {
            Some(given) => with_given_dims(given, file, &dims)?,
            None => dims.clone(),
        };
        // The given inputs' bytes, written once for every combination of the other dims.
        let mut written: HashMap<String, Fill> = HashMap::new();
        if let Some(g) = &given {
            let dir = options.given_dir.map_or_else(given::cache_dir, Path::to_path_buf);
            for i in file.inputs.iter().filter(|i| g.array(&i.name).is_some()) {
                // An element type harness cannot feed is refused by own_model, naming the input.
                let Some(elem) = Elem::of_onnx(i.elem) else { continue };
                let path = g.write(&i.name, elem, &dir)?.display().to_string();
                written.insert(i.name.clone(), Fill::Given { key: format!("{key}.input.{}", i.name), path });
            }
        }
        for combination in combinations(&file.named_dims(), &dims, file)? {
            let model = own_model::<OnnxError>(file, &key, combination, |i, elem| Ok(written.get(&i.name).cloned().unwrap_or_else(|| fill(i, elem, &ranges))))?;
            served.extend(model.served());
            let name = case_name(&paths, n);
            let mut spec = CaseSpec::of_workload(&name, Shape(model.inputs.first().map(|i| i.shape.iter().map(|&d| d as u32).collect()).unwrap_or_default()), seed, Workload::Onnx(model.clone()));
            spec.id = format!("{name}/{}", model.dims_label());
            cases.push(spec);
        }
    }
    Ok((cases, served))
}

/// The name the `n`th of `paths` (files or folders) goes by in case ids: its last component, or,
/// where another of the run has the same one (`vit/model.onnx` beside `whisper/model.onnx`, as
/// exporters name them; two `--hf-model` folders called `model`), with its parent folder, or else
/// its whole path: case ids must be unique.
pub fn case_name(paths: &[&Path], n: usize) -> String {
    let tail = |p: &Path, parts: usize| {
        let parts: Vec<String> = p.components().rev().take(parts).map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        parts.into_iter().rev().collect::<Vec<_>>().join("/")
    };
    for parts in 1..=2 {
        let name = tail(paths[n], parts);
        if paths.iter().enumerate().all(|(m, p)| m == n || tail(p, parts) != name) {
            return name;
        }
    }
    paths[n].display().to_string()
}

/// `names`' values, every combination, in the order `--dim` gave each name's values.
fn combinations(names: &[String], dims: &[(String, Vec<u64>)], file: &OnnxFile) -> Result<Vec<Vec<(String, u64)>>, OnnxError> {
    let mut out: Vec<Vec<(String, u64)>> = vec![Vec::new()];
    for name in names {
        let Some((_, values)) = dims.iter().find(|(n, _)| n == name) else {
            let input = file.inputs.iter().find(|i| i.dims.contains(&Dim::Named(name.clone()))).map_or_else(String::new, |i| i.name.clone());
            return Err(OnnxError::MissingDim { model: file.path.display().to_string(), input, dim: name.clone() });
        };
        out = out.into_iter().flat_map(|c| values.iter().map(move |&v| [c.clone(), vec![(name.clone(), v)]].concat())).collect();
    }
    Ok(out)
}

/// Every array of `given` feeds an input of some model, and none is also given a range.
fn check_given(given: &Given, files: &[OnnxFile], ranges: &[(String, (i64, i64))]) -> Result<(), OnnxError> {
    let known: Vec<String> = files.iter().flat_map(|f| f.inputs.iter().map(|i| i.name.clone())).collect();
    let unknown: Vec<String> = given.arrays.iter().filter(|a| !known.contains(&a.name)).map(|a| format!("`{}`", a.name)).collect();
    match unknown.len() {
        0 => {}
        1 => return Err(OnnxError::Given(format!("--inputs {}: array {} is no input of the models; their inputs are: {}", given.path.display(), unknown[0], or_none(&known)))),
        _ => return Err(OnnxError::Given(format!("--inputs {}: arrays {} are no inputs of the models; their inputs are: {}", given.path.display(), unknown.join(", "), or_none(&known)))),
    }
    for array in &given.arrays {
        if ranges.iter().any(|(n, _)| *n == array.name) {
            return Err(OnnxError::Given(format!("--inputs {} gives `{}`, and so does --input: keep one", given.path.display(), array.name)));
        }
    }
    Ok(())
}

/// `dims` with those the arrays of `given` fix for `file`'s inputs: a dim an array fixes takes its
/// size, and a `--dim` may only repeat it.
fn with_given_dims(given: &Given, file: &OnnxFile, dims: &[(String, Vec<u64>)]) -> Result<Vec<(String, Vec<u64>)>, OnnxError> {
    let mut out = dims.to_vec();
    let model = file.path.display().to_string();
    for input in &file.inputs {
        for (name, size) in given.dims_of(input, &model)? {
            match out.iter().find(|(n, _)| *n == name) {
                Some((_, values)) if values.as_slice() == [size] => {}
                Some((_, values)) => {
                    let values: Vec<String> = values.iter().map(u64::to_string).collect();
                    return Err(OnnxError::Given(format!(
                        "--inputs {}: array `{}` fixes `{name}` at {size}, --dim gives {}; leave the --dim out (given inputs are no sweep)",
                        given.path.display(),
                        input.name,
                        values.join(",")
                    )));
                }
                None => out.push((name, vec![size])),
            }
        }
    }
    Ok(out)
}

/// The case of `file` at `dims`, served under `key`, each input filled as `fill` says; its
/// outputs' lengths inferred by the reference engine, and checked by the file's precision over
/// rows of the outputs' last dims.
pub fn own_model<E: From<OnnxError>>(file: &OnnxFile, key: &str, dims: Vec<(String, u64)>, mut fill: impl FnMut(&read::Input, Elem) -> Result<Fill, E>) -> Result<OwnModel, E> {
    let model = file.path.display().to_string();
    let external: Vec<ExternalData> = file.external.iter().enumerate().map(|(e, location)| ExternalData { location: location.clone(), key: format!("{key}.data{e}") }).collect();
    let inputs = file
        .inputs
        .iter()
        .map(|i| {
            let elem = Elem::of_onnx(i.elem).ok_or_else(|| OnnxError::InputType { model: model.clone(), input: i.name.clone(), code: i.elem })?;
            let shape = i
                .dims
                .iter()
                .map(|d| match d {
                    Dim::Fixed(v) => *v,
                    Dim::Named(n) => dims.iter().find(|(name, _)| name == n).map_or(1, |(_, v)| *v),
                })
                .collect();
            Ok(ModelInput { name: i.name.clone(), elem, shape, fill: fill(i, elem)? })
        })
        .collect::<Result<Vec<_>, E>>()?;
    let shapes = reference::output_shapes(file.parsed.as_ref(), &inputs);
    let outputs: Vec<ModelOutput> = file
        .outputs
        .iter()
        .enumerate()
        .map(|(n, o)| ModelOutput { name: o.name.clone(), elem: Elem::of_onnx(o.elem).unwrap_or(Elem::Float32), len: shapes.as_ref().and_then(|s| s.get(n)).map(|s| s.iter().product()) })
        .collect();
    let rows: Vec<u64> = shapes.iter().flatten().map(|s| s.last().copied().unwrap_or(1)).collect();
    let path = file.path.canonicalize().map_err(|e| OnnxError::Read(model.clone(), e.to_string()))?;
    Ok(OwnModel {
        file: file.path.file_name().map_or_else(|| model.clone(), |n| n.to_string_lossy().into_owned()),
        path: path.display().to_string(),
        key: key.to_string(),
        bytes: file.bytes,
        fingerprint: file.fingerprint.clone(),
        external,
        dims,
        inputs,
        outputs,
        check: OwnModel::check_rule(file.precision, &rows),
        no_reference: reference::missing(&file.ops_missing),
        pipeline: None,
    })
}

/// How input `i` is filled: the range `--input` gives; all ones for a mask; ids within the table
/// a `Gather` reads with it; otherwise normal values for floats and 0..2 for integers.
fn fill(i: &read::Input, elem: Elem, ranges: &[(String, (i64, i64))]) -> Fill {
    if let Some((_, (lo, hi))) = ranges.iter().find(|(n, _)| *n == i.name) {
        return Fill::Range { lo: *lo, hi: *hi };
    }
    if i.name.to_lowercase().contains("mask") || elem == Elem::Bool {
        return Fill::Ones;
    }
    match (elem.is_float(), i.table_rows) {
        (_, Some(rows)) => Fill::Range { lo: 0, hi: rows as i64 },
        (true, None) => Fill::Normal,
        (false, None) => Fill::Range { lo: 0, hi: 2 },
    }
}

/// `NAME=VALUE` options parsed by `value`, each name once.
fn parse_pairs<T>(given: &[String], option: &str, form: &str, value: impl Fn(&str) -> Option<T>) -> Result<Vec<(String, T)>, OnnxError> {
    let mut out: Vec<(String, T)> = Vec::new();
    for g in given {
        let parsed = g.split_once('=').and_then(|(n, v)| Some((n.trim().to_string(), value(v)?))).filter(|(n, _)| !n.is_empty());
        let (name, v) = parsed.ok_or_else(|| OnnxError::Syntax(format!("{option} {g}: expected {form}")))?;
        if out.iter().any(|(n, _)| *n == name) {
            return Err(OnnxError::Syntax(format!("{option} {g}: `{name}` is given twice; give all its values at once, comma-separated")));
        }
        out.push((name, v));
    }
    Ok(out)
}

fn or_none(names: &[String]) -> String {
    match names.is_empty() {
        true => "none".into(),
        false => names.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::own_model::{Fill, InputData};
    use kernels::CheckRule;

    /// The models of harness/tests/onnx-models, made by the ONNX project's own Python package.
    fn model(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/onnx-models").join(name)
    }

    fn build(files: &[&str], dims: &[&str], inputs: &[&str]) -> Result<(Vec<CaseSpec>, HashMap<String, PathBuf>), OnnxError> {
        let files: Vec<PathBuf> = files.iter().map(|f| model(f)).collect();
        let (dims, inputs): (Vec<String>, Vec<String>) = (dims.iter().map(|s| s.to_string()).collect(), inputs.iter().map(|s| s.to_string()).collect());
        cases(&OnnxOptions { files: &files, dims: &dims, inputs: &inputs, ..Default::default() }, 1)
    }

    fn own(spec: &CaseSpec) -> &OwnModel {
        match &spec.workload {
            Some(Workload::Onnx(o)) => o,
            _ => panic!("{} is not an ONNX case", spec.id),
        }
    }

    #[test]
    fn a_dim_sweep_names_each_case_by_its_dims_and_checks_rows_every_output_divides() {
        let (cases, served) = build(&["mlp.onnx"], &["batch=1,4"], &[]).unwrap();
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["mlp.onnx/batch=1", "mlp.onnx/batch=4"]);
        let m = own(&cases[1]);
        assert_eq!(m.inputs[0].shape, [4, 16]);
        assert_eq!(m.inputs[0].fill, Fill::Normal);
        assert_eq!(m.outputs.iter().map(|o| (o.name.as_str(), o.len)).collect::<Vec<_>>(), [("logits", Some(32)), ("hidden", Some(128))]);
        assert!(matches!(m.check, CheckRule::Cosine { row: 8, .. }), "{:?}", m.check);
        assert_eq!(served.get("onnx0"), Some(&model("mlp.onnx")));
    }

    #[test]
    fn ids_index_the_embedding_table_masks_are_ones_and_input_overrides_the_range() {
        let (cases, _) = build(&["embed.onnx"], &["batch=2", "seq=5"], &[]).unwrap();
        let m = own(&cases[0]);
        assert_eq!(cases[0].id, "embed.onnx/batch=2,seq=5");
        assert_eq!((&m.inputs[0].fill, &m.inputs[1].fill), (&Fill::Range { lo: 0, hi: 50 }, &Fill::Ones));
        let (cases, _) = build(&["embed.onnx"], &["batch=2", "seq=5"], &["input_ids=3..7"]).unwrap();
        assert_eq!(own(&cases[0]).inputs[0].fill, Fill::Range { lo: 3, hi: 7 });
    }

    #[test]
    fn the_reference_runs_natively_on_the_pages_inputs() {
        let (cases, served) = build(&["mlp.onnx", "embed.onnx", "external.onnx", "int8.onnx"], &["batch=3", "seq=4"], &[]).unwrap();
        for case in &cases {
            let m = own(case);
            let values = reference::outputs(&served[&m.key], m, case.seed).unwrap_or_else(|e| panic!("{}: {e}", case.id));
            let len: u64 = m.outputs.iter().map(|o| o.len.unwrap()).sum();
            assert_eq!(values.len() as u64, len, "{}", case.id);
            assert!(values.iter().all(|v| v.is_finite()) && values.iter().any(|&v| v != 0.0), "{}: {values:?}", case.id);
        }
        // The external-data model's weights come from its .onnx_data file, served beside it.
        assert!(served.values().any(|p| p.ends_with("external.onnx_data")));
        // int8 arithmetic is checked to the looser bound.
        let int8 = cases.iter().find(|c| c.id.starts_with("int8")).unwrap();
        assert!(matches!(own(int8).check, CheckRule::Cosine { min, .. } if min < kernels::model::MIN_COSINE));
    }

    #[test]
    fn f16_arithmetic_is_found_in_constant_nodes_and_casts_not_only_in_initializers() {
        let (cases, _) = build(&["f16_constants.onnx"], &["batch=2"], &[]).unwrap();
        let (min, tol) = kernels::own_model::Precision::F16.check();
        assert_eq!(own(&cases[0]).check, CheckRule::Cosine { row: 8, min, tol });
    }

    #[test]
    fn an_operator_the_reference_lacks_is_named_before_anything_runs() {
        let (cases, _) = build(&["fastgelu.onnx"], &["batch=2"], &[]).unwrap();
        let why = own(&cases[0]).no_reference.clone().unwrap();
        assert!(why.contains("`com.microsoft.FastGelu`") && why.contains("tract-onnx"), "{why}");
    }

    #[test]
    fn bad_input_is_named_with_its_fix() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("notes.onnx");
        std::fs::write(&text, "not a model").unwrap();
        let files = [text.clone()];
        let err = cases(&OnnxOptions { files: &files, ..Default::default() }, 1).unwrap_err().to_string();
        assert!(err.contains("not an ONNX model") && err.contains("notes.onnx"), "{err}");
        // An external-data model without its data file.
        let alone = dir.path().join("external.onnx");
        std::fs::copy(model("external.onnx"), &alone).unwrap();
        let files = [alone];
        let err = cases(&OnnxOptions { files: &files, ..Default::default() }, 1).unwrap_err().to_string();
        assert!(err.contains("external.onnx_data") && err.contains("keep the external-data file beside the model"), "{err}");
        let err = build(&["mlp.onnx"], &["batch=1", "sequence=8"], &[]).unwrap_err().to_string();
        assert!(err.contains("--dim sequence") && err.contains("its dynamic dims are: batch"), "{err}");
        let err = build(&["mlp.onnx"], &[], &[]).unwrap_err().to_string();
        assert!(err.contains("input `x` has the dynamic dim `batch`") && err.contains("--dim batch=VALUE"), "{err}");
        let err = build(&["mlp.onnx"], &["batch=1"], &["ids=0..5"]).unwrap_err().to_string();
        assert!(err.contains("--input ids") && err.contains("their inputs are: x"), "{err}");
        let err = build(&["mlp.onnx"], &["batch"], &[]).unwrap_err().to_string();
        assert!(err.contains("--dim batch: expected NAME=VALUE"), "{err}");
        let err = build(&["ir14.onnx"], &["batch=1"], &[]).unwrap_err().to_string();
        assert!(err.contains("IR version 14") && err.contains("13 at most") && err.contains("model.ir_version = 10"), "{err}");
        let err = build(&["missing.onnx"], &["batch=1"], &[]).unwrap_err().to_string();
        assert!(err.contains("missing.onnx"), "{err}");
    }

    #[test]
    fn files_of_one_name_from_two_folders_are_told_apart_by_their_folder() {
        let dir = tempfile::tempdir().unwrap();
        for folder in ["vit", "whisper"] {
            std::fs::create_dir(dir.path().join(folder)).unwrap();
            std::fs::copy(model("mlp.onnx"), dir.path().join(folder).join("model.onnx")).unwrap();
        }
        let files = [dir.path().join("vit/model.onnx"), dir.path().join("whisper/model.onnx"), model("embed.onnx")];
        let dims = ["batch=1".to_string(), "seq=2".to_string()];
        let (cases, _) = cases(&OnnxOptions { files: &files, dims: &dims, ..Default::default() }, 1).unwrap();
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["vit/model.onnx/batch=1", "whisper/model.onnx/batch=1", "embed.onnx/batch=1,seq=2"]);
    }

    /// The cases of `files` with `--inputs given`, their inputs' bytes kept in `dir`.
    fn with_given(files: &[&str], dims: &[&str], given: &Path, dir: &Path) -> Result<Vec<CaseSpec>, OnnxError> {
        let files: Vec<PathBuf> = files.iter().map(|f| model(f)).collect();
        let dims: Vec<String> = dims.iter().map(|s| s.to_string()).collect();
        cases(&OnnxOptions { files: &files, dims: &dims, given: Some(given), given_dir: Some(dir), ..Default::default() }, 1).map(|(c, _)| c)
    }

    #[test]
    fn numpys_arrays_fix_the_dims_and_are_what_the_page_and_the_reference_are_fed() {
        let cache = tempfile::tempdir().unwrap();
        // numpy.savez: input_ids int64 [3,5], attention_mask int32 [3,5] (row 2's last two masked).
        let cases = with_given(&["embed.onnx"], &[], &model("embed_inputs.npz"), cache.path()).unwrap();
        assert_eq!(cases.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["embed.onnx/batch=3,seq=5"]);
        let m = own(&cases[0]);
        let mask = &m.inputs[1];
        let (key, path) = mask.given().unwrap();
        assert!(m.served().iter().any(|(k, p)| k == key && p == Path::new(path)), "the page fetches it");
        let bytes = std::fs::read(path).unwrap();
        let InputData::I64(values) = mask.data(1, 1, Some(&bytes)).unwrap() else { panic!("int32 in the file, int64 in the model") };
        assert_eq!(values[10..], [1, 1, 1, 0, 0]);
        // The reference runs on them: not the seeded inputs' outputs.
        let seeded = build(&["embed.onnx"], &["batch=3", "seq=5"], &[]).unwrap().0;
        let outputs = |c: &CaseSpec| reference::outputs(&model("embed.onnx"), own(c), 1).unwrap();
        assert_ne!(outputs(&cases[0]), outputs(&seeded[0]));
    }

    #[test]
    fn given_arrays_that_do_not_fit_are_refused_naming_the_array() {
        let dir = tempfile::tempdir().unwrap();
        let ids = dir.path().join("ids.safetensors");
        let floats: Vec<u8> = [0.5f32; 15].iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![3, 5], &floats).unwrap();
        std::fs::write(&ids, safetensors::serialize([("input_ids", view)], None).unwrap()).unwrap();
        let err = with_given(&["embed.onnx"], &[], &ids, dir.path()).unwrap_err().to_string();
        assert!(err.contains("array `input_ids` is floating-point; the model's input is int64"), "{err}");
        let err = with_given(&["mlp.onnx"], &[], &ids, dir.path()).unwrap_err().to_string();
        assert!(err.contains("no input of the models"), "{err}");
        let short = dir.path().join("short.safetensors");
        let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![15], &floats).unwrap();
        std::fs::write(&short, safetensors::serialize([("x", view)], None).unwrap()).unwrap();
        let err = with_given(&["mlp.onnx"], &[], &short, dir.path()).unwrap_err().to_string();
        assert!(err.contains("array `x` is [15]; input `x` of") && err.contains("is [batch, 16]"), "{err}");
    }
}
