//! The WGSL of each model op, and how an op becomes a dispatch: a uniform of its sizes, its
//! tensors at bindings 1…n in the order the shader declares them, and its workgroup count. Linear
//! layers run as the catalogue's `matvec` and `matmul`, as [`Linear::choose`] picks them.

use super::op::{Op, T};
use crate::dtype::Dtype;
use crate::catalog::epilogue::{Epilogue, GELU_WGSL};
use crate::catalog::linear::Linear;
use crate::catalog::matmul::{subgroup_matrix, MatmulParams};
use crate::catalog::matvec::{MatvecOutput, MatvecParams};
use crate::kernel::linear_workgroups;
use crate::program::{Buffer, Caps, Init, Program, VIEW_ALIGN};

/// RMSNorm and LayerNorm over rows, one workgroup a row, `Vec` wide loads (see [`norm_wgsl`]).
/// Each invocation sums up its share of the row in one pass as (count, mean, squared deviations),
/// which merge exactly (Chan et al.): LayerNorm's variance involves no difference of large sums,
/// so it stays accurate in f32 whatever the rows' mean. The partials merge 16 at a time, two
/// barriers where a tree over 256 takes eight.
///
/// `{{inputs}}` declares what a row is read from and `{{load}}` reads one `Vec` of it, `{{reload}}`
/// again for the second pass: [`norm_wgsl`] reads `x`, [`split_sum_norm_wgsl`] adds up a split
/// GEMM's chunks (and stores the sum) as it goes.
const NORM: &str = r#"
struct P { rows: u32, cols: u32, center: u32, eps: f32{{fields}} }
@group(0) @binding(0) var<uniform> p: P;
{{inputs}}
const WG: u32 = 256u;
const FAN: u32 = 16u;
var<workgroup> part: array<vec3<f32>, WG>;
var<workgroup> merged: array<vec3<f32>, FAN>;
// Statistics (count, mean, sum of squared deviations from the mean) of two sets, merged.
fn merge(a: vec3<f32>, b: vec3<f32>) -> vec3<f32> {
  let n = a.x + b.x;
  if (b.x == 0.0) { return a; }
  let d = b.y - a.y;
  return vec3<f32>(n, a.y + d * (b.x / n), a.z + b.z + d * d * (a.x * b.x / n));
}
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let cv = p.cols / VEC;
  let base = wg.x * cv;
  // RMSNorm keeps every mean at 0: the sum of squares about 0 is what it divides by.
  var s = vec3<f32>(0.0);
  for (var i = t; i < cv; i += WG) {
    let v = {{load}};
    var m = 0.0;
    if (p.center != 0u) { m = hsum(v) / f32(VEC); }
    let d = v - Vec(m);
    s = merge(s, vec3<f32>(f32(VEC), m, hsum(d * d)));
  }
  part[t] = s;
  workgroupBarrier();
  if (t < FAN) {
    var a = part[t * FAN];
    for (var j = 1u; j < FAN; j++) { a = merge(a, part[t * FAN + j]); }
    merged[t] = a;
  }
  workgroupBarrier();
  var st = merged[0];
  for (var j = 1u; j < FAN; j++) { st = merge(st, merged[j]); }
  let inv = inverseSqrt(st.z / f32(p.cols) + p.eps);
  for (var i = t; i < cv; i += WG) {
    var v = ({{reload}} - Vec(st.y)) * inv * g[i];
    if (p.center != 0u) { v += b[i]; }
    y[base + i] = v;
  }
}
"#;

/// [`NORM`] of `x` loading `vec` f32 at a time: 4 where every row starts on a vec4 (`cols % 4 ==
/// 0`), else 1. Bindings: 1 x, 2 g, 3 b, 4 y.
fn norm_wgsl(vec: u32) -> String {
    let inputs = "@group(0) @binding(1) var<storage, read> x: array<Vec>;\n@group(0) @binding(2) var<storage, read> g: array<Vec>;\n@group(0) @binding(3) var<storage, read> b: array<Vec>;\n@group(0) @binding(4) var<storage, read_write> y: array<Vec>;";
    norm_with(vec, "", inputs, "x[base + i]", "x[base + i]")
}

/// The sum of a split GEMM's chunks as [`split_sum_wgsl`] makes it, stored, and the [`NORM`] of
/// each of its rows, in one dispatch of a workgroup a row: the norm reads the sum where it was just
/// stored by the same invocation. Bindings: 1 the chunks' partial products, 2 the bias, 3 the
/// addend (`mode` bits 0 and 1 say which are present), 4 the sum, 5 g, 6 b, 7 y.
fn split_sum_norm_wgsl(vec: u32) -> String {
    let inputs = r#"@group(0) @binding(1) var<storage, read> parts: array<Vec>;
@group(0) @binding(2) var<storage, read> bias: array<Vec>;
@group(0) @binding(3) var<storage, read> addend: array<Vec>;
@group(0) @binding(4) var<storage, read_write> sum: array<Vec>;
@group(0) @binding(5) var<storage, read> g: array<Vec>;
@group(0) @binding(6) var<storage, read> b: array<Vec>;
@group(0) @binding(7) var<storage, read_write> y: array<Vec>;
fn summed(row: u32, i: u32) -> Vec {
  var v = Vec(0.0);
  for (var z = 0u; z < p.splits; z++) { v += parts[z * p.chunk + row + i]; }
  if ((p.mode & 1u) != 0u) { v += bias[i]; }
  if ((p.mode & 2u) != 0u) { v += addend[row + i]; }
  sum[row + i] = v;
  return v;
}"#;
    norm_with(vec, ", splits: u32, chunk: u32, mode: u32", inputs, "summed(base, i)", "sum[base + i]")
}

/// [`NORM`] with its uniform's further `fields`, its `inputs`, and how a `Vec` of row `base` at
/// `i` is loaded in the first pass (`load`) and the second (`reload`).
fn norm_with(vec: u32, fields: &str, inputs: &str, load: &str, reload: &str) -> String {
    let (ty, hsum) = if vec == 4 { ("vec4<f32>", "dot(v, vec4<f32>(1.0))") } else { ("f32", "v") };
    let body = NORM.replace("{{fields}}", fields).replace("{{inputs}}", inputs).replace("{{load}}", load).replace("{{reload}}", reload);
    format!("const VEC: u32 = {vec}u;\nalias Vec = {ty};\nfn hsum(v: Vec) -> f32 {{ return {hsum}; }}\n{body}")
}


/// RoPE, rotate-half form: each pair's cosine and sine from the table of [`super::rope::table`]
/// (binding 3), one invocation a pair.
const ROPE: &str = r#"
struct P { tokens: u32, heads: u32, hd: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<storage, read> rope: array<vec2<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = gid.x + gid.y * nwg.x * 256u;
  let half = p.hd / 2u;
  if (idx >= p.tokens * p.heads * half) { return; }
  let i = idx % half;
  let th = idx / half;
  let t = th / p.heads;
  let base = th * p.hd;
  let cs = rope[t * half + i];
  let x1 = x[base + i];
  let x2 = x[base + i + half];
  y[base + i] = x1 * cs.x - x2 * cs.y;
  y[base + i + half] = x2 * cs.x + x1 * cs.y;
}
"#;


