// scale: y[i] = 2 * x[i] + 1 over 1024 f32 elements.

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&x)) {
        y[i] = 2.0 * x[i] + 1.0;
    }
}
