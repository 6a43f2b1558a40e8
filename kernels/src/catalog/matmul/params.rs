//! The register-blocked matmul's tuning parameters: what a variant is, which combinations can
//! run on any WebGPU device, the search space a tuner tries, and the WGSL each one compiles to.

use super::super::epilogue::Epilogue;
use crate::dtype::Dtype;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Invocations per workgroup that every WebGPU device allows (`maxComputeInvocationsPerWorkgroup`).
pub const MAX_INVOCATIONS: u32 = 256;
/// Bytes of workgroup memory that every WebGPU device allows (`maxComputeWorkgroupStorageSize`).
pub const MAX_WORKGROUP_BYTES: u32 = 16 * 1024;

/// One variant of the register-blocked matmul: a workgroup computes a `bm`×`bn` block of C from
/// `bm`×`bk` and `bk`×`bn` tiles of A and B staged in workgroup memory, and each of its
/// `(bn/tn) × (bm/tm)` invocations computes `tm`×`tn` of those outputs in registers. Inputs are
/// read `vec` consecutive f32 at a time (`vec4<f32>` loads for 4) wherever the matrix's rows allow.
///
/// Plain and serialisable, so a tuner can store the winners and a plan can carry one to the page;
/// whoever receives one checks it with [`MatmulParams::validate`] before compiling it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MatmulParams {
    /// Rows of C per workgroup.
    pub bm: u32,
    /// Columns of C per workgroup.
    pub bn: u32,
    /// Depth (along K) of the A and B tiles staged per step.
    pub bk: u32,
    /// Rows of C per invocation.
    pub tm: u32,
    /// Columns of C per invocation.
    pub tn: u32,
    /// f32 per load: 1 (scalar) or 4 (`vec4<f32>`).
    pub vec: u32,
}

/// Why a [`MatmulParams`] cannot run; the message names the parameters and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// A size is zero.
    #[error("{params}: `{name}` is 0; every tile size must be at least 1")]
    Zero {
        /// The parameters.
        params: MatmulParams,
        /// The parameter that is zero.
        name: &'static str,
    },
    /// A vector width WGSL loads cannot have.
    #[error("{params}: vector width {} is neither 1 (scalar loads) nor 4 (vec4 loads)", params.vec)]
    VecWidth {
        /// The parameters.
        params: MatmulParams,
    },
    /// A tile that does not split evenly.
    #[error("{params}: {what} = {of} is not a multiple of {by_name} = {by}")]
    NotDivisible {
        /// The parameters.
        params: MatmulParams,
        /// The parameter that must be a multiple.
        what: &'static str,
        /// Its value.
        of: u32,
        /// The parameter it must be a multiple of.
        by_name: &'static str,
        /// Its value.
        by: u32,
    },
    /// More invocations than WebGPU guarantees.
    #[error("{params}: the workgroup is (bn/tn) × (bm/tm) = {x} × {y} = {} invocations, more than the {MAX_INVOCATIONS} WebGPU guarantees", x * y)]
    TooManyInvocations {
        /// The parameters.
        params: MatmulParams,
        /// Invocations along N.
        x: u32,
        /// Invocations along M.
        y: u32,
    },
    /// More workgroup memory than WebGPU guarantees.
    #[error("{params}: the A and B tiles need 4 × (bm×bk + bk×bn) = {bytes} bytes of workgroup memory, more than the {MAX_WORKGROUP_BYTES} WebGPU guarantees")]
    TooMuchMemory {
        /// The parameters.
        params: MatmulParams,
        /// Bytes the tiles need.
        bytes: u32,
    },
}

impl MatmulParams {
    /// The catalogue's `matmul`: 64×64 blocks, 16-deep tiles, 4×4 outputs per invocation and vec4
    /// loads. 256 invocations each load exactly one vec4 of A and one of B per step, the tiles
    /// take 8 KiB (half the guaranteed workgroup memory, so two workgroups fit where 16 KiB is
    /// all there is), 16 accumulators fit the registers of any GPU, and 64-wide blocks still give
    /// mid-sized matrices enough workgroups to fill a large GPU.
    pub const DEFAULT: MatmulParams = MatmulParams { bm: 64, bn: 64, bk: 16, tm: 4, tn: 4, vec: 4 };

    /// Workgroup size `[x, y]`: `bn/tn` invocations along N, `bm/tm` along M.
    pub fn workgroup_size(&self) -> [u32; 2] {
        [self.bn / self.tn.max(1), self.bm / self.tm.max(1)]
    }

