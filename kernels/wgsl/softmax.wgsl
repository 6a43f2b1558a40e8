// Softmax over the last axis of x[rows, cols]; one workgroup per row.
// Numerically stable: exp(x - max(row)) never overflows, whatever the row's magnitude.
struct Params { rows: u32, cols: u32, p2: u32, p3: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

const WG: u32 = 256u;
var<workgroup> red: array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let base = wid.x * p.cols;
    var m = -3.402823e38;
    for (var c = lid.x; c < p.cols; c += WG) {
        m = max(m, x[base + c]);
    }
    red[lid.x] = m;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid.x < s) {
            red[lid.x] = max(red[lid.x], red[lid.x + s]);
        }
        workgroupBarrier();
    }
    let row_max = red[0];
    workgroupBarrier();

    var sum = 0.0;
    for (var c = lid.x; c < p.cols; c += WG) {
        sum += exp(x[base + c] - row_max);
    }
    red[lid.x] = sum;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid.x < s) {
            red[lid.x] += red[lid.x + s];
        }
        workgroupBarrier();
    }
    let total = red[0];

    for (var c = lid.x; c < p.cols; c += WG) {
        y[base + c] = exp(x[base + c] - row_max) / total;
    }
}
