// histogram: a 256-bin histogram of u32 values, counted with atomicAdd.
//
// Each workgroup first counts into its own bins in workgroup memory, then adds them to the global
// bins, so global atomics are few. Not idempotent: `bins` accumulates across dispatches, which is
// why the harness re-initialises every buffer before the run whose output it reads.
//
// The workgroup size (256) equals the number of bins: invocation k of a workgroup publishes bin k.

@group(0) @binding(0) var<storage, read> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> bins: array<atomic<u32>>;

// Workgroup memory starts zeroed in WGSL.
var<workgroup> local_bins: array<atomic<u32>, 256>;

@compute @workgroup_size(256)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = gid.x;
    if (i < arrayLength(&data)) {
        // Values are 0..=255 by construction; min() keeps a stray one in the last bin.
        atomicAdd(&local_bins[min(data[i], 255u)], 1u);
    }
    // Every invocation reaches the barrier (no early return above).
    workgroupBarrier();
    let count = atomicLoad(&local_bins[lid]);
    if (count != 0u) {
        atomicAdd(&bins[lid], count);
    }
}