    /// Bytes of workgroup memory the A and B tiles take.
    pub fn workgroup_bytes(&self) -> u32 {
        4 * (self.bm * self.bk + self.bk * self.bn)
    }

    /// Refuses a combination that cannot compile or run on every WebGPU device, saying which
    /// rule it breaks.
    pub fn validate(&self) -> Result<(), ParamError> {
        let p = *self;
        let sizes = [("bm", p.bm), ("bn", p.bn), ("bk", p.bk), ("tm", p.tm), ("tn", p.tn), ("vec", p.vec)];
        if let Some(&(name, _)) = sizes.iter().find(|(_, v)| *v == 0) {
            return Err(ParamError::Zero { params: p, name });
        }
        if p.vec != 1 && p.vec != 4 {
            return Err(ParamError::VecWidth { params: p });
        }
        let multiples = [
            ("bm", p.bm, "tm", p.tm),
            ("bn", p.bn, "tn", p.tn),
            ("tn", p.tn, "vec", p.vec),
            ("bk", p.bk, "vec", p.vec),
        ];
        if let Some(&(what, of, by_name, by)) = multiples.iter().find(|m| m.1 % m.3 != 0) {
            return Err(ParamError::NotDivisible { params: p, what, of, by_name, by });
        }
        let [x, y] = p.workgroup_size();
        if x * y > MAX_INVOCATIONS {
            return Err(ParamError::TooManyInvocations { params: p, x, y });
        }
        let bytes = p.workgroup_bytes();
        if bytes > MAX_WORKGROUP_BYTES {
            return Err(ParamError::TooMuchMemory { params: p, bytes });
        }
        Ok(())
    }

    /// Workgroups to cover an `m`×`n` output: one per `bm`×`bn` block.
    pub fn workgroups(&self, m: u32, n: u32) -> [u32; 3] {
        [n.div_ceil(self.bn).max(1), m.div_ceil(self.bm).max(1), 1]
    }

    /// The WGSL of this variant for the catalogue's `C = A·B` (B `[K,N]`, no bias).
    pub fn wgsl(&self) -> String {
        self.wgsl_with(MatmulOptions::default())
    }

    /// The WGSL of this variant with `options`: its constants and vector type, then the shader of
    /// `wgsl/matmul.wgsl`, which is written in terms of them, with the B tile, its loads, the
    /// accumulators, products and stores generated (unrolled) for B's layout and the epilogue.
    pub fn wgsl_with(&self, options: MatmulOptions) -> String {
        let MatmulParams { bm, bn, bk, tm, tn, vec } = *self;
        let (index, segmented) = output_index(options.segment);
        let generated = match options.b {
            BLayout::KN => self.b_rows_along_n(),
            BLayout::NK => self.b_rows_along_k(),
        };
        let body = include_str!("../../../wgsl/matmul.wgsl")
            .replace("{{output}}", &options.epilogue.bindings(3, "c"))
            .replace("{{tile_b}}", &generated.tile_b)
            .replace("{{b_reads}}", &options.b_dtype.quant().map_or(crate::catalog::dequant::MATMUL_B_FLOAT_READS.into(), |q| crate::catalog::dequant::matmul_b_reads(q, vec)))
            .replace("{{declare_ahead}}", generated.ahead.trim_end())
            .replace("{{fetch}}", generated.fetch.trim_end())
            .replace("{{stage}}", generated.stage.trim_end())
            .replace("{{declare}}", generated.declare.trim_end())
            .replace("{{multiply}}", generated.multiply.trim_end())
            .replace("{{store}}", generated.store.replace("{stored}", &options.epilogue.apply("v", "col", index)).replace("{index}", index).trim_end());
        let constants = [("BM", bm), ("BN", bn), ("BK", bk), ("TM", tm), ("TN", tn)];
        let preamble = super::super::vector_preamble(&format!("{self}{options}"), &constants, vec, &[("AIn", options.a_dtype), ("BIn", options.b_dtype)]);
        preamble + &body + &segmented
    }

