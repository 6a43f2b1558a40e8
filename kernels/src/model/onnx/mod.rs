//! A model [`Graph`] as an ONNX file (opset 17), so that another engine (ONNX Runtime, on the
//! web or natively) runs the very model harness runs: the same wiring, the same weights (as the
//! GPU stores them: rounded or dequantized values, in f32), the same inputs.
//!
//! The ops are written the way PyTorch's exporter writes a transformer, since that is the form
//! ONNX Runtime's fusions and kernels are tuned for: linear layers as `MatMul` over a `[k, n]`
//! weight plus `Add`, GELU and RMSNorm spelled out (ORT fuses them back), attention as `MatMul`,
//! `Softmax`, `MatMul`, and a patch embedding or a conv1d (harness's im2col [`Op::Patches`] or
//! [`Op::Unfold`] followed by its GEMM) as one `Conv`.

pub mod proto;

use super::graph::{Data, Graph};
use super::op::{Op, T};
use super::weights::Weights;
use super::ModelError;
pub use crate::feed::InputData;
use crate::wire::f32s_to_le_bytes;
use proto::{AttributeProto, AttributeType, DataType, NodeProto, TensorProto};
use std::collections::HashMap;

/// The ONNX operator set the files use (LayerNormalization is in it; ReduceMean's axes are still
/// an attribute).
pub const OPSET: i64 = 17;

/// The IR version that goes with [`OPSET`].
pub const IR_VERSION: i64 = 8;

/// The onnxruntime-web release harness drives (`--platform ort-webgpu`, `ort-jsep`).
pub const ORT_WEB_VERSION: &str = "1.30.0";

/// The transformers.js release harness drives (`--platform transformers`).
pub const TRANSFORMERS_VERSION: &str = "4.3.1";

/// The onnxruntime-web build that transformers.js [`TRANSFORMERS_VERSION`] pins and bundles
/// (a development build, not [`ORT_WEB_VERSION`]): the WASM beside its script must be this one's.
pub const TRANSFORMERS_ORT_VERSION: &str = "1.31.0-dev.20260914-8d85527a0";

/// A graph written as ONNX, with what to feed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Onnx {
    /// The serialized `ModelProto`.
    pub bytes: Vec<u8>,
    /// The model's inputs ([`Graph::inputs`]) with the case's values, in order.
    pub feeds: Vec<Feed>,
    /// Output names, one per [`Graph::outputs`] entry, each a flat tensor: concatenated, they are
    /// what [`Graph::evaluate`] returns.
    pub outputs: Vec<String>,
}

/// One input of the model and its value for the case.
#[derive(Debug, Clone, PartialEq)]
pub struct Feed {
    /// Input name (the graph tensor's, or a BERT input's: `input_ids`, `attention_mask`).
    pub name: String,
    /// Its shape: flat, except a BERT input's `[batch, seq]`.
    pub dims: Vec<i64>,
    /// Its values: f32 (pixels, features, hidden states), i32 (token ids), or i64 (a BERT
    /// signature's token ids and attention mask, as Hugging Face exports them).
    pub data: InputData,
}

impl Feed {
    /// Elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Writes `graph` as ONNX; `weights`: the file its [`Data::Named`] tensors come from.
pub fn export(graph: &Graph, weights: Option<&Weights>) -> Result<Onnx, ModelError> {
    let mut w = Writer::new(graph, weights, None);
    for (_, op) in &graph.ops {
        w.op(op)?;
    }
    let mut outputs = Vec::new();
    let mut output_info = Vec::new();
    for (i, &t) in graph.outputs.iter().enumerate() {
        let len = graph.tensors[t].len as i64;
        let value = w.shaped(t, &[len])?;
        let name = format!("output{i}");
        w.node_named("Identity", &[&value], vec![], &name);
        output_info.push(value_info(&name, DataType::Float, &[len]));
        outputs.push(name);
    }
    w.finish(output_info, outputs)
}

/// Writes an encoder's `graph` (MiniLM's) with the signature Hugging Face's BERT exports have,
/// which transformers.js feeds: `input_ids` and `attention_mask` in (int64, `[batch, seq]`, the
/// mask 1 for a real token), `last_hidden_state` out (`[batch, seq, hidden]`, before pooling,
/// which the caller does). The feeds hold the case's ids and mask.
pub fn export_bert(graph: &Graph, weights: Option<&Weights>) -> Result<Onnx, ModelError> {
    let mut w = Writer::new(graph, weights, Some(BertIo::default()));
    for (_, op) in &graph.ops {
        w.op(op)?;
    }
    let Some((hidden, dims)) = w.bert.as_mut().and_then(|b| b.hidden.take()) else {
        return Err(ModelError::BadTensor { name: "embeddings".into(), problem: "no pooled encoder output: only an encoder is written with BERT's signature".into() });
    };
    let name = "last_hidden_state";
    w.node_named("Identity", &[&hidden], vec![], name);
    w.finish(vec![value_info(name, DataType::Float, &dims)], vec![name.to_string()])
}

/// What a BERT signature adds to the writer: the additive attention mask made from the
/// `attention_mask` input once, and the hidden state the pooling would have read.
#[derive(Debug, Default)]
struct BertIo {
    mask: Option<String>,
    hidden: Option<(String, Vec<i64>)>,
}

impl<'a> Writer<'a> {
    fn new(graph: &'a Graph, weights: Option<&'a Weights>, bert: Option<BertIo>) -> Self {
        Writer { graph, weights, bert, nodes: Vec::new(), initializers: Vec::new(), inputs: Vec::new(), feeds: Vec::new(), values: HashMap::new(), weights_written: HashMap::new(), unfolded: HashMap::new(), next: 0 }
    }

