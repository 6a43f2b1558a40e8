//! A model as a list of ops over named tensors. The same graph lowers to a GPU [`Program`] (WGSL
//! ops, one dispatch each) and evaluates on the CPU in f64 (the independent reference), so the
//! two can never drift apart in wiring, only in arithmetic, which is what the check measures.

use super::weights::Weights;
use super::{wgsl, ModelError};
use crate::kernel::linear_workgroups;
use crate::prng::Prng;
use crate::program::{Buffer, Init, Program};

/// A tensor's index in [`Graph::tensors`].
pub type T = usize;

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
    /// Name, unique within the graph (`l0.wq`).
    pub name: String,
    /// Elements.
    pub len: usize,
    /// Initial contents.
    pub data: Data,
}

/// One operation. Shapes are row-major; `Linear`'s weight is `[n, k]` (PyTorch's layout).
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// `y[m,n] = x[m,k] · w[n,k]ᵀ (+ b[n])`.
    Linear { x: T, w: T, b: Option<T>, y: T, m: u32, k: u32, n: u32 },
    /// Row normalisation over `cols`: LayerNorm with a bias, RMSNorm without.
    Norm { x: T, g: T, b: Option<T>, y: T, rows: u32, cols: u32, eps: f32 },
    /// `y = a + b`.
    Add { a: T, b: T, y: T, n: u32 },
    /// `y = gelu(x)` with the exact erf form (BERT).
    Gelu { x: T, y: T, n: u32 },
    /// `y = silu(g) · u` (SwiGLU).
    SiluMul { g: T, u: T, y: T, n: u32 },
    /// Rotary embedding, rotate-half form (Llama): token `t` is at position `pos0 + t`.
    Rope { x: T, y: T, tokens: u32, heads: u32, hd: u32, pos0: u32, base: f32 },
    /// `cache[pos0 + t] = src[t]` for `tokens` rows of `dim`: appends to a KV cache.
    KvWrite { src: T, cache: T, tokens: u32, dim: u32, pos0: u32 },
    /// Scaled dot-product attention with grouped KV heads. Query row `r` is token `r % seq` of
    /// sequence `r / seq`; it sees keys `0..lens[r / seq]`, or with `causal` keys
    /// `0..=pos0 + r % seq`.
    Attention {
        q: T, k: T, v: T, lens: T, y: T,
        rows: u32, seq: u32, heads: u32, kv_heads: u32, hd: u32, kv_len: u32, causal: bool, pos0: u32,
    },
    /// BERT embeddings: `word[ids[r]] + pos[r % seq] + ty[0]`.
    Embed { ids: T, word: T, pos: T, ty: T, y: T, rows: u32, seq: u32, hidden: u32 },
    /// Mean over each sequence's first `lens[b]` rows, then L2 normalisation.
    Pool { x: T, lens: T, y: T, batch: u32, seq: u32, hidden: u32 },
}

impl Op {
    /// Tensors read and written, as `(reads, writes)`.
    fn io(&self) -> (Vec<T>, Vec<T>) {
        use Op::*;
        match *self {
            Linear { x, w, b, y, .. } => ([vec![x, w], b.into_iter().collect()].concat(), vec![y]),
            Norm { x, g, b, y, .. } => ([vec![x, g], b.into_iter().collect()].concat(), vec![y]),
            Add { a, b, y, .. } => (vec![a, b], vec![y]),
            Gelu { x, y, .. } => (vec![x], vec![y]),
            SiluMul { g, u, y, .. } => (vec![g, u], vec![y]),
            Rope { x, y, .. } => (vec![x], vec![y]),
            KvWrite { src, cache, .. } => (vec![src, cache], vec![cache]),
            Attention { q, k, v, lens, y, .. } => (vec![q, k, v, lens], vec![y]),
            Embed { ids, word, pos, ty, y, .. } => (vec![ids, word, pos, ty], vec![y]),
            Pool { x, lens, y, .. } => (vec![x, lens], vec![y]),
        }
    }

    fn remap(&mut self, f: impl Fn(T) -> T) {
        use Op::*;
        let opt = |b: &mut Option<T>| *b = b.map(&f);
        match self {
            Linear { x, w, b, y, .. } => { *x = f(*x); *w = f(*w); opt(b); *y = f(*y) }
            Norm { x, g, b, y, .. } => { *x = f(*x); *g = f(*g); opt(b); *y = f(*y) }
            Add { a, b, y, .. } => { *a = f(*a); *b = f(*b); *y = f(*y) }
            Gelu { x, y, .. } | Rope { x, y, .. } => { *x = f(*x); *y = f(*y) }
            SiluMul { g, u, y, .. } => { *g = f(*g); *u = f(*u); *y = f(*y) }
            KvWrite { src, cache, .. } => { *src = f(*src); *cache = f(*cache) }
            Attention { q, k, v, lens, y, .. } => { *q = f(*q); *k = f(*k); *v = f(*v); *lens = f(*lens); *y = f(*y) }
            Embed { ids, word, pos, ty, y, .. } => { *ids = f(*ids); *word = f(*word); *pos = f(*pos); *ty = f(*ty); *y = f(*y) }
            Pool { x, lens, y, .. } => { *x = f(*x); *lens = f(*lens); *y = f(*y) }
        }
    }