    /// B `[K,N]`: its tile holds BK rows of BN columns, Vecs along N, and each accumulator is a
    /// Vec of VEC neighbouring columns of C, so one product is a scalar of A times a Vec of B.
    fn b_rows_along_n(&self) -> Generated {
        let MatmulParams { tm, tn, vec, .. } = *self;
        let tnv = tn / vec;
        // The e-th f32 of a Vec-typed variable.
        let component = |name: String, e: u32| if vec == 1 { name } else { format!("{name}[{e}]") };
        let cells = || (0..tm).flat_map(move |i| (0..tnv).map(move |j| (i, j)));
        let tile = "const BNV: u32 = BN / VEC;\nvar<workgroup> tb: array<array<Vec, BNV>, BK>;".into();
        let mut g = self.generated(tile, self.bk * (self.bn / vec), ["BNV", "p.k", "p.n", "k0", "n0"], "Vec", tnv);
        for e in 0..vec {
            for j in 0..tnv {
                g.multiply += &format!("            let b_{e}_{j} = tb[kv * VEC + {e}u][lid.x + {j}u * WX];\n");
            }
            for (i, j) in cells() {
                g.multiply += &format!("            acc_{i}_{j} += {} * b_{e}_{j};\n", component(format!("a_{i}"), e));
            }
        }
        for (i, j) in cells() {
            for e in 0..vec {
                g.store += &store(i, &format!("(lid.x + {j}u * WX) * VEC + {e}u"), &component(format!("acc_{i}_{j}"), e));
            }
        }
        g
    }

    /// B `[N,K]`: its tile holds BN rows of BK, Vecs along K like A's tile (loaded the same
    /// coalesced way), and each accumulator is one f32 of C, a sum of dot products of Vecs. The
    /// tile's rows get one spare Vec where workgroup memory allows, so that neighbouring
    /// invocations, which read neighbouring rows, fall in different memory banks.
    fn b_rows_along_k(&self) -> Generated {
        let MatmulParams { tm, tn, vec, bn, .. } = *self;
        let spare = u32::from(self.workgroup_bytes() + 4 * vec * bn <= MAX_WORKGROUP_BYTES);
        let cells = || (0..tm).flat_map(move |i| (0..tn).map(move |j| (i, j)));
        let tile = format!("var<workgroup> tb: array<array<Vec, BKV + {spare}u>, BN>;");
        let mut g = self.generated(tile, bn * (self.bk / vec), ["BKV", "p.n", "p.k", "n0", "k0"], "f32", tn);
        for j in 0..tn {
            g.multiply += &format!("            let b_{j} = tb[lid.x + {j}u * WX][kv];\n");
        }
        for (i, j) in cells() {
            g.multiply += &format!("            acc_{i}_{j} += vdot(a_{i}, b_{j});\n");
        }
        for (i, j) in cells() {
            g.store += &store(i, &format!("lid.x + {j}u * WX"), &format!("acc_{i}_{j}"));
        }
        g
    }

    /// What both layouts of B share: the B tile `tile` (`vecs` Vecs a row, `total` in all, each
    /// at row `row0 +` and column `col0 +` of B, which is `b_rows` × `b_cols`), the loads ahead of
    /// both tiles, TM × `cols` accumulators of type `acc`, and each step's reads of the A tile.
    fn generated(&self, tile: String, total: u32, [vecs, b_rows, b_cols, row0, col0]: [&str; 5], acc: &str, cols: u32) -> Generated {
        let mut g = Generated { tile_b: tile, ..Generated::default() };
        self.ahead(&mut g, "ta", 0, self.bm * (self.bk / self.vec), ["BKV", "p.m", "p.k", "m0", "k0"]);
        self.ahead(&mut g, "tb", 1, total, [vecs, b_rows, b_cols, row0, col0]);
        for i in 0..self.tm {
            for j in 0..cols {
                g.declare += &format!("    var acc_{i}_{j}: {acc};\n");
            }
            g.multiply += &format!("            let a_{i} = ta[lid.y + {i}u * WY][kv];\n");
        }
        g
    }

