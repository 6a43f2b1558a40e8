//! What a linear layer's kernels (`matvec`, `matmul` with B `[N,K]`) add to each output as they
//! store it: a bias per column and an addend per element (the residual a transformer adds right
//! after the layer), so neither costs a dispatch of its own. Both generators take their output
//! bindings and store terms from here, so the two cannot bind them differently.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Terms added at the store: `y = x·Wᵀ (+ bias[col]) (+ addend[i])`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Epilogue {
    /// A bias `[N]` added to every row.
    pub bias: bool,
    /// A tensor of the output's shape added element by element.
    pub add: bool,
}

impl Epilogue {
    /// The WGSL bindings from `@binding(first)` on: `bias`, then `addend`, where present, then
    /// the output `out`, all `array<f32>`.
    pub fn bindings(&self, first: u32, out: &str) -> String {
        let inputs = [(self.bias, "bias"), (self.add, "addend")].into_iter().filter(|(on, _)| *on).map(|(_, name)| name);
        let mut text = String::new();
        let mut binding = first;
        for name in inputs {
            text += &format!("@group(0) @binding({binding}) var<storage, read> {name}: array<f32>;\n");
            binding += 1;
        }
        text + &format!("@group(0) @binding({binding}) var<storage, read_write> {out}: array<f32>;")
    }

    /// The WGSL terms added to an output in column `col` at flat index `index` (both expressions).
    pub fn terms(&self, col: &str, index: &str) -> String {
        let bias = if self.bias { format!(" + bias[{col}]") } else { String::new() };
        let add = if self.add { format!(" + addend[{index}]") } else { String::new() };
        bias + &add
    }
}

impl fmt::Display for Epilogue {
    /// Empty when nothing is added; ` +bias`, ` +add` otherwise, for shader labels.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.bias {
            f.write_str(" +bias")?;
        }
        if self.add {
            f.write_str(" +add")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_follows_the_inputs_that_are_present() {
        let both = Epilogue { bias: true, add: true };
        let text = both.bindings(3, "y");
        for line in ["@binding(3) var<storage, read> bias", "@binding(4) var<storage, read> addend", "@binding(5) var<storage, read_write> y"] {
            assert!(text.contains(line), "{line} missing:\n{text}");
        }
        assert_eq!(both.terms("c", "r * n + c"), " + bias[c] + addend[r * n + c]");
        assert_eq!(Epilogue { add: true, ..Epilogue::default() }.bindings(3, "c"), "@group(0) @binding(3) var<storage, read> addend: array<f32>;\n@group(0) @binding(4) var<storage, read_write> c: array<f32>;");
        assert_eq!(Epilogue::default().terms("c", "i"), "");
        assert_eq!(both.to_string(), " +bias +add");
    }
}
