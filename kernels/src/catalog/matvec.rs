//! `matvec`: `y[N] = W[N,K] · x[K]`, a linear layer of one token (the decode step of a language
//! model), whose speed is how fast W streams from memory. Its workgroup size, rows per workgroup,
//! vector width and reduction (workgroup memory, or subgroups where the adapter has them) are
//! [`MatvecParams`], which a tuner searches.

use super::epilogue::Epilogue;
use super::shapes;
use crate::check::Tolerance;
use crate::dtype::Dtype;
use crate::quant::QuantFormat;
use crate::kernel::{split_workgroups, Kernel};
use crate::real::Real;
use crate::shape::Shape;
use crate::suite::Suite;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The catalogue's `matvec`, in its default variant.
pub static MATVEC: Matvec = Matvec { params: MatvecParams::DEFAULT, dtype: Dtype::F32 };
/// `matvec_f16`: x and W stored in f16 (half the bytes to stream), f32 arithmetic.
pub static MATVEC_F16: Matvec = Matvec { params: MatvecParams::DEFAULT, dtype: Dtype::F16 };
/// `matvec_q8_0`: W in GGUF's q8_0, dequantized in registers; x f32.
pub static MATVEC_Q8_0: Matvec = Matvec { params: MatvecParams::DEFAULT, dtype: Dtype::Q8_0 };
/// `matvec_q4_0`: W in GGUF's q4_0, dequantized in registers; x f32.
pub static MATVEC_Q4_0: Matvec = Matvec { params: MatvecParams::DEFAULT, dtype: Dtype::Q4_0 };

/// Largest workgroup: the invocations every WebGPU device allows.
const MAX_WG: u32 = super::matmul::MAX_INVOCATIONS;
/// Most rows per workgroup: each is an accumulator per invocation and a row of partial sums.
const MAX_ROWS: u32 = 8;

/// One variant of `matvec`: a workgroup of `wg` invocations computes `rows` consecutive outputs,
/// reading W and x `vec` consecutive f32 at a time (`vec4<f32>` loads for 4) where K allows, and
/// adds up its partial sums in workgroup memory, first across each subgroup where `sg` is set.
///
/// Plain and serialisable like [`MatmulParams`](super::matmul::MatmulParams), so a tuner can store
/// the winners; whoever receives one checks it with [`MatvecParams::validate`] before compiling it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MatvecParams {
    /// Invocations per workgroup: a power of two, for the tree reduction.
    pub wg: u32,
    /// Outputs (rows of W) per workgroup.
    pub rows: u32,
    /// f32 per load: 1 (scalar) or 4 (`vec4<f32>`).
    pub vec: u32,
    /// Partial sums added within each subgroup (`subgroupAdd`), leaving one per subgroup to add in
    /// workgroup memory, instead of a tree over every invocation. Needs the WebGPU feature
    /// `subgroups`: a candidate where the adapter has it, unsupported elsewhere.
    #[serde(default)]
    pub sg: bool,
}

/// Why a [`MatvecParams`] cannot run; the message names the parameters and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatvecParamError {
    /// A workgroup size the reduction cannot halve down to one, or too large for WebGPU.
    #[error("{0}: the workgroup size must be a power of two from 1 to {MAX_WG}")]
    WorkgroupSize(MatvecParams),
    /// Rows per workgroup out of range.
    #[error("{0}: rows per workgroup must be 1 to {MAX_ROWS}")]
    Rows(MatvecParams),
    /// A vector width WGSL loads cannot have.
    #[error("{params}: vector width {vec} is neither 1 (scalar loads) nor 4 (vec4 loads)", params = .0, vec = .0.vec)]
    VecWidth(MatvecParams),
}

impl MatvecParams {
    /// The catalogue's `matvec`: 128 invocations, 2 rows each, vec4 loads; what the model lowering
    /// ([`super::linear`]) picks for TinyLlama's 2048 → 2048 decode projections.
    pub const DEFAULT: MatvecParams = MatvecParams { wg: 128, rows: 2, vec: 4, sg: false };

    /// Refuses a combination that cannot compile or run on every WebGPU device, saying which
    /// rule it breaks.
    pub fn validate(&self) -> Result<(), MatvecParamError> {
        if !self.wg.is_power_of_two() || self.wg > MAX_WG {
            return Err(MatvecParamError::WorkgroupSize(*self));
        }
        if !(1..=MAX_ROWS).contains(&self.rows) {
            return Err(MatvecParamError::Rows(*self));
        }
        if self.vec != 1 && self.vec != 4 {
            return Err(MatvecParamError::VecWidth(*self));
        }
        Ok(())
    }

    /// Workgroups for `n` outputs: one per `rows`, split over y past 65535.
    pub fn workgroups(&self, n: u32) -> [u32; 3] {
        split_workgroups(n.div_ceil(self.rows.max(1)))
    }

