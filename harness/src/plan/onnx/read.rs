//! What harness reads of a user's ONNX file before any browser starts: its inputs (names, element
//! types, dims, the dynamic ones by name), outputs, external-data files, operators, and the
//! embedding tables its integer inputs index. Decoded with tract-onnx's protobuf types.

use super::{reference, OnnxError};
use kernels::own_model::Precision;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use tract_onnx::pb;
use tract_onnx::prelude::{Framework, InferenceModel};

/// The most a model (the file and its external data) may weigh: the page holds its bytes in its
/// own WASM memory, onnxruntime-web copies them into its WASM heap (4 GiB at most, with the
/// activations beside them), and protobuf cannot read an `.onnx` file over 2 GiB.
pub const MAX_BYTES: u64 = 2 << 30;

/// The newest ONNX IR version onnxruntime-web 1.30 reads: it refuses a newer file when it creates
/// the session, in the browser; harness refuses it first.
pub const MAX_IR_VERSION: i64 = 13;

/// One dim of a graph input: fixed, or named (`batch_size`) for `--dim` to give.
#[derive(Debug, Clone, PartialEq)]
pub enum Dim {
    /// A fixed size.
    Fixed(u64),
    /// A dynamic dim, by its name; unnamed ones are called `INPUT.dimN`.
    Named(String),
}

/// A graph input (not an initializer).
#[derive(Debug, Clone)]
pub struct Input {
    /// Its name.
    pub name: String,
    /// Its element type code (`TensorProto.DataType`).
    pub elem: i32,
    /// Its dims.
    pub dims: Vec<Dim>,
    /// Rows of the table a `Gather` indexes with it (a token embedding's vocabulary), if any.
    pub table_rows: Option<u64>,
}

/// A graph output.
#[derive(Debug, Clone)]
pub struct Output {
    /// Its name.
    pub name: String,
    /// Its element type code.
    pub elem: i32,
}

/// A user's ONNX file, as far as harness needs it before running it.
#[derive(Debug, Clone)]
pub struct OnnxFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its size, with its external data.
    pub bytes: u64,
    /// FNV-1a of the file's bytes.
    pub fingerprint: String,
    /// Graph inputs, in order.
    pub inputs: Vec<Input>,
    /// Graph outputs, in order.
    pub outputs: Vec<Output>,
    /// External-data files, by the location the model names (relative to its folder).
    pub external: Vec<String>,
    /// The arithmetic in it: f16 tensors, or quantize and integer-matmul operators, get looser
    /// bounds.
    pub precision: Precision,
    /// Its operators that tract-onnx, the reference engine, has no implementation of.
    pub ops_missing: Vec<String>,
    /// Its graph as tract parses it, where tract has every operator and could parse it: what the
    /// outputs' shapes at each set of dims are inferred from.
    pub parsed: Option<InferenceModel>,
}

/// Operators that put int8 arithmetic into a model.
const QUANTIZED_OPS: [&str; 7] = ["QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger", "ConvInteger", "QLinearMatMul", "QLinearConv"];

