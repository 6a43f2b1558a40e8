//! The code being benchmarked: dot products, plain and SIMD, and the WGSL of a two-pass sum.

/// The dot product of `a` and `b`, one element at a time.
pub fn dot_scalar(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The dot product of `a` and `b` with 128-bit SIMD: `simd128` in WASM (every browser harness
/// drives has it), four independent lanes (which the compiler vectorises) natively.
pub fn dot_simd(a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: the engines harness drives (Chrome, Firefox, Edge) all run WASM SIMD.
    return unsafe { dot_simd128(a, b) };
    #[cfg(not(target_arch = "wasm32"))]
    {
        let mut acc = [0.0f32; 4];
        let (a4, b4) = (a.chunks_exact(4), b.chunks_exact(4));
        let tail = dot_scalar(a4.remainder(), b4.remainder());
        for (x, y) in a4.zip(b4) {
            for l in 0..4 {
                acc[l] += x[l] * y[l];
            }
        }
        acc.iter().sum::<f32>() + tail
    }
}

#[cfg(target_arch = "wasm32")]
#[target_feature(enable = "simd128")]
fn dot_simd128(a: &[f32], b: &[f32]) -> f32 {
    use core::arch::wasm32::*;
    let n = a.len().min(b.len()) / 4 * 4;
    let mut acc = f32x4_splat(0.0);
    for (x, y) in a[..n].chunks_exact(4).zip(b[..n].chunks_exact(4)) {
        // SAFETY: each chunk holds four f32s; v128 loads need no alignment.
        let (x, y) = unsafe { (v128_load(x.as_ptr() as *const v128), v128_load(y.as_ptr() as *const v128)) };
        acc = f32x4_add(acc, f32x4_mul(x, y));
    }
    let lanes = f32x4_extract_lane::<0>(acc) + f32x4_extract_lane::<1>(acc) + f32x4_extract_lane::<2>(acc) + f32x4_extract_lane::<3>(acc);
    lanes + dot_scalar(&a[n..], &b[n..])
}

/// Elements each workgroup of [`SUM_WGSL`]'s first pass adds up.
pub const SUM_CHUNK: u32 = 4096;

/// A two-pass sum: `partial` adds up [`SUM_CHUNK`] elements per workgroup into `partials`,
/// `total` adds up the partials into `out[0]`.
pub const SUM_WGSL: &str = r#"
struct Params { n: u32, partials: u32 }
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> partials: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;
var<workgroup> shared_sums: array<f32, 256>;

fn reduce(local: u32) {
    for (var stride = 128u; stride > 0u; stride = stride / 2u) {
        workgroupBarrier();
        if (local < stride) {
            shared_sums[local] = shared_sums[local] + shared_sums[local + stride];
        }
    }
}

@compute @workgroup_size(256)
fn partial(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    var sum = 0.0;
    let start = group.x * 4096u;
    for (var i = local; i < 4096u; i = i + 256u) {
        let at = start + i;
        if (at < params.n) {
            sum = sum + input[at];
        }
    }
    shared_sums[local] = sum;
    reduce(local);
    if (local == 0u) {
        partials[group.x] = shared_sums[0];
    }
}

@compute @workgroup_size(256)
fn total(@builtin(local_invocation_index) local: u32) {
    var sum = 0.0;
    for (var i = local; i < params.partials; i = i + 256u) {
        sum = sum + partials[i];
    }
    shared_sums[local] = sum;
    reduce(local);
    if (local == 0u) {
        out[0] = shared_sums[0];
    }
}
"#;

/// `n` inputs in [0, 1), the same on every platform.
pub fn inputs(n: usize, seed: u32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(2654435761).max(1);
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state >> 8) as f32 / (1u32 << 24) as f32
        })
        .collect()
}
