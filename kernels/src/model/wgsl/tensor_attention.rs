//! Attention on tensor cores: where the device has
//! [`subgroup_matrix`](crate::catalog::matmul::subgroup_matrix) (Chromium on NVIDIA), an
//! encoder's or a prefill's attention makes its two products, the scores `Q·Kᵀ` and the output
//! `P·V`, as 16×16×16 subgroup-matrix products, each f32 split into an f16 `hi` and a scaled `lo`
//! as `matmul` splits them (three products, f32's accuracy); the softmax between them stays in f32
//! on the invocations.
//!
//! Why two passes over the keys: FlashAttention rescales its running output whenever a row's
//! running max grows, and a subgroup matrix cannot be scaled row by row (its layout is the
//! driver's). So a first pass finds each row's max from the `hi·hi` products alone (cheap, and only
//! a stabilizer: the max need not be exact, as the sum is taken against the same one), and the
//! second accumulates `exp(s − max)·V` in matrices that are never rescaled. A chunk of the keys
//! ends as a record of [`FLASH_MERGE`](super::flash_merge_wgsl)'s, like the f32 kernel's.

use super::{FLASH_FILL, VISIBLE};

/// Query rows a workgroup: four subgroups of 16.
pub const ROWS: u32 = 64;
/// Keys a tile: with the rows, the scores and their `hi`/`lo` parts fit 40 KiB of workgroup memory.
const BK: u32 = 32;
/// Invocations a subgroup (see `subgroup_matrix`'s).
const LANES: u32 = 32;
/// Invocations a workgroup.
const WG: u32 = ROWS / 16 * LANES;
/// Fewest tiles of keys a chunk walks (twice, one pass each).
pub const MIN_CHUNK_TILES: u32 = 4;

/// The attention kernel on tensor cores for one head dim, keys whole or in chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorAttention {
    /// Head dim, a multiple of 16 up to 64.
    pub hd: u32,
    /// Whether the keys are split in chunks, a workgroup each along z.
    pub chunked: bool,
}

/// The [`TensorAttention`] an attention of `seq` query rows an item with head dim `hd` runs as,
/// if any: where an item has a workgroup's rows and the head is whole 16×16 tiles, at most four.
pub fn tensor_attention(seq: u32, hd: u32) -> Option<TensorAttention> {
    (seq >= ROWS && hd % 16 == 0 && (16..=64).contains(&hd)).then_some(TensorAttention { hd, chunked: false })
}

impl TensorAttention {
    /// Workgroups along x for `rows` query rows of `seq` an item; heads go along y.
    pub fn workgroups(&self, rows: u32, seq: u32) -> u32 {
        rows / seq.max(1) * seq.div_ceil(ROWS)
    }

    /// Chunks the keys split into: enough for [`FLASH_FILL`] workgroups, each chunk at least
    /// [`MIN_CHUNK_TILES`] tiles.
    pub fn chunks(&self, rows: u32, seq: u32, heads: u32, kv_len: u32) -> u32 {
        FLASH_FILL.div_ceil(self.workgroups(rows, seq) * heads).min(kv_len.div_ceil(BK) / MIN_CHUNK_TILES).max(1)
    }

    /// Keys a chunk of `chunks` takes: whole tiles.
    pub fn chunk_keys(kv_len: u32, chunks: u32) -> u32 {
        kv_len.div_ceil(BK).div_ceil(chunks) * BK
    }

    /// Bytes of workgroup memory: keys and values (`hi` and `lo`, f16), the scores (f32) and their
    /// weights (`hi` and `lo`), a row's partial max or sum from each of two invocations, each
    /// row's sum, the count of keys seen.
    pub fn workgroup_bytes(&self) -> u32 {
        4 * BK * self.hd * 2 + ROWS * BK * 4 + 2 * ROWS * BK * 2 + 3 * ROWS * 4 + 4
    }

    /// The label of its shader.
    pub fn label(&self) -> String {
        format!("attention tensor cores hd{}{}", self.hd, if self.chunked { " chunked" } else { "" })
    }

