//! How a linear layer `y[m,n] = x[m,k] · w[n,k]ᵀ (+ b[n])` runs on the GPU: which catalogue kernel
//! (`matvec` for one row, the register-blocked `matmul` reading w as `[N,K]` otherwise) and with
//! which parameters. [`Linear::choose`] is the one place that decides, a fixed function of the
//! shape, so a table of tuned winners can replace it without touching the models.

use super::epilogue::Epilogue;
use super::matmul::{BLayout, MatmulOptions, MatmulParams};
use super::matvec::MatvecParams;
use crate::dtype::Dtype;
use crate::program::Caps;

/// Workgroups that fill a large GPU with `matmul` blocks: two per SM of an H100 (132 SMs), so a
/// smaller block that reaches this count is worth its lower reuse.
pub const MATMUL_FILL: u32 = 256;

/// Workgroups that keep enough reads of W in flight for `matvec` to stream at memory bandwidth:
/// a GEMV has no reuse, so it wants the whole GPU busy issuing loads (on an H100, 1024
/// workgroups of 128 invocations are about half its resident threads).
pub const MATVEC_FILL: u32 = 1024;

/// Least K a split-K chunk walks: shorter, the partial sums cost more than the walk saves.
pub const MIN_K_CHUNK: u32 = 256;

/// Least K that splits: a prefill's projections (K 2048 and 5632 for 128 tokens), MiniLM's FFN
/// down (1536) and ViT-B/16's 768-wide projections at batch 1 (197 rows: on the H200 its pass went
/// from 5.56 to 4.75 ms, each of its linear layers 28–50% faster, where 1024 left them unsplit;
/// 512 was no faster: docs/hardware/h200-flash.md), not MiniLM's 384-wide ones.
pub const MIN_SPLIT_K: u32 = 768;

/// Workgroups a `matmul` with K split aims for: six per SM of an H100 or H200 (132 SMs). A GEMM
/// of fewer 64×64 blocks leaves its last wave part-full, however many run on an SM at once: on the
/// H200, ViT-B/16's 768-wide projections at batch 8 (300 blocks each) ran their pass 11% faster
/// in three chunks of K (900 workgroups) than whole, and Whisper-tiny's at batch 1 5% faster than
/// with [`MATMUL_FILL`] as the aim (docs/hardware/h200-split.md).
pub const SPLIT_FILL: u32 = 792;

/// Chunks of K for `matmul` block `p` at `m`×`k`×`n`: where its blocks are fewer than
/// [`SPLIT_FILL`] and K is at least [`MIN_SPLIT_K`], enough chunks to reach it (each at least
/// [`MIN_K_CHUNK`] long, at most 16), each summed after (a prefill of 128 tokens through a
/// 5632-deep projection has 64 blocks of 64×64 for 132 SMs, each walking all of K); else 1.
fn split_k(p: &MatmulParams, m: u32, k: u32, n: u32) -> u32 {
    let blocks = p.workgroups(m, n).iter().product::<u32>();
    if blocks >= SPLIT_FILL || k < MIN_SPLIT_K {
        return 1;
    }
    SPLIT_FILL.div_ceil(blocks).min(k / MIN_K_CHUNK).clamp(1, 16)
}

/// Workgroups a quantized `matvec` leaves at least when it gives each several rows: it streams a
/// quarter or an eighth of the bytes, so fewer workgroups keep them in flight.
pub const QUANT_MATVEC_FILL: u32 = 512;

/// Most rows a linear layer runs as one `matvec` per row rather than a `matmul` that cannot fill
/// the GPU: past this, W's rereads outweigh the idle SMs.
pub const BATCHED_MATVEC_ROWS: u32 = 256;

/// The kernel one linear layer runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linear {
    /// One row (`m = 1`), or a few rows too few for `matmul`'s blocks: `matvec`, once per row.
    Matvec(MatvecParams),
    /// Several rows: `matmul` with B `[N,K]`.
    Matmul(MatmulParams),
}

