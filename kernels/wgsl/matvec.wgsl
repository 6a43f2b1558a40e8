// y[N] = W[N,K] * x[K] (+ bias[N]) (+ addend[N]), W row-major: a linear layer of one token (PyTorch's weight
// layout); or SwiGLU's y[N] = silu(W * x) * (W_up * x), the same rows of two weights at once. With M
// workgroups along z, each z is one row of x[M,K] and y[M,N] (a few tokens: every row still gets
// N / ROWS workgroups, where a matmul block would leave the GPU nearly idle).
// A workgroup of WG invocations computes ROWS consecutive outputs: invocation t reads Vecs t,
// t + WG, t + 2*WG, ... of each of its rows (neighbouring invocations read neighbouring words, so
// every read of W is coalesced), multiplies them by the same Vecs of x, and the ROWS partial sums
// of the workgroup are added up: in workgroup memory, a tree of log2(WG) steps, or first within
// each subgroup (subgroupAdd) in the variants that use subgroups.
//
// MatvecParams::generate puts above this the constants WG, ROWS, VEC, the type Vec of VEC consecutive
// f32 (f32 or vec4<f32>), the types XIn and WIn in which x and W are stored (Vec, or its f16 form,
// widened to Vec on every load: arithmetic is f32; u32 words for a quantized W, which the loops
// unpack), lane(v, e) (its e-th f32) and vdot(a, b) (the
// sum of a * b), PARTS (ROWS, or 2 * ROWS for SwiGLU: its up rows follow the gate rows in
// `partial`; one more for the squares of x where an RMSNorm is folded in), and generates the
// accumulators, products, reduction and stores unrolled over the rows.
// The rows are `seg` segments of `seg[s]` rows each (one segment of N rows but where several weights
// share x): a workgroup's rows lie in one segment, whose weight and output it uses.
struct Params { k: u32, n: u32, eps: f32, pad0: u32, seg: vec4<u32> }

// x and W are bound as arrays of Vec: harness pads every input buffer to a multiple of 16 bytes.
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<XIn>;
@group(0) @binding(2) var<storage, read> w: array<WIn>;
{{output}}

var<workgroup> partial: array<array<f32, WG>, PARTS>;

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) t: u32,{{builtins}}
) {
    // Workgroups past 65535 continue along y (kernel::split_workgroups).
    let row0 = (wg.x + wg.y * groups.x) * ROWS;
    // The row of x and y this workgroup works on.
    let b = wg.z;
    // The segment of row0, its first row and its rows.
    var seg = 0u;
    var start = 0u;
    for (; seg < 3u && row0 >= start + p.seg[seg]; seg++) { start += p.seg[seg]; }
    let len = p.seg[seg];
    let r0 = row0 - start;
    // Rows past the segment's read its last row instead (in bounds, no branch in the loop) and are
    // not stored.
    let last = max(len, 1u) - 1u;
{{declare}}
{{loops}}
{{reduce}}
    let scale = {{scale}};
    if (t < ROWS && r0 + t < len) {
        {{store}}
    }
}