    /// Workgroups for `m` rows of `n` outputs each: [`workgroups`](Self::workgroups) along x and
    /// y, the rows along z.
    pub fn batched_workgroups(&self, m: u32, n: u32) -> [u32; 3] {
        let [x, y, _] = self.workgroups(n);
        [x, y, m.max(1)]
    }

    /// The WGSL of this variant, with the bias and addend of `epilogue` bound from `@binding(3)` on
    /// (y follows them), x stored as `x` and W as `w` (f16 is widened on load; arithmetic is f32).
    pub fn wgsl(&self, epilogue: Epilogue, x: Dtype, w: Dtype) -> String {
        self.generate(MatvecOutput::Linear { epilogue, segments: 1 }, false, x, w)
    }

    /// The WGSL of SwiGLU's first half, `y = silu(W·x) · (W_up·x)`: W (the gate) at `@binding(2)`,
    /// W_up (same shape and storage) at 3, y at 4. Each workgroup computes the same rows of both,
    /// so the gate and up projections and their product are one dispatch.
    pub fn wgsl_swiglu(&self, x: Dtype, w: Dtype) -> String {
        self.generate(MatvecOutput::SwiGlu, false, x, w)
    }

    /// The WGSL of `output`, with RMSNorm folded in front where `rms_norm` is set: the kernel then
    /// reads the raw rows of x and a gain (bound after everything else) and computes
    /// `W·(x ⊙ gain) / rms(x)`, each workgroup summing the squares of x as it streams x anyway,
    /// so the norm costs no dispatch and no pass of its own.
    pub fn wgsl_fused(&self, output: MatvecOutput, rms_norm: bool, x: Dtype, w: Dtype) -> String {
        self.generate(output, rms_norm, x, w)
    }

    /// The uniform's words: K, the total rows, the norm's epsilon, and the rows of each segment
    /// (up to [`MAX_SEGMENTS`]).
    pub fn uniform(k: u32, segments: &[u32], eps: f32) -> Vec<u32> {
        let mut seg = [0u32; 4];
        seg[..segments.len()].copy_from_slice(segments);
        [vec![k, segments.iter().sum(), eps.to_bits(), 0], seg.to_vec()].concat()
    }