/// Attention, written over `Vec` (`vec4<f32>` where the head dim is a multiple of 4, else `f32`;
/// [`attention_wgsl`] declares it) with strides in `Vec`s. One workgroup of 256 invocations per
/// (query row, head), in three phases with no invocation looping over every key:
/// - scores: one key per invocation (keys `t`, `t + WG`, …), a dot product of vector loads;
///   the scores stay in workgroup memory, so at most [`MAX_KEYS`] keys (16 KiB of workgroup
///   storage is all WebGPU guarantees), and their max comes from a tree reduction;
/// - weights: `exp(score - max)`, each invocation for its own keys;
/// - output: invocation `t` takes column `t % cw` and every `slices`-th key from `t / cw`, where
///   `cw` is the head dim in `Vec`s (in chunks of at most `WG`) and `slices = WG / cw`: loads of
///   V are then contiguous across neighbouring invocations. Their partial sums, and the partial
///   sums of the weights (the softmax denominator), are added up per column in workgroup memory.
const ATTENTION: &str = r#"
struct P { seq: u32, heads: u32, kv_heads: u32, hd: u32, kv_len: u32, causal: u32, pos0: u32, scale: f32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> q: array<Vec>;
@group(0) @binding(2) var<storage, KV> k: array<Vec>;
@group(0) @binding(3) var<storage, KV> v: array<Vec>;
@group(0) @binding(4) var<storage, read> lens: array<u32>;
@group(0) @binding(5) var<storage, read_write> y: array<Vec>;
var<workgroup> s: array<f32, 2048>;
var<workgroup> part: array<Vec, WG>;
var<workgroup> wsum: array<f32, WG>;
const WG: u32 = {{wg}}u;
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let row = wg.x;
  let h = wg.y;
  let b = row / p.seq;
  let n = visible(b, row % p.seq);
  let group = h / (p.heads / p.kv_heads);
  let hv = p.hd / VEC;
  let kvv = p.kv_heads * hv;
  let qb = (row * p.heads + h) * hv;
  let kb = b * p.kv_len * kvv + group * hv;
  setup(t, h, group, qb, kb, kvv);
  var m = -3.0e38;
  for (var j = t; j < n; j += WG) {
    let kj = kb + j * kvv;
    var d = 0.0;
    for (var e = 0u; e < hv; e++) { d += vdot(query(qb, e), key(kj, j, e)); }
    d *= p.scale;
    s[j] = d;
    m = max(m, d);
  }
  let mx = reduce(t, m, true);
  for (var j = t; j < n; j += WG) { s[j] = exp(s[j] - mx); }
  workgroupBarrier();
  for (var c0 = 0u; c0 < hv; c0 += WG) {
    let cw = min(hv - c0, WG);
    let slices = WG / cw;
    let c = c0 + t % cw;
    var acc = Vec(0.0);
    var total = 0.0;
    // Invocations past the last whole slice (where cw does not divide WG) compute a sum no one reads.
    for (var j = t / cw; j < n; j += slices) {
      let w = s[j];
      acc += w * value(kb + j * kvv + c, j, c);
      total += w;
    }
    part[t] = acc;
    wsum[t] = total;
    workgroupBarrier();
    if (t < cw) {
      for (var i = 1u; i < slices; i++) {
        acc += part[t + i * cw];
        total += wsum[t + i * cw];
      }
      y[qb + c] = acc / total;
    }
    workgroupBarrier();
  }
}
"#;

/// The keys query row `r` of batch item `b` sees, in both attention kernels: its item's length,
/// or with `causal` the keys up to its own position; never more than the cache holds; none for a
/// row past `seq` (the last workgroup of [`ATTENTION_FLASH`] may be partly filled).
const VISIBLE: &str = r#"
fn visible(b: u32, r: u32) -> u32 {
  if (r >= p.seq) { return 0u; }
  if (p.causal != 0u) { return min(p.pos0 + r + 1u, p.kv_len); }
  return min(lens[b], p.kv_len);
}
"#;

/// Attention over many query rows (an encoder's, a prefill's), after FlashAttention-2: each
/// invocation holds `RT` query rows and their outputs in registers, over `HVP` of the head's `HV`
/// `vec4`s (its *part*; `PARTS` invocations make up a head), and walks the keys a tile at a time
/// through workgroup memory, with a running max and softmax denominator a row. Where a head has
/// several parts, their partial dot products meet in workgroup memory (`xs`) once a tile, summed
/// in the same order by every part. `S` invocations share a row's keys, each taking every `S`-th
/// key of a tile, so short work still fills the GPU; their partial outputs merge once at the end.
///
/// Why rows and parts: each `vec4` read from workgroup memory feeds `RT` rows' products. On NVIDIA
/// a warp gets 32 words of workgroup memory a clock and does 128 FMAs, so with one row (one read
/// a `vec4` of FMAs) the loads bound attention at a quarter of the FMA rate; two rows halve them,
/// and parts keep two rows' registers at one row's.
///
/// [`Flash::wgsl`] writes the per-`vec4`, per-row and per-key work out as straight-line code over
/// plain variables (`q0_1`, `o1_3`, `sc0_2`, …): in function-scope arrays indexed by loop counters,
/// NVIDIA's compiler left them in memory (docs/hardware/h100-matmul.md). The tiles (keys then
/// values, 8 KiB) double as the merge's scratch.
const ATTENTION_FLASH: &str = r#"
struct P { seq: u32, heads: u32, kv_heads: u32, hd: u32, kv_len: u32, causal: u32, pos0: u32, scale: f32, chunk: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> k: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> lens: array<u32>;
@group(0) @binding(5) var<storage, read_write> y: array<vec4<f32>>;
const RP: u32 = R / RT;
const WG: u32 = RP * PARTS * S;
const HVP: u32 = HV / PARTS;
const HIDDEN: f32 = -3.0e38;
// Keys of the tile in [0, BK * HV), its values in [BK * HV, 2 * BK * HV).
var<workgroup> tile: array<vec4<f32>, 2u * BK * HV>;
var<workgroup> stat: array<f32, S * R>;
var<workgroup> xs: array<f32, XS>;
var<workgroup> keys_seen: u32;
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let tiles = (p.seq + R - 1u) / R;
  let b = wg.x / tiles;
  let r0 = (wg.x % tiles) * R;
  let h = wg.y;
  let kvv = p.kv_heads * HV;
  let kb = b * p.kv_len * kvv + (h / (p.heads / p.kv_heads)) * HV;
  let rp = t % RP;
  let part = (t / RP) % PARTS;
  let s = t / (RP * PARTS);
  let d0 = part * HVP;
  if (t == 0u) {
    var most = 0u;
    for (var i = 0u; i < R; i++) { most = max(most, visible(b, r0 + i)); }
    keys_seen = most;
  }
  // This workgroup's chunk of the keys (all of them where the dispatch has one chunk along z).
  let c0 = wg.z * p.chunk;
  let keys = min(workgroupUniformLoad(&keys_seen), c0 + p.chunk);
{{declare}}
{{fetch_first}}
  for (var j0 = c0; j0 < keys; j0 += BK) {
{{stage}}
    workgroupBarrier();
    // The next tile's loads are in flight while this one is worked on.
{{fetch_next}}
{{scores}}
{{accumulate}}
    workgroupBarrier();
  }
  // Merge the S partials (max, sum, output) of each row: rescale each to the row's max, then add.
  // The parts of a row hold the same max and sum; the first part's stand for them.
{{merge}}
  for (var i = 1u; i < S; i++) {
    if (s == i) {
{{spill}}
    }
    workgroupBarrier();
    if (s == 0u) {
{{gather}}
    }
    workgroupBarrier();
  }
  if (s == 0u) {
{{store}}
  }
}
// The `i`-th vec4 of the tile of keys from `j0` and of its values; zero past the keys and the tile.
struct Kv { k: vec4<f32>, v: vec4<f32> }
fn fetch(kb: u32, kvv: u32, j0: u32, i: u32) -> Kv {
  let j = j0 + i / HV;
  if (i < BK * HV && j < p.kv_len) { return Kv(k[kb + j * kvv + i % HV], v[kb + j * kvv + i % HV]); }
  return Kv(vec4<f32>(0.0), vec4<f32>(0.0));
}
"#;

/// The shape of one [`ATTENTION_FLASH`]: its head dim in `vec4`s, query rows a workgroup, rows an
/// invocation, invocations a row's keys and parts of a head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flash {
    /// Head dim in `vec4`s.
    pub hv: u32,
    /// Query rows a workgroup.
    pub rows: u32,
    /// Query rows an invocation holds: each `vec4` of a key or value read serves all of them.
    pub rows_each: u32,
    /// Invocations sharing a row, each on its own keys of a tile.
    pub splits: u32,
    /// Invocations a head's `vec4`s are shared among, so `rows_each` rows fit in registers.
    pub parts: u32,
    /// Whether the keys are split in chunks, a workgroup each along z, whose partial results
    /// [`FLASH_MERGE`] combines.
    pub chunked: bool,
}

impl Flash {
    /// The flash shape of head dim `hv` (in `vec4`s) with `rows` rows a workgroup, `rows_each` an
    /// invocation and `splits` invocations a row's keys: as few parts as keep an invocation's
    /// query rows within [`FLASH_MAX_HEAD_DIM`] floats (and divide the head); one row an
    /// invocation where those parts would make more than 256 invocations or too few keys a tile
    /// to merge in (a head of a prime number of `vec4`s).
    pub fn new(hv: u32, rows: u32, rows_each: u32, splits: u32) -> Flash {
        let parts = (1..=hv).find(|p| hv % p == 0 && rows_each * hv / p * 4 <= FLASH_MAX_HEAD_DIM).unwrap_or(hv);
        let flash = Flash { hv, rows, rows_each, splits, parts, chunked: false };
        if flash.invocations() <= 256 && rows <= 2 * flash.keys() {
            return flash;
        }
        Flash { rows_each: 1, parts: 1, ..flash }
    }

