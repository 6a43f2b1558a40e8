//! `matmul` on tensor cores: the 64×64 block of [`MatmulParams::DEFAULT`] multiplied by Chromium's
//! `chromium-experimental-subgroup-matrix` (16×16×16 products of f16 with an f32 result), at f32's
//! accuracy. Each f32 `x` is split into `hi`, its leading 11 bits (exact in f16), and `lo`, the rest
//! scaled by 2¹¹ (another 11 bits, kept out of f16's subnormals), and `a·b` is
//! `hi·hi + (hi·lo + lo·hi) / 2¹¹`: three products where f16 alone would be one, with an error of
//! about 2⁻²² of each term (on the H200, 4·10⁻⁶ of a 768-deep output's size, where f16 inputs left
//! 1·10⁻³ and f32 1.7·10⁻⁶: docs/hardware/h200-tensor.md).
//!
//! The block, its workgroup grid, the uniform (with split-K's `kchunk`), the bindings and the
//! epilogue are the register-blocked kernel's, so a plan swaps one for the other without knowing
//! which runs.

use super::params::{BLayout, MatmulOptions, MatmulParams};
use crate::dtype::Dtype;

/// The WebGPU feature: Chromium's name for subgroup matrices (its WGSL extension is
/// `chromium_experimental_subgroup_matrix`).
pub const FEATURE: &str = "chromium-experimental-subgroup-matrix";

/// Bytes of workgroup memory the larger block takes ([`workgroup_bytes`]): what the page checks
/// the adapter has before it asks for the feature.
pub const WORKGROUP_BYTES: u32 = workgroup_bytes(LARGE);

/// The larger block's side: 128×128, eight subgroups each on 64×32 of it. Where a GEMM has enough
/// rows and columns for it, it makes fewer loads from workgroup memory per product (on the H200,
/// 20% faster than 64×64 blocks for ViT-B/16's QKV projection at batch 8, docs/hardware/h200-tensor.md).
pub const LARGE: u32 = 128;

/// Depth of the tiles along K: two 16-deep products per tile.
const BK: u32 = 32;
/// Row stride of the tiles in workgroup memory, in f16s: BK plus 8 of padding. At BK (64 bytes)
/// the 16 rows a matrix load reads fall on the same few of workgroup memory's 32 banks, every
/// second row on the same ones; 80 bytes spread them over all of them. On the H100 in Chrome the
/// padding took 11–28% off ViT-B/16's and Whisper-tiny's passes (docs/hardware/h100-goals.md).
const STRIDE: u32 = BK + 8;
/// Invocations per subgroup: Dawn requires the workgroup's x to be a multiple of the adapter's
/// largest subgroup, and NVIDIA's is 32 (the configuration is checked before the feature is asked for).
const LANES: u32 = 32;
/// SMs of an H100 or H200: a wave of the larger blocks (see [`large`]).
const SMS: u32 = 132;

/// Subgroups of a `block`×`block` workgroup: two along M, one per 32 columns along N.
const fn subgroups(block: u32) -> u32 {
    2 * (block / 32)
}

/// Bytes of workgroup memory a `block`×`block` workgroup takes: the f16 `hi` and `lo` tiles of A
/// and B (`block` rows of [`STRIDE`] each) and an f32 16×16 scratch tile per subgroup, through
/// which results reach the epilogue.
pub const fn workgroup_bytes(block: u32) -> u32 {
    4 * block * STRIDE * 2 + subgroups(block) * 16 * 16 * 4
}

/// Whether an `m`×`n` output in `chunks` of K takes the [`LARGE`] block: where its workgroups
/// (blocks times chunks) fill at least half the SMs in one wave, or make several waves, the last
/// at least three quarters full. On the H200 (docs/hardware/h200-tensor.md), with K whole,
/// 128×128 blocks were faster at 108 blocks (Whisper-tiny's QKV at batch 1) and at 234 and 312
/// (ViT-B/16's QKV and FFN up at batch 8), and slower at 144 (Whisper's FFN up: a second wave of
/// 12) and at 36 (ViT-B/16's QKV at batch 1); taking chunks into account too made ViT-B/16's pass
/// at batch 8 7% faster, the others 1–2%, a 4-layer prefill 8%.
pub fn large(m: u32, n: u32, chunks: u32) -> bool {
    let blocks = m.div_ceil(LARGE) * n.div_ceil(LARGE) * chunks;
    (SMS / 2..=SMS).contains(&blocks) || (blocks > SMS && blocks * 4 >= blocks.div_ceil(SMS) * SMS * 3)
}

