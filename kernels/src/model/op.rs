//! The ops a model graph is made of, over tensors named by their index in the graph: what both
//! the WGSL lowering and the f64 reference evaluate.

/// A tensor's index in [`Graph::tensors`](super::graph::Graph::tensors).
pub type T = usize;

/// One operation. Shapes are row-major; `Linear`'s weight is `[n, k]` (PyTorch's layout).
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// `y[m,n] = x[m,k] · w[n,k]ᵀ (+ b[n]) (+ add[m,n])`: `add` is the residual a transformer adds
    /// right after the layer, folded into its store.
    Linear { x: T, w: T, b: Option<T>, add: Option<T>, y: T, m: u32, k: u32, n: u32 },
    /// `y[m,n] = silu(x[m,k] · gate[n,k]ᵀ) · (x · up[n,k]ᵀ)`: SwiGLU's gate and up projections and
    /// their product, one dispatch for one row (both weights stored alike).
    SwiGlu { x: T, gate: T, up: T, y: T, m: u32, k: u32, n: u32 },
    /// Row normalisation over `cols`: LayerNorm with a bias, RMSNorm without.
    Norm { x: T, g: T, b: Option<T>, y: T, rows: u32, cols: u32, eps: f32 },
    /// `y = a + b`.
    Add { a: T, b: T, y: T, n: u32 },
    /// `y = gelu(x)` with the exact erf form (BERT).
    Gelu { x: T, y: T, n: u32 },
    /// `y = silu(g) · u` (SwiGLU).
    SiluMul { g: T, u: T, y: T, n: u32 },
    /// Rotary embedding, rotate-half form (Llama): token `t` is at position `pos0 + t`. The GPU
    /// reads each angle's cosine and sine from `table` ([`super::rope::table`] of these
    /// positions); the reference computes them from `base`.
    Rope { x: T, y: T, table: T, tokens: u32, heads: u32, hd: u32, pos0: u32, base: f32 },
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
    /// A ViT's patches as rows: `x` is `batch` images `[channels, size, size]`; row
    /// `b·P + py·(size/patch) + px` of `y` is patch (py, px), its columns in `(c, ky, kx)` order
    /// (a conv2d weight `[out, c, patch, patch]` flattened), so that the patch embedding is a GEMM.
    Patches { x: T, y: T, batch: u32, channels: u32, size: u32, patch: u32 },
    /// A conv1d's input windows as rows (im2col): row `b·len_out + t` of `y` holds, in `(c, j)`
    /// order, `x[b, c, t·stride + j − pad]` (zero outside `0..len`); `x` is `[batch, channels,
    /// len]`, or `[batch, len, channels]` with `channels_last` (a previous layer's rows).
    Unfold { x: T, y: T, batch: u32, channels: u32, len: u32, kernel: u32, stride: u32, pad: u32, channels_last: bool },
    /// `y[b, j] = x[b, j − 1] + pos[j]` over `seq` rows of `hidden` per item, after a first row
    /// `cls + pos[0]` where a class token is given (ViT), else `x[b, j] + pos[j]` (Whisper).
    Positions { x: T, pos: T, cls: Option<T>, y: T, batch: u32, seq: u32, hidden: u32 },
}

impl Op {
    /// Rows a [`Op::Unfold`] of `len` makes per item.
    pub fn unfolded_len(len: u32, kernel: u32, stride: u32, pad: u32) -> u32 {
        (len + 2 * pad).saturating_sub(kernel) / stride.max(1) + 1
    }
}

impl Op {
    /// Tensors read and written, as `(reads, writes)`.
    pub(super) fn io(&self) -> (Vec<T>, Vec<T>) {
        use Op::*;
        match *self {
            Linear { x, w, b, add, y, .. } => ([vec![x, w], b.into_iter().chain(add).collect()].concat(), vec![y]),
            SwiGlu { x, gate, up, y, .. } => (vec![x, gate, up], vec![y]),
            Norm { x, g, b, y, .. } => ([vec![x, g], b.into_iter().collect()].concat(), vec![y]),
            Add { a, b, y, .. } => (vec![a, b], vec![y]),
            Gelu { x, y, .. } => (vec![x], vec![y]),
            SiluMul { g, u, y, .. } => (vec![g, u], vec![y]),
            Rope { x, y, table, .. } => (vec![x, table], vec![y]),
            KvWrite { src, cache, .. } => (vec![src, cache], vec![cache]),
            Attention { q, k, v, lens, y, .. } => (vec![q, k, v, lens], vec![y]),
            Embed { ids, word, pos, ty, y, .. } => (vec![ids, word, pos, ty], vec![y]),
            Pool { x, lens, y, .. } => (vec![x, lens], vec![y]),
            Patches { x, y, .. } | Unfold { x, y, .. } => (vec![x], vec![y]),
            Positions { x, pos, cls, y, .. } => ([vec![x, pos], cls.into_iter().collect()].concat(), vec![y]),
        }
    }

    /// Renumbers every tensor the op names by `f`.
    pub(super) fn remap(&mut self, f: impl Fn(T) -> T) {
        use Op::*;
        let opt = |b: &mut Option<T>| *b = b.map(&f);
        match self {
            Linear { x, w, b, add, y, .. } => { *x = f(*x); *w = f(*w); opt(b); opt(add); *y = f(*y) }
            SwiGlu { x, gate, up, y, .. } => { *x = f(*x); *gate = f(*gate); *up = f(*up); *y = f(*y) }
            Norm { x, g, b, y, .. } => { *x = f(*x); *g = f(*g); opt(b); *y = f(*y) }
            Add { a, b, y, .. } => { *a = f(*a); *b = f(*b); *y = f(*y) }
            Gelu { x, y, .. } | Patches { x, y, .. } | Unfold { x, y, .. } => { *x = f(*x); *y = f(*y) }
            Rope { x, y, table, .. } => { *x = f(*x); *y = f(*y); *table = f(*table) }
            Positions { x, pos, cls, y, .. } => { *x = f(*x); *pos = f(*pos); opt(cls); *y = f(*y) }
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
            Linear { m, k, n, add, .. } => (2 * k as u64 + add.is_some() as u64) as f64 * m as f64 * n as f64,
            SwiGlu { m, k, n, .. } => (4 * k as u64 + 3) as f64 * m as f64 * n as f64,
            Norm { rows, cols, .. } => 5.0 * rows as f64 * cols as f64,
            Add { n, .. } | Gelu { n, .. } => n as f64,
            SiluMul { n, .. } => 3.0 * n as f64,
            Rope { tokens, heads, hd, .. } => 3.0 * (tokens * heads * hd) as f64,
            KvWrite { .. } | Embed { .. } | Patches { .. } | Unfold { .. } => 0.0,
            Positions { batch, seq, hidden, .. } => (batch * seq * hidden) as f64,
            Attention { rows, heads, hd, kv_len, causal, pos0, seq, .. } => {
                let keys = if causal { (pos0 + seq / 2 + 1).min(kv_len) } else { seq.min(kv_len) };
                4.0 * rows as f64 * heads as f64 * hd as f64 * keys as f64
            }
            Pool { batch, seq, hidden, .. } => 2.0 * (batch * seq * hidden) as f64,
        }
    }
}
