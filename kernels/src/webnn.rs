//! `--platform webnn`: the catalogue kernels WebNN has operators for, as the graph the page builds
//! with `MLGraphBuilder` from the same seeded inputs, so harness checks its output against the
//! same reference as every platform. A kernel WebNN cannot express is unsupported there.
//!
//! A graph is a list of nodes, each an operand built from earlier ones: the page calls
//! `builder[op](...args, options)` for each, in order, and the last node is the output.

use crate::catalog::norm::EPS;
use crate::shape::Shape;
use serde::{Deserialize, Serialize};

/// Which WebNN device a context is asked for (`--webnn-device`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Device {
    /// The CPU (TFLite/XNNPACK, Core ML's CPU, …).
    Cpu,
    /// The GPU (DirectML, Core ML's GPU, …).
    #[default]
    Gpu,
    /// A neural processing unit, where the OS has one.
    Npu,
}

impl Device {
    /// The device as the CLI and WebNN spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Gpu => "gpu",
            Device::Npu => "npu",
        }
    }
}

/// How the page is to create its WebNN context.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Options {
    /// The device asked for.
    pub device: Device,
    /// Load the test stand-in (`HARNESS_WEBNN_STANDIN`) before creating the context: JavaScript
    /// arithmetic that lets the tests drive the WebNN runner where the browser has no backend.
    #[serde(default)]
    pub stand_in: bool,
}

/// One operand of a graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Node {
    /// The kernel's input `index` (its seeded values), as a float32 tensor of `shape`.
    Input {
        /// Position among the kernel's inputs.
        index: usize,
        /// Its shape in the graph.
        shape: Vec<u32>,
    },
    /// A float32 scalar constant (shape `[]`), broadcast by the operator it feeds.
    Scalar {
        /// The value.
        value: f32,
    },
    /// `builder[op](...args, options)`: `args` index earlier nodes; `options` is passed as
    /// given, except that its `scale` and `bias` members, where present, index earlier nodes too.
    Op {
        /// The `MLGraphBuilder` method.
        op: String,
        /// Earlier nodes, by index.
        args: Vec<usize>,
        /// The method's other arguments: an options dictionary, or a plain value (`softmax`'s
        /// axis, `reshape`'s shape).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        options: Option<serde_json::Value>,
    },
}

/// The WebNN graph of a kernel at a shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    /// Operands in order; the last is the output.
    pub nodes: Vec<Node>,
}

/// Builds a graph node by node.
#[derive(Default)]
struct Builder {
    nodes: Vec<Node>,
}

impl Builder {
    fn push(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }
    fn input(&mut self, index: usize, shape: &[u32]) -> usize {
        self.push(Node::Input { index, shape: shape.to_vec() })
    }
    fn scalar(&mut self, value: f32) -> usize {
        self.push(Node::Scalar { value })
    }
    fn op(&mut self, op: &str, args: &[usize], options: Option<serde_json::Value>) -> usize {
        self.push(Node::Op { op: op.to_string(), args: args.to_vec(), options })
    }
    fn unary(&mut self, op: &str, x: usize) -> usize {
        self.op(op, &[x], None)
    }
    fn binary(&mut self, op: &str, a: usize, b: usize) -> usize {
        self.op(op, &[a, b], None)
    }
}

/// Why a kernel is left out where WebNN has its operator but harness does not build it (f16
/// storage): `None` when [`graph`] has no graph for it at all.
pub fn unsupported_reason(kernel: &str) -> String {
    match kernel.ends_with("_f16") {
        true => format!("not supported on webnn: harness's WebNN graphs are float32, `{kernel}` stores its inputs in f16"),
        false => format!("not supported on webnn: WebNN has no operator (or composition harness builds) for `{kernel}`"),
    }
}

