//! Every kernel harness knows. Adding one is a new file here and one line in [`all`].

mod activation;
pub(crate) mod dequant;
mod elementwise;
pub mod epilogue;
pub mod linear;
pub mod matmul;
pub mod matvec;
pub(crate) mod norm;
mod roofline;
mod rope;
mod selftest;
mod softmax;

use crate::dtype::Dtype;
use crate::kernel::Kernel;

/// All kernels, in report order.
pub fn all() -> Vec<&'static dyn Kernel> {
    vec![
        &matmul::NAIVE,
        &matmul::TILED,
        &matmul::BLOCKED,
        &matmul::BLOCKED_F16,
        &matvec::MATVEC,
        &matvec::MATVEC_F16,
        &matvec::MATVEC_Q8_0,
        &matvec::MATVEC_Q4_0,
        &elementwise::ADD,
        &elementwise::SUB,
        &elementwise::MUL,
        &elementwise::DIV,
        &activation::RELU,
        &activation::GELU,
        &activation::TANH,
        &activation::SILU,
        &softmax::SOFTMAX,
        &norm::RMSNORM,
        &norm::LAYERNORM,
        &rope::ROPE,
        &roofline::STREAM_COPY,
        &roofline::FMA_CHAIN,
        &roofline::FMA_CHAIN_F16,
        &selftest::WRONG,
        &selftest::HANG,
        &selftest::THROW,
        &selftest::LOSE_DEVICE,
    ]
}

/// The kernel called `name`.
pub fn find(name: &str) -> Option<&'static dyn Kernel> {
    all().into_iter().find(|k| k.name() == name)
}

/// The kernels that measure a target's roofline (`harness run --roofline`): memory bandwidth, then
/// f32 throughput.
pub const ROOFLINE_PROBES: [&dyn Kernel; 2] = [&roofline::STREAM_COPY, &roofline::FMA_CHAIN];

/// What `--roofline` runs first: the [`ROOFLINE_PROBES`], then the f16 FMA chains, whose
/// throughput is reported beside them (unsupported where the adapter has no `shader-f16`).
pub const ROOFLINE_RUN: [&dyn Kernel; 3] = [&roofline::STREAM_COPY, &roofline::FMA_CHAIN, &roofline::FMA_CHAIN_F16];

/// Kernels with variants a tuner chooses from.
pub const TUNABLE: &[&str] = &["matmul", "matvec", "matmul_f16", "matvec_f16", "matvec_q8_0", "matvec_q4_0"];

/// A kernel's name without its dtype suffix, and the dtype: `matvec_f16` is `matvec` in f16.
fn base_and_dtype(name: &str) -> (&str, Dtype) {
    [Dtype::F16, Dtype::Q8_0, Dtype::Q4_0]
        .into_iter()
        .find_map(|d| name.strip_suffix(d.suffix()).map(|base| (base, d)))
        .unwrap_or((name, Dtype::F32))
}

/// Why a kernel cannot be built as a named variant.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VariantError {
    /// The kernel has no variants.
    #[error("kernel `{0}` has no variants; the kernels that have are: {list}", list = TUNABLE.join(", "))]
    NotTunable(String),
    /// The variant's name cannot be read, or its parameters cannot run.
    #[error("{0}")]
    Invalid(String),
}

/// The names of the variants of kernel `name` a tuner tries; empty for a kernel without any.
pub fn variants(name: &str) -> Vec<String> {
    match base_and_dtype(name).0 {
        "matmul" => matmul::candidates().iter().map(ToString::to_string).collect(),
        "matvec" => matvec::candidates().iter().map(ToString::to_string).collect(),
        _ => Vec::new(),
    }
}

