//! What a linear layer's kernels (`matvec`, `matmul` with B `[N,K]`) do to each output as they
//! store it: add a bias per column and an addend per element (the residual a transformer adds
//! right after the layer), and take the GELU of the sum (the activation an MLP's first layer
//! feeds), so none costs a dispatch and a pass over memory of its own. Both generators take their
//! output bindings and stores from here, so the two cannot bind or apply them differently.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What is done at the store: `y = x·Wᵀ (+ bias[col]) (+ addend[i])`, of which the GELU is taken
/// where `gelu`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Epilogue {
    /// A bias `[N]` added to every row.
    pub bias: bool,
    /// A tensor of the output's shape added element by element.
    pub add: bool,
    /// The exact (erf) GELU of the sum is stored, as [`GELU_WGSL`]'s `gelu`.
    #[serde(default)]
    pub gelu: bool,
}

/// WGSL's `erf` and the exact GELU `x·Φ(x)` built on it (BERT's, ViT's and Whisper's activation),
/// for every shader that applies it.
pub const GELU_WGSL: &str = r#"
// Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7): WGSL has no erf.
fn erf(x: f32) -> f32 {
  let s = sign(x);
  let z = abs(x);
  let t = 1.0 / (1.0 + 0.3275911 * z);
  let poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return s * (1.0 - poly * exp(-z * z));
}
fn gelu(x: f32) -> f32 { return 0.5 * x * (1.0 + erf(x * 0.7071067811865476)); }
"#;

impl Epilogue {
    /// The WGSL bindings from `@binding(first)` on: `bias`, then `addend`, where present, then
    /// the output `out`, all `array<f32>`; then [`GELU_WGSL`] where the GELU is taken.
    pub fn bindings(&self, first: u32, out: &str) -> String {
        let inputs = [(self.bias, "bias"), (self.add, "addend")].into_iter().filter(|(on, _)| *on).map(|(_, name)| name);
        let mut text = String::new();
        let mut binding = first;
        for name in inputs {
            text += &format!("@group(0) @binding({binding}) var<storage, read> {name}: array<f32>;\n");
            binding += 1;
        }
        text += &format!("@group(0) @binding({binding}) var<storage, read_write> {out}: array<f32>;");
        if self.gelu {
            text += GELU_WGSL.trim_end();
        }
        text
    }

    /// The WGSL expression stored for `value`, an output in column `col` at flat index `index`
    /// (all three expressions).
    pub fn apply(&self, value: &str, col: &str, index: &str) -> String {
        let bias = if self.bias { format!(" + bias[{col}]") } else { String::new() };
        let add = if self.add { format!(" + addend[{index}]") } else { String::new() };
        match self.gelu {
            true => format!("gelu({value}{bias}{add})"),
            false => format!("{value}{bias}{add}"),
        }
    }
}

impl fmt::Display for Epilogue {
    /// Empty when nothing is done; ` +bias`, ` +add`, ` gelu` otherwise, for shader labels.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.bias {
            f.write_str(" +bias")?;
        }
        if self.add {
            f.write_str(" +add")?;
        }
        if self.gelu {
            f.write_str(" gelu")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_follows_the_inputs_that_are_present() {
        let both = Epilogue { bias: true, add: true, gelu: false };
        let text = both.bindings(3, "y");
        for line in ["@binding(3) var<storage, read> bias", "@binding(4) var<storage, read> addend", "@binding(5) var<storage, read_write> y"] {
            assert!(text.contains(line), "{line} missing:\n{text}");
        }
        assert_eq!(both.apply("acc", "c", "r * n + c"), "acc + bias[c] + addend[r * n + c]");
        assert_eq!(Epilogue { add: true, ..Epilogue::default() }.bindings(3, "c"), "@group(0) @binding(3) var<storage, read> addend: array<f32>;\n@group(0) @binding(4) var<storage, read_write> c: array<f32>;");
        assert_eq!(Epilogue::default().apply("acc", "c", "i"), "acc");
        assert_eq!(both.to_string(), " +bias +add");
    }

    #[test]
    fn the_gelu_is_taken_of_the_whole_sum_and_its_function_comes_with_the_bindings() {
        let gelu = Epilogue { bias: true, gelu: true, ..Epilogue::default() };
        assert_eq!(gelu.apply("acc", "c", "i"), "gelu(acc + bias[c])");
        assert!(gelu.bindings(3, "y").contains("fn gelu(x: f32) -> f32"));
        assert!(!Epilogue { bias: true, ..Epilogue::default() }.bindings(3, "y").contains("fn gelu"));
        assert_eq!(gelu.to_string(), " +bias gelu");
    }
}