/// Whether this kernel takes the place of the register-blocked one with `params` and `options`:
/// vec4 rows of K, A and B in f32, B `[N,K]` (a linear layer's weight), and the default 64×64
/// block or the 32×32 one a plan takes where 64×64 blocks are too few to fill the GPU. On tensor
/// cores a 64×64 block is quick enough that fewer blocks do: on the H200 in Chrome, Whisper-tiny's
/// attention output at batch 1 (1500×384×384, 144 blocks) took 0.0278 ms against the 32×32
/// blocks' 0.0466, its pass 3% less, and an encoder of MiniLM's shape at 8×128 (96 blocks) 7% less
/// (docs/hardware/h200-tensor.md).
pub fn runs(params: &MatmulParams, options: &MatmulOptions) -> bool {
    matches!((params.bm, params.bn), (64, 64) | (32, 32)) && params.vec == 4 && options.b == BLayout::NK && options.a_dtype == Dtype::F32 && options.b_dtype == Dtype::F32
}

/// The block side this kernel runs an `m`×`n` output in, K in `chunks`: [`LARGE`] where
/// [`large`] says so, else 64.
pub fn block(m: u32, n: u32, chunks: u32) -> u32 {
    if large(m, n, chunks) { LARGE } else { 64 }
}

/// The kernel's WGSL for `block`×`block` blocks (64 or [`LARGE`]) and `options`, whose bindings and
/// uniform are [`MatmulParams::wgsl_with`]'s; its workgroups are `[⌈n/block⌉, ⌈m/block⌉, chunks]`.
pub fn wgsl(block: u32, options: MatmulOptions) -> String {
    let (index, segmented) = super::params::output_index(options.segment);
    let wg = subgroups(block) * LANES;
    // Each subgroup computes `fm`×2 products of 16×16: rows `block`/2, columns 32.
    let fm = block / 2 / 16;
    // Each invocation moves four vec4s of each tile a step.
    let shares = block * BK / 4 / wg;
    let mut s = format!(
        "enable f16;
enable chromium_experimental_subgroup_matrix;
// Each subgroup's offsets differ (they come from local_invocation_index), but every matrix op is
// reached by the whole subgroup.
diagnostic(off, chromium.subgroup_matrix_uniformity);
// `matmul` on subgroup matrices, B[N,K]{options}: a {block}x{block} block of C from {block}x{BK} tiles of A and B,
// each f32 split into hi (its leading 11 bits, exact in f16) and lo (the rest, times 2048), so that
// a*b = hi*hi + (hi*lo + lo*hi) / 2048 to about 2^-22. With `kchunk` > 0, workgroup z takes K's
// chunk z alone and stores its partial C at z * M * N, for a sum after.
struct Params {{ m: u32, k: u32, n: u32, kchunk: u32 }}
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;
{output}
const BK: u32 = {BK}u;
// Row stride of the tiles: BK and 8 f16s of padding, so that a matrix load's rows take different banks.
const STRIDE: u32 = {STRIDE}u;
alias MatA = subgroup_matrix_left<f16, 16, 16>;
alias MatB = subgroup_matrix_right<f16, 16, 16>;
alias MatC = subgroup_matrix_result<f32, 16, 16>;
// Rows of A and of B (B is [N,K]) along K, row-major, STRIDE apart.
var<workgroup> a_hi: array<f16, {tile}>;
var<workgroup> a_lo: array<f16, {tile}>;
var<workgroup> b_hi: array<f16, {tile}>;
var<workgroup> b_lo: array<f16, {tile}>;
// Each subgroup's results, one 16x16 product at a time (its hi*hi, then its lo terms), on their
// way to the epilogue.
var<workgroup> out: array<f32, {scratch}>;

// Four consecutive f32 of row `row` of A (input 0) or B (1) from column `col`, zero past `rows`
// and past the chunk's end.
fn load(input: u32, rows: u32, row: u32, col: u32, kend: u32) -> vec4<f32> {{
  if (row < rows && col < kend) {{
    let i = (row * p.k + col) / 4u;
    if (input == 0u) {{ return a[i]; }}
    return b[i];
  }}
  return vec4<f32>(0.0);
}}

// Stores v's hi and lo at `at` of a tile. The split goes through the bits: f32(f16(v)) is not
// left to the compiler, which may fold the round trip away and leave lo zero.
fn split(v: vec4<f32>) -> array<vec4<f16>, 2> {{
  let hi = bitcast<vec4<f32>>(bitcast<vec4<u32>>(v) & vec4<u32>(0xffffe000u));
  return array<vec4<f16>, 2>(vec4<f16>(hi), vec4<f16>((v - hi) * 2048.0));
}}

@compute @workgroup_size({wg})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {{
  let m0 = wg.y * {block}u;
  let n0 = wg.x * {block}u;
  let sg = li / {LANES}u;
  let lane = li % {LANES}u;
  let sm = (sg / {across}u) * {half}u;
  let sn = (sg % {across}u) * 32u;
  let kbeg = wg.z * p.kchunk;
  var kend = p.k;
  if (p.kchunk != 0u) {{
    kend = min(p.k, kbeg + p.kchunk);
  }}
  let c0 = wg.z * p.m * p.n;
",
        output = options.epilogue.bindings(3, "c"),
        tile = block * STRIDE,
        scratch = subgroups(block) * 256,
        across = block / 32,
        half = block / 2,
    );
    for i in 0..fm {
        for j in 0..2 {
            s += &format!("  var hh_{i}_{j} = MatC();\n  var hl_{i}_{j} = MatC();\n");
        }
    }
    for q in 0..shares {
        s += &format!("  var ra_{q}: vec4<f32>;\n  var rb_{q}: vec4<f32>;\n");
    }
    let fetch = |k0: &str| {
        (0..shares)
            .map(|q| {
                let v = format!("(li + {}u)", q * wg);
                format!(
                    "    ra_{q} = load(0u, p.m, m0 + {v} / {r}u, {k0} + ({v} % {r}u) * 4u, kend);\n    rb_{q} = load(1u, p.n, n0 + {v} / {r}u, {k0} + ({v} % {r}u) * 4u, kend);\n",
                    r = BK / 4
                )
            })
            .collect::<String>()
    };
    let stage: String = (0..shares)
        .flat_map(|q| [("ra", "a", q), ("rb", "b", q)])
        .map(|(reg, tile, q)| {
            format!(
                "    {{ let x = split({reg}_{q}); let v = li + {}u; let o = v / {r}u * STRIDE + v % {r}u * 4u;\n      {tile}_hi[o] = x[0].x; {tile}_hi[o + 1u] = x[0].y; {tile}_hi[o + 2u] = x[0].z; {tile}_hi[o + 3u] = x[0].w;\n      {tile}_lo[o] = x[1].x; {tile}_lo[o + 1u] = x[1].y; {tile}_lo[o + 2u] = x[1].z; {tile}_lo[o + 3u] = x[1].w; }}\n",
                q * wg,
                r = BK / 4
            )
        })
        .collect();
    let mut multiply = String::new();
    for kk in 0..BK / 16 {
        multiply += "    {\n";
        for i in 0..fm {
            for part in ["hi", "lo"] {
                multiply += &format!("      let a{part}_{i} = subgroupMatrixLoad<MatA>(&a_{part}, (sm + {}u) * STRIDE + {}u, false, STRIDE);\n", i * 16, kk * 16);
            }
        }
        for j in 0..2 {
            for part in ["hi", "lo"] {
                multiply += &format!("      let b{part}_{j} = subgroupMatrixLoad<MatB>(&b_{part}, (sn + {}u) * STRIDE + {}u, true, STRIDE);\n", j * 16, kk * 16);
            }
        }
        for i in 0..fm {
            for j in 0..2 {
                multiply += &format!(
                    "      hh_{i}_{j} = subgroupMatrixMultiplyAccumulate(ahi_{i}, bhi_{j}, hh_{i}_{j});\n      hl_{i}_{j} = subgroupMatrixMultiplyAccumulate(ahi_{i}, blo_{j}, hl_{i}_{j});\n      hl_{i}_{j} = subgroupMatrixMultiplyAccumulate(alo_{i}, bhi_{j}, hl_{i}_{j});\n"
                );
            }
        }
        multiply += "    }\n";
    }
    s += &format!(
        "  // Each step's tiles are loaded into registers while the step before is multiplied.
{first}  for (var k0 = kbeg; k0 < kend; k0 += BK) {{
{stage}    workgroupBarrier();
    if (k0 + BK < kend) {{
{next}    }}
{multiply}    // The next step overwrites the tiles: every subgroup must be done reading them.
    workgroupBarrier();
  }}
  let scratch = sg * 256u;
",
        first = fetch("kbeg"),
        next = fetch("k0 + BK"),
    );
    let stored = options.epilogue.apply("v", "col", index);
    s += "  // Each lane's 8 of a product's 256 outputs: its hi*hi part, read before the lo terms take the scratch.\n  var part: array<f32, 8>;\n";
    for i in 0..fm {
        for j in 0..2 {
            s += &format!(
                "  subgroupMatrixStore(&out, scratch, hh_{i}_{j}, false, 16u);
  workgroupBarrier();
  for (var t = 0u; t < 8u; t++) {{
    part[t] = out[scratch + lane + t * {LANES}u];
  }}
  workgroupBarrier();
  subgroupMatrixStore(&out, scratch, hl_{i}_{j}, false, 16u);
  workgroupBarrier();
  for (var t = 0u; t < 8u; t++) {{
    let e = lane + t * {LANES}u;
    let row = m0 + sm + {}u + e / 16u;
    let col = n0 + sn + {}u + e % 16u;
    if (row < p.m && col < p.n) {{
      let v = part[t] + out[scratch + e] * (1.0 / 2048.0);
      c[c0 + {index}] = {stored};
    }}
  }}
  workgroupBarrier();
",
                i * 16,
                j * 16
            );
        }
    }
    s + "}\n" + &segmented
}

/// `wgsl`, a shader on subgroup matrices (this kernel's), rewritten to run on any
/// adapter: f16 as f32, and the builtins as plain functions over workgroup memory, each matrix held
/// as the hardware holds it, 8 values an invocation across the 32 of a subgroup (by
/// `local_invocation_index`), a product meeting its operands in a scratch area of the subgroup's.
/// It keeps what the kernel decides (tiles, offsets, layouts, products, barriers) and drops f16's
/// rounding and the speed: for tests where no adapter has the feature (SwiftShader, lavapipe,
/// llvmpipe). The shader must load and store matrices through its workgroup arrays, have a literal
/// workgroup size, and reach every product from all its invocations (a product takes barriers),
/// as this kernel does.
pub fn emulated(wgsl: &str) -> String {
    let dropped = ["enable f16;", "enable chromium_experimental_subgroup_matrix;", "diagnostic(off, chromium.subgroup_matrix_uniformity);"];
    let mut s: String = wgsl.lines().filter(|l| !dropped.contains(&l.trim())).map(|l| format!("{l}\n")).collect();
    for kind in ["left<f16", "right<f16", "result<f32"] {
        s = s.replace(&format!("subgroup_matrix_{kind}, 16, 16>"), "SgMat");
    }
    s = replace_word(&s, "f16", "f32");
    s = s.replace("subgroupMatrixMultiplyAccumulate(", "sg_mma(");
    let invocations: u32 = s.split("@workgroup_size(").nth(1).and_then(|r| r.split(')').next()).and_then(|n| n.trim().parse().ok()).expect("a literal workgroup size");
    // Each invocation's lane, its subgroup's scratch and a product's depth, set first thing in `main`.
    let index = s.split("@builtin(local_invocation_index) ").nth(1).and_then(|r| r.split(':').next()).expect("main takes local_invocation_index").to_string();
    let main = s.find("fn main(").expect("an entry point `main`");
    let body = main + s[main..].find(") {").expect("main's body") + 3;
    s.insert_str(body, &format!("\n  sg_lane = {index} % {LANES}u;\n  sg_base = {index} / {LANES}u * 512u;\n  sg_depth = 16u + {index} / 65536u;"));
    let arrays: Vec<String> = s.lines().filter_map(|l| l.trim().strip_prefix("var<workgroup> ")).filter_map(|l| l.split_once(':')).map(|(name, _)| name.trim().to_string()).collect();
    let mut helpers = format!(
        "var<private> sg_lane: u32;
var<private> sg_base: u32;
// 16, as a trip count llvmpipe cannot see: it unrolls a loop of constant count, and with a product's
// 8 sums of 16 unrolled, a 64x64 block's shader took it about 30 s to compile, not 10.
var<private> sg_depth: u32;
// Each subgroup's two operands of a product, 256 values each.
var<workgroup> sg_x: array<f32, {scratch}>;
// Element lane + 32 t of a 16x16 matrix, row-major.
struct SgMat {{ v: array<f32, 8> }}
fn sg_at(offset: u32, e: u32, col_major: bool, stride: u32) -> u32 {{
  return offset + select((e / 16u) * stride + e % 16u, (e % 16u) * stride + e / 16u, col_major);
}}
fn sg_mma(l: SgMat, r: SgMat, acc: SgMat) -> SgMat {{
  var a = l;
  var b = r;
  var c = acc;
  for (var t = 0u; t < 8u; t++) {{
    sg_x[sg_base + sg_lane + t * {LANES}u] = a.v[t];
    sg_x[sg_base + 256u + sg_lane + t * {LANES}u] = b.v[t];
  }}
  workgroupBarrier();
  for (var t = 0u; t < 8u; t++) {{
    let e = sg_lane + t * {LANES}u;
    var sum = c.v[t];
    for (var k = 0u; k < sg_depth; k++) {{ sum += sg_x[sg_base + (e / 16u) * 16u + k] * sg_x[sg_base + 256u + k * 16u + e % 16u]; }}
    c.v[t] = sum;
  }}
  workgroupBarrier();
  return c;
}}
",
        scratch = invocations.div_ceil(LANES) * 512
    );
    // A load's type argument (left or right matrix) does not matter here.
    let mut rest = s.as_str();
    let mut untyped = String::new();
    while let Some(at) = rest.find("subgroupMatrixLoad<") {
        let args = at + rest[at..].find(">(").expect("a load's type argument") + 1;
        untyped += &rest[..at];
        untyped += "subgroupMatrixLoad";
        rest = &rest[args..];
    }
    s = untyped + rest;
    for name in arrays {
        let before = s.clone();
        s = s.replace(&format!("subgroupMatrixLoad(&{name}, "), &format!("sg_load_{name}(")).replace(&format!("subgroupMatrixStore(&{name}, "), &format!("sg_store_{name}("));
        if s != before {
            helpers += &format!(
                "fn sg_load_{name}(offset: u32, col_major: bool, stride: u32) -> SgMat {{
  var m: SgMat;
  for (var t = 0u; t < 8u; t++) {{ m.v[t] = {name}[sg_at(offset, sg_lane + t * {LANES}u, col_major, stride)]; }}
  return m;
}}
fn sg_store_{name}(offset: u32, value: SgMat, col_major: bool, stride: u32) {{
  var m = value;
  for (var t = 0u; t < 8u; t++) {{ {name}[sg_at(offset, sg_lane + t * {LANES}u, col_major, stride)] = m.v[t]; }}
}}
"
            );
        }
    }
    s + &helpers
}

