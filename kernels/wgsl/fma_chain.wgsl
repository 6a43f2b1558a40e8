// Per invocation, 8 independent chains c = fma(c, a, b) (two vec4 accumulators, 64 FMAs per loop
// trip), seeded from the input and summed into one output so no FMA can be eliminated: a probe
// of FMA throughput in F (f32 or f16, aliased above this by the kernel). a and b come from the
// uniform, so nothing folds at compile time. With `count` set, the last lane of c1 is a counter
// (a_w = b_w = 1) started at an integer from the input, so the output depends on every trip of the
// loop and on the input even where the other chains have long forgotten theirs (f16, whose chains
// must contract fast to keep rounding small).
struct Params { threads: u32, fmas: u32, a: f32, b: f32, a_w: f32, b_w: f32, count: u32, _pad: u32 }

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
    let a1 = vec4<F>(F(p.a), F(p.a), F(p.a), F(p.a_w));
    let b1 = vec4<F>(F(p.b), F(p.b), F(p.b), F(p.b_w));
    var c0 = vec4<F>(x[2u * i]);
    let x1 = x[2u * i + 1u];
    var c1 = vec4<F>(x1);
    if (p.count != 0u) {
        c1.w = F(-floor(abs(x1.w) * 1024.0));
    }
    for (var k = 0u; k < p.fmas / 8u; k++) {
        c0 = fma(c0, a, b); c1 = fma(c1, a1, b1);
        c0 = fma(c0, a, b); c1 = fma(c1, a1, b1);
        c0 = fma(c0, a, b); c1 = fma(c1, a1, b1);
        c0 = fma(c0, a, b); c1 = fma(c1, a1, b1);
        c0 = fma(c0, a, b); c1 = fma(c1, a1, b1);
        c0 = fma(c0, a, b); c1 = fma(c1, a1, b1);
        c0 = fma(c0, a, b); c1 = fma(c1, a1, b1);
        c0 = fma(c0, a, b); c1 = fma(c1, a1, b1);
    }
    for (var k = 0u; k < p.fmas % 8u; k++) {
        c0 = fma(c0, a, b); c1 = fma(c1, a1, b1);
    }
    let s = vec4<f32>(c0) + vec4<f32>(c1);
    out[i] = (s.x + s.y) + (s.z + s.w);
}