impl OnnxFile {
    /// Reads `path`, refusing what harness cannot run: not an ONNX file, a missing external-data
    /// file, a model over [`MAX_BYTES`].
    pub fn read(path: &Path) -> Result<OnnxFile, OnnxError> {
        let shown = path.display().to_string();
        let meta = std::fs::metadata(path).map_err(|e| OnnxError::Read(shown.clone(), e.to_string()))?;
        let not_onnx = |why: String| OnnxError::NotOnnx(shown.clone(), why);
        let proto = tract_onnx::onnx().proto_model_for_path(path).map_err(|e| not_onnx(format!("{e:#}")))?;
        if proto.ir_version > MAX_IR_VERSION {
            return Err(OnnxError::IrVersion { model: shown, version: proto.ir_version, max: MAX_IR_VERSION });
        }
        let graph = proto.graph.as_ref().filter(|g| !g.node.is_empty() || !g.output.is_empty()).ok_or_else(|| not_onnx("it holds no graph".into()))?;
        let folder = path.parent().unwrap_or(Path::new("."));
        let mut external = Vec::new();
        let mut bytes = meta.len();
        for t in &graph.initializer {
            let Some(location) = t.external_data.iter().find(|e| e.key == "location").map(|e| e.value.clone()) else { continue };
            if external.contains(&location) {
                continue;
            }
            let file = folder.join(&location);
            let size = std::fs::metadata(&file).map_err(|_| OnnxError::MissingExternal { model: shown.clone(), file: file.display().to_string() })?.len();
            bytes += size;
            external.push(location);
        }
        if bytes > MAX_BYTES {
            return Err(OnnxError::TooLarge { model: shown, bytes, limit: MAX_BYTES });
        }
        let initializers: BTreeSet<&str> = graph.initializer.iter().map(|t| t.name.as_str()).collect();
        let tables: HashMap<&str, u64> = graph.initializer.iter().filter_map(|t| Some((t.name.as_str(), u64::try_from(*t.dims.first()?).ok()?))).collect();
        let inputs = graph
            .input
            .iter()
            .filter(|i| !initializers.contains(i.name.as_str()))
            .map(|i| {
                let (elem, dims) = tensor_type(i);
                let dims = dims
                    .iter()
                    .enumerate()
                    .map(|(n, d)| match &d.value {
                        Some(pb::tensor_shape_proto::dimension::Value::DimValue(v)) if *v > 0 => Dim::Fixed(*v as u64),
                        Some(pb::tensor_shape_proto::dimension::Value::DimParam(p)) if !p.is_empty() => Dim::Named(p.clone()),
                        _ => Dim::Named(format!("{}.dim{n}", i.name)),
                    })
                    .collect();
                let table_rows = graph.node.iter().find(|n| n.op_type == "Gather" && n.input.get(1) == Some(&i.name)).and_then(|n| tables.get(n.input[0].as_str()).copied());
                Input { name: i.name.clone(), elem, dims, table_rows }
            })
            .collect();
        let outputs = graph.output.iter().map(|o| Output { name: o.name.clone(), elem: tensor_type(o).0 }).collect();
        // Operators as `domain.Op` (`Op` in ONNX's own domain).
        let ops: BTreeSet<String> = graph.node.iter().map(|n| if n.domain.is_empty() || n.domain == "ai.onnx" { n.op_type.clone() } else { format!("{}.{}", n.domain, n.op_type) }).collect();
        // f16 arithmetic: f16 weights (initializers, or tensors held in `Constant` nodes), a `Cast`
        // to f16, or f16 inputs and outputs.
        let half = pb::tensor_proto::DataType::Float16 as i32;
        let f16 = graph.initializer.iter().any(|t| t.data_type == half)
            || graph.node.iter().flat_map(|n| n.attribute.iter().map(move |a| (n, a))).any(|(n, a)| a.t.as_ref().is_some_and(|t| t.data_type == half) || (n.op_type == "Cast" && a.name == "to" && a.i == i64::from(half)))
            || graph.input.iter().chain(&graph.output).any(|v| tensor_type(v).0 == half);
        let precision = match (ops.iter().any(|op| QUANTIZED_OPS.contains(&op.as_str())), f16) {
            (true, _) => Precision::Int8,
            (false, true) => Precision::F16,
            (false, false) => Precision::F32,
        };
        let fingerprint = fingerprint(path).map_err(|e| OnnxError::Read(shown.clone(), e.to_string()))?;
        let ops_missing = reference::ops_missing(&ops);
        let parsed = ops_missing.is_empty().then(|| reference::parse(&proto, path).ok()).flatten();
        Ok(OnnxFile { path: path.to_path_buf(), bytes, fingerprint, inputs, outputs, external, precision, ops_missing, parsed })
    }

    /// The dynamic dims' names, each once, in the order the inputs name them.
    pub fn named_dims(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for d in self.inputs.iter().flat_map(|i| &i.dims) {
            if let Dim::Named(n) = d {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
        }
        names
    }

}

/// The element type and dims of a value, as the graph declares them.
fn tensor_type(v: &pb::ValueInfoProto) -> (i32, Vec<pb::tensor_shape_proto::Dimension>) {
    match v.r#type.as_ref().and_then(|t| t.value.as_ref()) {
        Some(pb::type_proto::Value::TensorType(t)) => (t.elem_type, t.shape.as_ref().map(|s| s.dim.clone()).unwrap_or_default()),
        None => (0, Vec::new()),
    }
}

/// FNV-1a of a file's bytes, in hex: what tells a changed model from the one whose reference is
/// kept.
pub(super) fn fingerprint(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut file = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(path)?);
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        for &b in &buf[..n] {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    Ok(format!("{hash:016x}"))
}