/// `text` with every whole-word `word` replaced by `with`.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let ident = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        out += &rest[..at];
        let whole = !ident(out.chars().next_back()) && !ident(rest[at + word.len()..].chars().next());
        out += if whole { with } else { word };
        rest = &rest[at + word.len()..];
    }
    out + rest
}

#[cfg(test)]
mod tests {
    use super::super::super::epilogue::Epilogue;
    use super::*;

    fn options(epilogue: Epilogue, segment: u32) -> MatmulOptions {
        MatmulOptions { b: BLayout::NK, epilogue, a_dtype: Dtype::F32, b_dtype: Dtype::F32, segment }
    }

    #[test]
    fn it_runs_the_blocks_of_a_linear_layer_in_f32_only() {
        let p = MatmulParams::DEFAULT;
        assert!(runs(&p, &options(Epilogue::default(), 0)));
        assert!(runs(&MatmulParams { bm: 32, bn: 32, ..p }, &options(Epilogue::default(), 0)), "the block of too few 64×64 blocks");
        assert!(!runs(&MatmulParams { bm: 16, bn: 16, tm: 2, ..p }, &options(Epilogue::default(), 0)), "a few rows");
        assert!(!runs(&MatmulParams { vec: 1, ..p }, &options(Epilogue::default(), 0)), "K not in vec4s");
        assert!(!runs(&p, &MatmulOptions { b_dtype: Dtype::F16, ..options(Epilogue::default(), 0) }));
        assert!(!runs(&p, &MatmulOptions { b: BLayout::KN, ..options(Epilogue::default(), 0) }));
        assert_eq!((workgroup_bytes(64), WORKGROUP_BYTES), (24 * 1024, 48 * 1024), "the larger block at the 48 KiB NVIDIA's adapters give");
    }