/// The kernel `name` built as `variant` (a name from [`variants`], or any valid one).
pub fn variant(name: &str, variant: &str) -> Result<Box<dyn Kernel>, VariantError> {
    let (base, dtype) = base_and_dtype(name);
    match base {
        "matmul" => {
            let params: matmul::MatmulParams = variant.parse().map_err(VariantError::Invalid)?;
            Ok(Box::new(matmul::Matmul::blocked(params, dtype).map_err(|e| VariantError::Invalid(e.to_string()))?))
        }
        "matvec" => {
            let params: matvec::MatvecParams = variant.parse().map_err(VariantError::Invalid)?;
            Ok(Box::new(matvec::Matvec::new(params, dtype).map_err(|e| VariantError::Invalid(e.to_string()))?))
        }
        _ => Err(VariantError::NotTunable(name.to_string())),
    }
}

/// The top of a generated vector kernel (`matmul`, `matvec`): the `enable` its input types need,
/// a comment naming the variant, the `u32` constants, the type `Vec` of `vec` f32, an alias per
/// input for the type it is stored as (`vec4<f16>` is widened to `Vec` on load), and `lane(v, e)`,
/// `vec_of(x)` and `vdot(a, b)` over `Vec`.
fn vector_preamble(variant: &str, constants: &[(&str, u32)], vec: u32, inputs: &[(&str, Dtype)]) -> String {
    let dtypes: Vec<Dtype> = inputs.iter().map(|(_, d)| *d).collect();
    let mut out = format!("{}// Variant {variant}.\n", Dtype::enables(&dtypes));
    for (name, value) in constants.iter().chain(&[("VEC", vec)]) {
        out += &format!("const {name}: u32 = {value}u;\n");
    }
    out += &format!("alias Vec = {};\n", Dtype::F32.vector(vec));
    for (name, dtype) in inputs {
        out += &format!("alias {name} = {};\n", dtype.vector(vec));
    }
    let (lane, vec_of, vdot) = match vec {
        1 => ("v", "x[0]", "a * b"),
        _ => ("v[e]", "Vec(x[0], x[1], x[2], x[3])", "dot(a, b)"),
    };
    out + &format!(
        "fn lane(v: Vec, e: u32) -> f32 {{ return {lane}; }}\nfn vec_of(x: array<f32, VEC>) -> Vec {{ return {vec_of}; }}\nfn vdot(a: Vec, b: Vec) -> f32 {{ return {vdot}; }}\n\n"
    )
}

/// Shapes from literal dimension lists.
fn shapes(list: &[&[u32]]) -> Vec<crate::Shape> {
    list.iter().map(|d| crate::Shape::from(*d)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tunable_kernels_variants_build_from_their_names_and_differ() {
        for name in TUNABLE {
            let mut names = variants(name);
            assert!(names.len() >= 8, "{name}: {names:?}");
            for v in &names {
                let kernel = variant(name, v).unwrap_or_else(|e| panic!("{name} {v}: {e}"));
                // The shader names the variant it was built from: the name reads back to itself.
                let wgsl = kernel.wgsl();
                let header = wgsl.lines().find(|l| l.starts_with("// Variant")).unwrap_or_default();
                let rest = header.strip_prefix(&format!("// Variant {v}")).unwrap_or_else(|| panic!("{name} {v}: {header}"));
                assert!(rest.starts_with(['.', ' ', ',']), "{name} {v}: {header}");
                let enables: Vec<&str> = wgsl.lines().take_while(|l| l.starts_with("enable ")).collect();
                assert_eq!(enables.contains(&"enable f16;"), name.ends_with("_f16"), "{name} {v}");
                let sg = v.ends_with("-sg");
                assert_eq!(enables.contains(&"enable subgroups;"), sg, "{name} {v}");
                assert_eq!(kernel.features().contains(&"subgroups"), sg, "{name} {v}");
                assert_eq!(kernel.name(), *name);
            }
            names.sort();
            names.dedup();
            assert_eq!(names.len(), variants(name).len(), "{name}: duplicate variants");
        }
        assert!(matches!(variant("add", "x"), Err(VariantError::NotTunable(_))));
        assert!(matches!(variant("matvec", "wg96-r1-v4"), Err(VariantError::Invalid(e)) if e.contains("power of two")));
    }
}