    /// Keys a tile holds: keys and values in 8 KiB of workgroup memory (at most 64 keys), a whole
    /// number for each split, fewer where the parts' dot products would take the workgroup past
    /// the 16 KiB WebGPU guarantees. The merge's scratch, a row's output for each of `rows` rows,
    /// must fit in both tiles: `rows ≤ 2 × keys` (16 keys at a head dim of 64 hold 32 rows).
    pub fn keys(&self) -> u32 {
        let most = (256 / self.hv).min(64) / self.splits * self.splits;
        (self.splits..=most).rev().step_by(self.splits as usize).find(|&keys| self.bytes_with(keys) <= 16384).unwrap_or(self.splits)
    }

    /// Invocations a workgroup.
    pub fn invocations(&self) -> u32 {
        self.rows / self.rows_each * self.parts * self.splits
    }

    /// Bytes of workgroup memory: the two tiles, a max or sum per row and split, the parts' dot
    /// products of a tile, the count of keys seen.
    pub fn workgroup_bytes(&self) -> u32 {
        self.bytes_with(self.keys())
    }

    /// [`workgroup_bytes`](Flash::workgroup_bytes) with `keys` keys a tile.
    fn bytes_with(&self, keys: u32) -> u32 {
        2 * keys * self.hv * 16 + 4 * self.splits * self.rows + 4 * self.exchanged(keys) + 4
    }

    /// Floats of `xs` with `keys` keys a tile: every invocation's dot products of a tile where
    /// parts exchange them (one, unused, where a head is one part: WGSL has no empty arrays).
    fn exchanged(&self, keys: u32) -> u32 {
        if self.parts == 1 { 1 } else { self.invocations() * self.rows_each * keys / self.splits }
    }

    /// Its WGSL: [`ATTENTION_FLASH`] with its sizes and its straight-line code.
    fn wgsl(&self) -> String {
        let Flash { hv, rows, rows_each: rt, splits, parts, .. } = *self;
        let kps = self.keys() / splits;
        let lines = |items: Vec<String>| items.join("\n");
        let rows_of = |f: &dyn Fn(u32) -> String| lines((0..rt).map(f).collect());
        let each = |f: &dyn Fn(u32, u32) -> String| lines((0..rt).flat_map(|j| (0..hv / parts).map(move |e| (j, e))).map(|(j, e)| f(j, e)).collect());
        let declare = rows_of(&|j| {
            format!(
                "  let row{j} = r0 + rp * RT + {j}u;\n  let n{j} = visible(b, row{j});\n  let qb{j} = ((b * p.seq + min(row{j}, p.seq - 1u)) * p.heads + h) * HV + d0;\n  var m{j} = HIDDEN;\n  var l{j} = 0.0;"
            )
        }) + "\n" + &each(&|j, e| format!("  let q{j}_{e} = q[qb{j} + {e}u] * p.scale;\n  var o{j}_{e} = vec4<f32>(0.0);"));
        // Each key's dot products, each vec4 of the key read once for every row.
        let mut scores = Vec::new();
        for u in 0..kps {
            scores.push(format!("    let kt{u} = ({u}u * S + s) * HV + d0;"));
            scores.push(rows_of(&|j| format!("    var sc{j}_{u} = 0.0;")));
            for e in 0..hv / parts {
                scores.push(format!("    {{\n      let kx = tile[kt{u} + {e}u];\n{}\n    }}", rows_of(&|j| format!("      sc{j}_{u} += dot(q{j}_{e}, kx);"))));
            }
        }
        if parts > 1 {
            let slot = |j: u32, u: u32| format!("({}u * WG", j * kps + u);
            for u in 0..kps {
                scores.push(rows_of(&|j| format!("    xs[{} + t)] = sc{j}_{u};", slot(j, u))));
            }
            scores.push("    workgroupBarrier();".into());
            for u in 0..kps {
                let sum = |j: u32| (0..parts).map(|pp| format!("xs[{} + rp + {}u * RP + s * RP * PARTS)]", slot(j, u), pp)).collect::<Vec<_>>().join(" + ");
                scores.push(rows_of(&|j| format!("    sc{j}_{u} = {};", sum(j))));
            }
        }
        for j in 0..rt {
            for u in 0..kps {
                scores.push(format!("    sc{j}_{u} = select(HIDDEN, sc{j}_{u}, j0 + {u}u * S + s < n{j});"));
            }
            let top = (0..kps).fold(format!("m{j}"), |acc, u| format!("max({acc}, sc{j}_{u})"));
            let rescale = lines((0..hv / parts).map(|e| format!("      o{j}_{e} *= f;")).collect());
            scores.push(format!("    let top{j} = {top};\n    if (top{j} > m{j}) {{\n      let f = exp(m{j} - top{j});\n      l{j} *= f;\n{rescale}\n      m{j} = top{j};\n    }}"));
        }
        let accumulate = lines(
            (0..kps)
                .map(|u| {
                    let weights = rows_of(&|j| format!("      let w{j} = select(0.0, exp(sc{j}_{u} - m{j}), sc{j}_{u} > HIDDEN);\n      l{j} += w{j};"));
                    let adds = lines((0..hv / parts).map(|e| format!("      {{\n        let vx = tile[vt + {e}u];\n{}\n      }}", rows_of(&|j| format!("        o{j}_{e} += w{j} * vx;")))).collect());
                    format!("    {{\n      let vt = BK * HV + ({u}u * S + s) * HV + d0;\n{weights}\n{adds}\n    }}")
                })
                .collect(),
        );
        let stat_at = |j: u32| format!("(rp * RT + {j}u)");
        let merge = lines(vec![
            rows_of(&|j| format!("  if (part == 0u) {{ stat[s * R + {}] = m{j}; }}", stat_at(j))),
            "  workgroupBarrier();".into(),
            rows_of(&|j| format!("  var top{j} = HIDDEN;\n  for (var i = 0u; i < S; i++) {{ top{j} = max(top{j}, stat[i * R + {}]); }}\n  let f{j} = select(0.0, exp(m{j} - top{j}), m{j} > HIDDEN);", stat_at(j))),
            "  workgroupBarrier();".into(),
            rows_of(&|j| format!("  if (part == 0u) {{ stat[s * R + {}] = l{j} * f{j}; }}", stat_at(j))),
            "  workgroupBarrier();".into(),
            rows_of(&|j| format!("  var total{j} = 0.0;\n  for (var i = 0u; i < S; i++) {{ total{j} += stat[i * R + {}]; }}", stat_at(j))),
            each(&|j, e| format!("  o{j}_{e} *= f{j};")),
        ]);
        let scratch = |j: u32, e: u32| format!("tile[(d0 + {e}u) * R + {}]", stat_at(j));
        // Unchunked, the output; chunked, a record of [`FLASH_MERGE`]'s for each row, head and chunk.
        let store = rows_of(&|j| {
            let (at, scale, stat) = match self.chunked {
                false => ("((b * p.seq + row{j}) * p.heads + h) * HV", format!(" / total{j}"), String::new()),
                true => (
                    "(((b * p.seq + row{j}) * p.heads + h) * nwg.z + wg.z) * (HV + 1u)",
                    String::new(),
                    format!("\n      if (part == 0u) {{ y[yb - d0 + HV] = vec4<f32>(top{j}, total{j}, 0.0, 0.0); }}"),
                ),
            };
            let stores = lines((0..hv / parts).map(|e| format!("      y[yb + {e}u] = o{j}_{e}{scale};")).collect());
            format!("    if (row{j} < p.seq) {{\n      let yb = {} + d0;\n{stores}{stat}\n    }}", at.replace("{j}", &j.to_string()))
        });
        // Each invocation's vec4s of a tile, `t + WG · n`, held in registers from one tile to the next.
        let fetched = (self.keys() * hv).div_ceil(self.invocations());
        let fetch = |first: bool| {
            let (decl, j0) = if first { ("var ", "c0") } else { ("", "j0 + BK") };
            lines((0..fetched).map(|n| format!("  {decl}kv{n} = fetch(kb, kvv, {j0}, t + {n}u * WG);")).collect())
        };
        let stage = lines((0..fetched).map(|n| format!("    if (t + {n}u * WG < BK * HV) {{\n      tile[t + {n}u * WG] = kv{n}.k;\n      tile[BK * HV + t + {n}u * WG] = kv{n}.v;\n    }}")).collect());
        let consts = format!(
            "const HV: u32 = {hv}u;\nconst R: u32 = {rows}u;\nconst RT: u32 = {rt}u;\nconst S: u32 = {splits}u;\nconst PARTS: u32 = {parts}u;\nconst BK: u32 = {}u;\nconst XS: u32 = {}u;\n",
            self.keys(),
            self.exchanged(self.keys())
        );
        consts
            + &ATTENTION_FLASH
                .replace("{{declare}}", &declare)
                .replace("{{fetch_first}}", &fetch(true))
                .replace("{{stage}}", &stage)
                .replace("{{fetch_next}}", &fetch(false))
                .replace("{{scores}}", &lines(scores))
                .replace("{{accumulate}}", &accumulate)
                .replace("{{merge}}", &merge)
                .replace("{{spill}}", &each(&|j, e| format!("      {} = o{j}_{e};", scratch(j, e))))
                .replace("{{gather}}", &each(&|j, e| format!("      o{j}_{e} += {};", scratch(j, e))))
                .replace("{{store}}", &store)
            + VISIBLE
    }

