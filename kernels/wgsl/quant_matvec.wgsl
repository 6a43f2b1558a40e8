// y[N] = W[N,K] * x[K], W quantized in a GGUF block format (q8_0 or q4_0) and dequantized in
// registers as it is read; f32 arithmetic. W is quant::QuantMatrix::gpu_layout read as 16-byte
// chunks: every block's quants (CHUNKS chunks a block of 32 weights, a row's blocks consecutive),
// then from u32 word p.scales every block's f16 scale, two to a word, read with unpack2x16float
// (core WGSL, no shader-f16).
// A workgroup of WG invocations computes ROWS consecutive outputs: invocation t reads chunks t,
// t + WG, t + 2*WG, ... of each of its rows (neighbouring invocations read neighbouring chunks),
// and the workgroup adds up its partial sums in a tree.
//
// QuantMatvec::wgsl puts above this the constants WG, ROWS and CHUNKS and the format's type Xs,
// `load_x(i)` (the Xs of x that chunk i of a row multiplies) and `chunk_dot(q, xs)` (their dot
// product with the chunk's quants, before scaling).
struct Params { k: u32, n: u32, blocks: u32, scales: u32 }

// x is bound as vec4s: harness pads every input buffer to a multiple of 16 bytes.
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> w: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

var<workgroup> partial: array<array<f32, WG>, ROWS>;

// x[4i .. 4i + 4], the lanes past K zero: they meet the zero padding of a row's last block, and x
// ends at K (rounded up to a vec4), so the index is clamped too. Whole blocks need neither.
fn x4(i: u32) -> vec4<f32> {
    if (p.k % 32u == 0u) {
        return x[i];
    }
    let v = x[min(i, max((p.k + 3u) / 4u, 1u) - 1u)];
    let e = vec4<u32>(4u * i) + vec4<u32>(0u, 1u, 2u, 3u);
    return select(vec4<f32>(0.0), v, e < vec4<u32>(p.k));
}

// The f32 scale of block s of the matrix.
fn scale(s: u32) -> f32 {
    let word = p.scales + s / 2u;
    return unpack2x16float(w[word / 4u][word % 4u])[s % 2u];
}

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    // Workgroups past 65535 continue along y (kernel::split_workgroups).
    let row0 = (wg.x + wg.y * groups.x) * ROWS;
    // Rows past N read the last row instead (in bounds, no branch in the loop) and are not stored.
    let last = max(p.n, 1u) - 1u;
    let chunks = p.blocks * CHUNKS;
    var acc: array<f32, ROWS>;
    for (var i = t; i < chunks; i += WG) {
        let xs = load_x(i);
        let block = i / CHUNKS;
        for (var r = 0u; r < ROWS; r++) {
            let row = min(row0 + r, last);
            acc[r] += scale(row * p.blocks + block) * chunk_dot(w[row * chunks + i], xs);
        }
    }
    for (var r = 0u; r < ROWS; r++) {
        partial[r][t] = acc[r];
    }
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (t < s) {
            for (var r = 0u; r < ROWS; r++) {
                partial[r][t] += partial[r][t + s];
            }
        }
        workgroupBarrier();
    }
    if (t < ROWS && row0 + t < p.n) {
        y[row0 + t] = partial[t][0];
    }
}
