//! Which ops of a graph share a dispatch. A decode step is a few megabytes of weights spread over
//! hundreds of small ops, so its time goes to dispatches rather than to memory unless neighbouring
//! ops run as one. The graph itself stays unfused, op by op, because it is also what the f64
//! reference evaluates: fusion is only how the GPU program carries the ops out, and the check
//! against the unfused reference is what tells a wrong fusion.
//!
//! Five fusions:
//! - **Matvecs of one input**: consecutive linear layers of the same x (Q, K and V) run as one
//!   matvec over their weights one after another; an RMSNorm right before them (or before a
//!   SwiGLU) is folded into their prologue, where nothing else reads its output.
//! - **GEMMs of one input**: consecutive linear layers of the same x and width, of many rows, run
//!   as one `matmul` over their weights one after another, each output a range of one buffer.
//!   Each alone may have too few blocks to fill a large GPU (MiniLM's 384-wide Q, K and V at 8
//!   sentences of 128 tokens: 96 blocks of 64×64 for 132 SMs), three times the columns have enough.
//! - **A GEMM and its GELU**: a linear layer of many rows whose output only the GELU right after
//!   it reads (an MLP's first layer) stores the GELU of its outputs, as the residual is added, so
//!   the activation costs no dispatch nor a pass over the MLP's widest tensor.
//! - **A split GEMM and the norm after it**: where a linear layer's K splits, the dispatch that
//!   adds up its chunks (with the bias and the residual) also normalizes each row of the sum, as the
//!   LayerNorm right after a transformer's residual needs, and stores both.
//! - **Decode attention**: the RoPE of one token's query and key and its two KV-cache writes are
//!   done by the attention dispatch that reads them, where nothing else reads the rotated ones.

use super::op::{Op, T};
use crate::dtype::Dtype;
use crate::catalog::linear::Linear;
use crate::catalog::matvec::MAX_SEGMENTS;
use crate::program::Caps;

/// One dispatch of the lowered graph, by the indices of the ops it carries out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dispatch {
    /// One op as it is.
    Op(usize),
    /// `Linear`s without a bias of one input, or one `SwiGlu`, as one matvec, with the RMSNorm
    /// `norm` (whose output is their input) folded in front where given.
    Matvecs {
        /// The RMSNorm op, if folded.
        norm: Option<usize>,
        /// The matvec ops, in order.
        ops: Vec<usize>,
    },
    /// `Linear`s of one input and width (of several rows, float weights) as one `matmul` over
    /// their weights one after another: the weights, biases and outputs are each one buffer, of
    /// which every op's tensor is a range.
    Gemms {
        /// The linear ops, in order.
        ops: Vec<usize>,
    },
    /// A linear layer run as `matmul` and the GELU of its output, which nothing else reads, as
    /// one `matmul` storing the GELU.
    Activated {
        /// The linear op.
        linear: usize,
        /// The GELU op.
        gelu: usize,
    },
    /// A linear layer whose K splits and the norm of its output, as its `matmul` and one dispatch
    /// that adds up the chunks, stores the sum and normalizes it.
    Normed {
        /// The linear op.
        linear: usize,
        /// The norm op.
        norm: usize,
    },
    /// RoPE of a token's query and key, the KV-cache writes of its key and value, and the
    /// attention of that one token, as one attention dispatch.
    DecodeAttention {
        /// The RoPE of the query, then of the key.
        ropes: [usize; 2],
        /// The cache writes of the (rotated) key, then of the value.
        writes: [usize; 2],
        /// The attention.
        attention: usize,
    },
}

impl Dispatch {
    /// The indices of the ops it carries out.
    pub fn ops(&self) -> Vec<usize> {
        match self {
            Dispatch::Op(i) => vec![*i],
            Dispatch::Matvecs { norm, ops } => norm.iter().chain(ops).copied().collect(),
            Dispatch::Gemms { ops } => ops.clone(),
            Dispatch::Activated { linear, gelu } => vec![*linear, *gelu],
            Dispatch::Normed { linear, norm } => vec![*linear, *norm],
            Dispatch::DecodeAttention { ropes, writes, attention } => [&ropes[..], &writes[..], &[*attention]].concat(),
        }
    }
}

/// The ops of a graph, as [`plan`] sees them.
pub struct Ops<'a> {
    /// `(tag, op)` in order.
    pub ops: &'a [(&'static str, Op)],
    /// How each tensor is stored.
    pub dtype_of: &'a dyn Fn(T) -> Dtype,
    /// Whether a tensor is computed by an op and not a result: a fused dispatch may skip storing
    /// it where nothing else reads it.
    pub scratch: &'a dyn Fn(T) -> bool,
}