    /// The loads ahead of `tile` (of input `input`, `total` Vecs, `vecs` a row, read from a
    /// `rows` × `cols` matrix from row `row0` and column `col0` on): a register per share of the
    /// invocations (the last guarded where `total` is no multiple of them), its fetch and its
    /// store into the tile. Up to [`UNROLLED_SHARES`] shares each is written out; more go in an
    /// array filled and stored by loops.
    fn ahead(&self, g: &mut Generated, tile: &str, input: u32, total: u32, [vecs, rows, cols, row0, col0]: [&str; 5]) {
        let [x, y] = self.workgroup_size();
        let invocations = x * y;
        let shares = total.div_ceil(invocations);
        let guard = if total % invocations != 0 { format!("if (v < {total}u) ") } else { String::new() };
        let fetch = |r: &str| format!("{tile}_{r} = load({input}u, {rows}, {cols}, {row0} + v / {vecs}, {col0} + (v % {vecs}) * VEC);");
        let stage = |r: &str| format!("{tile}[v / {vecs}][v % {vecs}] = {tile}_{r};");
        if shares <= UNROLLED_SHARES {
            for r in 0..shares {
                let guard = if (r + 1) * invocations > total { guard.as_str() } else { "" };
                let each = format!("{{ let v = local_index + {r}u * INVOCATIONS; {guard}{{");
                g.ahead += &format!("    var {tile}_{r}: Vec;\n");
                g.fetch += &format!("        {each} {} }} }}\n", fetch(&r.to_string()));
                g.stage += &format!("        {each} {} }} }}\n", stage(&r.to_string()));
            }
        } else {
            let each = format!("for (var r = 0u; r < {shares}u; r++) {{ let v = local_index + r * INVOCATIONS; {guard}{{");
            g.ahead += &format!("    var {tile}_ahead: array<Vec, {shares}>;\n");
            g.fetch += &format!("        {each} {} }} }}\n", fetch("ahead[r]"));
            g.stage += &format!("        {each} {} }} }}\n", stage("ahead[r]"));
        }
    }
}

/// Most registers per tile an invocation's loads ahead are written out for (every vec4 block a
/// model's linear layer runs has one or two). More are loops over an array: written out, the
/// scalar 64×64×32 variant's 8 loads a tile, each with `load`'s edge checks, took SwiftShader
/// past a case's timeout to compile; as loops, natively on the H200 every model pass was 3–7%
/// slower than written out (docs/hardware/h200-ahead.md).
const UNROLLED_SHARES: u32 = 2;

/// Where output (`row`, `col`) goes in C, as WGSL, and the function that says so where C's columns
/// are in segments of `segment` (none for 0).
pub(super) fn output_index(segment: u32) -> (&'static str, String) {
    match segment {
        0 => ("row * p.n + col", String::new()),
        s => ("segmented(row, col)", format!("
// C's columns in segments of {s}, each stored whole ([M, {s}]) after the one before: linear layers
// of one input run as one, each output a range of C.
fn segmented(row: u32, col: u32) -> u32 {{ return (col / {s}u) * p.m * {s}u + row * {s}u + col % {s}u; }}
")),
    }
}

/// The store of one output `v`: row `lid.y + i·WY` of the block, column `col` of it, `{index}`
/// (where in C) and `{stored}` (what the epilogue makes of `v`) left for
/// [`MatmulParams::wgsl_with`] to fill.
fn store(i: u32, col: &str, value: &str) -> String {
    format!("    {{ let row = m0 + lid.y + {i}u * WY; let col = n0 + {col}; if (row < p.m && col < p.n) {{ let v = {value}; c[c0 + {{index}}] = {{stored}}; }} }}\n")
}

/// The parts of the shader that depend on B's layout.
#[derive(Default)]
struct Generated {
    /// The B tile's declaration.
    tile_b: String,
    /// The registers the tiles are loaded ahead into.
    ahead: String,
    /// Their loads, for the step at `k0`.
    fetch: String,
    /// Their stores into the tiles.
    stage: String,
    /// The accumulators.
    declare: String,
    /// The products of one Vec step along K.
    multiply: String,
    /// The stores of every accumulator.
    store: String,
}

/// How B is laid out in memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BLayout {
    /// `[K,N]`, row-major: `C = A·B`, the catalogue's `matmul`.
    #[default]
    KN,
    /// `[N,K]`, row-major: `C = A·Bᵀ`, a linear layer's weight in PyTorch's layout.
    NK,
}

/// What a shader of a [`MatmulParams`] computes besides the tiles: B's layout and what is added at the store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MatmulOptions {
    /// B's layout.
    pub b: BLayout,
    /// A bias `[N]` and an addend `[M,N]` added to C as it is stored, bound from `@binding(3)` on
    /// (C follows them).
    pub epilogue: Epilogue,
    /// How A is stored (f16 is widened to f32 as the tiles are loaded).
    pub a_dtype: Dtype,
    /// How B is stored.
    pub b_dtype: Dtype,
    /// Columns of C in each segment stored as a matrix of its own (`[M, segment]`, one after
    /// another), so that linear layers of one input run as one GEMM over their weights one after
    /// another; 0: C is one `[M, N]`.
    #[serde(default)]
    pub segment: u32,
}