    /// Its constants and types, then the shader of `wgsl/matvec.wgsl`, which is written in terms
    /// of them, with its accumulators, products, partial sums and stores unrolled over the rows
    /// (and over the two weights of SwiGLU, or branched over the segments' weights).
    fn generate(&self, output: MatvecOutput, rms_norm: bool, x: Dtype, w: Dtype) -> String {
        let MatvecParams { wg, rows, vec, sg } = *self;
        let segments = match output {
            MatvecOutput::Linear { segments, .. } => segments.clamp(1, MAX_SEGMENTS),
            MatvecOutput::SwiGlu => 1,
        };
        // Each weight's name per segment, and the accumulator it adds into: SwiGLU's two weights
        // accumulate side by side; segments run one at a time, into the same accumulators.
        let weights: Vec<Vec<(String, &str)>> = match output {
            MatvecOutput::Linear { .. } => (0..segments).map(|s| vec![(segment_name("w", s), "acc")]).collect(),
            MatvecOutput::SwiGlu => vec![vec![("w".into(), "acc"), ("w_up".into(), "up")]],
        };
        let accs = weights[0].len() as u32;
        let mut declare = String::new();
        let mut sums = Vec::new();
        for r in 0..rows {
            declare += &format!("    let row_{r} = min(r0 + {r}u, last);\n");
            for (part, (_, acc)) in weights[0].iter().enumerate() {
                declare += &format!("    var {acc}_{r} = 0.0;\n");
                sums.push((part as u32 * rows + r, format!("{acc}_{r}")));
            }
        }
        if rms_norm {
            declare += "    var squares = 0.0;\n";
            sums.push((rows * accs, "squares".into()));
        }
        let branch = |body: &SegmentBody| -> String {
            if segments == 1 {
                return body(&weights[0]);
            }
            let arms: Vec<String> = weights.iter().enumerate().map(|(s, ws)| format!("if (seg == {s}u) {{\n{}            }}", body(ws))).collect();
            format!("            {}", arms.join(" else "))
        };
        let (loops, functions) = match w.quant() {
            None => float_loops(&branch, rows, rms_norm),
            Some(q) => quant_loops(&branch, rows, rms_norm, q, vec),
        };
        let scale = if rms_norm { format!("inverseSqrt(partial[{}u][0] / f32(p.k) + p.eps)", rows * accs) } else { "1.0".into() };
        // x at 1, then the weights from 2 on, then the outputs.
        let first_out = 2 + weights.iter().map(Vec::len).sum::<usize>() as u32;
        let (mut bindings, store, label) = match output {
            MatvecOutput::Linear { epilogue, segments: 1 } => (
                epilogue.bindings(first_out, "y"),
                format!("y[b * len + r0 + t] = {};", epilogue.apply("partial[t][0] * scale", "r0 + t", "b * len + r0 + t")),
                epilogue.to_string(),
            ),
            MatvecOutput::Linear { .. } => {
                let outs: Vec<String> = (0..segments)
                    .map(|s| format!("@group(0) @binding({}) var<storage, read_write> {}: array<f32>;", first_out + s, segment_name("y", s)))
                    .collect();
                let stores: Vec<String> = (0..segments).map(|s| format!("if (seg == {s}u) {{ {}[b * len + r0 + t] = partial[t][0] * scale; }}", segment_name("y", s))).collect();
                (outs.join("\n"), stores.join(" else "), format!(" ×{segments}"))
            }
            MatvecOutput::SwiGlu => (
                "@group(0) @binding(4) var<storage, read_write> y: array<f32>;".into(),
                "let gate = partial[t][0] * scale;\n        y[b * len + r0 + t] = gate / (1.0 + exp(-gate)) * partial[ROWS + t][0] * scale;".into(),
                " swiglu".into(),
            ),
        };
        let mut inputs = String::new();
        for (s, ws) in weights.iter().enumerate().skip(1) {
            inputs += &format!("@group(0) @binding({}) var<storage, read> {}: array<WIn>;\n", 2 + s, ws[0].0);
        }
        if output == MatvecOutput::SwiGlu {
            inputs += "@group(0) @binding(3) var<storage, read> w_up: array<WIn>;\n";
        }
        if rms_norm {
            let last = bindings.matches("@binding(").count() as u32 + first_out;
            bindings += &format!("\n@group(0) @binding({last}) var<storage, read> gain: array<Vec>;");
        }
        let body = include_str!("../../wgsl/matvec.wgsl")
            .replace("{{output}}", &(inputs + &bindings))
            .replace("{{declare}}", declare.trim_end())
            .replace("{{loops}}", loops.trim_end())
            .replace("{{builtins}}", if sg { SUBGROUP_BUILTINS } else { "" })
            .replace("{{reduce}}", &reduction(&sums, sg))
            .replace("{{scale}}", &scale)
            .replace("{{store}}", &store)
            + &functions;
        let norm = if rms_norm { " rmsnorm" } else { "" };
        let constants = [("WG", wg), ("ROWS", rows), ("PARTS", rows * accs + rms_norm as u32)];
        let preamble = super::vector_preamble(&format!("{self}{label}{norm}, x {x}, W {w}"), &constants, vec, &[("XIn", x), ("WIn", w)]);
        // `enable subgroups;` is what Chromium's WGSL compiler needs; the native path drops it for
        // naga, which reads subgroup built-ins without it (Gpu::prepare).
        if sg { format!("{SUBGROUPS_ENABLE}{preamble}{body}") } else { preamble + &body }
    }
}

/// Generates the multiply-adds of every row of the weights of each segment (`body`), branched on
/// the segment where there are several.
type Branch<'a> = dyn Fn(&SegmentBody) -> String + 'a;

/// Writes the loop over one weight segment, given its (buffer, name) pairs.
type SegmentBody<'a> = dyn Fn(&[(String, &str)]) -> String + 'a;

/// The loops over K of a float W: whole `Vec` loads where K allows, else one f32 at a time;
/// with `rms_norm`, x's squares are summed and x is scaled by the gain as it is read. Returns the
/// loops and the functions they call (none).
fn float_loops(branch: &Branch, rows: u32, rms_norm: bool) -> (String, String) {
    let multiply = |w_index: &'static str| {
        move |ws: &[(String, &str)]| -> String {
            let mut text = String::new();
            for r in 0..rows {
                for (w, acc) in ws {
                    text += &match w_index {
                        "vec" => format!("            {acc}_{r} += vdot(Vec({w}[row_{r} * kv + i]), xv);\n"),
                        _ => format!("            {{ let e = row_{r} * p.k + i; {acc}_{r} += lane(Vec({w}[e / VEC]), e % VEC) * xv; }}\n"),
                    };
                }
            }
            text
        }
    };
    let (load_vec, load_scalar) = if rms_norm {
        (
            "let xr = Vec(x[b * kv + i]);\n            squares += vdot(xr, xr);\n            let xv = xr * gain[i];",
            "let xr = lane(Vec(x[e / VEC]), e % VEC);\n            squares += xr * xr;\n            let xv = xr * lane(gain[i / VEC], i % VEC);",
        )
    } else {
        ("let xv = Vec(x[b * kv + i]);", "let xv = lane(Vec(x[e / VEC]), e % VEC);")
    };
    let main = format!(
        "    if (p.k % VEC == 0u) {{
        // Every row starts on a Vec: whole Vec loads.
        let kv = p.k / VEC;
        for (var i = t; i < kv; i += WG) {{
            {load_vec}
{}
        }}
    }} else {{
        // Rows straddle Vecs: one f32 at a time.
        for (var i = t; i < p.k; i += WG) {{
            let e = b * p.k + i;
            {load_scalar}
{}
        }}
    }}",
        branch(&multiply("vec")).trim_end(),
        branch(&multiply("scalar")).trim_end()
    );
    (main, String::new())
}

