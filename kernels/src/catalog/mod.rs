//! Every kernel harness knows. Adding one is a new file here and one line in [`all`].

mod activation;
mod elementwise;
pub mod matmul;
mod norm;
mod rope;
mod selftest;
mod softmax;

use crate::kernel::Kernel;

/// All kernels, in report order.
pub fn all() -> Vec<&'static dyn Kernel> {
    vec![
        &matmul::NAIVE,
        &matmul::TILED,
        &matmul::BLOCKED,
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
        &selftest::WRONG,
        &selftest::HANG,
        &selftest::THROW,
    ]
}

/// The kernel called `name`.
pub fn find(name: &str) -> Option<&'static dyn Kernel> {
    all().into_iter().find(|k| k.name() == name)
}

/// Shapes from literal dimension lists.
fn shapes(list: &[&[u32]]) -> Vec<crate::Shape> {
    list.iter().map(|d| crate::Shape::from(*d)).collect()
}