impl Linear {
    /// The kernel and parameters for an `m`×`k` by `[n,k]` linear layer.
    ///
    /// - Vector loads (vec4) only where K is a multiple of 4: every row of x and w then starts on
    ///   a vec4, and a model's tensors, which are not padded, hold whole vec4s.
    /// - `m = 1`: `matvec`, with a workgroup size that gives each invocation at least four loads
    ///   per row (K/vec/4, a power of two from 32 to 256), and as many rows per workgroup (up to
    ///   4) as still leave [`MATVEC_FILL`] workgroups, so the reduction's cost is shared. Where
    ///   the device has `subgroups`, its reduction goes through them: on the H100 that variant was
    ///   3–26% faster at every shape of TinyLlama and MiniLM (docs/hardware/h100-kernels.md).
    /// - `m > 1`: `matmul`'s default 64×64 blocks where they make [`MATMUL_FILL`] workgroups,
    ///   else 32×32 blocks, else 16×16 blocks; but 64×64 blocks with K split where K is deep
    ///   ([`Linear::k_split`]).
    /// - Where not even 16×16 blocks fill the GPU (a few short sentences: MiniLM at 1×16 had 24
    ///   blocks for 132 SMs, each walking all of K, so a layer cost K-proportional latency, 35–130
    ///   µs on the H100), and for at most [`BATCHED_MATVEC_ROWS`] rows: `matvec` once per row (its
    ///   workgroups along z), which gives every row N / ROWS workgroups and reads W from cache after
    ///   the first row.
    /// - On a CPU ([`Caps::cpu`]: SwiftShader, lavapipe), `m > 1` is always `matmul` in 16×16
    ///   blocks, with K never split: a CPU runs a workgroup's invocations a few SIMD lanes at a
    ///   time and pays for every barrier across all of them, so small workgroups (32 invocations)
    ///   win, and each matvec a row reads all of W again and a split adds a pass over the
    ///   partial sums. MiniLM at 1×16 in SwiftShader: `qkv` 407 ms as matvecs a row, 100 ms in
    ///   64×64 blocks, 46 ms in 16×16; `ffn_up` 407, 173 and 49 ms.
    pub fn choose(m: u32, k: u32, n: u32, caps: Caps) -> Linear {
        Linear::choose_for(m, k, n, caps, Dtype::F32)
    }

    /// [`choose`](Linear::choose) for a weight stored as `w`: a quantized matvec, which reads 4 or
    /// 8 weights a word and unpacks them, takes its own shape of workgroup.
    pub fn choose_for(m: u32, k: u32, n: u32, caps: Caps, w: Dtype) -> Linear {
        let subgroups = caps.subgroups;
        let vec = if k % 4 == 0 { 4 } else { 1 };
        let matvec = || {
            if w.quant().is_some() {
                // The H100's winners at every shape of TinyLlama and MiniLM (docs/hardware/h100-decode.md):
                // 128 invocations, and 4 rows where that leaves QUANT_MATVEC_FILL workgroups.
                let rows = [4, 2].into_iter().find(|r| n.div_ceil(*r) >= QUANT_MATVEC_FILL).unwrap_or(1);
                return Linear::Matvec(MatvecParams { wg: 128, rows, vec, sg: subgroups && vec == 4 });
            }
            let wg = (k / vec / 4).clamp(32, 256);
            let wg = if wg.is_power_of_two() { wg } else { wg.next_power_of_two() / 2 };
            let rows = [4, 2].into_iter().find(|r| n.div_ceil(*r) >= MATVEC_FILL).unwrap_or(1);
            Linear::Matvec(MatvecParams { wg, rows, vec, sg: subgroups && vec == 4 })
        };
        if m == 1 {
            return matvec();
        }
        let ladder = [
            MatmulParams { vec, ..MatmulParams::DEFAULT },
            MatmulParams { bm: 32, bn: 32, bk: 16, tm: 4, tn: 4, vec },
            MatmulParams { bm: 16, bn: 16, bk: 16, tm: 2, tn: 4, vec },
        ];
        if caps.cpu {
            return Linear::Matmul(ladder[2]);
        }
        let fills = |p: &MatmulParams| p.workgroups(m, n).iter().product::<u32>() >= MATMUL_FILL;
        match ladder.into_iter().find(fills) {
            // A deep K splits instead: the largest block, each workgroup on a chunk of K.
            Some(_) if split_k(&ladder[0], m, k, n) > 1 => Linear::Matmul(ladder[0]),
            Some(block) => Linear::Matmul(block),
            None if m <= BATCHED_MATVEC_ROWS => matvec(),
            None if split_k(&ladder[0], m, k, n) > 1 => Linear::Matmul(ladder[0]),
            None => Linear::Matmul(ladder[2]),
        }
    }