/// The loop over a W quantized as `format` ([`crate::quant::QuantMatrix::gpu_layout`]: every
/// block's quants, a row's consecutive, then the blocks' f16 scales two to a word), in units of
/// `vec` words: one u32, or a 16-byte `vec4<u32>` chunk (where x is read as vec4s too). Invocation
/// `t` reads units `t`, `t + WG`, … of each of its rows, the x values each multiplies (zero past
/// K, which pads a row's last block) and its block's scale. With `rms_norm`, as [`float_loops`].
/// Returns the loop and the functions it calls.
fn quant_loops(branch: &Branch, rows: u32, rms_norm: bool, format: QuantFormat, vec: u32) -> (String, String) {
    let multiply = |ws: &[(String, &str)]| -> String {
        let mut text = String::new();
        for r in 0..rows {
            for (w, acc) in ws {
                let scale = super::dequant::scale(w, vec, "len * words", "s");
                text += &format!("            {{ let s = row_{r} * blocks + i / UNITS; {acc}_{r} += {scale} * unit_dot({w}[row_{r} * units + i], xv); }}\n");
            }
        }
        text
    };
    let load = if rms_norm {
        "let xr = load_x(b, i);\n            squares += sum_sq(xr);\n            let xv = times(xr, load_x(GAIN, i));"
    } else {
        "let xv = load_x(b, i);"
    };
    let main = format!(
        "    // A row is `blocks` blocks of UNITS units of {vec} word(s); a segment's scales follow its
    // `len` rows' quants.
    let blocks = (p.k + BLOCK - 1u) / BLOCK;
    let words = blocks * WORDS;
    let units = words / {vec}u;
    for (var i = t; i < units; i += WG) {{
        {load}
{}
    }}",
        branch(&multiply).trim_end()
    );
    (main, format_wgsl(format, vec, rms_norm))
}

/// The WGSL that reads a unit of `vec` words of a `format` matrix: `Xs`, the x values it
/// multiplies (XS vec4s, the `j`-th being vec4 `x_index(i, j)` of the row); `load_x(b, i)` (of row
/// `b` of x, or of the norm's gain for `b = GAIN`); `unit_dot` (their dot product with its quants,
/// before the block's scale); `sum_sq` and `times` for a folded norm.
fn format_wgsl(format: QuantFormat, vec: u32, rms_norm: bool) -> String {
    let (xs, x_index, dot) = match (format, vec) {
        // Word i of a row holds weights 4i .. 4i + 4: a block's 32 int8 are 8 words in order.
        (QuantFormat::Q8_0, 1) => (1, "i", "dot(q8_0_values(q), xs[0])"),
        (QuantFormat::Q8_0, _) => (4, "4u * i + j", "dot(q8_0_values(q[0]), xs[0]) + dot(q8_0_values(q[1]), xs[1]) + dot(q8_0_values(q[2]), xs[2]) + dot(q8_0_values(q[3]), xs[3])"),
        // Word i of a row is bytes 4j .. 4j + 4 (j = i % 4) of block i / 4: the block's weights
        // 4j .. 4j + 4 in their low nibbles, 16 + 4j .. 16 + 4j + 4 in their high ones.
        (QuantFormat::Q4_0, 1) => (2, "i / 4u * 8u + i % 4u + 4u * j", "dot(q4_0_low(q), xs[0]) + dot(q4_0_high(q), xs[1])"),
        // Chunk i is block i: the low nibbles of its words are weights 0 .. 16, the high 16 .. 32.
        (QuantFormat::Q4_0, _) => (
            8,
            "8u * i + j",
            "dot(q4_0_low(q[0]), xs[0]) + dot(q4_0_low(q[1]), xs[1]) + dot(q4_0_low(q[2]), xs[2]) + dot(q4_0_low(q[3]), xs[3]) + dot(q4_0_high(q[0]), xs[4]) + dot(q4_0_high(q[1]), xs[5]) + dot(q4_0_high(q[2]), xs[6]) + dot(q4_0_high(q[3]), xs[7])",
        ),
    };
    let unit = if vec == 1 { "u32" } else { "vec4<u32>" };
    // x4(b, v): vec4 v of row b of x (of the gain for b = GAIN), zero past K.
    let x4 = if vec == 4 {
        "fn x4(b: u32, v: u32) -> vec4<f32> {
    // Rows of whole blocks have no padding to mask: a plain load (p.k is uniform, so is the branch).
    if (p.k % BLOCK == 0u) {
        if (b == GAIN) { GAIN_READ_V } else { return vec4<f32>(x[b * (p.k / 4u) + v]); }
    }
    let last = max((p.k + 3u) / 4u, 1u) - 1u;
    var x4 = vec4<f32>(0.0);
    if (b == GAIN) { GAIN_READ } else { x4 = vec4<f32>(x[b * (p.k / 4u) + min(v, last)]); }
    return select(vec4<f32>(0.0), x4, vec4<u32>(4u * v) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(p.k));
}
"
        .replace("GAIN_READ_V", if rms_norm { "return gain[v];" } else { "" })
        .replace("GAIN_READ", if rms_norm { "x4 = gain[min(v, last)];" } else { "" })
    } else {
        "fn x4(b: u32, v: u32) -> vec4<f32> {
    var x4 = vec4<f32>(0.0);
    for (var e = 0u; e < 4u; e++) {
        let c = 4u * v + e;
        if (c < p.k) {
            if (b == GAIN) { GAIN_READ } else { x4[e] = f32(x[b * p.k + c]); }
        }
    }
    return x4;
}
"
        .replace("GAIN_READ", if rms_norm { "x4[e] = lane(gain[c / VEC], c % VEC);" } else { "" })
    };
    // Every Xs is built and read at constant indices, so it stays in registers.
    let each = |f: &dyn Fn(u32) -> String, sep: &str| (0..xs).map(f).collect::<Vec<_>>().join(sep);
    let load = each(&|j| format!("x4(b, {})", x_index.replace('j', &format!("{j}u"))), ", ");
    let sum_sq = each(&|j| format!("dot(xs[{j}], xs[{j}])"), " + ");
    let times = each(&|j| format!("a[{j}] * g[{j}]"), ", ");
    format!(
        "{}const UNITS: u32 = WORDS / {vec}u;
const GAIN: u32 = 0xffffffffu;
alias Xs = array<vec4<f32>, {xs}u>;
{x4}fn load_x(b: u32, i: u32) -> Xs {{ return Xs({load}); }}
fn unit_dot(q: {unit}, xs: Xs) -> f32 {{ return {dot}; }}
fn sum_sq(xs: Xs) -> f32 {{ return {sum_sq}; }}
fn times(a: Xs, g: Xs) -> Xs {{ return Xs({times}); }}
",
        super::dequant::unpack(format)
    )
}