/// The dispatches of `g`, in order, every op in exactly one. `caps`: what the device offers, as
/// the linear layers' choice of kernel depends on it (subgroups, a CPU).
pub fn plan(g: &Ops, caps: Caps) -> Vec<Dispatch> {
    let mut readers: std::collections::HashMap<T, u32> = std::collections::HashMap::new();
    for (_, op) in g.ops {
        for t in op.io().0 {
            *readers.entry(t).or_default() += 1;
        }
    }
    // A tensor only `n` ops read, which no one sees afterwards: a fused dispatch may skip storing it.
    let internal = |t: T, n: u32| (g.scratch)(t) && readers.get(&t).copied().unwrap_or(0) == n;
    let mut out = Vec::new();
    let mut i = 0;
    while i < g.ops.len() {
        let fused = decode_attention(g, i, &internal)
            .or_else(|| matvecs(g, i, caps, &internal))
            .or_else(|| gemms(g, i, caps))
            .or_else(|| activated(g, i, caps, &internal))
            .or_else(|| normed(g, i, caps));
        let taken = match &fused {
            Some(Dispatch::Matvecs { norm, ops }) => ops.len() + norm.is_some() as usize,
            Some(Dispatch::Gemms { ops }) => ops.len(),
            Some(Dispatch::Activated { .. } | Dispatch::Normed { .. }) => 2,
            Some(Dispatch::DecodeAttention { .. }) => 5,
            _ => 1,
        };
        out.push(fused.unwrap_or(Dispatch::Op(i)));
        i += taken;
    }
    out
}

/// The matvec ops starting at op `i` (after an RMSNorm there, folded), if more than one op runs
/// as one dispatch.
fn matvecs(g: &Ops, i: usize, caps: Caps, internal: &dyn Fn(T, u32) -> bool) -> Option<Dispatch> {
    let (norm, first) = match g.ops[i].1 {
        Op::Norm { b: None, y, .. } => (Some((i, y)), i + 1),
        _ => (None, i),
    };
    let x = match g.ops.get(first)?.1 {
        Op::SwiGlu { x, .. } => {
            // A SwiGLU already is one matvec; it gains only a folded norm.
            let (_, y) = norm?;
            return (x == y && internal(y, 1) && is_matvec(g, &[first], caps)).then(|| Dispatch::Matvecs { norm: norm.map(|n| n.0), ops: vec![first] });
        }
        Op::Linear { x, b: None, .. } => x,
        _ => return None,
    };
    let same_input = |j: &usize| match (&g.ops[first].1, g.ops.get(*j).map(|o| &o.1)) {
        (Op::Linear { m, k, w, .. }, Some(Op::Linear { x: x2, b: None, add: None, m: m2, k: k2, w: w2, .. })) => {
            *x2 == x && m2 == m && k2 == k && (g.dtype_of)(*w2) == (g.dtype_of)(*w)
        }
        _ => false,
    };
    // Further segments carry no epilogue: the first may add a residual only on its own.
    let mut ops = vec![first];
    if matches!(g.ops[first].1, Op::Linear { add: None, .. }) {
        ops.extend((first + 1..).take_while(same_input).take(MAX_SEGMENTS as usize - 1));
    }
    if !is_matvec(g, &ops, caps) {
        return None;
    }
    match norm {
        // A norm that cannot fold stays a dispatch of its own; the matvecs after it are looked at
        // again from their own index.
        Some((n, y)) => (x == y && internal(y, ops.len() as u32)).then_some(Dispatch::Matvecs { norm: Some(n), ops }),
        None => (ops.len() > 1).then_some(Dispatch::Matvecs { norm: None, ops }),
    }
}

