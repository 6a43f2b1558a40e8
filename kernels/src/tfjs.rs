//! `--platform tfjs`: which catalogue kernels TensorFlow.js's WebGPU backend computes with one of
//! its own ops, and the tensors that op takes, so the page can run the same math on the same
//! seeded inputs and harness can check it against the same reference. Kernels it has no op for
//! are reported as unsupported there.

use crate::shape::Shape;
use serde::{Deserialize, Serialize};

/// The TensorFlow.js release harness loads (`@tensorflow/tfjs-core` and
/// `@tensorflow/tfjs-backend-webgpu`, both at this version).
pub const VERSION: &str = "4.22.0";

/// One call of a TensorFlow.js op: `tf[op](...inputs)`, each input a float32 tensor of its shape
/// holding the kernel's seeded input of the same position, row-major.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TfjsCall {
    /// The `tf` function: `matMul`, `add`, `relu`, `softmax`, ….
    pub op: String,
    /// The shape of each input tensor, in the kernel's input order.
    pub shapes: Vec<Vec<u32>>,
}

/// The op that computes `kernel` at `shape`; `None` when TensorFlow.js has none. `matmul`,
/// `matmul_naive` and `matmul_tiled` compute the same product, so all three are `tf.matMul`.
pub fn call(kernel: &str, shape: &Shape) -> Option<TfjsCall> {
    let dims = &shape.0;
    let (op, shapes) = match (kernel, dims.as_slice()) {
        ("matmul" | "matmul_naive" | "matmul_tiled", &[m, k, n]) => ("matMul", vec![vec![m, k], vec![k, n]]),
        ("add" | "sub" | "mul" | "div", &[n]) => (kernel, vec![vec![n], vec![n]]),
        ("relu" | "tanh", &[n]) => (kernel, vec![vec![n]]),
        // tf.softmax normalises along the last axis: each row.
        ("softmax", &[rows, cols]) => ("softmax", vec![vec![rows, cols]]),
        _ => return None,
    };
    Some(TfjsCall { op: op.to_string(), shapes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{catalog, Suite};

    #[test]
    fn matmuls_are_one_op_with_matching_inputs() {
        for name in ["matmul", "matmul_naive", "matmul_tiled"] {
            let c = call(name, &Shape(vec![3, 5, 7])).unwrap();
            assert_eq!((c.op.as_str(), c.shapes), ("matMul", vec![vec![3, 5], vec![5, 7]]));
        }
        assert_eq!(call("softmax", &Shape(vec![4, 9])).unwrap().shapes, vec![vec![4, 9]]);
        assert_eq!(call("div", &Shape(vec![8])).unwrap().op, "div");
        assert!(call("rmsnorm", &Shape(vec![4, 9])).is_none());
        assert!(call("gelu", &Shape(vec![8])).is_none(), "tfjs-core has no gelu");
    }

    /// Every tensor holds exactly the kernel's input of that position, at every suite's shapes.
    #[test]
    fn tensor_shapes_hold_the_kernels_inputs() {
        let mut supported = 0;
        for k in catalog::all() {
            for suite in Suite::ALL {
                for shape in k.shapes(suite) {
                    let Some(c) = call(k.name(), &shape) else { continue };
                    supported += 1;
                    let lens: Vec<usize> = c.shapes.iter().map(|s| s.iter().map(|&d| d as usize).product()).collect();
                    assert_eq!(lens, k.input_lens(&shape), "{} {shape}", k.name());
                }
            }
        }
        assert!(supported > 0);
    }
}