/// Most weights one matvec dispatch streams as segments: Q, K and V of one attention layer. With
/// their outputs, x and a norm's gain that is all eight storage buffers WebGPU guarantees a shader.
pub const MAX_SEGMENTS: u32 = 3;

/// `name` for segment `s`: `w`, `w_1`, `w_2`.
fn segment_name(name: &str, s: u32) -> String {
    if s == 0 { name.to_string() } else { format!("{name}_{s}") }
}

/// What a matvec shader stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatvecOutput {
    /// `W·x` plus the epilogue's terms. With `segments` above 1, that many weights of the same K
    /// read the same x one after the other (workgroups `0..N₀/ROWS` the first, and so on; each
    /// segment's rows a multiple of ROWS), each into its own output, without an epilogue: Q, K and
    /// V of one layer in one dispatch.
    Linear {
        /// Terms added at the store (one segment only).
        epilogue: Epilogue,
        /// Weights, each with its own output: 1 to [`MAX_SEGMENTS`].
        segments: u32,
    },
    /// `silu(W·x) · (W_up·x)`.
    SwiGlu,
}

/// The directive a subgroup variant's WGSL starts with.
pub const SUBGROUPS_ENABLE: &str = "enable subgroups;\n";

/// The entry point's extra parameters in a subgroup variant.
const SUBGROUP_BUILTINS: &str = "\n    @builtin(subgroup_invocation_id) lane_in_sg: u32,\n    @builtin(subgroup_size) sg_size: u32,";

/// The WGSL that leaves the sum of every invocation's `(part, accumulator)` in `partial[part][0]`,
/// all invocations having passed a barrier after it. Without subgroups: each invocation's value in
/// `partial[part][t]`, then a tree of log2(WG) halvings. With them: `subgroupAdd` per subgroup, the
/// first invocation of each storing its subgroup's sum, then invocation `part` adds those up. The
/// subgroups of a one-dimensional workgroup are runs of consecutive invocation indices, so
/// `t / sg_size` numbers them; the check against the reference catches an adapter where not.
fn reduction(sums: &[(u32, String)], sg: bool) -> String {
    if !sg {
        let share: String = sums.iter().map(|(part, acc)| format!("    partial[{part}u][t] = {acc};\n")).collect();
        return share
            + "    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (t < s) {
            for (var r = 0u; r < PARTS; r++) {
                partial[r][t] += partial[r][t + s];
            }
        }
        workgroupBarrier();
    }";
    }
    let mut out = String::new();
    for (part, acc) in sums {
        out += &format!("    let sg_sum_{part} = subgroupAdd({acc});\n");
    }
    out += "    if (lane_in_sg == 0u) {\n";
    for (part, _) in sums {
        out += &format!("        partial[{part}u][t / sg_size] = sg_sum_{part};\n");
    }
    out + "    }
    workgroupBarrier();
    if (t < PARTS) {
        var total = partial[t][0];
        for (var j = 1u; j < (WG + sg_size - 1u) / sg_size; j++) {
            total += partial[t][j];
        }
        partial[t][0] = total;
    }
    workgroupBarrier();"
}