    /// Its WGSL.
    pub fn wgsl(&self) -> String {
        let d = self.hd;
        let db = d / 16;
        let hv = d / 4;
        // Each invocation's vec4s of a tile of keys (and of values).
        let shares = BK * hv / WG;
        let lines = |items: Vec<String>| items.join("\n");
        let per_dd = |f: &dyn Fn(u32) -> String| lines((0..db).map(f).collect());
        let fetch = |what: &[&str], j0: &str| {
            lines((0..shares).flat_map(|u| what.iter().map(move |w| format!("    {w}_{u} = fetch_{w}(kb, kvv, {j0}, t + {u}u * WG);"))).collect())
        };
        // The values go after the keys in `kv_hi` and `kv_lo`.
        let stage = |what: &[&str], lo: bool| {
            lines(
                (0..shares)
                    .flat_map(|u| what.iter().map(move |w| (u, *w)))
                    .map(|(u, w)| {
                        let base = if w == "v" { " + BK * D" } else { "" };
                        let lo = if lo { "\n      kv_lo[o] = x[1].x; kv_lo[o + 1u] = x[1].y; kv_lo[o + 2u] = x[1].z; kv_lo[o + 3u] = x[1].w;" } else { "" };
                        format!("    {{\n      let x = split({w}_{u}); let o = tile_at(t + {u}u * WG){base};\n      kv_hi[o] = x[0].x; kv_hi[o + 1u] = x[0].y; kv_hi[o + 2u] = x[0].z; kv_hi[o + 3u] = x[0].w;{lo}\n    }}")
                    })
                    .collect(),
            )
        };
        let key = |kb: u32, dd: u32, part: &str| format!("subgroupMatrixLoad<MatR>(&kv_{part}, {}u, true, D)", kb * 16 * d + dd * 16);
        let scores = |lo: bool| {
            lines(
                (0..BK / 16)
                    .map(|kb| {
                        let products = per_dd(&|dd| match lo {
                            false => format!("      acc = subgroupMatrixMultiplyAccumulate(qh_{dd}, {}, acc);", key(kb, dd, "hi")),
                            true => format!(
                                "      {{\n        let kh = {};\n        acc = subgroupMatrixMultiplyAccumulate(qh_{dd}, kh, acc);\n        acc = subgroupMatrixMultiplyAccumulate(qh_{dd}, {}, acc);\n        acc = subgroupMatrixMultiplyAccumulate(ql_{dd}, kh, acc);\n      }}",
                                key(kb, dd, "hi"),
                                key(kb, dd, "lo")
                            ),
                        });
                        format!("    {{\n      var acc = MatC();\n{products}\n      subgroupMatrixStore(&s, own + {}u, acc, false, BK);\n    }}", kb * 16)
                    })
                    .collect(),
            )
        };
        let values = lines(
            (0..BK / 16)
                .map(|kb| {
                    let products = per_dd(&|dd| {
                        let at = BK * d + kb * 16 * d + dd * 16;
                        format!(
                            "      {{\n        let vh = subgroupMatrixLoad<MatR>(&kv_hi, {at}u, false, D);\n        o_{dd} = subgroupMatrixMultiplyAccumulate(ph, vh, o_{dd});\n        o_{dd} = subgroupMatrixMultiplyAccumulate(ph, subgroupMatrixLoad<MatR>(&kv_lo, {at}u, false, D), o_{dd});\n        o_{dd} = subgroupMatrixMultiplyAccumulate(pl, vh, o_{dd});\n      }}"
                        )
                    });
                    format!("    {{\n      let ph = subgroupMatrixLoad<MatL>(&p_hi, own + {0}u, false, BK);\n      let pl = subgroupMatrixLoad<MatL>(&p_lo, own + {0}u, false, BK);\n{products}\n    }}", kb * 16)
                })
                .collect(),
        );
        let (at, scale, record) = match self.chunked {
            false => ("((b * p.seq + orow) * p.heads + h) * HV", " / row_sum[sg * 16u + rl]", ""),
            true => (
                "(((b * p.seq + orow) * p.heads + h) * nwg.z + wg.z) * (HV + 1u)",
                "",
                "  if (side == 0u && row < p.seq) {\n    y[(((b * p.seq + row) * p.heads + h) * nwg.z + wg.z) * (HV + 1u) + HV] = vec4<f32>(m, row_sum[mine], 0.0, 0.0);\n  }\n",
            ),
        };
        let output = per_dd(&|dd| {
            format!(
                "  subgroupMatrixStore(&s, own, o_{dd}, false, 16u);
  workgroupBarrier();
  for (var u = 0u; u < 2u; u++) {{
    let e = lane + u * LANES;
    let rl = e / 4u;
    let at = own + rl * 16u + (e % 4u) * 4u;
    let orow = r0 + sg * 16u + rl;
    if (orow < p.seq) {{
      y[{at} + {dd4}u + e % 4u] = vec4<f32>(s[at], s[at + 1u], s[at + 2u], s[at + 3u]){scale};
    }}
  }}
  workgroupBarrier();",
                dd4 = dd * 4
            )
        });
        let registers = |names: &[&str]| lines(names.iter().flat_map(|n| (0..shares).map(move |u| format!("  var {n}_{u}: vec4<f32>;"))).collect());
        let weights = lines(
            (0..16)
                .map(|i| format!("    {{\n      let at = mine * BK + side * 16u + {i}u;\n      let w = select(0.0, exp(s[at] - m), j0 + side * 16u + {i}u < n);\n      l += w;\n      let hi = bitcast<f32>(bitcast<u32>(w) & 0xffffe000u);\n      p_hi[at] = f16(hi);\n      p_lo[at] = f16(w - hi);\n    }}"))
                .collect(),
        );
        format!(
            "enable f16;
enable chromium_experimental_subgroup_matrix;
// Each subgroup's offsets differ (they come from local_invocation_index), but every matrix op is
// reached by the whole workgroup.
diagnostic(off, chromium.subgroup_matrix_uniformity);
// Attention on subgroup matrices, head dim {d}: 64 query rows a workgroup, 16 a subgroup, keys 32 a
// tile. Each f32 x is split into hi (its leading 11 bits, exact in f16) and lo = x - hi (f16, its
// subnormals included), and a*b = hi*hi + hi*lo + lo*hi, all three in one f32 accumulator. Pass 1:
// each row's max score from hi*hi; pass 2: the weights exp(score - max), their sum, and the output,
// never rescaled.
struct P {{ seq: u32, heads: u32, kv_heads: u32, hd: u32, kv_len: u32, causal: u32, pos0: u32, scale: f32, base: f32, chunk: u32 }}
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> k: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> lens: array<u32>;
@group(0) @binding(5) var<storage, read_write> y: array<vec4<f32>>;
const D: u32 = {d}u;
const HV: u32 = {hv}u;
const R: u32 = {ROWS}u;
const BK: u32 = {BK}u;
const WG: u32 = {WG}u;
const LANES: u32 = {LANES}u;
const HIDDEN: f32 = -3.0e38;
alias MatL = subgroup_matrix_left<f16, 16, 16>;
alias MatR = subgroup_matrix_right<f16, 16, 16>;
alias MatC = subgroup_matrix_result<f32, 16, 16>;
// A tile of keys, then one of values, [key][dim]; at the start, the queries, [row][dim].
var<workgroup> kv_hi: array<f16, {kv}>;
var<workgroup> kv_lo: array<f16, {kv}>;
// Each subgroup's 16 rows of scores, [row][key]; at the end, its output.
var<workgroup> s: array<f32, {score_len}>;
// The weights exp(score - max), [row][key].
var<workgroup> p_hi: array<f16, {score_len}>;
var<workgroup> p_lo: array<f16, {score_len}>;
// Two invocations' partial max or sum of each row.
var<workgroup> stat: array<f32, {stats}>;
var<workgroup> row_sum: array<f32, R>;
var<workgroup> keys_seen: u32;

// x's hi and lo; the split goes through the bits (see `matmul` on subgroup matrices).
fn split(x: vec4<f32>) -> array<vec4<f16>, 2> {{
  let hi = bitcast<vec4<f32>>(bitcast<vec4<u32>>(x) & vec4<u32>(0xffffe000u));
  return array<vec4<f16>, 2>(vec4<f16>(hi), vec4<f16>(x - hi));
}}
// Where the i-th vec4 of a tile (or of the queries) goes in it.
fn tile_at(i: u32) -> u32 {{
  return (i / HV) * D + (i % HV) * 4u;
}}
// The i-th vec4 of the tile of keys (or values) from j0; zero past the keys.
fn fetch_k(kb: u32, kvv: u32, j0: u32, i: u32) -> vec4<f32> {{
  let j = j0 + i / HV;
  if (j < p.kv_len) {{ return k[kb + j * kvv + i % HV]; }}
  return vec4<f32>(0.0);
}}
fn fetch_v(kb: u32, kvv: u32, j0: u32, i: u32) -> vec4<f32> {{
  let j = j0 + i / HV;
  if (j < p.kv_len) {{ return v[kb + j * kvv + i % HV]; }}
  return vec4<f32>(0.0);
}}

@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) t: u32) {{
  let tiles = (p.seq + R - 1u) / R;
  let b = wg.x / tiles;
  let r0 = (wg.x % tiles) * R;
  let h = wg.y;
  let kvv = p.kv_heads * HV;
  let kb = b * p.kv_len * kvv + (h / (p.heads / p.kv_heads)) * HV;
  let sg = t / LANES;
  let lane = t % LANES;
  // This subgroup's rows of `s` and of the weights.
  let own = sg * 16u * BK;
  // The softmax's share: row `mine` of the workgroup, the `side`-th 16 keys of a tile.
  let mine = sg * 16u + lane / 2u;
  let side = lane % 2u;
  let row = r0 + mine;
  let n = visible(b, row);
  if (t == 0u) {{
    var most = 0u;
    for (var i = 0u; i < R; i++) {{ most = max(most, visible(b, r0 + i)); }}
    keys_seen = most;
  }}
  for (var i = t; i < R * HV; i += WG) {{
    let r = r0 + i / HV;
    var x = vec4<f32>(0.0);
    if (r < p.seq) {{ x = q[((b * p.seq + r) * p.heads + h) * HV + i % HV] * p.scale; }}
    let parts = split(x);
    let o = tile_at(i);
    kv_hi[o] = parts[0].x; kv_hi[o + 1u] = parts[0].y; kv_hi[o + 2u] = parts[0].z; kv_hi[o + 3u] = parts[0].w;
    kv_lo[o] = parts[1].x; kv_lo[o + 1u] = parts[1].y; kv_lo[o + 2u] = parts[1].z; kv_lo[o + 3u] = parts[1].w;
  }}
  workgroupBarrier();
{queries}
  // This workgroup's chunk of the keys (all of them where the dispatch has one chunk along z); the
  // load's barrier also keeps the tiles below from overwriting the queries before all are loaded.
  let c0 = wg.z * p.chunk;
  let keys = min(workgroupUniformLoad(&keys_seen), c0 + p.chunk);
{registers}

  // Pass 1: each row's max score, from the hi*hi products.
  var top = HIDDEN;
{fetch_k_first}
  for (var j0 = c0; j0 < keys; j0 += BK) {{
{stage_k_hi}
    workgroupBarrier();
    if (j0 + BK < keys) {{
{fetch_k_next}
    }}
{scores_hi}
    workgroupBarrier();
    for (var i = 0u; i < 16u; i++) {{
      if (j0 + side * 16u + i < n) {{ top = max(top, s[mine * BK + side * 16u + i]); }}
    }}
    workgroupBarrier();
  }}
  stat[mine * 2u + side] = top;
  workgroupBarrier();
  let m = max(stat[mine * 2u], stat[mine * 2u + 1u]);
  workgroupBarrier();

  // Pass 2: the weights exp(score - m), their sum, and the output.
  var l = 0.0;
{declare_o}
{fetch_kv_first}
  for (var j0 = c0; j0 < keys; j0 += BK) {{
{stage_kv}
    workgroupBarrier();
    if (j0 + BK < keys) {{
{fetch_kv_next}
    }}
{scores}
    workgroupBarrier();
{weights}
    workgroupBarrier();
{values}
    // The next tile overwrites keys, values, scores and weights: every subgroup must be done.
    workgroupBarrier();
  }}
  stat[mine * 2u + side] = l;
  workgroupBarrier();
  if (side == 0u) {{ row_sum[mine] = stat[mine * 2u] + stat[mine * 2u + 1u]; }}
  workgroupBarrier();
{output}
{record}}}
",
            kv = 2 * BK * d,
            score_len = ROWS * BK,
            stats = 2 * ROWS,
            queries = per_dd(&|dd| format!("  let qh_{dd} = subgroupMatrixLoad<MatL>(&kv_hi, sg * 16u * D + {0}u, false, D);\n  let ql_{dd} = subgroupMatrixLoad<MatL>(&kv_lo, sg * 16u * D + {0}u, false, D);", dd * 16)),
            registers = registers(&["k", "v"]),
            fetch_k_first = fetch(&["k"], "c0"),
            stage_k_hi = stage(&["k"], false),
            fetch_k_next = fetch(&["k"], "j0 + BK"),
            declare_o = per_dd(&|dd| format!("  var o_{dd} = MatC();")),
            fetch_kv_first = fetch(&["k", "v"], "c0"),
            stage_kv = stage(&["k", "v"], true),
            fetch_kv_next = fetch(&["k", "v"], "j0 + BK"),
            scores_hi = scores(false),
            scores = scores(true),
        ) + VISIBLE
    }
}