impl fmt::Display for MatmulOptions {
    /// Empty for the catalogue's default; ` B[N,K]`, ` +bias`, ` +add` otherwise, for shader labels.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.b == BLayout::NK {
            f.write_str(" B[N,K]")?;
        }
        write!(f, "{}", self.epilogue)?;
        if self.segment > 0 {
            write!(f, " C in segments of {}", self.segment)?;
        }
        for (name, dtype) in [("A", self.a_dtype), ("B", self.b_dtype)] {
            if dtype != Dtype::F32 {
                write!(f, " {name} {dtype}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for MatmulParams {
    /// Compact and safe in ids and file names: `bm64-bn64-bk16-tm4-tn4-v4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let MatmulParams { bm, bn, bk, tm, tn, vec } = self;
        write!(f, "bm{bm}-bn{bn}-bk{bk}-tm{tm}-tn{tn}-v{vec}")
    }
}

impl std::str::FromStr for MatmulParams {
    type Err = String;

    /// Reads the [`Display`](fmt::Display) form back; the result is not yet validated.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not a matmul variant; variants are written like `{}`", MatmulParams::DEFAULT);
        let mut values = [0u32; 6];
        let parts: Vec<&str> = s.split('-').collect();
        if parts.len() != values.len() {
            return Err(bad());
        }
        for ((part, prefix), value) in parts.iter().zip(["bm", "bn", "bk", "tm", "tn", "v"]).zip(&mut values) {
            *value = part.strip_prefix(prefix).and_then(|n| n.parse().ok()).ok_or_else(bad)?;
        }
        let [bm, bn, bk, tm, tn, vec] = values;
        Ok(MatmulParams { bm, bn, bk, tm, tn, vec })
    }
}