    /// The file with `output_info` as its outputs, named `outputs`.
    fn finish(self, output_info: Vec<proto::ValueInfoProto>, outputs: Vec<String>) -> Result<Onnx, ModelError> {
        let model = proto::ModelProto {
            ir_version: IR_VERSION,
            producer_name: "harness".into(),
            producer_version: env!("CARGO_PKG_VERSION").into(),
            doc_string: "written by harness from its model graph (kernels::model::onnx)".into(),
            graph: Some(proto::GraphProto { node: self.nodes, name: "harness".into(), initializer: self.initializers, input: self.inputs, output: output_info }),
            opset_import: vec![proto::OperatorSetIdProto { domain: String::new(), version: OPSET }],
        };
        Ok(Onnx { bytes: prost::Message::encode_to_vec(&model), feeds: self.feeds, outputs })
    }

    /// A BERT input (`input_ids`, `attention_mask`): int64 `[batch, seq]`, fed `values`.
    fn bert_input(&mut self, name: &str, dims: [i64; 2], values: Vec<i64>) -> String {
        self.inputs.push(value_info(name, DataType::Int64, &dims));
        self.feeds.push(Feed { name: name.into(), dims: dims.to_vec(), data: InputData::I64(values) });
        name.to_string()
    }

    /// BERT's additive attention mask, `[batch, 1, 1, seq]`: 0 where `attention_mask` is 1,
    /// −1e9 where it is 0; made once from the input, which is fed the case's lengths.
    fn bert_mask(&mut self, lens: T, b: i64, s: i64) -> Result<String, ModelError> {
        if let Some(mask) = self.bert.as_ref().and_then(|io| io.mask.clone()) {
            return Ok(mask);
        }
        let lens = self.constant(lens)?;
        let ones: Vec<i64> = (0..b as usize).flat_map(|i| (0..s).map(move |j| (i, j))).map(|(i, j)| i64::from(j < lens[i] as i64)).collect();
        let input = self.bert_input("attention_mask", [b, s], ones);
        let m = self.node("Cast", &[&input], vec![int("to", DataType::Float as i64)]);
        let one = self.scalar(1.0);
        let off = self.node("Sub", &[&m, &one], vec![]);
        let big = self.scalar(1e9);
        let additive = self.node("Mul", &[&off, &big], vec![]);
        let mask = self.reshape(&additive, &[b, s], &[b, 1, 1, s]);
        if let Some(io) = &mut self.bert {
            io.mask = Some(mask.clone());
        }
        Ok(mask)
    }
}

/// A graph tensor's current ONNX value: its name and shape.
#[derive(Debug, Clone)]
struct Value {
    name: String,
    dims: Vec<i64>,
}

/// An im2col op not yet written: the linear layer that reads it becomes a `Conv`.
#[derive(Debug, Clone, Copy)]
enum Unfolded {
    /// [`Op::Patches`]: a conv2d with stride `patch`.
    Patches { x: T, batch: u32, channels: u32, size: u32, patch: u32 },
    /// [`Op::Unfold`]: a conv1d.
    Unfold { x: T, batch: u32, channels: u32, len: u32, kernel: u32, stride: u32, pad: u32, channels_last: bool },
}

struct Writer<'a> {
    graph: &'a Graph,
    weights: Option<&'a Weights>,
    /// Written with BERT's signature ([`export_bert`]).
    bert: Option<BertIo>,
    nodes: Vec<NodeProto>,
    initializers: Vec<TensorProto>,
    inputs: Vec<proto::ValueInfoProto>,
    feeds: Vec<Feed>,
    /// Each graph tensor's value once made (a KV write replaces its cache's).
    values: HashMap<T, Value>,
    /// Weight initializers by tensor and whether they are stored transposed.
    weights_written: HashMap<(T, bool), String>,
    unfolded: HashMap<T, Unfolded>,
    next: usize,
}