    #[test]
    fn its_bindings_uniform_and_stores_are_the_register_blocked_kernels() {
        for (epilogue, segment) in [(Epilogue::default(), 0), (Epilogue { bias: true, add: true, gelu: true }, 0), (Epilogue { bias: true, ..Epilogue::default() }, 384)] {
            let ours = wgsl(64, options(epilogue, segment));
            let theirs = MatmulParams::DEFAULT.wgsl_with(options(epilogue, segment));
            // A and B are `vec4<f32>` here, `AIn` and `BIn` (aliases of it) there.
            for line in theirs.lines().filter(|l| !l.contains("In>")).filter(|l| l.starts_with("@group(0)") || l.starts_with("struct Params") || l.starts_with("fn segmented") || l.starts_with("fn gelu")) {
                assert!(ours.contains(line), "{line} missing");
            }
            assert!(ours.contains(&format!("c[c0 + {}] = {};", super::super::params::output_index(segment).0, epilogue.apply("v", "col", super::super::params::output_index(segment).0))));
        }
    }

    /// The kernel's arithmetic on the CPU: `x` split as the WGSL splits it, f16 products exact in
    /// f32 (as tensor cores make them), summed in f32 in two accumulators; with `lo` false, the
    /// lo parts left out (f16 inputs alone).
    fn emulated(a: &[f32], b: &[f32], lo: bool) -> f32 {
        let split = |v: f32| {
            let hi = f32::from_bits(v.to_bits() & 0xffff_e000);
            (half::f16::from_f32(hi).to_f32(), half::f16::from_f32((v - hi) * 2048.0).to_f32())
        };
        let (mut hh, mut hl) = (0f32, 0f32);
        for (&x, &w) in a.iter().zip(b) {
            let ((xh, xl), (wh, wl)) = (split(x), split(w));
            hh += xh * wh;
            if lo {
                hl += xh * wl + xl * wh;
            }
        }
        hh + hl * (1.0 / 2048.0)
    }

