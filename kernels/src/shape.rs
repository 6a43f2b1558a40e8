//! The dimensions of one case.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A case's dimensions, in the order its kernel documents (`Kernel::dims`), such as `[M, K, N]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Shape(pub Vec<u32>);

impl Shape {
    /// Dimension `i`; kernels only ask for dimensions their shapes have.
    pub fn dim(&self, i: usize) -> u32 {
        self.0[i]
    }

    /// Product of all dimensions as usize.
    pub fn product(&self) -> usize {
        self.0.iter().map(|&d| d as usize).product()
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(u32::to_string).collect();
        f.write_str(&parts.join("x"))
    }
}

impl From<&[u32]> for Shape {
    fn from(d: &[u32]) -> Self {
        Shape(d.to_vec())
    }
}