    /// Floating-point operations (multiply-adds count two).
    pub fn flops(&self) -> f64 {
        use Op::*;
        match *self {
            Linear { m, k, n, .. } => 2.0 * m as f64 * k as f64 * n as f64,
            Norm { rows, cols, .. } => 5.0 * rows as f64 * cols as f64,
            Add { n, .. } | Gelu { n, .. } => n as f64,
            SiluMul { n, .. } => 3.0 * n as f64,
            Rope { tokens, heads, hd, .. } => 3.0 * (tokens * heads * hd) as f64,
            KvWrite { .. } | Embed { .. } => 0.0,
            Attention { rows, heads, hd, kv_len, causal, pos0, seq, .. } => {
                let keys = if causal { (pos0 + seq / 2 + 1).min(kv_len) } else { seq.min(kv_len) };
                4.0 * rows as f64 * heads as f64 * hd as f64 * keys as f64
            }
            Pool { batch, seq, hidden, .. } => 2.0 * (batch * seq * hidden) as f64,
        }
    }
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
    /// Seed of [`Data::Seeded`] tensors.
    pub seed: u64,
}

impl Graph {
    /// Adds a tensor and returns its index.
    pub fn tensor(&mut self, name: impl Into<String>, len: usize, data: Data) -> T {
        self.tensors.push(Tensor { name: name.into(), len, data });
        self.tensors.len() - 1
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

    /// Floating-point operations of one run.
    pub fn flops(&self) -> f64 {
        self.ops.iter().map(|(_, op)| op.flops()).sum()
    }

    /// Bytes of every tensor: what one run must at least touch.
    pub fn bytes(&self) -> f64 {
        4.0 * self.tensors.iter().map(|t| t.len as f64).sum::<f64>()
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
        for &t in &used {
            let mut tensor = self.tensors[t].clone();
            let is_input = ops.iter().any(|(_, op)| op.io().0.contains(&t));
            if tensor.data == Data::Computed && is_input {
                tensor.data = Data::Seeded { stream: 1_000_000 + t as u64, lo: -1.0, hi: 1.0 };
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

    fn values(&self, t: T, weights: Option<&Weights>) -> Result<Vec<f32>, ModelError> {
        let tensor = &self.tensors[t];
        Ok(match &tensor.data {
            Data::Computed => vec![0.0; tensor.len],
            Data::F32(v) => v.clone(),
            Data::U32(v) => v.iter().map(|&x| f32::from_bits(x)).collect(),
            Data::Named(name) => weights.ok_or(ModelError::NoWeights)?.f32s(name, tensor.len)?,
            Data::Seeded { stream, lo, hi } => Prng::new(self.seed, *stream).fill(tensor.len, *lo, *hi),
        })
    }

    /// The GPU program: one buffer per tensor, one dispatch per op.
    pub fn lower(&self, weights: Option<&Weights>) -> Result<Program, ModelError> {
        let mut p = Program::default();
        for (t, tensor) in self.tensors.iter().enumerate() {
            let label = tensor.name.clone();
            let buffer = match &tensor.data {
                Data::Computed => Buffer::zeroed(label, tensor.len),
                Data::U32(v) => Buffer::u32s(label, v),
                &Data::Seeded { stream, lo, hi } => {
                    let init = Init::Seeded { seed: self.seed, stream, lo, hi, elems: tensor.len as u64 };
                    Buffer { label, uniform: false, init }
                }
                _ => Buffer::f32s(label, &self.values(t, weights)?),
            };
            p.buffer(buffer);
        }
        let dummy = p.buffer(Buffer { label: "unused".into(), uniform: false, init: Init::Zeroed(16) });
        for (tag, op) in &self.ops {
            wgsl::lower(&mut p, tag, op, dummy);
        }
        p.outputs = self.outputs.clone();
        Ok(p)
    }

    /// Runs the graph on the CPU in f64 and returns the outputs, concatenated.
    pub fn evaluate(&self, weights: Option<&Weights>) -> Result<Vec<f64>, ModelError> {
        let mut v: Vec<Vec<f64>> = Vec::with_capacity(self.tensors.len());
        for (t, tensor) in self.tensors.iter().enumerate() {
            v.push(match &tensor.data {
                Data::U32(x) => x.iter().map(|&i| i as f64).collect(),
                _ => self.values(t, weights)?.into_iter().map(f64::from).collect(),
            });
        }
        for (_, op) in &self.ops {
            super::cpu::eval(op, &mut v);
        }
        Ok(self.outputs.iter().flat_map(|&t| v[t].clone()).collect())
    }
}

/// Workgroups for `n` one-thread-per-element invocations.
pub fn elementwise(n: u32) -> [u32; 3] {
    linear_workgroups(n as usize)
}