/// The graph that computes `kernel` at `shape` from its inputs, in the kernel's input order;
/// `None` when WebNN has no operators for it. The three matmuls compute the same product, so all
/// are `matmul`; `gelu` is composed in its tanh form (WebNN's `gelu` is the erf form, a different
/// function); `silu` is `x · sigmoid(x)`; `rmsnorm` is composed from `reduceMean`, `sqrt` and
/// `div`.
pub fn graph(kernel: &str, shape: &Shape) -> Option<Graph> {
    let mut b = Builder::default();
    match (kernel, shape.0.as_slice()) {
        ("matmul" | "matmul_naive" | "matmul_tiled", &[m, k, n]) => {
            let (a, w) = (b.input(0, &[m, k]), b.input(1, &[k, n]));
            b.binary("matmul", a, w);
        }
        // y[N] = W[N,K]·x[K]: inputs are x, then W.
        ("matvec", &[k, n]) => {
            let x = b.input(0, &[k, 1]);
            let w = b.input(1, &[n, k]);
            b.binary("matmul", w, x);
        }
        ("add" | "sub" | "mul" | "div", &[n]) => {
            let (x, y) = (b.input(0, &[n]), b.input(1, &[n]));
            b.binary(kernel, x, y);
        }
        ("relu" | "tanh", &[n]) => {
            let x = b.input(0, &[n]);
            b.unary(kernel, x);
        }
        ("silu", &[n]) => {
            let x = b.input(0, &[n]);
            let s = b.unary("sigmoid", x);
            b.binary("mul", x, s);
        }
        // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
        ("gelu", &[n]) => {
            let x = b.input(0, &[n]);
            let x2 = b.binary("mul", x, x);
            let x3 = b.binary("mul", x2, x);
            let c = b.scalar(0.044715);
            let cx3 = b.binary("mul", c, x3);
            let inner = b.binary("add", x, cx3);
            let k = b.scalar((2.0 / std::f32::consts::PI).sqrt());
            let scaled = b.binary("mul", k, inner);
            let t = b.unary("tanh", scaled);
            let one = b.scalar(1.0);
            let onep = b.binary("add", one, t);
            let half = b.scalar(0.5);
            let hx = b.binary("mul", half, x);
            b.binary("mul", hx, onep);
        }
        ("softmax", &[rows, cols]) => {
            let x = b.input(0, &[rows, cols]);
            b.op("softmax", &[x], Some(serde_json::json!(1)));
        }
        // (x - mean) / sqrt(var + ε) · w + b per row.
        ("layernorm", &[rows, cols]) => {
            let x = b.input(0, &[rows, cols]);
            let (w, bias) = (b.input(1, &[cols]), b.input(2, &[cols]));
            b.op("layerNormalization", &[x], Some(serde_json::json!({ "scale": w, "bias": bias, "axes": [1], "epsilon": EPS })));
        }
        // x / sqrt(mean(x²) + ε) · w per row.
        ("rmsnorm", &[rows, cols]) => {
            let x = b.input(0, &[rows, cols]);
            let w = b.input(1, &[cols]);
            let x2 = b.binary("mul", x, x);
            let mean = b.op("reduceMean", &[x2], Some(serde_json::json!({ "axes": [1], "keepDimensions": true })));
            let eps = b.scalar(EPS);
            let var = b.binary("add", mean, eps);
            let rms = b.unary("sqrt", var);
            let normed = b.binary("div", x, rms);
            b.binary("mul", normed, w);
        }
        _ => return None,
    }
    Some(Graph { nodes: b.nodes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{catalog, Suite};

    /// The graph's inputs are exactly the kernel's, each holding as many values as its tensor.
    #[test]
    fn graph_inputs_hold_the_kernels_inputs_at_every_shape() {
        let mut kernels = std::collections::BTreeSet::new();
        for k in catalog::all() {
            for suite in Suite::ALL {
                for shape in k.shapes(suite) {
                    let Some(g) = graph(k.name(), &shape) else { continue };
                    kernels.insert(k.name());
                    let mut inputs: Vec<(usize, usize)> = g
                        .nodes
                        .iter()
                        .filter_map(|n| match n {
                            Node::Input { index, shape } => Some((*index, shape.iter().map(|&d| d as usize).product())),
                            _ => None,
                        })
                        .collect();
                    inputs.sort();
                    let lens: Vec<usize> = inputs.iter().map(|&(_, n)| n).collect();
                    assert_eq!(lens, k.input_lens(&shape), "{} {shape}", k.name());
                    assert_eq!(inputs.iter().map(|&(i, _)| i).collect::<Vec<_>>(), (0..lens.len()).collect::<Vec<_>>());
                    // Every argument is an earlier node.
                    for (i, n) in g.nodes.iter().enumerate() {
                        if let Node::Op { args, .. } = n {
                            assert!(args.iter().all(|&a| a < i), "{} node {i}", k.name());
                        }
                    }
                }
            }
        }
        let expected = ["add", "div", "gelu", "layernorm", "matmul", "matmul_naive", "matmul_tiled", "matvec", "mul", "relu", "rmsnorm", "silu", "softmax", "sub", "tanh"];
        assert_eq!(kernels.into_iter().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn gelu_is_the_tanh_form_and_f16_kernels_say_why_they_are_left_out() {
        let g = graph("gelu", &Shape(vec![8])).unwrap();
        assert!(g.nodes.iter().any(|n| matches!(n, Node::Op { op, .. } if op == "tanh")));
        assert!(!g.nodes.iter().any(|n| matches!(n, Node::Op { op, .. } if op == "gelu")), "WebNN's gelu is the erf form");
        assert!(graph("matmul_f16", &Shape(vec![4, 4, 4])).is_none());
        assert!(unsupported_reason("matmul_f16").contains("f16"));
        assert!(graph("rope", &Shape(vec![4, 8])).is_none());
        let json = serde_json::to_value(graph("layernorm", &Shape(vec![2, 4])).unwrap()).unwrap();
        assert_eq!(json["nodes"][3]["options"]["scale"], 1, "scale and bias name earlier nodes: {json}");
    }
}
