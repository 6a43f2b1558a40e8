//! A model as a list of ops over named tensors. The same graph lowers to a GPU [`Program`] (WGSL
//! ops, one dispatch each) and evaluates on the CPU in f64 (the independent reference), so the
//! two can never drift apart in wiring, only in arithmetic, which is what the check measures.

use super::op::{Op, T};
use super::weights::Weights;
use super::fuse::{self, Dispatch};
use super::{wgsl, ModelError};
use crate::dtype::Dtype;
use crate::prng::Prng;
use crate::program::{Buffer, Caps, Init, Program};

/// What a tensor holds before the first op.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    /// Computed by an op (zeroed on the GPU).
    Computed,
    /// These values.
    F32(Vec<f32>),
    /// These integers (token ids, lengths).
    U32(Vec<u32>),
    /// The tensor of this name in the model's weights file.
    Named(String),
    /// Uniform in `[lo, hi)` from the stream `stream` of the case's seed: generated only when
    /// used, so a slice of a large model costs only what it touches.
    Seeded {
        /// Stream number, unique within the graph.
        stream: u64,
        /// Lower bound.
        lo: f32,
        /// Upper bound.
        hi: f32,
    },
}

/// One tensor (a flat f32 or u32 buffer).
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// Name, unique within the graph (`blk.0.attn_q.weight`).
    pub name: String,
    /// Elements.
    pub len: usize,
    /// Initial contents.
    pub data: Data,
    /// How the GPU stores it: f16, q8_0 or q4_0 for the linear weights of a model run so, else
    /// f32. The reference reads the same rounded (or quantized and dequantized) values.
    pub dtype: Dtype,
    /// Values a row (a weight's K), which a quantized tensor is stored by: each row a whole
    /// number of blocks.
    pub row: usize,
}

/// Tensors, tagged ops, and which tensors are the output.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Graph {
    /// Every tensor.
    pub tensors: Vec<Tensor>,
    /// `(tag, op)` in order; the tag names the op for per-op timing (`attention`, `ffn_down`).
    pub ops: Vec<(&'static str, Op)>,
    /// Tensors whose final values are the result.
    pub outputs: Vec<T>,
    /// Tensors a caller feeds each run (token ids, pixels, audio features, hidden states), as
    /// opposed to weights: what an exported model ([`super::onnx`]) takes as its inputs.
    pub inputs: Vec<T>,
    /// Seed of [`Data::Seeded`] tensors.
    pub seed: u64,
}

impl Graph {
    /// Adds a tensor and returns its index.
    pub fn tensor(&mut self, name: impl Into<String>, len: usize, data: Data) -> T {
        self.tensors.push(Tensor { name: name.into(), len, data, dtype: Dtype::F32, row: len });
        self.tensors.len() - 1
    }

    /// Stores tensor `t`, rows of `row` values (a weight's K), as `dtype` on the GPU (its values
    /// rounded to it everywhere).
    pub fn store_as(&mut self, t: T, dtype: Dtype, row: usize) -> T {
        self.tensors[t].dtype = dtype;
        self.tensors[t].row = row;
        t
    }

    /// Adds a computed tensor.
    pub fn computed(&mut self, name: impl Into<String>, len: usize) -> T {
        self.tensor(name, len, Data::Computed)
    }

    /// Adds a seeded tensor on the next free stream.
    pub fn seeded(&mut self, name: impl Into<String>, len: usize, lo: f32, hi: f32) -> T {
        let stream = self.tensors.len() as u64;
        self.tensor(name, len, Data::Seeded { stream, lo, hi })
    }

    /// Appends an op.
    pub fn op(&mut self, tag: &'static str, op: Op) {
        self.ops.push((tag, op));
    }

