// C[M,N] = A[M,K] * B (+ bias[N]) (+ addend[M,N]), row-major, register-blocked, B either [K,N] or [N,K] (a
// weight in PyTorch's layout, C = A * B^T). A workgroup computes a BM x BN block of C from tiles
// of A and B BK deep staged in workgroup memory; each invocation computes TM x TN of its outputs
// in registers, at rows lid.y + i*WY and, with B [K,N], columns (lid.x + j*WX)*VEC + e (with
// B [N,K], lid.x + j*WX), so neighbouring invocations touch neighbouring words of the tiles and of C.
//
// MatmulParams::wgsl_with puts above this the constants BM, BN, BK, TM, TN, VEC, the type Vec of VEC
// consecutive f32 (f32 or vec4<f32>), the types AIn and BIn in which A and B are stored (Vec, or
// its f16 form, widened to Vec as it is loaded into the tiles: arithmetic is f32), lane(v, e) (its
// e-th f32), vec_of(x) (a Vec from VEC f32)
// and vdot(a, b) (the sum of a * b), and generates the B tile, the registers both tiles are loaded
// ahead into (with their loads and their stores into the tiles), the products and the stores of C for
// B's layout, and how B is read: b_element(i) and b_vec(i, row, col) (element i, and the
// Vec at (row, col), of B as stored; a quantized B is dequantized there). Tiles are zero-padded past the matrices' edges, so any M, K, N work.
// With `kchunk` > 0 (a multiple of BK), workgroup z takes K's chunk z alone and stores its partial
// C at z * M * N (split-K: a block too few to fill the GPU walks a shorter K), for a sum after.
struct Params { m: u32, k: u32, n: u32, kchunk: u32 }

// Inputs are bound as arrays of Vec: harness pads every input buffer to a multiple of 16 bytes.
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<AIn>;
@group(0) @binding(2) var<storage, read> b: array<BIn>;
{{output}}

const WX: u32 = BN / TN;
const WY: u32 = BM / TM;
const INVOCATIONS: u32 = WX * WY;
// Vecs in a row of the A tile.
const BKV: u32 = BK / VEC;

var<workgroup> ta: array<array<Vec, BKV>, BM>;
{{tile_b}}
{{b_reads}}

// Element i of input 0 (A) or 1 (B). WGSL passes no pointers to storage into functions (without
// an extension), so one function picks the buffer; `input` is constant where it is called.
fn element(input: u32, i: u32) -> f32 {
    if (input == 0u) {
        return lane(Vec(a[i / VEC]), i % VEC);
    }
    return b_element(i);
}

// Elements (row, col .. col+VEC) of input 0 (A) or 1 (B), of `rows` x `cols`, zero past its
// edges; `col` is a multiple of VEC. One Vec load when the row holds them all and is Vec-aligned
// (`cols` a multiple of VEC), else one f32 at a time.
fn load(input: u32, rows: u32, cols: u32, row: u32, col: u32) -> Vec {
    let i = row * cols + col;
    if (row < rows && col + VEC <= cols && cols % VEC == 0u) {
        if (input == 0u) {
            return Vec(a[i / VEC]);
        }
        return b_vec(i, row, col);
    }
    var x: array<f32, VEC>;
    for (var e = 0u; e < VEC; e++) {
        if (row < rows && col + e < cols) {
            x[e] = element(input, i + e);
        }
    }
    return vec_of(x);
}

@compute @workgroup_size(WX, WY)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let m0 = wg.y * BM;
    let n0 = wg.x * BN;
    // The accumulators acc_I_J (TM x TN/VEC Vecs) and the unrolled products below are generated
    // (MatmulParams::wgsl): as plain variables, not arrays indexed in loops, they stay in
    // registers whatever the driver's unroller does.
{{declare}}
    let kbeg = wg.z * p.kchunk;
    var kend = p.k;
    if (p.kchunk != 0u) {
        kend = min(p.k, kbeg + p.kchunk);
    }
    let c0 = wg.z * p.m * p.n;
    let steps = (kend - min(kbeg, kend) + BK - 1u) / BK;
    // Each invocation's share of both tiles (consecutive invocations load consecutive Vecs of a
    // row) goes through registers, the first step's loaded here and every next one while the
    // step before is multiplied: the loads are in flight during the products, not awaited at a
    // barrier.
{{declare_ahead}}
    var k0 = kbeg;
{{fetch}}
    // No early return: every invocation must reach the barriers (uniform control flow).
    for (var s = 0u; s < steps; s++) {
{{stage}}
        workgroupBarrier();
        k0 += BK;
        if (s + 1u < steps) {
{{fetch}}
        }
        for (var kv = 0u; kv < BKV; kv++) {
{{multiply}}
        }
        // The next step overwrites the tiles: everyone must be done reading them.
        workgroupBarrier();
    }
{{store}}
}
