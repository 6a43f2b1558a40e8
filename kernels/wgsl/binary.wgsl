// out[i] = a[i] OP b[i]; OP is substituted per kernel.
struct Params { n: u32, p1: u32, p2: u32, p3: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

fn op(x: f32, y: f32, i: u32) -> f32 {
    return {{EXPR}};
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i >= p.n) {
        return;
    }
    out[i] = op(a[i], b[i], i);
}