    /// Independent graphs side by side as one (a CLIP-shaped pair of encoders): each tensor
    /// named under its part's prefix (`text_model.`), the outputs and inputs in part order. Seeded
    /// tensors keep their streams, so a part computes the same values alone as in the union;
    /// parts must therefore not both seed a stream (a text encoder reads its weights from a file).
    pub fn union(parts: Vec<(&str, Graph)>) -> Graph {
        let seeds = |p: &Graph| p.tensors.iter().any(|t| matches!(t.data, Data::Seeded { .. }));
        let seed = parts.iter().find(|(_, p)| seeds(p)).map_or(0, |(_, p)| p.seed);
        let mut g = Graph { seed, ..Graph::default() };
        for (prefix, part) in parts {
            debug_assert!(part.seed == seed || !seeds(&part), "every part that seeds tensors has the same seed");
            let offset = g.tensors.len();
            g.tensors.extend(part.tensors.into_iter().map(|t| Tensor { name: format!("{prefix}{}", t.name), ..t }));
            g.ops.extend(part.ops.into_iter().map(|(tag, mut op)| {
                op.remap(|t| t + offset);
                (tag, op)
            }));
            g.outputs.extend(part.outputs.iter().map(|t| t + offset));
            g.inputs.extend(part.inputs.iter().map(|t| t + offset));
        }
        g
    }

    /// Floating-point operations of one run.
    pub fn flops(&self) -> f64 {
        self.ops.iter().map(|(_, op)| op.flops()).sum()
    }

    /// Bytes of every tensor as stored: what one run must at least touch.
    pub fn bytes(&self) -> f64 {
        self.tensors.iter().map(|t| t.dtype.storage_bytes(t.len, t.row) as f64).sum()
    }

    /// The ops tagged `tag` alone (the first run of them), with the tensors they touch. Inputs
    /// that earlier ops would have computed are seeded instead, so the slice runs, and is checked,
    /// on its own.
    pub fn only(&self, tag: &str) -> Graph {
        let Some(first) = self.ops.iter().position(|(t, _)| *t == tag) else {
            return Graph { seed: self.seed, ..Graph::default() };
        };
        let end = self.ops[first..].iter().position(|(t, _)| *t != tag).map_or(self.ops.len(), |n| first + n);
        let ops = &self.ops[first..end];
        let mut used: Vec<T> = Vec::new();
        let mut written: Vec<T> = Vec::new();
        for (_, op) in ops {
            let (reads, writes) = op.io();
            for t in reads.into_iter().chain(writes.iter().copied()) {
                if !used.contains(&t) {
                    used.push(t);
                }
            }
            written.extend(writes);
        }
        let mut g = Graph { seed: self.seed, ..Graph::default() };
        for (i, &t) in used.iter().enumerate() {
            let mut tensor = self.tensors[t].clone();
            let is_input = ops.iter().any(|(_, op)| op.io().0.contains(&t));
            if tensor.data == Data::Computed && is_input {
                tensor.data = Data::Seeded { stream: 1_000_000 + t as u64, lo: -1.0, hi: 1.0 };
                g.inputs.push(i);
            } else if self.inputs.contains(&t) {
                g.inputs.push(i);
            }
            g.tensors.push(tensor);
        }
        let index = |t: T| used.iter().position(|&u| u == t).expect("every op tensor is in `used`");
        for (tag, op) in ops {
            let mut op = op.clone();
            op.remap(index);
            g.ops.push((tag, op));
        }
        // The last tensor written is the slice's result (for a KV write plus attention, the
        // attention output).
        g.outputs = written.last().map(|&t| vec![index(t)]).unwrap_or_default();
        g
    }

