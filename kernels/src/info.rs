//! What a report says about a case before any measurement: derived from its spec alone, by the
//! catalogue kernel or the workload it runs.

use serde::{Deserialize, Serialize};

/// A model-level rate: how many items (tokens, sentences) one run processes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rate {
    /// The item, singular: `token`, `sentence`.
    pub item: String,
    /// Items one run processes.
    pub per_run: f64,
}

/// What a report says about a case before any measurement: derived from the spec alone.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseInfo {
    /// What it computes.
    pub summary: String,
    /// Names of the shape's dimensions.
    pub dims: Vec<String>,
    /// Floating-point operations of one run.
    pub flops: f64,
    /// Bytes one run moves at least.
    pub bytes: f64,
    /// Items per run, for model rows (tokens/s, sentences/s).
    pub rate: Option<Rate>,
    /// GPU dispatches one run issues, for models: what a decode step costs in launches, which a
    /// token's few microseconds of work per layer can be dominated by.
    pub dispatches: Option<u32>,
}
