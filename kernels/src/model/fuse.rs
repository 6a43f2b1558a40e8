//! Which ops of a graph share a dispatch. A decode step is a few megabytes of weights spread over
//! hundreds of small ops, so its time goes to dispatches rather than to memory unless neighbouring
//! ops run as one. The graph itself stays unfused, op by op, because it is also what the f64
//! reference evaluates: fusion is only how the GPU program carries the ops out, and the check
//! against the unfused reference is what tells a wrong fusion.
//!
//! Two fusions, each where the intermediate tensors it skips are read by nothing else:
//! - **Matvecs of one input**: consecutive linear layers of the same x (Q, K and V) run as one
//!   matvec over their weights one after another; an RMSNorm right before them (or before a
//!   SwiGLU) is folded into their prologue.
//! - **Decode attention**: the RoPE of one token's query and key and its two KV-cache writes are
//!   done by the attention dispatch that reads them.

use super::graph::{Data, Graph};
use super::op::{Op, T};
use crate::catalog::matvec::MAX_SEGMENTS;

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

/// The dispatches of `g`, in order, every op in exactly one. `subgroups`: whether the device has
/// them, as the linear layers' choice of kernel depends on it.
pub fn plan(g: &Graph, subgroups: bool) -> Vec<Dispatch> {
    let mut readers = vec![0u32; g.tensors.len()];
    for (_, op) in &g.ops {
        for t in op.io().0 {
            readers[t] += 1;
        }
    }
    // A tensor only `n` ops read, which no one sees afterwards: a fused dispatch may skip storing it.
    let internal = |t: T, n: u32| g.tensors[t].data == Data::Computed && !g.outputs.contains(&t) && readers[t] == n;
    let mut out = Vec::new();
    let mut i = 0;
    while i < g.ops.len() {
        let fused = decode_attention(g, i, &internal).or_else(|| matvecs(g, i, subgroups, &internal));
        let taken = match &fused {
            Some(Dispatch::Matvecs { norm, ops }) => ops.len() + norm.is_some() as usize,
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
fn matvecs(g: &Graph, i: usize, subgroups: bool, internal: &dyn Fn(T, u32) -> bool) -> Option<Dispatch> {
    let (norm, first) = match g.ops[i].1 {
        Op::Norm { b: None, y, .. } => (Some((i, y)), i + 1),
        _ => (None, i),
    };
    let x = match g.ops.get(first)?.1 {
        Op::SwiGlu { x, .. } => {
            // A SwiGLU already is one matvec; it gains only a folded norm.
            let (_, y) = norm?;
            return (x == y && internal(y, 1) && is_matvec(g, &[first], subgroups)).then(|| Dispatch::Matvecs { norm: norm.map(|n| n.0), ops: vec![first] });
        }
        Op::Linear { x, b: None, .. } => x,
        _ => return None,
    };
    let same_input = |j: &usize| match (&g.ops[first].1, g.ops.get(*j).map(|o| &o.1)) {
        (Op::Linear { m, k, w, .. }, Some(Op::Linear { x: x2, b: None, add: None, m: m2, k: k2, w: w2, .. })) => {
            *x2 == x && m2 == m && k2 == k && g.tensors[*w2].dtype == g.tensors[*w].dtype
        }
        _ => false,
    };
    // Further segments carry no epilogue: the first may add a residual only on its own.
    let mut ops = vec![first];
    if matches!(g.ops[first].1, Op::Linear { add: None, .. }) {
        ops.extend((first + 1..).take_while(same_input).take(MAX_SEGMENTS as usize - 1));
    }
    if !is_matvec(g, &ops, subgroups) {
        return None;
    }
    match norm {
        // A norm that cannot fold stays a dispatch of its own; the matvecs after it are looked at
        // again from their own index.
        Some((n, y)) => (x == y && internal(y, ops.len() as u32)).then(|| Dispatch::Matvecs { norm: Some(n), ops }),
        None => (ops.len() > 1).then_some(Dispatch::Matvecs { norm: None, ops }),
    }
}

/// Whether `ops` (linear layers of one input, or one SwiGLU) run as one matvec.
fn is_matvec(g: &Graph, ops: &[usize], subgroups: bool) -> bool {
    let ops: Vec<&Op> = ops.iter().map(|&j| &g.ops[j].1).collect();
    super::wgsl::matvec_for(&ops, subgroups, &|t| g.tensors[t].dtype).is_some()
}

/// The decode attention starting at op `i`: RoPE of q, RoPE of k, cache writes of the rotated k
/// and of v, then attention over those caches for one token, whose rotated q and k nothing else reads.
fn decode_attention(g: &Graph, i: usize, internal: &dyn Fn(T, u32) -> bool) -> Option<Dispatch> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::decoder::{DecoderCase, LlamaConfig, Phase};

    fn decode(config: LlamaConfig) -> Graph {
        DecoderCase { model: "test".into(), config, phase: Phase::Decode, ctx: 3, dtype: crate::Dtype::F32 }.graph(1)
    }

    #[test]
    fn a_decode_layer_plans_as_norm_qkv_attention_o_proj_norm_gate_up_down() {
        let config = LlamaConfig { hidden: 64, heads: 8, kv_heads: 2, ffn: 96, layers: 1 };
        let g = decode(config);
        let plan = plan(&g, false);
        let kinds: Vec<&str> = plan
            .iter()
            .map(|d| match d {
                Dispatch::Op(i) => g.ops[*i].0,
                Dispatch::Matvecs { norm: Some(_), ops } if ops.len() == 3 => "norm+qkv",
                Dispatch::Matvecs { norm: Some(_), .. } => "norm+gate_up",
                Dispatch::Matvecs { .. } => "matvecs",
                Dispatch::DecodeAttention { .. } => "rope+kv_write+attention",
            })
            .collect();
        assert_eq!(kinds, ["norm+qkv", "rope+kv_write+attention", "o_proj", "norm+gate_up", "down", "final_norm"]);
    }

    #[test]
    fn what_another_op_reads_or_the_run_returns_is_not_fused_away() {
        let config = LlamaConfig { hidden: 64, heads: 8, kv_heads: 2, ffn: 96, layers: 1 };
        // The attention norm's output is also a result: the norm must store it.
        let mut g = decode(config);
        let hn = g.ops.iter().find_map(|(tag, op)| match op {
            Op::Norm { y, .. } if *tag == "attn_norm" => Some(*y),
            _ => None,
        });
        g.outputs.push(hn.unwrap());
        assert!(matches!(plan(&g, false)[0], Dispatch::Op(0)), "{:?}", plan(&g, false));
        assert!(matches!(plan(&g, false)[1], Dispatch::Matvecs { norm: None, .. }));
        // A head dimension of 6 is no whole number of vec4s: RoPE, writes and attention stay apart.
        let odd = decode(LlamaConfig { hidden: 48, heads: 8, kv_heads: 2, ffn: 96, layers: 1 });
        assert!(!plan(&odd, false).iter().any(|d| matches!(d, Dispatch::DecodeAttention { .. })));
        // Every op is in exactly one dispatch, fused or not.
        for g in [&g, &odd] {
            let mut seen: Vec<usize> = plan(g, false)
                .into_iter()
                .flat_map(|d| match d {
                    Dispatch::Op(i) => vec![i],
                    Dispatch::Matvecs { norm, ops } => norm.into_iter().chain(ops).collect(),
                    Dispatch::DecodeAttention { ropes, writes, attention } => [ropes.to_vec(), writes.to_vec(), vec![attention]].concat(),
                })
                .collect();
            seen.sort();
            assert_eq!(seen, (0..g.ops.len()).collect::<Vec<_>>());
        }
    }
}