    /// Chunks K is split into (1: none), and the chunk, for an `m`×`k` by `[n,k]` layer on a
    /// device offering `caps`: see [`split_k`]; never on a CPU.
    pub fn k_split(&self, m: u32, k: u32, n: u32, caps: Caps) -> (u32, u32) {
        match self {
            Linear::Matvec(_) => (1, 0),
            Linear::Matmul(_) if caps.cpu => (1, 0),
            Linear::Matmul(p) => match split_k(p, m, k, n) {
                1 => (1, 0),
                splits => (splits, k.div_ceil(splits).next_multiple_of(p.bk)),
            },
        }
    }

    /// A name for the shader: the kernel, its variant, what it adds at the store and how w is stored.
    pub fn label(&self, epilogue: Epilogue, w: Dtype) -> String {
        match self {
            Linear::Matvec(p) => Linear::label_of(format_args!("matvec {p}"), epilogue, w),
            Linear::Matmul(p) => Linear::label_of(format_args!("matmul {p}"), epilogue, w),
        }
    }

    /// [`label`](Linear::label) of a layer run by kernel `what` (one of another module, such as
    /// `matmul` on subgroup matrices).
    pub fn label_of(what: std::fmt::Arguments, epilogue: Epilogue, w: Dtype) -> String {
        format!("linear: {what}{epilogue}{}", if w == Dtype::F32 { String::new() } else { format!(" w {w}") })
    }

    /// The WGSL: `@binding(0)` the uniform of [`Linear::params`], 1 x (f32), 2 w (stored as `w`),
    /// then from 3 on the bias and the addend where `epilogue` has them, then y.
    pub fn wgsl(&self, epilogue: Epilogue, w: Dtype) -> String {
        self.segmented_wgsl(epilogue, w, 0)
    }

    /// [`wgsl`](Linear::wgsl) of layers of one input run as one: y's columns in segments of
    /// `segment`, each layer's output stored whole after the one before (`matmul` only; 0: one y).
    pub fn segmented_wgsl(&self, epilogue: Epilogue, w: Dtype, segment: u32) -> String {
        match self {
            Linear::Matvec(p) => p.wgsl(epilogue, Dtype::F32, w),
            Linear::Matmul(p) => p.wgsl_with(Linear::matmul_options(epilogue, w, segment)),
        }
    }

    /// How a linear layer's `matmul` reads and stores: x in f32, w `[N,K]` stored as `w`, `epilogue`
    /// at the store, y in segments of `segment` (0: one y).
    pub fn matmul_options(epilogue: Epilogue, w: Dtype, segment: u32) -> MatmulOptions {
        MatmulOptions { b: BLayout::NK, epilogue, a_dtype: Dtype::F32, b_dtype: w, segment }
    }

    /// The uniform's words for an `m`×`k` by `[n,k]` layer.
    pub fn params(&self, m: u32, k: u32, n: u32) -> Vec<u32> {
        match self {
            Linear::Matvec(_) => MatvecParams::uniform(k, &[n], 0.0),
            Linear::Matmul(_) => vec![m, k, n],
        }
    }

