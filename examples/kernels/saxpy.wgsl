// saxpy: out[i] = a * x[i] + y[i], with `a` read from a uniform buffer.
//
// Idempotent: it writes `out` and never reads it, so any number of dispatches leaves the same
// result. See saxpy.toml for the buffers and the dispatch.

// params.x is `a`; the rest is padding (uniforms are laid out in 16-byte units).
@group(0) @binding(0) var<uniform> params: vec4<f32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    // The dispatch may have more invocations than elements: stay in bounds.
    if (i >= arrayLength(&out)) {
        return;
    }
    out[i] = params.x * x[i] + y[i];
}