impl fmt::Display for MatvecParams {
    /// Compact and safe in ids and file names: `wg128-r2-v4`, and `wg128-r2-v4-sg` with subgroups.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let MatvecParams { wg, rows, vec, sg } = self;
        write!(f, "wg{wg}-r{rows}-v{vec}{}", if *sg { "-sg" } else { "" })
    }
}

impl std::str::FromStr for MatvecParams {
    type Err = String;

    /// Reads the [`Display`](fmt::Display) form back; the result is not yet validated.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not a matvec variant; variants are written like `{}`", MatvecParams::DEFAULT);
        let (rest, sg) = s.strip_suffix("-sg").map_or((s, false), |rest| (rest, true));
        let parts: Vec<&str> = rest.split('-').collect();
        let [wg, rows, vec] = parts[..] else { return Err(bad()) };
        let read = |part: &str, prefix: &str| part.strip_prefix(prefix).and_then(|n| n.parse().ok()).ok_or_else(bad);
        Ok(MatvecParams { wg: read(wg, "wg")?, rows: read(rows, "r")?, vec: read(vec, "v")?, sg })
    }
}

/// The variants a tuner tries: vec4 loads with workgroups of 32 to 256 invocations and 1 to 8 rows
/// each, and scalar loads at 64 and 256 invocations of 1 and 4 rows (for K not a multiple of 4,
/// where vec4 variants fall back to scalar loads anyway); then the subgroup reductions of the vec4
/// shapes most likely to win (unsupported where the adapter has no `subgroups`). Every one
/// validates.
pub fn candidates() -> Vec<MatvecParams> {
    let mut all = Vec::new();
    for wg in [32, 64, 128, 256] {
        all.extend([1, 2, 4, 8].map(|rows| MatvecParams { wg, rows, vec: 4, sg: false }));
    }
    for wg in [64, 256] {
        all.extend([1, 4].map(|rows| MatvecParams { wg, rows, vec: 1, sg: false }));
    }
    for (wg, rows) in [(64, 2), (128, 1), (128, 2), (128, 4), (256, 2)] {
        all.push(MatvecParams { wg, rows, vec: 4, sg: true });
    }
    all
}

/// `y[N] = W[N,K] · x[K]`, inputs stored as `dtype`, f32 arithmetic. The inputs are x then W,
/// as a linear layer binds them.
pub struct Matvec {
    params: MatvecParams,
    dtype: Dtype,
}

impl Matvec {
    /// `matvec` (`matvec_f16`, `matvec_q8_0`, … for `dtype`) as the variant `params`, refused if
    /// they cannot run.
    pub fn new(params: MatvecParams, dtype: Dtype) -> Result<Matvec, MatvecParamError> {
        params.validate()?;
        Ok(Matvec { params, dtype })
    }

    /// How x is stored: as W, but f32 beside a quantized W.
    fn x_dtype(&self) -> Dtype {
        if self.dtype.quant().is_some() { Dtype::F32 } else { self.dtype }
    }