    /// The label of its shader.
    fn label(&self) -> String {
        format!("attention flash hv{} r{} t{} s{} p{}{}", self.hv, self.rows, self.rows_each, self.splits, self.parts, if self.chunked { " chunked" } else { "" })
    }

    /// Workgroups along x for `rows` query rows of `seq` an item (a workgroup holds one item's
    /// rows); heads go along y.
    pub fn workgroups(&self, rows: u32, seq: u32) -> u32 {
        rows / seq.max(1) * seq.div_ceil(self.rows)
    }

    /// Chunks the keys split into, a workgroup each (along z), for `rows` query rows of `seq` an
    /// item over `heads` heads and `kv_len` keys: enough for [`FLASH_FILL`] workgroups, each
    /// chunk at least [`FLASH_MIN_CHUNK_TILES`] tiles long; 1 where the rows alone fill the GPU.
    pub fn chunks(&self, rows: u32, seq: u32, heads: u32, kv_len: u32) -> u32 {
        let workgroups = self.workgroups(rows, seq) * heads;
        let tiles = kv_len.div_ceil(self.keys());
        FLASH_FILL.div_ceil(workgroups).min(tiles / FLASH_MIN_CHUNK_TILES).max(1)
    }
}

/// Workgroups of [`ATTENTION_FLASH`] that fill the GPU: below, its keys split in chunks (an H200
/// holds 132 SMs × 16 workgroups of 128 invocations; Whisper-tiny's encoder at batch 1 has 282).
pub const FLASH_FILL: u32 = 1024;

/// Fewest tiles of keys a chunk of [`Flash::chunks`] walks: each chunk costs its workgroup's
/// start and a record to merge. In Chrome on the H200, 4 chunks of Whisper's 1500 keys (94 tiles)
/// took its attention at batch 1 from 0.229 to 0.214 ms, but 3 chunks of ViT-B/16's 197 keys (13
/// tiles) from 0.019 to 0.024 (docs/hardware/h200-rows.md).
pub const FLASH_MIN_CHUNK_TILES: u32 = 16;

/// Combines the chunks of a chunked [`ATTENTION_FLASH`]: for each row and head, a record a chunk
/// of its unnormalized output (`hv` `vec4`s) and its max and sum (`vec4(max, sum, 0, 0)`),
/// rescaled to the largest max and added; one invocation a `vec4` of the output.
fn flash_merge_wgsl() -> String {
    let body = r#"  let rh = i / p.hv;
  let base = rh * p.chunks * (p.hv + 1u);
  var top = -3.0e38;
  for (var c = 0u; c < p.chunks; c++) { top = max(top, parts[base + c * (p.hv + 1u) + p.hv].x); }
  var total = 0.0;
  var acc = vec4<f32>(0.0);
  for (var c = 0u; c < p.chunks; c++) {
    let at = base + c * (p.hv + 1u);
    let f = exp(parts[at + p.hv].x - top);
    total += parts[at + p.hv].y * f;
    acc += parts[at + i % p.hv] * f;
  }
  y[i] = acc / total;
"#;
    per_element(", hv: u32, chunks: u32", &[("parts", "vec4<f32>"), ("y", "vec4<f32>")], "", body)
}

/// Query rows a workgroup of [`ATTENTION_FLASH`] takes, and invocations a row: of seven shapes
/// (8 to 32 rows, 1 to 8 invocations a row), the fastest or within 1% of it on the H200 at ViT-B/16
/// (batch 1 and 8), Whisper-tiny's encoder (1 and 8) and TinyLlama's prefill of 128
/// (docs/hardware/h200-flash.md), and again with two rows an invocation (h200-rows.md).
pub const FLASH_ROWS: u32 = 32;
/// See [`FLASH_ROWS`].
pub const FLASH_SPLITS: u32 = 4;
/// Largest head dim [`ATTENTION_FLASH`] runs, and the most floats of query rows an invocation
/// keeps in registers (as many again for its outputs).
pub const FLASH_MAX_HEAD_DIM: u32 = 64;

/// The [`ATTENTION_FLASH`] an attention of `seq` query rows an item with head dim `hd` runs as, if
/// any: where an item has a workgroup's rows (a decode step's one row, and a few short sentences,
/// keep [`ATTENTION`], one workgroup a row) and the head fits in registers, in `vec4`s. It replaced
/// both [`ATTENTION`] there and an earlier tiled kernel (16 rows a workgroup, one `vec4` of the
/// output an invocation): Whisper's encoder 2.1× (batch 1) and 3.1× (batch 8) faster, ViT-B/16 7%
/// and 21% (docs/hardware/h200-flash.md).
///
/// Two rows an invocation where a head is wider than 8 `vec4`s, one below: on the H200 (natively),
/// Whisper's attention at batch 1 took 6% less time with two rows of a 64-wide head, MiniLM's shape
/// (12 heads of 32, 8×128) 8% more (docs/hardware/h200-rows.md).
pub fn attention_flash(seq: u32, hd: u32) -> Option<Flash> {
    let hv = hd / 4;
    (seq >= FLASH_ROWS && hd % 4 == 0 && hd <= FLASH_MAX_HEAD_DIM).then(|| Flash::new(hv, FLASH_ROWS, if hv > 8 { 2 } else { 1 }, FLASH_SPLITS))
}

/// How [`ATTENTION`] reads its query, keys and values: from the buffers as they are.
const ATTENTION_READS: &str = r#"
fn setup(t: u32, h: u32, group: u32, qb: u32, kb: u32, kvv: u32) {}
fn query(qb: u32, e: u32) -> Vec { return q[qb + e]; }
fn key(kj: u32, j: u32, e: u32) -> Vec { return k[kj + e]; }
fn value(i: u32, j: u32, c: u32) -> Vec { return v[i]; }
"#;

/// How [`ATTENTION`] reads for one new token (row 0, at position `pos0`) with its RoPE and KV-cache
/// writes folded in: q (binding 1) and the token's key and value (`k_new`, `v_new`, bound at 6 and
/// 7) are as the projections left them, and each pair's cosine and sine come from the RoPE table
/// (binding 8, [`super::rope::table`] of the one position). Each workgroup rotates its head's query and its group's
/// key into workgroup memory and takes the new key and value from there and from `v_new`, never
/// from the caches, which the first workgroup of each group writes at `pos0` for the tokens after.
const ATTENTION_DECODE_READS: &str = r#"
@group(0) @binding(6) var<storage, read> k_new: array<Vec>;
@group(0) @binding(7) var<storage, read> v_new: array<Vec>;
@group(0) @binding(8) var<storage, read> rope: array<vec2<f32>>;
var<workgroup> qs: array<Vec, MAX_HV>;
var<workgroup> ks: array<Vec, MAX_HV>;
var<private> new_base: u32;
fn rotate(x1: f32, x2: f32, i: u32) -> vec2<f32> {
  let cs = rope[i];
  return vec2<f32>(x1 * cs.x - x2 * cs.y, x2 * cs.x + x1 * cs.y);
}
fn setup(t: u32, h: u32, group: u32, qb: u32, kb: u32, kvv: u32) {
  let half = p.hd / 2u;
  let hv = p.hd / VEC;
  new_base = group * hv;
  for (var i = t; i < half; i += WG) {
    let j = i + half;
    let qr = rotate(q[qb + i / VEC][i % VEC], q[qb + j / VEC][j % VEC], i);
    qs[i / VEC][i % VEC] = qr.x;
    qs[j / VEC][j % VEC] = qr.y;
    let kr = rotate(k_new[new_base + i / VEC][i % VEC], k_new[new_base + j / VEC][j % VEC], i);
    ks[i / VEC][i % VEC] = kr.x;
    ks[j / VEC][j % VEC] = kr.y;
  }
  workgroupBarrier();
  // No workgroup of this dispatch reads the caches at pos0, so these writes race with nothing.
  if (h % (p.heads / p.kv_heads) == 0u) {
    for (var e = t; e < hv; e += WG) {
      k[kb + p.pos0 * kvv + e] = ks[e];
      v[kb + p.pos0 * kvv + e] = v_new[new_base + e];
    }
  }
}
fn query(qb: u32, e: u32) -> Vec { return qs[e]; }
fn key(kj: u32, j: u32, e: u32) -> Vec { if (j == p.pos0) { return ks[e]; } return k[kj + e]; }
fn value(i: u32, j: u32, c: u32) -> Vec { if (j == p.pos0) { return v_new[new_base + c]; } return v[i]; }
"#;

