// Row normalisation of x[rows, cols]; one workgroup per row. With CENTER = true it is layernorm
// ((x - mean) / sqrt(var + eps) * w + b), with false rmsnorm (x / sqrt(mean(x^2) + eps) * w).
struct Params { rows: u32, cols: u32, eps_bits: u32, p3: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
{{BINDINGS}}

const WG: u32 = 256u;
const CENTER: bool = {{CENTER}};
var<workgroup> red: array<f32, 256>;

fn row_sum(v: f32, lid: u32) -> f32 {
    red[lid] = v;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid < s) {
            red[lid] += red[lid + s];
        }
        workgroupBarrier();
    }
    let total = red[0];
    workgroupBarrier();
    return total;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let base = wid.x * p.cols;
    let n = f32(p.cols);
    var mean = 0.0;
    if (CENTER) {
        var s = 0.0;
        for (var c = lid.x; c < p.cols; c += WG) {
            s += x[base + c];
        }
        mean = row_sum(s, lid.x) / n;
    }
    var sq = 0.0;
    for (var c = lid.x; c < p.cols; c += WG) {
        let d = x[base + c] - mean;
        sq += d * d;
    }
    let inv = inverseSqrt(row_sum(sq, lid.x) / n + bitcast<f32>(p.eps_bits));
    for (var c = lid.x; c < p.cols; c += WG) {
        y[base + c] = {{OUTPUT}};
    }
}