    fn compute<T: Real>(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<T> {
        let k = s.dim(0) as usize;
        let (x, w) = (&inputs[0], &inputs[1]);
        w.chunks(k.max(1))
            .map(|row| {
                let mut acc = T::lit(0.0);
                for (&wv, &xv) in row.iter().zip(x) {
                    acc += T::of(wv) * T::of(xv);
                }
                acc
            })
            .collect()
    }
}

impl Kernel for Matvec {
    fn name(&self) -> &'static str {
        match self.dtype {
            Dtype::F32 => "matvec",
            Dtype::F16 => "matvec_f16",
            Dtype::Q8_0 => "matvec_q8_0",
            Dtype::Q4_0 => "matvec_q4_0",
        }
    }
    fn summary(&self) -> &'static str {
        match self.dtype {
            Dtype::F32 => "y = W·x, f32, W [N,K] row-major (one token through a linear layer): coalesced vec4 reads of W, a workgroup reduction per row, any K×N",
            Dtype::F16 => "y = W·x, x and W stored f16 (needs shader-f16), f32 arithmetic; the reference reads the same f16 values, so the tolerance is f32's",
            Dtype::Q8_0 => "y = W·x, W [N,K] in GGUF's q8_0 (blocks of 32: an f16 scale, 32 int8; 8.5 bits a weight) dequantized in registers, f32 arithmetic; a row's last block zero-padded where K is no multiple of 32; the reference reads the dequantized weights",
            Dtype::Q4_0 => "y = W·x, W [N,K] in GGUF's q4_0 (blocks of 32: an f16 scale, 32 nibbles; 4.5 bits a weight) dequantized in registers, f32 arithmetic; a row's last block zero-padded where K is no multiple of 32; the reference reads the dequantized weights",
        }
    }
    fn input_dtype(&self) -> Dtype {
        self.dtype
    }
    fn round_input(&self, s: &Shape, index: usize, values: &mut [f32]) {
        // x stays f32 beside a quantized W; W is rounded as its rows are stored. Finite values
        // of whole rows always quantize.
        match index {
            0 => values.iter_mut().for_each(|v| *v = self.x_dtype().round(*v)),
            _ => {
                let _ = self.dtype.round_rows(values, s.dim(0).max(1) as usize);
            }
        }
    }
    fn input_bytes(&self, s: &Shape, index: usize, values: &[f32]) -> Vec<u8> {
        match index {
            0 => self.x_dtype().encode(values),
            _ => self.dtype.encode_rows(values, s.dim(0).max(1) as usize).unwrap_or_default(),
        }
    }
    fn bytes(&self, s: &Shape) -> f64 {
        let (k, n) = (s.dim(0) as usize, s.dim(1) as usize);
        (self.x_dtype().size() * k + self.dtype.storage_bytes(n * k, k) + 4 * n) as f64
    }
    fn features(&self) -> Vec<&'static str> {
        self.dtype.feature().into_iter().chain(self.params.sg.then_some("subgroups")).collect()
    }
    fn dims(&self) -> &'static [&'static str] {
        &["K", "N"]
    }
    fn shapes(&self, suite: Suite) -> Vec<Shape> {
        match suite {
            Suite::Quick => shapes(&[&[256, 128], &[77, 33], &[37, 1], &[1, 1]]),
            Suite::Default => shapes(&[&[1024, 1024], &[4096, 1024], &[1001, 999]]),
            // TinyLlama's decode projections (attention, gate/up, down), then MiniLM's.
            Suite::Full => shapes(&[&[2048, 2048], &[2048, 5632], &[5632, 2048], &[384, 384], &[384, 1536], &[1536, 384]]),
        }
    }
    fn input_lens(&self, s: &Shape) -> Vec<usize> {
        let (k, n) = (s.dim(0) as usize, s.dim(1) as usize);
        vec![k, n * k]
    }
    fn output_len(&self, s: &Shape) -> usize {
        s.dim(1) as usize
    }
    fn params(&self, s: &Shape) -> Vec<u32> {
        MatvecParams::uniform(s.dim(0), &[s.dim(1)], 0.0)
    }
    fn wgsl(&self) -> String {
        self.params.wgsl(Epilogue::default(), self.x_dtype(), self.dtype)
    }
    fn workgroups(&self, s: &Shape) -> [u32; 3] {
        self.params.workgroups(s.dim(1))
    }
    fn reference(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f64> {
        self.compute::<f64>(s, inputs)
    }
    fn cpu(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f32> {
        self.compute::<f32>(s, inputs)
    }
    fn tolerance(&self, s: &Shape) -> Tolerance {
        // f32 accumulation over K terms of magnitude < 1, as matmul's.
        Tolerance { abs: 2e-6 * s.dim(0) as f64, rel: 1e-5 }
    }
    fn flops(&self, s: &Shape) -> f64 {
        2.0 * s.dim(0) as f64 * s.dim(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_names_are_refused() {
        for bad in ["", "wg128", "wg128-r2", "wg128-r2-v4-x", "r2-wg128-v4", "wg128-r2-vx"] {
            assert!(bad.parse::<MatvecParams>().unwrap_err().contains("not a matvec variant"), "{bad}");
        }
        assert!(candidates().contains(&MatvecParams::DEFAULT));
    }

    #[test]
    fn invalid_combinations_are_refused_naming_the_rule() {
        let d = MatvecParams::DEFAULT;
        let refused = [
            (MatvecParams { wg: 96, ..d }, "power of two"),
            (MatvecParams { wg: 512, ..d }, "power of two from 1 to 256"),
            (MatvecParams { wg: 0, ..d }, "power of two"),
            (MatvecParams { rows: 0, ..d }, "rows per workgroup must be 1 to 8"),
            (MatvecParams { rows: 9, ..d }, "rows per workgroup must be 1 to 8"),
            (MatvecParams { vec: 2, ..d }, "vector width 2 is neither 1"),
        ];
        for (p, needle) in refused {
            let err = p.validate().expect_err(&p.to_string()).to_string();
            assert!(err.contains(needle) && err.starts_with(&p.to_string()), "{p}: {err}");
        }
    }

    #[test]
    fn the_shader_has_the_variants_constants_and_the_bias_moves_the_output() {
        let plain = MatvecParams::DEFAULT.wgsl(Epilogue::default(), Dtype::F32, Dtype::F32);
        for line in ["const WG: u32 = 128u;", "const ROWS: u32 = 2u;", "alias Vec = vec4<f32>;", "@binding(3) var<storage, read_write> y", "acc_1"] {
            assert!(plain.contains(line), "{line} missing:\n{plain}");
        }
        let biased = MatvecParams { vec: 1, ..MatvecParams::DEFAULT }.wgsl(Epilogue { bias: true, ..Epilogue::default() }, Dtype::F32, Dtype::F32);
        for line in ["alias Vec = f32;", "@binding(3) var<storage, read> bias", "@binding(4) var<storage, read_write> y", "+ bias[r0 + t]"] {
            assert!(biased.contains(line), "{line} missing:\n{biased}");
        }
        let swiglu = MatvecParams::DEFAULT.wgsl_swiglu(Dtype::F32, Dtype::F16);
        for line in ["const PARTS: u32 = 4u;", "@binding(3) var<storage, read> w_up: array<WIn>", "@binding(4) var<storage, read_write> y", "up_1 += vdot(Vec(w_up[row_1"] {
            assert!(swiglu.contains(line), "{line} missing:\n{swiglu}");
        }
        assert_eq!(MatvecParams::DEFAULT.workgroups(5), [3, 1, 1]);
        assert_eq!(MatvecParams { rows: 1, ..MatvecParams::DEFAULT }.workgroups(70_000), [65_535, 2, 1]);
    }

    #[test]
    fn a_fused_shader_binds_each_segments_weight_and_output_then_the_norms_gain() {
        let qkv = MatvecParams::DEFAULT.wgsl_fused(MatvecOutput::Linear { epilogue: Epilogue::default(), segments: 3 }, true, Dtype::F32, Dtype::F16);
        for line in [
            "@binding(2) var<storage, read> w: array<WIn>",
            "@binding(3) var<storage, read> w_1: array<WIn>",
            "@binding(4) var<storage, read> w_2: array<WIn>",
            "@binding(5) var<storage, read_write> y: array<f32>",
            "@binding(7) var<storage, read_write> y_2: array<f32>",
            "@binding(8) var<storage, read> gain: array<Vec>",
            "if (seg == 2u) { y_2[b * len + r0 + t]",
            "acc_1 += vdot(Vec(w_2[row_1 * kv + i]), xv)",
            "squares += vdot(xr, xr)",
            "const PARTS: u32 = 3u;",
            "let scale = inverseSqrt(partial[2u][0] / f32(p.k) + p.eps);",
        ] {
            assert!(qkv.contains(line), "{line} missing:\n{qkv}");
        }
        let swiglu = MatvecParams::DEFAULT.wgsl_fused(MatvecOutput::SwiGlu, true, Dtype::F32, Dtype::F32);
        assert!(swiglu.contains("@binding(4) var<storage, read_write> y") && swiglu.contains("@binding(5) var<storage, read> gain"), "{swiglu}");
        // Without a norm nothing is scaled, and one segment is the plain kernel.
        assert!(MATVEC.wgsl().contains("let scale = 1.0;") && !MATVEC.wgsl().contains("seg == "));
        assert_eq!(MatvecParams::uniform(64, &[8, 4, 4], 1e-5), vec![64, 16, 1e-5f32.to_bits(), 0, 8, 4, 4, 0]);
    }

    #[test]
    fn the_cost_model_counts_the_weights() {
        let s = Shape(vec![2048, 5632]);
        assert_eq!(MATVEC.flops(&s), 2.0 * 2048.0 * 5632.0);
        assert_eq!(MATVEC.bytes(&s), 4.0 * (2048.0 + 2048.0 * 5632.0 + 5632.0));
        // Quantized: the blocks' quants and f16 scales (34 and 18 bytes a block of 32).
        let blocks = 5632.0 * 64.0;
        assert_eq!(MATVEC_Q8_0.bytes(&s), 4.0 * 2048.0 + blocks * 34.0 + 4.0 * 5632.0);
        assert_eq!(MATVEC_Q4_0.bytes(&s), 4.0 * 2048.0 + blocks * 18.0 + 4.0 * 5632.0);
        assert_eq!(MATVEC_Q4_0.flops(&s), MATVEC.flops(&s));
        // The weights' buffer is their GPU layout, and the reference multiplies the dequantized
        // weights, not the f32 ones.
        let odd = Shape(vec![77, 33]);
        let inputs = MATVEC_Q4_0.inputs(&odd, 1);
        let layout = crate::quant::QuantMatrix::quantize(crate::quant::QuantFormat::Q4_0, 33, 77, &inputs[1]).unwrap().gpu_layout();
        assert_eq!(MATVEC_Q4_0.input_bytes(&odd, 1, &inputs[1]), layout);
        assert_ne!(MATVEC_Q4_0.reference(&odd, &inputs), MATVEC.reference(&odd, &MATVEC.inputs(&odd, 1)));
    }
}
