// C[M,N] = A[M,K] * B[K,N], row-major; one invocation per output element.
struct Params { m: u32, k: u32, n: u32, pad: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.y;
    let col = gid.x;
    if (row >= p.m || col >= p.n) {
        return;
    }
    var acc = 0.0;
    for (var i = 0u; i < p.k; i++) {
        acc += a[row * p.k + i] * b[i * p.n + col];
    }
    c[row * p.n + col] = acc;
}