/// The linear layers from op `i` on that run as one `matmul` ([`Dispatch::Gemms`]): of the same x,
/// shape and float weight type, none adding a residual, whose weights, biases and outputs join
/// ([`joinable`](super::wgsl::joinable)); where together they run as one `matmul` (K split or not).
fn gemms(g: &Ops, i: usize, caps: Caps) -> Option<Dispatch> {
    let Op::Linear { x, w, add: None, m, k, n, .. } = g.ops[i].1 else { return None };
    let dtype = (g.dtype_of)(w);
    if !super::wgsl::joinable(dtype, [m, k, n]) {
        return None;
    }
    let alike = |op: &Op| matches!(*op, Op::Linear { x: x2, w: w2, add: None, m: m2, k: k2, n: n2, .. } if (x2, m2, k2, n2) == (x, m, k, n) && (g.dtype_of)(w2) == dtype);
    let ops: Vec<usize> = (i..g.ops.len()).take_while(|&j| alike(&g.ops[j].1)).collect();
    // Each tensor becomes a range of one buffer: none may be two layers' (or x).
    let mut tensors: Vec<T> = ops.iter().flat_map(|&j| match g.ops[j].1 { Op::Linear { w, b, y, .. } => [Some(w), b, Some(y)], _ => [None; 3] }).flatten().collect();
    tensors.push(x);
    let count = tensors.len();
    tensors.sort_unstable();
    tensors.dedup();
    if tensors.len() < count {
        return None;
    }
    let n_all = n * ops.len() as u32;
    let kernel = Linear::choose_for(m, k, n_all, caps, dtype);
    (ops.len() > 1 && matches!(kernel, Linear::Matmul(_))).then_some(Dispatch::Gemms { ops })
}

/// The linear layer at op `i` and the GELU right after it ([`Dispatch::Activated`]), where the
/// layer runs as `matmul` and nothing but the GELU reads its output.
fn activated(g: &Ops, i: usize, caps: Caps, internal: &dyn Fn(T, u32) -> bool) -> Option<Dispatch> {
    let Op::Linear { y, .. } = g.ops[i].1 else { return None };
    let Op::Gelu { x, .. } = g.ops.get(i + 1)?.1 else { return None };
    (x == y && internal(y, 1) && !is_matvec(g, &[i], caps)).then_some(Dispatch::Activated { linear: i, gelu: i + 1 })
}

/// The linear layer at op `i` and the norm of its output right after it ([`Dispatch::Normed`]),
/// where the layer runs as `matmul` with K split.
fn normed(g: &Ops, i: usize, caps: Caps) -> Option<Dispatch> {
    let Op::Linear { y, m, k, n, .. } = g.ops[i].1 else { return None };
    let Op::Norm { x, rows, cols, .. } = g.ops.get(i + 1)?.1 else { return None };
    let splits = super::wgsl::matmul_kernel(m, k, n, caps).k_split(m, k, n, caps).0;
    (x == y && (rows, cols) == (m, n) && splits > 1 && !is_matvec(g, &[i], caps)).then_some(Dispatch::Normed { linear: i, norm: i + 1 })
}

/// Whether `ops` (linear layers of one input, or one SwiGLU) run as one matvec.
fn is_matvec(g: &Ops, ops: &[usize], caps: Caps) -> bool {
    let ops: Vec<&Op> = ops.iter().map(|&j| &g.ops[j].1).collect();
    super::wgsl::matvec_for(&ops, caps, g.dtype_of).is_some()
}

/// The decode attention starting at op `i`: RoPE of q, RoPE of k, cache writes of the rotated k
/// and of v, then attention over those caches for one token, whose rotated q and k nothing else reads.
fn decode_attention(g: &Ops, i: usize, internal: &dyn Fn(T, u32) -> bool) -> Option<Dispatch> {
    let ops: Vec<&Op> = g.ops.get(i..i + 5)?.iter().map(|(_, op)| op).collect();
    let [
        Op::Rope { y: qr, tokens: 1, pos0, .. },
        Op::Rope { y: kr, tokens: 1, pos0: kpos, .. },
        Op::KvWrite { src: ks, cache: kc, tokens: 1, pos0: kw, .. },
        Op::KvWrite { cache: vc, tokens: 1, pos0: vw, .. },
        Op::Attention { q, k, v, rows: 1, seq: 1, hd, kv_len, .. },
    ] = ops[..] else { return None };
    let wired = q == qr && ks == kr && k == kc && v == vc && kc != vc;
    let at_one_position = [kpos, kw, vw].into_iter().all(|p| p == pos0) && *pos0 < *kv_len;
    // The rotated query and key are kept in workgroup memory as vec4s.
    let fits = hd % 4 == 0 && *hd <= super::wgsl::MAX_FUSED_HEAD_DIM;
    (wired && at_one_position && fits && internal(*qr, 1) && internal(*kr, 1))
        .then_some(Dispatch::DecodeAttention { ropes: [i, i + 1], writes: [i + 2, i + 3], attention: i + 4 })
}
