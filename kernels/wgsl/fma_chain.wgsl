// Per invocation, 8 independent chains c = fma(c, a, b) (two vec4 accumulators, 64 FMAs per loop
// trip), seeded from the input and summed into one output so no FMA can be eliminated: a probe
// of FMA throughput in F (f32 or f16, aliased above this by the kernel). a and b come from the
// uniform, so nothing folds at compile time.
struct Params { threads: u32, fmas: u32, a: f32, b: f32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i >= p.threads) {
        return;
    }
    let a = vec4<F>(F(p.a));
    let b = vec4<F>(F(p.b));
    var c0 = vec4<F>(x[2u * i]);
    var c1 = vec4<F>(x[2u * i + 1u]);
    for (var k = 0u; k < p.fmas / 8u; k++) {
        c0 = fma(c0, a, b); c1 = fma(c1, a, b);
        c0 = fma(c0, a, b); c1 = fma(c1, a, b);
        c0 = fma(c0, a, b); c1 = fma(c1, a, b);
        c0 = fma(c0, a, b); c1 = fma(c1, a, b);
        c0 = fma(c0, a, b); c1 = fma(c1, a, b);
        c0 = fma(c0, a, b); c1 = fma(c1, a, b);
        c0 = fma(c0, a, b); c1 = fma(c1, a, b);
        c0 = fma(c0, a, b); c1 = fma(c1, a, b);
    }
    for (var k = 0u; k < p.fmas % 8u; k++) {
        c0 = fma(c0, a, b); c1 = fma(c1, a, b);
    }
    let s = vec4<f32>(c0) + vec4<f32>(c1);
    out[i] = (s.x + s.y) + (s.z + s.w);
}