fn value_info(name: &str, ty: DataType, dims: &[i64]) -> proto::ValueInfoProto {
    let dim = dims.iter().map(|&d| proto::Dimension { dim_value: d }).collect();
    proto::ValueInfoProto {
        name: name.into(),
        r#type: Some(proto::TypeProto { tensor_type: Some(proto::TensorTypeProto { elem_type: ty as i32, shape: Some(proto::TensorShapeProto { dim }) }) }),
    }
}

fn ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto { name: name.into(), ints: v.to_vec(), r#type: AttributeType::Ints as i32, ..Default::default() }
}

fn int(name: &str, v: i64) -> AttributeProto {
    AttributeProto { name: name.into(), i: v, r#type: AttributeType::Int as i32, ..Default::default() }
}

fn float(name: &str, v: f32) -> AttributeProto {
    AttributeProto { name: name.into(), f: v, r#type: AttributeType::Float as i32, ..Default::default() }
}

fn numel(dims: &[i64]) -> i64 {
    dims.iter().product()
}

impl Writer<'_> {
    fn fresh(&mut self, hint: &str) -> String {
        self.next += 1;
        format!("{hint}_{}", self.next)
    }

    /// Appends a node with one output named `out`.
    fn node_named(&mut self, op: &str, inputs: &[&str], attribute: Vec<AttributeProto>, out: &str) {
        let name = format!("{op}_{}", self.nodes.len());
        self.nodes.push(NodeProto { input: inputs.iter().map(|s| s.to_string()).collect(), output: vec![out.into()], name, op_type: op.into(), attribute });
    }

    /// Appends a node and returns its (one) output.
    fn node(&mut self, op: &str, inputs: &[&str], attribute: Vec<AttributeProto>) -> String {
        let out = self.fresh(&op.to_lowercase());
        self.node_named(op, inputs, attribute, &out);
        out
    }

    fn initializer(&mut self, name: String, ty: DataType, dims: &[i64], raw: Vec<u8>) -> String {
        self.initializers.push(TensorProto { dims: dims.to_vec(), data_type: ty as i32, name: name.clone(), raw_data: raw });
        name
    }

    fn floats(&mut self, hint: &str, dims: &[i64], v: &[f32]) -> String {
        let name = self.fresh(hint);
        self.initializer(name, DataType::Float, dims, f32s_to_le_bytes(v))
    }

    fn int64s(&mut self, hint: &str, dims: &[i64], v: &[i64]) -> String {
        let name = self.fresh(hint);
        self.initializer(name, DataType::Int64, dims, v.iter().flat_map(|x| x.to_le_bytes()).collect())
    }

    fn scalar(&mut self, v: f32) -> String {
        self.floats("const", &[], &[v])
    }

    /// Graph tensor `t`'s value: made on first use, as a model input ([`Graph::inputs`]), an
    /// initializer (weights, constants) or zeros (a computed tensor read before it is written).
    fn value(&mut self, t: T) -> Result<Value, ModelError> {
        if let Some(v) = self.values.get(&t) {
            return Ok(v.clone());
        }
        if let Some(&unfolded) = self.unfolded.get(&t) {
            return self.im2col(t, unfolded);
        }
        let tensor = &self.graph.tensors[t];
        let dims = vec![tensor.len as i64];
        let name = tensor.name.clone();
        let is_int = matches!(tensor.data, Data::U32(_));
        let values = self.graph.values(t, self.weights)?;
        if self.graph.inputs.contains(&t) {
            let (ty, data) = match is_int {
                true => (DataType::Int32, InputData::I32(values.iter().map(|v| v.to_bits() as i32).collect())),
                false => (DataType::Float, InputData::F32(values)),
            };
            self.inputs.push(value_info(&name, ty, &dims));
            self.feeds.push(Feed { name: name.clone(), dims: dims.clone(), data });
        } else {
            // An integer tensor's values are its bits (see `Graph::values`), as little-endian i32s.
            let raw = f32s_to_le_bytes(&values);
            self.initializer(name.clone(), if is_int { DataType::Int32 } else { DataType::Float }, &dims, raw);
        }
        let v = Value { name, dims };
        self.values.insert(t, v.clone());
        Ok(v)
    }

    /// Tensor `t`'s values as a constant (masks, pooling weights are made from lengths).
    fn constant(&self, t: T) -> Result<Vec<f64>, ModelError> {
        self.graph.values_f64(t, self.weights)
    }

    /// `name` (of shape `from`) reshaped to `dims`.
    fn reshape(&mut self, name: &str, from: &[i64], dims: &[i64]) -> String {
        if from == dims {
            return name.to_string();
        }
        let shape = self.int64s("shape", &[dims.len() as i64], dims);
        self.node("Reshape", &[name, &shape], vec![])
    }

    /// Tensor `t`'s value viewed as `dims` (it must have that many elements, or more: a longer
    /// tensor, like a table of positions, is cut to its first elements).
    fn shaped(&mut self, t: T, dims: &[i64]) -> Result<String, ModelError> {
        let v = self.value(t)?;
        let (have, want) = (numel(&v.dims), numel(dims));
        if have == want {
            return Ok(self.reshape(&v.name, &v.dims, dims));
        }
        if have < want {
            return Err(ModelError::BadTensor { name: self.graph.tensors[t].name.clone(), problem: format!("{have} values where the ONNX graph needs {want}") });
        }
        let flat = self.reshape(&v.name, &v.dims, &[have]);
        let cut = self.slice(&flat, 0, 0, want);
        Ok(self.reshape(&cut, &[want], dims))
    }

    fn slice(&mut self, name: &str, axis: i64, start: i64, end: i64) -> String {
        let (s, e, a) = (self.int64s("start", &[1], &[start]), self.int64s("end", &[1], &[end]), self.int64s("axis", &[1], &[axis]));
        self.node("Slice", &[name, &s, &e, &a], vec![])
    }

    fn set(&mut self, t: T, name: String, dims: Vec<i64>) {
        self.values.insert(t, Value { name, dims });
    }

    fn transpose(&mut self, name: &str, perm: &[i64]) -> String {
        self.node("Transpose", &[name], vec![ints("perm", perm)])
    }

    /// `x · wᵀ`: a `[k, n]` initializer of `w`'s values (PyTorch's exporter stores a linear
    /// layer's weight so), or a `[n, c, kernel…]` one for a convolution.
    fn weight(&mut self, w: T, dims: &[i64], transposed: bool) -> Result<String, ModelError> {
        if let Some(name) = self.weights_written.get(&(w, transposed)) {
            return Ok(name.clone());
        }
        let values = self.graph.values(w, self.weights)?;
        let name = self.graph.tensors[w].name.clone();
        let (n, k) = (dims[0] as usize, numel(&dims[1..]) as usize);
        let raw: Vec<u8> = match transposed {
            true => (0..k).flat_map(|i| (0..n).map(move |j| (i, j))).flat_map(|(i, j)| values[j * k + i].to_le_bytes()).collect(),
            false => f32s_to_le_bytes(&values),
        };
        let shape: Vec<i64> = if transposed { vec![k as i64, n as i64] } else { dims.to_vec() };
        let name = self.initializer(if transposed { format!("{name}.T") } else { name }, DataType::Float, &shape, raw);
        self.weights_written.insert((w, transposed), name.clone());
        Ok(name)
    }

    fn op(&mut self, op: &Op) -> Result<(), ModelError> {
        match *op {
            Op::Linear { x, w, b, add, y, m, k, n } => {
                let (m, k, n) = (m as i64, k as i64, n as i64);
                let out = match self.unfolded.get(&x).copied() {
                    Some(unfolded) => self.conv(unfolded, w, b, n)?,
                    None => {
                        let xv = self.shaped(x, &[m, k])?;
                        let wv = self.weight(w, &[n, k], true)?;
                        let mut out = self.node("MatMul", &[&xv, &wv], vec![]);
                        if let Some(b) = b {
                            let bv = self.shaped(b, &[n])?;
                            out = self.node("Add", &[&out, &bv], vec![]);
                        }
                        out
                    }
                };
                let out = match add {
                    Some(a) => {
                        let av = self.shaped(a, &[m, n])?;
                        self.node("Add", &[&out, &av], vec![])
                    }
                    None => out,
                };
                self.set(y, out, vec![m, n]);
            }
            Op::SwiGlu { x, gate, up, y, m, k, n } => {
                let (m, k, n) = (m as i64, k as i64, n as i64);
                let xv = self.shaped(x, &[m, k])?;
                let (gw, uw) = (self.weight(gate, &[n, k], true)?, self.weight(up, &[n, k], true)?);
                let g = self.node("MatMul", &[&xv, &gw], vec![]);
                let u = self.node("MatMul", &[&xv, &uw], vec![]);
                let out = self.silu_mul(&g, &u);
                self.set(y, out, vec![m, n]);
            }
            Op::Norm { x, g, b, y, rows, cols, eps } => {
                let (rows, cols) = (rows as i64, cols as i64);
                let xv = self.shaped(x, &[rows, cols])?;
                let gv = self.shaped(g, &[cols])?;
                let out = match b {
                    Some(b) => {
                        let bv = self.shaped(b, &[cols])?;
                        self.node("LayerNormalization", &[&xv, &gv, &bv], vec![int("axis", -1), float("epsilon", eps)])
                    }
                    // RMSNorm as PyTorch writes it; ORT fuses it into SimplifiedLayerNormalization.
                    None => {
                        let sq = self.node("Mul", &[&xv, &xv], vec![]);
                        let mean = self.node("ReduceMean", &[&sq], vec![ints("axes", &[-1]), int("keepdims", 1)]);
                        let e = self.scalar(eps);
                        let var = self.node("Add", &[&mean, &e], vec![]);
                        let rms = self.node("Sqrt", &[&var], vec![]);
                        let normed = self.node("Div", &[&xv, &rms], vec![]);
                        self.node("Mul", &[&normed, &gv], vec![])
                    }
                };
                self.set(y, out, vec![rows, cols]);
            }
            Op::Add { a, b, y, n } => {
                let dims = self.elementwise_dims(a, n)?;
                let (a2, b2) = (self.shaped(a, &dims)?, self.shaped(b, &dims)?);
                let out = self.node("Add", &[&a2, &b2], vec![]);
                self.set(y, out, dims);
            }
            Op::Gelu { x, y, n } => {
                let dims = self.elementwise_dims(x, n)?;
                let x2 = self.shaped(x, &dims)?;
                // 0.5·x·(1 + erf(x/√2)), as PyTorch exports nn.GELU(); ORT fuses it into Gelu.
                let r2 = self.scalar(std::f32::consts::SQRT_2);
                let scaled = self.node("Div", &[&x2, &r2], vec![]);
                let erf = self.node("Erf", &[&scaled], vec![]);
                let one = self.scalar(1.0);
                let plus = self.node("Add", &[&erf, &one], vec![]);
                let times = self.node("Mul", &[&x2, &plus], vec![]);
                let half = self.scalar(0.5);
                let out = self.node("Mul", &[&times, &half], vec![]);
                self.set(y, out, dims);
            }
            Op::SiluMul { g, u, y, n } => {
                let dims = self.elementwise_dims(g, n)?;
                let (g2, u2) = (self.shaped(g, &dims)?, self.shaped(u, &dims)?);
                let out = self.silu_mul(&g2, &u2);
                self.set(y, out, dims);
            }
            Op::Rope { x, y, tokens, heads, hd, pos0, base, .. } => {
                let dims = [tokens as i64, heads as i64, hd as i64];
                let xv = self.shaped(x, &dims)?;
                let half = hd as usize / 2;
                // cos and sin per (token, dimension), the sin's first half negated: y = x·cos +
                // rotate_half(x)·sin with rotate_half(x) = [x2, x1].
                let (mut cos, mut sin) = (Vec::new(), Vec::new());
                for t in 0..tokens {
                    for i in 0..hd as usize {
                        let angle = crate::model::rope::angle(pos0 + t, i % half, hd, base);
                        cos.push(angle.cos() as f32);
                        sin.push(if i < half { -angle.sin() as f32 } else { angle.sin() as f32 });
                    }
                }
                let table = [tokens as i64, 1, hd as i64];
                let (c, s) = (self.floats("rope_cos", &table, &cos), self.floats("rope_sin", &table, &sin));
                let split = self.int64s("split", &[2], &[half as i64, half as i64]);
                let (x1, x2) = (self.fresh("x1"), self.fresh("x2"));
                let name = format!("Split_{}", self.nodes.len());
                self.nodes.push(NodeProto { input: vec![xv.clone(), split], output: vec![x1.clone(), x2.clone()], name, op_type: "Split".into(), attribute: vec![int("axis", -1)] });
                let rotated = self.node("Concat", &[&x2, &x1], vec![int("axis", -1)]);
                let a = self.node("Mul", &[&xv, &c], vec![]);
                let b = self.node("Mul", &[&rotated, &s], vec![]);
                let out = self.node("Add", &[&a, &b], vec![]);
                self.set(y, out, dims.to_vec());
            }
            Op::KvWrite { src, cache, tokens, dim, pos0 } => {
                let (tokens, dim, pos0) = (tokens as i64, dim as i64, pos0 as i64);
                let rows = self.graph.tensors[cache].len as i64 / dim;
                let sv = self.shaped(src, &[tokens, dim])?;
                let cv = self.shaped(cache, &[rows, dim])?;
                let mut parts = Vec::new();
                if pos0 > 0 {
                    parts.push(self.slice(&cv, 0, 0, pos0));
                }
                parts.push(sv);
                if pos0 + tokens < rows {
                    parts.push(self.slice(&cv, 0, pos0 + tokens, rows));
                }
                let out = match parts.len() {
                    1 => parts.remove(0),
                    _ => {
                        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
                        self.node("Concat", &refs, vec![int("axis", 0)])
                    }
                };
                self.set(cache, out, vec![rows, dim]);
            }
            Op::Attention { q, k, v, lens, y, rows, seq, heads, kv_heads, hd, kv_len, causal, pos0 } => {
                let out = self.attention(q, k, v, lens, [rows, seq, heads, kv_heads, hd, kv_len, pos0], causal)?;
                self.set(y, out, vec![rows as i64, (heads * hd) as i64]);
            }
            Op::Embed { ids, word, pos, ty, y, rows, seq, hidden } => {
                let (rows, h) = (rows as i64, hidden as i64);
                let iv = match self.bert.is_some() {
                    true => {
                        let values: Vec<i64> = self.constant(ids)?.iter().map(|&v| v as i64).collect();
                        let dims = [rows / seq as i64, seq as i64];
                        let input = self.bert_input("input_ids", dims, values);
                        self.reshape(&input, &dims, &[rows])
                    }
                    false => self.shaped(ids, &[rows])?,
                };
                let wv = self.shaped(word, &[self.graph.tensors[word].len as i64 / h, h])?;
                let words = self.node("Gather", &[&wv, &iv], vec![int("axis", 0)]);
                let pv = self.shaped(pos, &[self.graph.tensors[pos].len as i64 / h, h])?;
                let positions: Vec<i64> = (0..rows).map(|r| r % seq as i64).collect();
                let pi = self.int64s("position_ids", &[rows], &positions);
                let posv = self.node("Gather", &[&pv, &pi], vec![int("axis", 0)]);
                let tv = self.shaped(ty, &[self.graph.tensors[ty].len as i64 / h, h])?;
                let t0 = self.slice(&tv, 0, 0, 1);
                let sum = self.node("Add", &[&words, &posv], vec![]);
                let out = self.node("Add", &[&sum, &t0], vec![]);
                self.set(y, out, vec![rows, h]);
            }
            Op::Pool { x, batch, seq, hidden, .. } if self.bert.is_some() => {
                let dims = vec![batch as i64, seq as i64, hidden as i64];
                let xv = self.shaped(x, &dims)?;
                if let Some(io) = &mut self.bert {
                    io.hidden = Some((xv, dims));
                }
            }
            Op::Pool { x, lens, y, batch, seq, hidden } => {
                // Mean over each sentence's tokens as a [batch, batch·seq] weighting (from the
                // lengths, known when the file is written), then L2 normalisation.
                let lens = self.constant(lens)?;
                let (b, s) = (batch as usize, seq as usize);
                let mut weights = vec![0.0f32; b * b * s];
                for i in 0..b {
                    let n = (lens[i] as usize).clamp(1, s);
                    weights[i * b * s + i * s..][..n].iter_mut().for_each(|w| *w = 1.0 / n as f32);
                }
                let pw = self.floats("pool", &[b as i64, (b * s) as i64], &weights);
                let xv = self.shaped(x, &[(b * s) as i64, hidden as i64])?;
                let mean = self.node("MatMul", &[&pw, &xv], vec![]);
                let norm = self.node("ReduceL2", &[&mean], vec![ints("axes", &[-1]), int("keepdims", 1)]);
                let tiny = self.scalar(1e-12);
                let floor = self.node("Max", &[&norm, &tiny], vec![]);
                let out = self.node("Div", &[&mean, &floor], vec![]);
                self.set(y, out, vec![b as i64, hidden as i64]);
            }
            Op::Patches { x, y, batch, channels, size, patch } => {
                self.unfolded.insert(y, Unfolded::Patches { x, batch, channels, size, patch });
            }
            Op::Unfold { x, y, batch, channels, len, kernel, stride, pad, channels_last } => {
                self.unfolded.insert(y, Unfolded::Unfold { x, batch, channels, len, kernel, stride, pad, channels_last });
            }
            Op::Positions { x, pos, cls, y, batch, seq, hidden } => {
                let (b, s, h) = (batch as i64, seq as i64, hidden as i64);
                let xv = self.shaped(x, &[b, s, h])?;
                let rows = s + cls.is_some() as i64;
                let body = match cls {
                    Some(cls) => {
                        let cv = self.shaped(cls, &[1, 1, h])?;
                        let to = self.int64s("shape", &[3], &[b, 1, h]);
                        let cb = self.node("Expand", &[&cv, &to], vec![]);
                        self.node("Concat", &[&cb, &xv], vec![int("axis", 1)])
                    }
                    None => xv,
                };
                let pv = self.shaped(pos, &[1, rows, h])?;
                let out = self.node("Add", &[&body, &pv], vec![]);
                self.set(y, out, vec![b, rows, h]);
            }
        }
        Ok(())
    }

    /// The shape an elementwise op over the first `n` values of `t` keeps: `t`'s own where it has
    /// exactly `n`, else flat.
    fn elementwise_dims(&mut self, t: T, n: u32) -> Result<Vec<i64>, ModelError> {
        let v = self.value(t)?;
        Ok(if numel(&v.dims) == n as i64 { v.dims } else { vec![n as i64] })
    }

    fn silu_mul(&mut self, g: &str, u: &str) -> String {
        let sig = self.node("Sigmoid", &[g], vec![]);
        let silu = self.node("Mul", &[g, &sig], vec![]);
        self.node("Mul", &[&silu, u], vec![])
    }

    /// `[rows, seq, heads, kv_heads, hd, kv_len, pos0]`: see [`Op::Attention`].
    fn attention(&mut self, q: T, k: T, v: T, lens: T, [rows, seq, heads, kv_heads, hd, kv_len, pos0]: [u32; 7], causal: bool) -> Result<String, ModelError> {
        let (b, s, h, kvh, hd, l) = ((rows / seq) as i64, seq as i64, heads as i64, kv_heads as i64, hd as i64, kv_len as i64);
        let qv = self.shaped(q, &[b, s, h, hd])?;
        let qt = self.transpose(&qv, &[0, 2, 1, 3]);
        let kv = self.shaped(k, &[b, l, kvh, hd])?;
        let mut kt = self.transpose(&kv, &[0, 2, 3, 1]);
        let vv = self.shaped(v, &[b, l, kvh, hd])?;
        let mut vt = self.transpose(&vv, &[0, 2, 1, 3]);
        if kvh < h {
            // Grouped heads: query head j reads KV head j / (heads / kv_heads).
            let g = h / kvh;
            let expand = |w: &mut Self, x: &str, inner: [i64; 2]| {
                let one = w.reshape(x, &[b, kvh, inner[0], inner[1]], &[b, kvh, 1, inner[0], inner[1]]);
                let to = w.int64s("shape", &[5], &[b, kvh, g, inner[0], inner[1]]);
                let wide = w.node("Expand", &[&one, &to], vec![]);
                w.reshape(&wide, &[b, kvh, g, inner[0], inner[1]], &[b, h, inner[0], inner[1]])
            };
            kt = expand(self, &kt, [hd, l]);
            vt = expand(self, &vt, [l, hd]);
        }
        let scores = self.node("MatMul", &[&qt, &kt], vec![]);
        let scale = self.scalar(1.0 / (hd as f32).sqrt());
        let mut scores = self.node("Mul", &[&scores, &scale], vec![]);
        // Keys a row may not see get −1e9 before the softmax: past each sentence's length, or
        // (causal) after the row's own position. None is added where every row sees every key.
        const HIDDEN: f32 = -1e9;
        let mask = match causal {
            true => {
                let m: Vec<f32> = (0..s).flat_map(|r| (0..l).map(move |j| if j <= pos0 as i64 + r { 0.0 } else { HIDDEN })).collect();
                Some((vec![1, 1, s, l], m))
            }
            false if self.bert.is_some() => {
                let m = self.bert_mask(lens, b, l)?;
                scores = self.node("Add", &[&scores, &m], vec![]);
                None
            }
            false => {
                let lens = self.constant(lens)?;
                let m: Vec<f32> = (0..b as usize).flat_map(|i| (0..l).map(move |j| (i, j))).map(|(i, j)| if j < (lens[i] as i64).min(l) { 0.0 } else { HIDDEN }).collect();
                m.iter().any(|&e| e != 0.0).then_some((vec![b, 1, 1, l], m))
            }
        };
        if let Some((dims, m)) = mask {
            let mv = self.floats("mask", &dims, &m);
            scores = self.node("Add", &[&scores, &mv], vec![]);
        }
        let probs = self.node("Softmax", &[&scores], vec![int("axis", -1)]);
        let out = self.node("MatMul", &[&probs, &vt], vec![]);
        let back = self.transpose(&out, &[0, 2, 1, 3]);
        Ok(self.reshape(&back, &[b, s, h, hd], &[rows as i64, h * hd]))
    }

    /// A conv1d's input `x` as `[batch, channels, len]`, from rows of channels (a previous layer's
    /// output) where `channels_last`.
    fn channels_first(&mut self, x: T, [b, c, len]: [i64; 3], channels_last: bool) -> Result<String, ModelError> {
        match channels_last {
            true => {
                let rows = self.shaped(x, &[b, len, c])?;
                Ok(self.transpose(&rows, &[0, 2, 1]))
            }
            false => self.shaped(x, &[b, c, len]),
        }
    }

    /// The linear layer over an im2col'd tensor, written as the convolution it is; returns the
    /// `[rows, n]` output (bias added).
    fn conv(&mut self, unfolded: Unfolded, w: T, b: Option<T>, n: i64) -> Result<String, ModelError> {
        let (input, weight, attrs, out_dims) = match unfolded {
            Unfolded::Patches { x, batch, channels, size, patch } => {
                let (bt, c, sz, p) = (batch as i64, channels as i64, size as i64, patch as i64);
                let xv = self.shaped(x, &[bt, c, sz, sz])?;
                let wv = self.weight(w, &[n, c, p, p], false)?;
                (xv, wv, vec![ints("kernel_shape", &[p, p]), ints("strides", &[p, p])], vec![bt, n, sz / p, sz / p])
            }
            Unfolded::Unfold { x, batch, channels, len, kernel, stride, pad, channels_last } => {
                let (bt, c, ln, kk) = (batch as i64, channels as i64, len as i64, kernel as i64);
                let xv = self.channels_first(x, [bt, c, ln], channels_last)?;
                let wv = self.weight(w, &[n, c, kk], false)?;
                let attrs = vec![ints("kernel_shape", &[kk]), ints("strides", &[stride as i64]), ints("pads", &[pad as i64, pad as i64])];
                (xv, wv, attrs, vec![bt, n, Op::unfolded_len(len, kernel, stride, pad) as i64])
            }
        };
        let mut inputs = vec![input, weight];
        if let Some(b) = b {
            inputs.push(self.shaped(b, &[n])?);
        }
        let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let y = self.node("Conv", &refs, attrs);
        let (bt, positions) = (out_dims[0], numel(&out_dims[2..]));
        let flat = self.reshape(&y, &out_dims, &[bt, n, positions]);
        let rows = self.transpose(&flat, &[0, 2, 1]);
        Ok(self.reshape(&rows, &[bt, positions, n], &[bt * positions, n]))
    }

    /// An im2col tensor that something other than a linear layer reads (a per-op case of the
    /// front end alone): written out with `Pad`, `Gather` and `Transpose`.
    fn im2col(&mut self, t: T, unfolded: Unfolded) -> Result<Value, ModelError> {
        let (out, dims) = match unfolded {
            Unfolded::Patches { x, batch, channels, size, patch } => {
                let (b, c, s, p) = (batch as i64, channels as i64, size as i64, patch as i64);
                let xv = self.shaped(x, &[b, c, s / p, p, s / p, p])?;
                let t6 = self.transpose(&xv, &[0, 2, 4, 1, 3, 5]);
                let dims = vec![b * (s / p) * (s / p), c * p * p];
                (self.reshape(&t6, &[b, s / p, s / p, c, p, p], &dims), dims)
            }
            Unfolded::Unfold { x, batch, channels, len, kernel, stride, pad, channels_last } => {
                let (b, c, ln, k) = (batch as i64, channels as i64, len as i64, kernel as i64);
                let xv = self.channels_first(x, [b, c, ln], channels_last)?;
                let pads = self.int64s("pads", &[6], &[0, 0, pad as i64, 0, 0, pad as i64]);
                let padded = self.node("Pad", &[&xv, &pads], vec![]);
                let out_len = Op::unfolded_len(len, kernel, stride, pad) as i64;
                let index: Vec<i64> = (0..out_len).flat_map(|t| (0..k).map(move |j| t * stride as i64 + j)).collect();
                let iv = self.int64s("windows", &[out_len, k], &index);
                let windows = self.node("Gather", &[&padded, &iv], vec![int("axis", 2)]);
                let rows = self.transpose(&windows, &[0, 2, 1, 3]);
                let dims = vec![b * out_len, c * k];
                (self.reshape(&rows, &[b, out_len, c, k], &dims), dims)
            }
        };
        let v = Value { name: out, dims };
        self.values.insert(t, v.clone());
        Ok(v)
    }
}