/// Largest head dimension the fused decode attention keeps in workgroup memory.
pub const MAX_FUSED_HEAD_DIM: u32 = 256;

/// [`ATTENTION`] with `Vec` of `vec` f32 (1 or 4), workgroups of `wg` invocations, and [`REDUCE`];
/// `decode` folds in the new token's RoPE and cache writes ([`ATTENTION_DECODE_READS`], vec4
/// only).
fn attention_wgsl(vec: u32, decode: bool, wg: u32) -> String {
    let vdot = if vec == 1 { "a * b" } else { "dot(a, b)" };
    let (access, reads) = if decode { ("read_write", ATTENTION_DECODE_READS) } else { ("read", ATTENTION_READS) };
    format!(
        "const VEC: u32 = {vec}u;\nconst MAX_HV: u32 = {}u;\nalias Vec = {};\nfn vdot(a: Vec, b: Vec) -> f32 {{ return {vdot}; }}\n{}{reads}{REDUCE}{VISIBLE}",
        MAX_FUSED_HEAD_DIM / 4,
        Dtype::F32.vector(vec),
        ATTENTION.replace("KV>", &format!("{access}>")).replace("{{wg}}", &wg.to_string()),
    )
}

/// A shader of one invocation an element `i < p.n`, 256 a workgroup over the grid [`elementwise`]
/// lays out: `fields` follow `n` in the uniform `p`; `bindings` are (name, element type) from
/// binding 1, the last one written; `prelude` goes before `main` and `body` inside it.
fn per_element(fields: &str, bindings: &[(&str, &str)], prelude: &str, body: &str) -> String {
    let mut s = format!("struct P {{ n: u32{fields} }}\n@group(0) @binding(0) var<uniform> p: P;\n");
    for (i, (name, ty)) in bindings.iter().enumerate() {
        let access = if i + 1 == bindings.len() { "read_write" } else { "read" };
        s += &format!("@group(0) @binding({}) var<storage, {access}> {name}: array<{ty}>;\n", i + 1);
    }
    s + prelude
        + "@compute @workgroup_size(256)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {\n"
        + "  let i = gid.x + gid.y * nwg.x * 256u;\n  if (i >= p.n) { return; }\n"
        + body
        + "}\n"
}

/// Elementwise ops share one shader: `mode` 0 add, 1 gelu, 2 silu(a)·b.
fn elementwise_wgsl() -> String {
    let body = r#"  let v = a[i];
  if (p.mode == 0u) {
    y[i] = v + b[i];
  } else if (p.mode == 1u) {
    y[i] = gelu(v);
  } else {
    y[i] = v / (1.0 + exp(-v)) * b[i];
  }
"#;
    per_element(", mode: u32", &[("a", "f32"), ("b", "f32"), ("y", "f32")], GELU_WGSL, body)
}

/// Appends to a KV cache: `cache[offset + i] = src[i]`.
fn kv_write_wgsl() -> String {
    per_element(", offset: u32", &[("src", "f32"), ("cache", "f32")], "", "  cache[p.offset + i] = src[i];\n")
}

/// BERT's embeddings, as [`Op::Embed`] defines them.
fn embed_wgsl() -> String {
    let body = r#"  let r = i / p.hidden;
  let c = i % p.hidden;
  y[i] = word[ids[r] * p.hidden + c] + pos[(r % p.seq) * p.hidden + c] + ty[c];
"#;
    per_element(", seq: u32, hidden: u32", &[("ids", "u32"), ("word", "f32"), ("pos", "f32"), ("ty", "f32"), ("y", "f32")], "", body)
}

/// A ViT's patches as rows, as [`Op::Patches`] defines them.
fn patches_wgsl() -> String {
    let body = r#"  let area = p.side_px * p.side_px;
  let side = p.size / p.side_px;
  let row = i / (p.channels * area);
  let col = i % (p.channels * area);
  let b = row / (side * side);
  let py = (row % (side * side)) / side;
  let px = row % side;
  let ch = col / area;
  let ky = (col % area) / p.side_px;
  let kx = col % p.side_px;
  y[i] = x[((b * p.channels + ch) * p.size + py * p.side_px + ky) * p.size + px * p.side_px + kx];
"#;
    per_element(", channels: u32, size: u32, side_px: u32", &[("x", "f32"), ("y", "f32")], "", body)
}

/// A conv1d's windows as rows, as [`Op::Unfold`] defines them.
fn unfold_wgsl() -> String {
    let body = r#"  let row = i / (p.channels * p.kernel);
  let col = i % (p.channels * p.kernel);
  let b = row / p.out_len;
  let ch = col / p.kernel;
  let at = i32((row % p.out_len) * p.stride + col % p.kernel) - i32(p.pad);
  var v = 0.0;
  if (at >= 0 && u32(at) < p.len) {
    if (p.channels_last != 0u) {
      v = x[(b * p.len + u32(at)) * p.channels + ch];
    } else {
      v = x[(b * p.channels + ch) * p.len + u32(at)];
    }
  }
  y[i] = v;
"#;
    let fields = ", channels: u32, len: u32, kernel: u32, stride: u32, pad: u32, channels_last: u32, out_len: u32";
    per_element(fields, &[("x", "f32"), ("y", "f32")], "", body)
}

/// Position embeddings added, after a class token where there is one, as [`Op::Positions`]
/// defines them.
fn positions_wgsl() -> String {
    let body = r#"  let rows = p.seq + p.has_cls;
  let r = i / p.hidden;
  let c = i % p.hidden;
  let b = r / rows;
  let j = r % rows;
  var v = 0.0;
  if (p.has_cls != 0u && j == 0u) {
    v = cls[c];
  } else {
    v = x[(b * p.seq + j - p.has_cls) * p.hidden + c];
  }
  y[i] = v + pos[j * p.hidden + c];
"#;
    per_element(", seq: u32, hidden: u32, has_cls: u32", &[("x", "f32"), ("pos", "f32"), ("cls", "f32"), ("y", "f32")], "", body)
}

/// The sum of a split-K matmul's `splits` partial products (each `n` values), plus the bias
/// (`mode` bit 0, per column of `cols`) and the addend (bit 1), then the GELU of it all (bit 2):
/// what the matmul's [`Epilogue`] would have done at its store.
fn split_sum_wgsl() -> String {
    let body = r#"  var v = 0.0;
  for (var z = 0u; z < p.splits; z++) { v += parts[z * p.n + i]; }
  // Column `i % cols` of segment `i / span` (one [M, N] is one segment of N).
  if ((p.mode & 1u) != 0u) { v += bias[(i / p.span) * p.cols + i % p.cols]; }
  if ((p.mode & 2u) != 0u) { v += addend[i]; }
  if ((p.mode & 4u) != 0u) { v = gelu(v); }
  y[i] = v;
"#;
    per_element(", splits: u32, cols: u32, mode: u32, span: u32", &[("parts", "f32"), ("bias", "f32"), ("addend", "f32"), ("y", "f32")], GELU_WGSL, body)
}

const POOL: &str = r#"
struct P { seq: u32, hidden: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> lens: array<u32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
const WG: u32 = 128u;
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let b = wg.x;
  let n = max(min(lens[b], p.seq), 1u);
  var sq = 0.0;
  for (var c = t; c < p.hidden; c += WG) {
    var acc = 0.0;
    for (var r = 0u; r < n; r++) { acc += x[(b * p.seq + r) * p.hidden + c]; }
    let mean = acc / f32(n);
    y[b * p.hidden + c] = mean;
    sq += mean * mean;
  }
  let inv = 1.0 / max(sqrt(reduce(t, sq, false)), 1e-12);
  for (var c = t; c < p.hidden; c += WG) { y[b * p.hidden + c] *= inv; }
}
"#;