    #[test]
    fn the_split_keeps_f32s_accuracy_where_f16_inputs_lose_it() {
        let mut rng = crate::prng::Prng::new(5, 0);
        for k in [768, 3072] {
            // Activations of a normalized residual stream and weights of a seeded layer's size.
            let a = rng.fill(k, -1.5, 1.5);
            let b = rng.fill(k, -0.04, 0.04);
            let exact: f64 = a.iter().zip(&b).map(|(&x, &w)| x as f64 * w as f64).sum();
            let scale = (k as f64).sqrt() * 1.5 * 0.04 / 3.0;
            let error = |lo| (emulated(&a, &b, lo) as f64 - exact).abs() / scale;
            assert!(error(true) < 1e-5, "K {k}: {}", error(true));
            assert!(error(false) > 1e-4, "K {k}: f16 inputs alone should miss by more: {}", error(false));
        }
    }

    #[test]
    fn the_larger_block_goes_where_it_fills_the_sms_as_measured() {
        // Whisper-tiny at batch 1: QKV (108 blocks) larger, FFN up (144: a second wave of 12) not.
        assert!(large(1500, 1152, 1) && !large(1500, 1536, 1));
        // ViT-B/16 at batch 8: QKV (234) and FFN up (312); at batch 1 its 36 blocks are too few,
        // but not in 3 chunks of K (108 workgroups).
        assert!(large(1576, 2304, 1) && large(1576, 3072, 1) && !large(197, 2304, 1) && large(197, 2304, 3));
        // A 768-wide projection at batch 8 in 3 chunks: 234 workgroups.
        assert!(large(1576, 768, 3));
        assert!(large(4096, 4096, 1), "many waves");
    }

    #[test]
    fn every_product_takes_the_hi_and_lo_parts_and_the_lo_terms_are_scaled_back() {
        let text = wgsl(64, options(Epilogue::default(), 0));
        // Per 16-deep step, per 16x16 product of a subgroup: hi*hi, hi*lo and lo*hi.
        assert_eq!(text.matches("subgroupMatrixMultiplyAccumulate(").count(), 2 * 4 * 3);
        assert_eq!(wgsl(LARGE, options(Epilogue::default(), 0)).matches("subgroupMatrixMultiplyAccumulate(").count(), 2 * 8 * 3);
        assert_eq!(text.matches("(ahi_0, blo_0").count(), 2);
        assert_eq!(text.matches("(alo_0, bhi_0").count(), 2);
        assert!(text.contains("* 2048.0") && text.contains("part[t] + out[scratch + e] * (1.0 / 2048.0)"));
        assert!(text.contains("& vec4<u32>(0xffffe000u)"), "the split goes through the bits");
    }
}