/// The variants a tuner tries: 32- to 128-wide blocks, 4×4 to 8×8 outputs per invocation, tiles
/// 8 to 32 deep, scalar and vec4 loads, and workgroups of 16×16, 8×8, 8×32, 32×8 and 64×4
/// invocations. Every one validates.
pub fn candidates() -> Vec<MatmulParams> {
    let p = |bm, bn, bk, tm, tn, vec| MatmulParams { bm, bn, bk, tm, tn, vec };
    let mut all = Vec::new();
    for vec in [1, 4] {
        // 16×16 invocations of 4×4 outputs on 64×64 blocks, at every tile depth.
        all.extend([8, 16, 32].map(|bk| p(64, 64, bk, 4, 4, vec)));
        // 16×16 invocations of 8×8 outputs on 128×128 blocks: 64 accumulators each.
        all.extend([8, 16].map(|bk| p(128, 128, bk, 8, 8, vec)));
        // Wide and tall 16×16 workgroups.
        all.push(p(128, 64, 16, 8, 4, vec));
        all.push(p(64, 128, 16, 4, 8, vec));
        // 8×8 invocations: small blocks for small matrices, or 8×8 outputs each.
        all.push(p(32, 32, 16, 4, 4, vec));
        all.push(p(64, 64, 16, 8, 8, vec));
    }
    // Other workgroup shapes: 8×32, 32×8 and a long 64×4.
    all.push(p(128, 64, 16, 4, 8, 4));
    all.push(p(64, 128, 16, 8, 4, 4));
    all.push(p(16, 256, 8, 4, 4, 4));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for c in candidates() {
            assert_eq!(c.to_string().parse::<MatmulParams>(), Ok(c));
        }
        for bad in ["", "bm64", "bm64-bn64-bk16-tm4-tn4", "bm64-bn64-bk16-tm4-tn4-vx", "bn64-bm64-bk16-tm4-tn4-v4"] {
            assert!(bad.parse::<MatmulParams>().unwrap_err().contains("not a matmul variant"), "{bad}");
        }
    }

    #[test]
    fn every_candidate_validates_and_they_differ() {
        let all = candidates();
        assert!((12..=32).contains(&all.len()), "{}", all.len());
        for p in &all {
            assert_eq!(p.validate(), Ok(()), "{p}");
        }
        assert!(all.contains(&MatmulParams::DEFAULT));
        let mut names: Vec<String> = all.iter().map(|p| p.to_string()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len(), "duplicate candidates");
        let shapes: Vec<[u32; 2]> = all.iter().map(|p| p.workgroup_size()).collect();
        for shape in [[16, 16], [8, 8], [8, 32], [32, 8], [64, 4]] {
            assert!(shapes.contains(&shape), "no {shape:?} workgroup");
        }
    }

    #[test]
    fn invalid_combinations_are_refused_naming_the_rule() {
        let d = MatmulParams::DEFAULT;
        let refused = [
            (MatmulParams { tm: 0, ..d }, "`tm` is 0"),
            (MatmulParams { vec: 2, ..d }, "vector width 2 is neither 1"),
            (MatmulParams { bm: 62, ..d }, "bm = 62 is not a multiple of tm = 4"),
            (MatmulParams { tn: 3, vec: 1, ..d }, "bn = 64 is not a multiple of tn = 3"),
            (MatmulParams { tn: 2, bn: 32, ..d }, "tn = 2 is not a multiple of vec = 4"),
            (MatmulParams { bk: 6, ..d }, "bk = 6 is not a multiple of vec = 4"),
            (MatmulParams { tm: 2, ..d }, "16 × 32 = 512 invocations, more than the 256"),
            (MatmulParams { bm: 128, bn: 128, bk: 32, tm: 8, tn: 8, vec: 4 }, "32768 bytes of workgroup memory"),
        ];
        for (p, needle) in refused {
            let err = p.validate().expect_err(&p.to_string()).to_string();
            assert!(err.contains(needle) && err.starts_with(&p.to_string()), "{p}: {err}");
        }
    }

    #[test]
    fn the_next_steps_tiles_are_loaded_into_registers_while_this_step_is_multiplied() {
        // 64x64 blocks, 16 deep, vec4: each of 256 invocations one Vec of A and one of B a step.
        let wgsl = MatmulParams::DEFAULT.wgsl_with(MatmulOptions { b: BLayout::NK, ..MatmulOptions::default() });
        let body = &wgsl[wgsl.find("for (var s = 0u").unwrap()..];
        let (stage, fetch, multiply) = (body.find("ta[v / BKV][v % BKV] = ta_0;").unwrap(), body.find("ta_0 = load(0u").unwrap(), body.find("for (var kv").unwrap());
        assert!(stage < fetch && fetch < multiply && body.contains("tb_0 = load(1u") && !wgsl.contains("ta_1") && !wgsl.contains("if (v <"), "{wgsl}");
        // 128x128 blocks, 16 deep, vec4: two Vecs of each tile an invocation, written out.
        let two = MatmulParams { bm: 128, bn: 128, bk: 16, tm: 8, tn: 8, vec: 4 }.wgsl();
        assert!(two.contains("ta_1 = load(") && two.contains("tb_1 = load(") && !two.contains("_ahead"), "{two}");
        // 128x128 blocks, 8 deep, scalar loads: 1024 elements of each tile for 256 invocations, in loops.
        let wide = MatmulParams { bm: 128, bn: 128, bk: 8, tm: 8, tn: 8, vec: 1 }.wgsl();
        assert!(wide.contains("var ta_ahead: array<Vec, 4>;") && wide.contains("ta_ahead[r] = load(") && wide.contains("var tb_ahead: array<Vec, 4>;") && !wide.contains("ta_0"), "{wide}");
        // Shares that do not divide: 16x256 blocks, 8 deep, vec4 have 32 Vecs of A for 256 invocations.
        let ragged = MatmulParams { bm: 16, bn: 256, bk: 8, tm: 4, tn: 4, vec: 4 }.wgsl();
        assert!(ragged.contains("if (v < 32u) { ta_0 = load(") && ragged.contains("tb_1 = load(") && !ragged.contains("ta_1"), "{ragged}");
    }

    #[test]
    fn the_shader_is_the_template_under_the_variants_constants() {
        let wgsl = MatmulParams::DEFAULT.wgsl();
        for line in ["const BK: u32 = 16u;", "alias Vec = vec4<f32>;", "fn main("] {
            assert!(wgsl.contains(line), "{line} missing:\n{wgsl}");
        }
        assert!(MatmulParams { vec: 1, ..MatmulParams::DEFAULT }.wgsl().contains("alias Vec = f32;"));
        assert_eq!(MatmulParams::DEFAULT.workgroups(65, 129), [3, 2, 1]);
    }
}