/// A workgroup-wide sum or max for shaders that declare `const WG: u32` (their workgroup size,
/// a power of two) and index invocations by `local_invocation_index`; every invocation gets the
/// result.
const REDUCE: &str = r#"
var<workgroup> red: array<f32, WG>;
fn reduce(t: u32, v: f32, is_max: bool) -> f32 {
  red[t] = v;
  workgroupBarrier();
  for (var w = WG / 2u; w > 0u; w >>= 1u) {
    if (t < w) {
      if (is_max) { red[t] = max(red[t], red[t + w]); } else { red[t] += red[t + w]; }
    }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}
"#;

/// An op that is one dispatch of a shader of its own: the shader's label and source, the
/// uniform's words, the tensors bound, and the workgroups.
type Simple = (&'static str, fn() -> String, Vec<u32>, Vec<usize>, [u32; 3]);

/// Appends `op` to `p` as one dispatch. `dummy` stands in for an absent optional tensor, since
/// every binding a shader declares must be bound; `dtype_of` says how each tensor is stored (a
/// linear layer's weight may be f16); `caps`, what the device offers that a linear layer may use
/// (subgroups for [`Linear::choose`], tensor cores for `matmul`).
pub fn lower(p: &mut Program, tag: &str, op: &Op, dummy: usize, dtype_of: &dyn Fn(T) -> Dtype, caps: Caps) {
    let f = |v: f32| v.to_bits();
    if let Some(mv) = matvec_for(&[op], caps, dtype_of) {
        return matvecs(p, tag, mv, None, &[op], dtype_of);
    }
    if let Op::Attention { q, k, v, lens, y, rows, seq, heads, hd, kv_len, .. } = *op {
        if let Some(flash) = attention_flash(seq, hd) {
            let chunks = flash.chunks(rows, seq, heads, kv_len);
            let flash = Flash { chunked: chunks > 1, ..flash };
            let mut words = attention_words(op);
            words.push(kv_len.div_ceil(flash.keys()).div_ceil(chunks) * flash.keys());
            let shader = p.shader(&flash.label(), || flash.wgsl());
            let groups = [flash.workgroups(rows, seq), heads, chunks];
            if chunks == 1 {
                return dispatch(p, tag, shader, words, [q, k, v, lens, y], groups);
            }
            let records = p.buffer(Buffer::zeroed(format!("{tag} chunks"), (rows * heads * chunks * (flash.hv + 1) * 4) as usize));
            dispatch(p, tag, shader, words, [q, k, v, lens, records], groups);
            let merge = p.shader("attention flash merge", flash_merge_wgsl);
            let n = rows * heads * flash.hv;
            return dispatch(p, tag, merge, vec![n, flash.hv, chunks], [records, y], elementwise(n));
        }
    }
    let (name, src, words, tensors, groups): Simple = match *op {
        Op::Linear { x, w, b, add, y, m, k, n } => return matmul(p, tag, [x, w, y], Finish { bias: b, add, ..Finish::default() }, [m, k, n, 0], dtype_of(w), caps),
        Op::SwiGlu { x, gate, up, y, m, k, n } => {
            // Rows enough for matmul: the gate and up projections, as one GEMM where their weights
            // join ([`joinable`]), into two ranges of one buffer; then silu(g)·u.
            let wd = dtype_of(gate);
            let (g, u) = (p.buffer(Buffer::zeroed(format!("{tag} gate"), (m * n) as usize)), p.buffer(Buffer::zeroed(format!("{tag} up"), (m * n) as usize)));
            if gate != up && joinable(wd, [m, k, n]) {
                let weights = join(p, format!("{tag} gate and up weights"), [Some(gate), Some(up)].into_iter(), 0);
                let both = join(p, format!("{tag} gate and up"), [Some(g), Some(u)].into_iter(), 0);
                matmul(p, tag, [x, weights, both], Finish::default(), [m, k, 2 * n, n], wd, caps);
            } else {
                matmul(p, tag, [x, gate, g], Finish::default(), [m, k, n, 0], wd, caps);
                matmul(p, tag, [x, up, u], Finish::default(), [m, k, n, 0], wd, caps);
            }
            ("elementwise", elementwise_wgsl, vec![m * n, 2], vec![g, u, y], elementwise(m * n))
        }
        Op::Norm { x, g, b, y, rows, cols, eps } => {
            let vec = if cols % 4 == 0 { 4 } else { 1 };
            let shader = p.shader(&format!("norm v{vec}"), || norm_wgsl(vec));
            let words = vec![rows, cols, b.is_some() as u32, f(eps)];
            return dispatch(p, tag, shader, words, [x, g, b.unwrap_or(dummy), y], [rows, 1, 1]);
        }
        Op::Add { a, b, y, n } => ("elementwise", elementwise_wgsl, vec![n, 0], vec![a, b, y], elementwise(n)),
        Op::Gelu { x, y, n } => ("elementwise", elementwise_wgsl, vec![n, 1], vec![x, dummy, y], elementwise(n)),
        Op::SiluMul { g, u, y, n } => ("elementwise", elementwise_wgsl, vec![n, 2], vec![g, u, y], elementwise(n)),
        Op::Rope { x, y, table, tokens, heads, hd, .. } => ("rope", || ROPE.to_string(), vec![tokens, heads, hd], vec![x, y, table], elementwise(tokens * heads * hd / 2)),
        Op::KvWrite { src, cache, tokens, dim, pos0 } => (
            "kv_write", kv_write_wgsl, vec![tokens * dim, pos0 * dim], vec![src, cache], elementwise(tokens * dim),
        ),
        Op::Attention { q, k, v, lens, y, rows, heads, hd, .. } => {
            // vec4 loads where every row of q, k, v and y starts on a vec4.
            let vec = if hd % 4 == 0 { 4 } else { 1 };
            let wg = attention_workgroup(caps);
            let shader = p.shader(&format!("attention v{vec} wg{wg}"), || attention_wgsl(vec, false, wg));
            return dispatch(p, tag, shader, attention_words(op), [q, k, v, lens, y], [rows, heads, 1]);
        }
        Op::Embed { ids, word, pos, ty, y, rows, seq, hidden } => (
            "embed", embed_wgsl, vec![rows * hidden, seq, hidden], vec![ids, word, pos, ty, y], elementwise(rows * hidden),
        ),
        Op::Pool { x, lens, y, batch, seq, hidden } => ("pool", || POOL.to_string(), vec![seq, hidden], vec![x, lens, y], [batch, 1, 1]),
        Op::Patches { x, y, batch, channels, size, patch } => {
            let n = batch * (size / patch).pow(2) * channels * patch * patch;
            ("patches", patches_wgsl, vec![n, channels, size, patch], vec![x, y], elementwise(n))
        }
        Op::Unfold { x, y, batch, channels, len, kernel, stride, pad, channels_last } => {
            let out_len = Op::unfolded_len(len, kernel, stride, pad);
            let n = batch * out_len * channels * kernel;
            ("unfold", unfold_wgsl, vec![n, channels, len, kernel, stride, pad, channels_last as u32, out_len], vec![x, y], elementwise(n))
        }
        Op::Positions { x, pos, cls, y, batch, seq, hidden } => {
            let n = batch * (seq + cls.is_some() as u32) * hidden;
            ("positions", positions_wgsl, vec![n, seq, hidden, cls.is_some() as u32], vec![x, pos, cls.unwrap_or(dummy), y], elementwise(n))
        }
    };
    let reduces = matches!(op, Op::Pool { .. });
    let shader = p.shader(name, || if reduces { format!("{}{REDUCE}", src()) } else { src() });
    dispatch(p, tag, shader, words, tensors, groups);
}

/// The uniform of [`ATTENTION`] for `op`.
fn attention_words(op: &Op) -> Vec<u32> {
    let Op::Attention { seq, heads, kv_heads, hd, kv_len, causal, pos0, .. } = *op else { return Vec::new() };
    vec![seq, heads, kv_heads, hd, kv_len, causal as u32, pos0, (1.0 / (hd as f32).sqrt()).to_bits()]
}

/// The matvec that runs `ops` (linear layers of one input, whose rows it computes one after the
/// other, or one SwiGLU), if they run as one: where [`Linear::choose`] picks a matvec for their
/// rows together. Segments of a multiple of its rows per workgroup keep it; others take one row a
/// workgroup, so no workgroup straddles two weights.
pub fn matvec_for(ops: &[&Op], caps: Caps, dtype_of: &dyn Fn(T) -> Dtype) -> Option<MatvecParams> {
    let mut shape = None;
    let mut rows = Vec::new();
    let mut weights = Dtype::F32;
    for op in ops {
        let (Op::Linear { m, k, n, w: weight, .. } | Op::SwiGlu { m, k, n, gate: weight, .. }) = **op else { return None };
        weights = dtype_of(weight);
        if shape.replace((m, k)).is_some_and(|s| s != (m, k)) {
            return None;
        }
        rows.push(n);
    }
    let (m, k) = shape?;
    let Linear::Matvec(mut mv) = Linear::choose_for(m, k, rows.iter().sum(), caps, weights) else { return None };
    if rows.len() > 1 && rows.iter().any(|n| n % mv.rows != 0) {
        mv.rows = 1;
    }
    Some(mv)
}

/// Appends one dispatch of matvec `mv` carrying out `ops` ([`matvec_for`]'s), with the RMSNorm
/// `norm` (whose output is their input) folded in front where given.
pub fn matvecs(p: &mut Program, tag: &str, mv: MatvecParams, norm: Option<&Op>, ops: &[&Op], dtype_of: &dyn Fn(T) -> Dtype) {
    // With a norm folded in, the matvec reads the norm's input, not its output.
    let (raw, gain, eps) = match norm {
        Some(&Op::Norm { x, g, eps, .. }) => (Some(x), Some(g), eps),
        _ => (None, None, 0.0),
    };
    let mut weights = Vec::new();
    let mut outputs = Vec::new();
    let mut rows = Vec::new();
    let (mut input, mut shape, mut epilogue_tensors) = (0, (0, 0), Vec::new());
    let mut output = MatvecOutput::SwiGlu;
    for op in ops {
        match **op {
            Op::SwiGlu { x, gate, up, y, m, k, n } => {
                (input, shape) = (x, (m, k));
                weights.extend([gate, up]);
                outputs.push(y);
                rows.push(n);
            }
            Op::Linear { x, w, b, add, y, m, k, n } => {
                (input, shape) = (x, (m, k));
                if weights.is_empty() {
                    output = MatvecOutput::Linear { epilogue: Finish { bias: b, add, ..Finish::default() }.epilogue(), segments: ops.len() as u32 };
                    epilogue_tensors.extend(b.into_iter().chain(add));
                }
                weights.push(w);
                outputs.push(y);
                rows.push(n);
            }
            _ => {}
        }
    }
    let wd = dtype_of(weights[0]);
    p.require(mv.sg.then_some("subgroups"));
    let what = match output {
        MatvecOutput::Linear { epilogue, segments } => format!("linear: matvec {mv}{epilogue} ×{segments}"),
        MatvecOutput::SwiGlu => format!("swiglu: matvec {mv}"),
    };
    let label = format!("{what}{} w {wd}", if gain.is_some() { " rmsnorm" } else { "" });
    let shader = p.shader(&label, || mv.wgsl_fused(output, gain.is_some(), Dtype::F32, wd));
    let tensors = std::iter::once(raw.unwrap_or(input)).chain(weights).chain(epilogue_tensors).chain(outputs).chain(gain);
    let (m, k) = shape;
    dispatch(p, tag, shader, MatvecParams::uniform(k, &rows, eps), tensors, mv.batched_workgroups(m, rows.iter().sum()));
}

/// Appends one attention dispatch for a single new token that also does the RoPE of its query and
/// key and writes its key and value to the caches: `rope_q`, `rope_k`, `write_v` and `attention`
/// are the ops it replaces (the key's cache write goes with `rope_k`), on a device offering `caps`.
pub fn decode_attention(p: &mut Program, tag: &str, [rope_q, rope_k, write_v, attention]: [&Op; 4], caps: Caps) {
    let (&Op::Rope { x: q, table, .. }, &Op::Rope { x: k_new, .. }, &Op::KvWrite { src: v_new, .. }, &Op::Attention { k, v, lens, y, rows, heads, .. }) =
        (rope_q, rope_k, write_v, attention)
    else {
        return;
    };
    let wg = attention_workgroup(caps);
    let shader = p.shader(&format!("attention v4 wg{wg} decode"), || attention_wgsl(4, true, wg));
    dispatch(p, tag, shader, attention_words(attention), [q, k, v, lens, y, k_new, v_new, table], [rows, heads, 1]);
}

/// Appends linear layers of one input and width as one `matmul` (a `Dispatch::Gemms` of the plan):
/// their weights, their biases (zeros for a layer without) and their outputs each become one
/// buffer, of which each layer's own tensor becomes a [view](Init::View).
pub fn gemms(p: &mut Program, tag: &str, ops: &[&Op], dtype_of: &dyn Fn(T) -> Dtype, caps: Caps) {
    let layers: Vec<(T, Option<T>, T)> = ops.iter().filter_map(|op| match **op { Op::Linear { w, b, y, .. } => Some((w, b, y)), _ => None }).collect();
    let Some(&&Op::Linear { x, w, m, k, n, .. }) = ops.first() else { return };
    let weights = join(p, format!("{tag} weights"), layers.iter().map(|l| Some(l.0)), 0);
    let biases = layers.iter().any(|l| l.1.is_some()).then(|| join(p, format!("{tag} biases"), layers.iter().map(|l| l.1), 4 * n as u64));
    let outputs = join(p, format!("{tag} outputs"), layers.iter().map(|l| Some(l.2)), 0);
    matmul(p, tag, [x, weights, outputs], Finish { bias: biases, ..Finish::default() }, [m, k, n * layers.len() as u32, n], dtype_of(w), caps);
}

/// Whether `m`×`k` by `[n,k]` linear layers with weights stored as `dtype` can be one GEMM over their
/// weights one after another: float weights (a quantized matrix is not stored row by row), and
/// each layer's weights, bias and output a whole number of [`VIEW_ALIGN`]s, so that each is a view.
pub fn joinable(dtype: Dtype, [m, k, n]: [u32; 3]) -> bool {
    let bytes = [dtype.storage_bytes((n * k) as usize, k as usize) as u64, 4 * n as u64, 4 * u64::from(m) * u64::from(n)];
    dtype.quant().is_none() && bytes.iter().all(|b| b % VIEW_ALIGN == 0)
}

/// A buffer of `parts` one after another (an absent one `absent` zero bytes), each part's buffer
/// becoming a view of it; constant where every part is.
fn join(p: &mut Program, label: String, parts: impl Iterator<Item = Option<T>>, absent: u64) -> usize {
    let of = p.buffers.len();
    let mut inits = Vec::new();
    let mut offset = 0;
    let mut constant = true;
    for part in parts {
        let init = match part {
            Some(t) => {
                let len = p.buffers[t].init.len();
                constant &= p.buffers[t].constant;
                std::mem::replace(&mut p.buffers[t].init, Init::View { of, offset, len })
            }
            None => Init::Zeroed(absent),
        };
        offset += init.len();
        inits.push(init);
    }
    let init = match inits.iter().all(|i| matches!(i, Init::Zeroed(_))) {
        true => Init::Zeroed(offset),
        false => Init::Concat(inits),
    };
    p.buffer(Buffer { label, uniform: false, init, constant })
}

/// The tensors a linear layer's epilogue reads, where it has them, and whether it stores the GELU
/// ([`Epilogue`]).
#[derive(Debug, Clone, Copy, Default)]
struct Finish {
    bias: Option<usize>,
    add: Option<usize>,
    gelu: bool,
    /// A norm of the output's rows, done by the sum of K's chunks: `(g, b, y, eps)`.
    norm: Option<(usize, Option<usize>, usize, f32)>,
}

impl Finish {
    fn epilogue(&self) -> Epilogue {
        Epilogue { bias: self.bias.is_some(), add: self.add.is_some(), gelu: self.gelu }
    }
}

/// Appends the dispatch of a linear layer `y = x·wᵀ (+ b) (+ add)` (its GELU where `finish` says)
/// of `[m, k, n]` as `matmul`, `w` stored as `wd`; with a `segment` (not 0), layers of one input
/// as one, each `segment` columns wide ([`gemms`]). Where K splits ([`Linear::k_split`]), the
/// chunks' partial products go into a buffer of their own, laid out as y is, then
/// [`split_sum_wgsl`] adds them up and finishes them as the matmul's store would have. Where the
/// device has tensor cores (`caps`) and the block is the one [`subgroup_matrix`] runs, that kernel
/// takes the register-blocked one's place, with the same grid, chunks and bindings.
fn matmul(p: &mut Program, tag: &str, [x, w, y]: [usize; 3], finish: Finish, [m, k, n, segment]: [u32; 4], wd: Dtype, caps: Caps) {
    let kernel = matmul_kernel(m, k, n, caps);
    let (splits, chunk) = kernel.k_split(m, k, n, caps);
    let epilogue = if splits > 1 { Epilogue::default() } else { finish.epilogue() };
    let segments = if segment > 0 { format!(" in segments of {segment}") } else { String::new() };
    let label = kernel.label(epilogue, wd) + &segments;
    let options = Linear::matmul_options(epilogue, wd, segment);
    let (shader, [gx, gy, _]) = match kernel {
        Linear::Matmul(params) if caps.subgroup_matrix && subgroup_matrix::runs(&params, &options) => {
            p.require(Some("shader-f16"));
            p.require(Some(subgroup_matrix::FEATURE));
            // K splits as the plan's block has it (the norm it folds follows); each chunk may
            // still run in a block of another size.
            let block = subgroup_matrix::block(m, n, splits);
            let label = Linear::label_of(format_args!("matmul {block}x{block} on subgroup matrices"), epilogue, wd) + &segments;
            (p.shader(&label, || subgroup_matrix::wgsl(block, options)), [n.div_ceil(block), m.div_ceil(block), 1])
        }
        _ => (p.shader(&label, || kernel.segmented_wgsl(epilogue, wd, segment)), kernel.workgroups(m, n)),
    };
    let words = [kernel.params(m, k, n), vec![chunk]].concat();
    let Finish { bias, add, gelu, .. } = finish;
    if splits == 1 {
        let tensors = [x, w].into_iter().chain(bias).chain(add).chain([y]);
        debug_assert!(finish.norm.is_none(), "the plan folds a norm only into a split's sum ({m}×{k}×{n})");
        return dispatch(p, tag, shader, words, tensors, [gx, gy, 1]);
    }
    let partials = p.buffer(Buffer::zeroed(format!("{tag} partials"), (splits * m * n) as usize));
    dispatch(p, tag, shader, words, [x, w, partials], [gx, gy, splits]);
    let mode = bias.is_some() as u32 | (add.is_some() as u32) << 1 | (gelu as u32) << 2;
    if let Some((g, b, normed, eps)) = finish.norm {
        let vec = if n % 4 == 0 { 4 } else { 1 };
        let shader = p.shader(&format!("split sum norm v{vec}"), || split_sum_norm_wgsl(vec));
        let words = vec![m, n, b.is_some() as u32, eps.to_bits(), splits, m * n / vec, mode];
        let tensors = [partials, bias.unwrap_or(partials), add.unwrap_or(partials), y, g, b.unwrap_or(g), normed];
        return dispatch(p, tag, shader, words, tensors, [m, 1, 1]);
    }
    let sum = p.shader("split sum", split_sum_wgsl);
    let tensors = [partials, bias.unwrap_or(partials), add.unwrap_or(partials), y];
    let cols = if segment == 0 { n } else { segment };
    dispatch(p, tag, sum, vec![m * n, splits, cols, mode, m * cols], tensors, elementwise(m * n));
}

/// The `matmul` an `m`×`k` by `[n,k]` linear layer runs as: [`Linear::choose`]'s, or the default
/// block where that is a matvec (a layer of rows that only a fused dispatch brings here). The plan
/// ([`super::fuse`]) asks it whether K splits, so the two cannot disagree.
pub fn matmul_kernel(m: u32, k: u32, n: u32, caps: Caps) -> Linear {
    match Linear::choose(m, k, n, caps) {
        Linear::Matvec(_) => Linear::Matmul(MatmulParams::DEFAULT),
        matmul => matmul,
    }
}

/// Appends a linear layer whose K splits and the norm of its output (a `Dispatch::Normed` of the
/// plan): the sum of its chunks stores the output and normalizes its rows.
pub fn normed(p: &mut Program, tag: &str, linear: &Op, norm: &Op, dtype_of: &dyn Fn(T) -> Dtype, caps: Caps) {
    let (&Op::Linear { x, w, b, add, y, m, k, n }, &Op::Norm { g, b: shift, y: normed, eps, .. }) = (linear, norm) else { return };
    matmul(p, tag, [x, w, y], Finish { bias: b, add, norm: Some((g, shift, normed, eps)), ..Finish::default() }, [m, k, n, 0], dtype_of(w), caps);
}

/// Appends a linear layer run as `matmul` and the GELU of its output as one dispatch (a
/// `Dispatch::Activated` of the plan), storing into the GELU's output.
pub fn activated(p: &mut Program, tag: &str, linear: &Op, gelu: &Op, dtype_of: &dyn Fn(T) -> Dtype, caps: Caps) {
    let (&Op::Linear { x, w, b, add, m, k, n, .. }, &Op::Gelu { y, .. }) = (linear, gelu) else { return };
    matmul(p, tag, [x, w, y], Finish { bias: b, add, gelu: true, ..Finish::default() }, [m, k, n, 0], dtype_of(w), caps);
}

/// Appends a dispatch of `shader` over a uniform of `words` (binding 0) and `tensors` (1…n).
fn dispatch(p: &mut Program, tag: &str, shader: usize, words: Vec<u32>, tensors: impl IntoIterator<Item = usize>, groups: [u32; 3]) {
    let params = p.buffer(Buffer::uniform(format!("{tag} params"), words));
    let bound: Vec<usize> = std::iter::once(params).chain(tensors).collect();
    p.step(shader, &bound, groups);
}

/// Invocations of an [`ATTENTION`] workgroup, one per (query row, head): 256 on a GPU, where the
/// keys of a row spread over them; 32 on a CPU ([`Caps::cpu`]), which runs a workgroup's
/// invocations a few SIMD lanes at a time and pays for each barrier across all of them
/// (SwiftShader ran MiniLM's attention at 1×16 in 806 ms with 256).
fn attention_workgroup(caps: Caps) -> u32 {
    if caps.cpu { 32 } else { 256 }
}

/// Most keys one attention row may see ([`ATTENTION`] keeps its scores in workgroup memory).
pub const MAX_KEYS: u32 = 2048;

/// Workgroups for `n` one-thread-per-element invocations.
fn elementwise(n: u32) -> [u32; 3] {
    linear_workgroups(n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attention_runs_flash_where_an_item_has_a_workgroups_rows_and_the_head_fits() {
        let flash = |seq, hd| attention_flash(seq, hd).map(|f| (f.hv, f.keys()));
        assert_eq!(flash(128, 32), Some((8, 32)), "MiniLM at 128 tokens: 32 keys a tile");
        assert_eq!(flash(197, 64), Some((16, 16)), "ViT-B/16");
        assert_eq!(flash(1500, 64), Some((16, 16)), "Whisper's encoder");
        assert_eq!(flash(40, 36), Some((9, 20)), "nine vec4s in three parts: 20 keys, a whole number a split, in 16 KiB");
        assert_eq!(flash(16, 32), None, "MiniLM at 16 tokens: fewer rows than a workgroup's");
        assert_eq!(flash(1, 64), None, "a decode step");
        assert_eq!((flash(40, 6), flash(40, 128)), (None, None), "a head not in vec4s, or wider than the registers hold");
        assert_eq!(attention_flash(1500, 64).map(|f| f.workgroups(8 * 1500, 1500)), Some(8 * 47), "a tile holds one item's rows");
        let chunks = |rows, seq, heads, kv_len| attention_flash(seq, 64).unwrap().chunks(rows, seq, heads, kv_len);
        assert_eq!(chunks(1500, 1500, 6, 1500), 4, "Whisper at batch 1: 282 workgroups, 94 tiles of keys");
        assert_eq!(chunks(8 * 1500, 1500, 6, 1500), 1, "Whisper at batch 8 fills the GPU");
        assert_eq!((chunks(197, 197, 12, 197), chunks(512, 128, 32, 128)), (1, 1), "ViT-B/16's 13 tiles, a prefill's 8: too few to split");
        assert_eq!(chunks(64, 64, 2, 4096), 16, "a long cache: chunks of 16 tiles");
        let split = |hd| attention_flash(64, hd).map(|f| (f.rows_each, f.parts, f.invocations()));
        assert_eq!(split(64), Some((2, 2, 128)), "two rows an invocation, each over half the head");
        assert_eq!(split(32), Some((1, 1, 128)), "one row a head of 32");
        assert_eq!(split(36), Some((2, 3, 192)), "nine vec4s in three parts");
        assert_eq!(split(44), Some((1, 1, 128)), "eleven vec4s would take eleven parts: one row an invocation");
        assert_eq!(Flash::new(8, 32, 2, 4), Flash { hv: 8, rows: 32, rows_each: 2, splits: 4, parts: 1, chunked: false }, "two rows of 32 fit one invocation's registers");
    }

    #[test]
    fn every_flash_shape_fits_webgpus_workgroup_memory_and_its_merge_fits_the_tiles() {
        for hd in (4..=FLASH_MAX_HEAD_DIM).step_by(4) {
            let f = attention_flash(FLASH_ROWS, hd).expect("every head dim in vec4s up to the most");
            let (keys, invocations) = (f.keys(), f.invocations());
            assert!(keys >= f.splits && keys % f.splits == 0, "hd {hd}: {keys} keys for {} splits", f.splits);
            assert!(f.hv % f.parts == 0 && f.rows_each * f.hv / f.parts * 4 <= FLASH_MAX_HEAD_DIM, "hd {hd}: {} parts", f.parts);
            let bytes = f.workgroup_bytes();
            assert!(bytes <= 16384, "hd {hd}: {bytes} bytes of workgroup memory");
            assert!(f.rows * f.hv <= 2 * keys * f.hv, "hd {hd}: the merge spills {} rows of {} vec4s into tiles of {keys} keys", f.rows, f.hv);
            assert!(invocations <= 256, "hd {hd}: {invocations} invocations, over WebGPU's guaranteed 256");
        }
    }
}