    /// Workgroups for an `m`-row, `n`-column output (one layer of them per chunk of a split K).
    pub fn workgroups(&self, m: u32, n: u32) -> [u32; 3] {
        match self {
            Linear::Matvec(p) => p.batched_workgroups(m, n),
            Linear::Matmul(p) => p.workgroups(m, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matmul(m: u32, k: u32, n: u32) -> MatmulParams {
        match Linear::choose(m, k, n, Caps::NONE) {
            Linear::Matmul(p) => p,
            other => panic!("{m}×{k}×{n}: {other:?}"),
        }
    }

    #[test]
    fn one_row_is_a_matvec_sized_to_k_and_n() {
        let mv = |k, n| match Linear::choose(1, k, n, Caps::NONE) {
            Linear::Matvec(p) => p.to_string(),
            other => panic!("{k}×{n}: {other:?}"),
        };
        // TinyLlama's decode projections, then MiniLM's, then odd ones.
        assert_eq!(mv(2048, 2048), "wg128-r2-v4");
        assert_eq!(mv(2048, 5632), "wg128-r4-v4");
        assert_eq!(mv(5632, 2048), "wg256-r2-v4");
        assert_eq!(mv(384, 384), "wg32-r1-v4");
        assert_eq!(mv(1536, 384), "wg64-r1-v4");
        assert_eq!(mv(77, 33), "wg32-r1-v1");
        assert_eq!(mv(1, 1), "wg32-r1-v1");
    }

    #[test]
    fn a_quantized_matvec_takes_the_h100s_winners() {
        let mv = |k, n, w| match Linear::choose_for(1, k, n, Caps::NONE, w) {
            Linear::Matvec(p) => p.to_string(),
            other => panic!("{k}×{n}: {other:?}"),
        };
        assert_eq!(mv(5632, 2048, Dtype::F16), "wg256-r2-v4");
        assert_eq!(mv(5632, 2048, Dtype::Q8_0), "wg128-r4-v4");
        assert_eq!(mv(2048, 5632, Dtype::Q4_0), "wg128-r4-v4");
        assert_eq!(mv(384, 1536, Dtype::Q4_0), "wg128-r2-v4");
        assert_eq!(mv(1536, 384, Dtype::Q8_0), "wg128-r1-v4");
    }

    #[test]
    fn several_rows_take_the_largest_block_that_fills_the_gpu() {
        assert_eq!(matmul(2048, 2048, 2048), MatmulParams::DEFAULT);
        // Prefill of 128 tokens through TinyLlama's projections: 64×64 blocks with K split in
        // chunks; MiniLM at 8 × 128, whose K of 384 does not split.
        assert_eq!((matmul(128, 2048, 2048).bm, matmul(128, 2048, 5632).bm), (64, 64));
        let split = |m, k, n| Linear::choose(m, k, n, Caps::NONE).k_split(m, k, n, Caps::NONE);
        assert_eq!(split(128, 2048, 2048), (8, 256));
        assert_eq!(split(128, 5632, 2048), (13, 448));
        assert_eq!(split(128, 2048, 5632), (5, 416));
        assert_eq!(split(300, 2048, 256), (8, 256));
        assert_eq!(split(300, 1100, 70), (4, 288));
        // ViT-B/16 at batch 1: its 768-wide projections, its FFN up (which 32×32 blocks would fill)
        // and down; at batch 8, 300 blocks of its 768-wide projections in 3 chunks (900).
        assert_eq!(split(197, 768, 768), (3, 256));
        assert_eq!(split(197, 768, 3072), (3, 256));
        assert_eq!(split(197, 3072, 768), (12, 256));
        assert_eq!(split(197 * 8, 768, 768), (3, 256));
        assert_eq!(split(197 * 8, 3072, 768), (3, 1024));
        assert_eq!(split(197 * 8, 768, 3072), (1, 0));
        // A few rows that no block fills stay a matvec per row.
        assert_eq!(split(65, 1100, 70), (1, 0));
        assert_eq!(split(1024, 384, 1536), (1, 0));
        assert_eq!(split(4096, 4096, 4096), (1, 0));
        assert_eq!((matmul(1024, 384, 384).bm, matmul(1024, 384, 1536).bm), (32, 64));
        assert_eq!(matmul(600, 37, 500).vec, 1);
        for (m, k, n) in [(600, 37, 500), (128, 2048, 5632), (1024, 1536, 384)] {
            assert_eq!(matmul(m, k, n).validate(), Ok(()));
        }
    }

    #[test]
    fn a_few_rows_too_few_for_matmuls_blocks_run_as_a_matvec_per_row() {
        // MiniLM at 1×16 and 8×16 tokens: no block fills the GPU.
        for (m, k, n) in [(16, 384, 384), (16, 1536, 384), (128, 384, 384), (2, 1, 1), (3, 7, 5)] {
            let chosen = Linear::choose(m, k, n, Caps::NONE);
            assert!(matches!(chosen, Linear::Matvec(_)), "{m}×{k}×{n}: {chosen:?}");
            assert_eq!(chosen.workgroups(m, n)[2], m, "one row per z");
        }
        // A prefill of 128 tokens through TinyLlama's projections fills 32×32 blocks: still matmul.
        assert!(matches!(Linear::choose(128, 2048, 2048, Caps::NONE), Linear::Matmul(_)));
        // Past BATCHED_MATVEC_ROWS rows a thin product stays matmul.
        assert!(matches!(Linear::choose(BATCHED_MATVEC_ROWS + 1, 64, 8, Caps::NONE), Linear::Matmul(_)));
    }

    #[test]
    fn on_a_cpu_several_rows_are_a_matmul_of_small_blocks_and_k_never_splits() {
        let cpu = Caps { cpu: true, ..Caps::NONE };
        // MiniLM at 1×16, whose layers a GPU runs as a matvec a row, and a prefill a GPU splits.
        for (m, k, n) in [(16, 384, 384), (16, 1536, 384), (16, 384, 1536), (128, 2048, 2048)] {
            assert!(matches!(Linear::choose(m, k, n, cpu), Linear::Matmul(p) if (p.bm, p.bn) == (16, 16)), "{m}×{k}×{n}");
        }
        assert_eq!(Linear::choose(128, 2048, 2048, cpu).k_split(128, 2048, 2048, cpu), (1, 0), "a GPU splits this K in 8");
        assert_eq!(Linear::choose(1, 384, 384, cpu), Linear::choose(1, 384, 384, Caps::NONE), "one row stays a matvec");
    }

    #[test]
    fn the_shader_binds_what_the_model_passes() {
        let (plain, bias, both) = (Epilogue::default(), Epilogue { bias: true, ..Epilogue::default() }, Epilogue { bias: true, add: true, gelu: false });
        let mv = Linear::choose(1, 64, 64, Caps::NONE);
        assert!(mv.wgsl(bias, Dtype::F32).contains("@binding(4) var<storage, read_write> y"));
        let wgsl = mv.wgsl(both, Dtype::F32);
        assert!(wgsl.contains("@binding(5) var<storage, read_write> y") && wgsl.contains("+ bias[r0 + t] + addend[b * len + r0 + t]"), "{wgsl}");
        assert_eq!(mv.params(1, 64, 65), vec![64, 65, 0, 0, 65, 0, 0, 0]);
        let mm = Linear::choose(600, 64, 64, Caps::NONE);
        let wgsl = mm.wgsl(bias, Dtype::F32);
        assert!(wgsl.contains("@binding(4) var<storage, read_write> c") && wgsl.contains("+ bias[col]"), "{wgsl}");
        let wgsl = mm.wgsl(both, Dtype::F32);
        assert!(wgsl.contains("@binding(5) var<storage, read_write> c") && wgsl.contains("+ addend[row * p.n + col]"), "{wgsl}");
        assert!(mm.wgsl(plain, Dtype::F32).contains("@binding(3) var<storage, read_write> c"));
        assert_eq!(mm.params(600, 64, 65), vec![600, 64, 65]);
        assert_ne!(mm.label(bias, Dtype::F32), mm.label(plain, Dtype::F32));
        assert_ne!(mm.label(bias, Dtype::F32), mm.label(both, Dtype::F32));
        assert_ne!(mm.label(bias, Dtype::F32), mm.label(bias, Dtype::F16));
        assert!(mv.wgsl(plain, Dtype::F16).starts_with("enable f16;") && mv.wgsl(plain, Dtype::F16).contains("alias WIn = vec4<f16>;"));
    }
}
