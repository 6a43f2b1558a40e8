// C[M,N] = A[M,K] * B[K,N], row-major, through 16x16 tiles staged in workgroup memory.
// Edges are zero-padded, so any M, K, N work, not only multiples of the tile.
struct Params { m: u32, k: u32, n: u32, pad: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;

const TILE: u32 = 16u;
var<workgroup> ta: array<array<f32, 16>, 16>;
var<workgroup> tb: array<array<f32, 16>, 16>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = gid.y;
    let col = gid.x;
    var acc = 0.0;
    let tiles = (p.k + TILE - 1u) / TILE;
    // No early return: every invocation must reach the barriers (uniform control flow).
    for (var t = 0u; t < tiles; t++) {
        let a_col = t * TILE + lid.x;
        let b_row = t * TILE + lid.y;
        if (row < p.m && a_col < p.k) {
            ta[lid.y][lid.x] = a[row * p.k + a_col];
        } else {
            ta[lid.y][lid.x] = 0.0;
        }
        if (b_row < p.k && col < p.n) {
            tb[lid.y][lid.x] = b[b_row * p.n + col];
        } else {
            tb[lid.y][lid.x] = 0.0;
        }
        workgroupBarrier();
        for (var i = 0u; i < TILE; i++) {
            acc += ta[lid.y][i] * tb[i][lid.x];
        }
        workgroupBarrier();
    }
    if (row < p.m && col < p.n) {
        c[row * p.n + col] = acc;
    }
}
