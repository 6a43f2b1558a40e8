// Rotary position embedding of x[seq, heads, dim] at positions offset..offset+seq, rotate-half
// convention (pairs i and i + dim/2, as HF Llama), theta_i = pos * base^(-2i/dim).
struct Params { seq: u32, heads: u32, dim: u32, offset: u32, base: f32, p1: u32, p2: u32, p3: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

const TWO_PI: f32 = 6.283185307;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let half = p.dim / 2u;
    let t = gid.x + gid.y * nwg.x * 256u;
    if (t >= p.seq * p.heads * half) {
        return;
    }
    let pair = t % half;
    let row = t / half;
    let s = row / p.heads;
    let pos = f32(s + p.offset);
    let angle = pos * pow(p.base, -2.0 * f32(pair) / f32(p.dim));
    // WGSL only bounds sin/cos error on [-pi, pi]; reduce the angle first.
    let r = angle - TWO_PI * floor(angle / TWO_PI + 0.5);
    let cs = cos(r);
    let sn = sin(r);
    let i0 = row * p.dim + pair;
    let i1 = i0 + half;
    let x0 = x[i0];
    let x1 = x[i1];
    y[i0] = x0 * cs - x1 * sn;
    y[i1] = x1 * cs + x0 * sn;
}