    /// Tensor `t`'s initial values, rounded to its dtype.
    pub(crate) fn values(&self, t: T, weights: Option<&Weights>) -> Result<Vec<f32>, ModelError> {
        let tensor = &self.tensors[t];
        let mut values = match &tensor.data {
            Data::Computed => vec![0.0; tensor.len],
            Data::F32(v) => v.clone(),
            Data::U32(v) => return Ok(v.iter().map(|&x| f32::from_bits(x)).collect()),
            Data::Named(name) => weights.ok_or(ModelError::NoWeights)?.f32s(name, tensor.len, tensor.row)?,
            Data::Seeded { stream, lo, hi } => Prng::new(self.seed, *stream).fill(tensor.len, *lo, *hi),
        };
        tensor.dtype.round_rows(&mut values, tensor.row).map_err(|e| ModelError::BadTensor { name: tensor.name.clone(), problem: e.to_string() })?;
        Ok(values)
    }

    /// Tensor `t`'s initial values as numbers: integers (ids, lengths) as themselves, the rest as
    /// [`values`](Graph::values) gives them.
    pub(crate) fn values_f64(&self, t: T, weights: Option<&Weights>) -> Result<Vec<f64>, ModelError> {
        Ok(match &self.tensors[t].data {
            Data::U32(x) => x.iter().map(|&i| i as f64).collect(),
            _ => self.values(t, weights)?.into_iter().map(f64::from).collect(),
        })
    }

    /// Checks that `weights` hold every tensor the graph reads from them, in the shape it needs
    /// and a type harness reads, without reading them: the first misfit, by name.
    pub fn check_weights(&self, weights: &Weights) -> Result<(), ModelError> {
        self.tensors.iter().try_for_each(|t| match &t.data {
            Data::Named(name) => weights.check(name, t.len, t.row),
            _ => Ok(()),
        })
    }

    /// The GPU program: one buffer per tensor, one dispatch per op; `caps`, what the device offers
    /// that the linear layers may use (subgroups, tensor cores).
    pub fn lower(&self, weights: Option<&Weights>, caps: Caps) -> Result<Program, ModelError> {
        let mut p = Program::default();
        let written: std::collections::HashSet<T> = self.ops.iter().flat_map(|(_, op)| op.io().1).collect();
        for (t, tensor) in self.tensors.iter().enumerate() {
            let label = tensor.name.clone();
            let constant = tensor.data != Data::Computed && !written.contains(&t);
            let buffer = match &tensor.data {
                Data::Computed => Buffer::zeroed(label, tensor.len),
                Data::U32(v) => Buffer { constant, ..Buffer::u32s(label, v) },
                &Data::Seeded { stream, lo, hi } => {
                    let init = Init::Seeded { seed: self.seed, stream, lo, hi, elems: tensor.len as u64, dtype: tensor.dtype, row: tensor.row as u64 };
                    Buffer { label, uniform: false, init, constant }
                }
                // Values already rounded to the dtype: storing them again rounds nothing further
                // (a dequantized row quantizes back to the same blocks).
                _ => {
                    let bytes = tensor.dtype.encode_rows(&self.values(t, weights)?, tensor.row);
                    let init = Init::Bytes(bytes.map_err(|e| ModelError::BadTensor { name: tensor.name.clone(), problem: e.to_string() })?);
                    Buffer { label, uniform: false, init, constant }
                }
            };
            p.buffer(buffer);
            p.require(tensor.dtype.feature());
        }
        let dummy = p.buffer(Buffer { label: "unused".into(), uniform: false, init: Init::Zeroed(16), constant: false });
        self.lower_ops(&mut p, dummy, caps);
        p.outputs = self.outputs.clone();
        Ok(p)
    }

