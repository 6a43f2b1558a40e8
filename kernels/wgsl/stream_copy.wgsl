// out = x, one vec4 per invocation: a STREAM-like copy that measures memory bandwidth. Both buffers
// are padded to whole vec4s (inputs by the dispatcher, the output by its length).
struct Params { n4: u32, p1: u32, p2: u32, p3: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i >= p.n4) {
        return;
    }
    out[i] = x[i];
}