    /// Appends the dispatches of the ops to `p`, over the buffers that [`lower`](Graph::lower) made
    /// (tensor `t` at index `t`; `dummy` for an absent optional tensor): one per op, but where
    /// [`fuse::plan`] runs several as one.
    fn lower_ops(&self, p: &mut Program, dummy: usize, caps: Caps) {
        let dtype_of = |t: T| self.tensors[t].dtype;
        for dispatch in self.plan(caps) {
            match dispatch {
                Dispatch::Op(i) => {
                    let (tag, op) = &self.ops[i];
                    wgsl::lower(p, tag, op, dummy, &dtype_of, caps);
                }
                Dispatch::Matvecs { norm, ops: indices } => {
                    let ops: Vec<&Op> = indices.iter().map(|&i| &self.ops[i].1).collect();
                    let tag = self.ops[norm.unwrap_or(indices[0])].0;
                    // fuse::plan fuses only what runs as one matvec.
                    if let Some(mv) = wgsl::matvec_for(&ops, caps, &dtype_of) {
                        wgsl::matvecs(p, tag, mv, norm.map(|n| &self.ops[n].1), &ops, &dtype_of);
                    }
                }
                Dispatch::Gemms { ops: indices } => {
                    let ops: Vec<&Op> = indices.iter().map(|&i| &self.ops[i].1).collect();
                    wgsl::gemms(p, self.ops[indices[0]].0, &ops, &dtype_of, caps);
                }
                Dispatch::Activated { linear, gelu } => {
                    let (tag, op) = &self.ops[linear];
                    wgsl::activated(p, tag, op, &self.ops[gelu].1, &dtype_of, caps);
                }
                Dispatch::Normed { linear, norm } => {
                    let (tag, op) = &self.ops[linear];
                    wgsl::normed(p, tag, op, &self.ops[norm].1, &dtype_of, caps);
                }
                Dispatch::DecodeAttention { ropes: [q, k], writes: [_, v], attention } => {
                    let op = |i: usize| &self.ops[i].1;
                    wgsl::decode_attention(p, self.ops[attention].0, [op(q), op(k), op(v), op(attention)], caps);
                }
            }
        }
    }

    /// Which ops share a dispatch ([`fuse::plan`]) on a device offering `caps`.
    pub fn plan(&self, caps: Caps) -> Vec<Dispatch> {
        let dtype_of = |t: T| self.tensors[t].dtype;
        let scratch = |t: T| self.tensors[t].data == Data::Computed && !self.outputs.contains(&t);
        fuse::plan(&fuse::Ops { ops: &self.ops, dtype_of: &dtype_of, scratch: &scratch }, caps)
    }

    /// The dispatches one run of [`lower`](Graph::lower)'s program issues on a GPU, counted
    /// without building any buffer (so without the weights).
    pub fn dispatches(&self) -> u32 {
        self.dispatches_on(Caps::NONE)
    }

    /// [`dispatches`](Graph::dispatches) on a device offering `caps` (a CPU's kernels fuse
    /// otherwise than a GPU's).
    pub fn dispatches_on(&self, caps: Caps) -> u32 {
        // Empty stand-ins for the tensors' buffers, which a fused dispatch turns into views.
        let buffers = self.tensors.iter().map(|t| Buffer { label: t.name.clone(), uniform: false, init: Init::Zeroed(0), constant: false }).collect();
        let mut p = Program { buffers, ..Program::default() };
        self.lower_ops(&mut p, 0, caps);
        p.steps.len() as u32
    }

    /// Runs the graph on the CPU in f64 and returns the outputs, concatenated. The tensors'
    /// initial values are made on every core ([`crate::rows::row_blocks`]): a seeded TinyLlama's
    /// are 1.1 billion generated, rounded to their dtype (quantized and dequantized for q4_0).
    pub fn evaluate(&self, weights: Option<&Weights>) -> Result<Vec<f64>, ModelError> {
        let mut initial: Vec<Result<Vec<f64>, ModelError>> = (0..self.tensors.len()).map(|_| Ok(Vec::new())).collect();
        crate::rows::row_blocks(&mut initial, 1, 1, |t, slot| slot[0] = self.values_f64(t, weights));
        let mut v = initial.into_iter().collect::<Result<Vec<Vec<f64>>, ModelError>>()?;
        for (_, op) in &self.ops {
            super::cpu::eval(op, &mut v);
        }
        Ok(self.outputs.iter().flat_map(|&t| v[t].clone()).collect())
    }
}
