//! The results model harness writes (`results.json`, the contract between measuring and
//! reporting), the statistics computed from samples, and the report writers. Reports read only
//! the model, so they can be rebuilt from disk without re-running anything.

pub mod adapter;
pub mod baseline;
pub mod compare;
mod error;
mod folder;
pub mod hardware;
pub mod html;
pub mod index;
mod json;
pub mod junit;
pub mod markdown;
mod merge;
pub mod model;
mod onnx_table;
pub mod probe;
mod tables;
pub mod template;
#[cfg(test)]
mod figures;
#[cfg(test)]
mod testdata;
#[cfg(test)]
mod tests;

pub use error::ReportError;
pub use folder::{results_path, write_all, JUNIT_XML, REPORT_HTML, RESULTS_JSON, SUMMARY_MD};
pub use json::read_results;
pub use merge::merge;
pub use model::*;
pub use onnx_table::{onnx_tables, OnnxCell, OnnxColumn, OnnxRow, OnnxTable, ONNX_COLD_NOTE, ONNX_NOTE};
pub use tables::{model_rows, phased_tables, vs_f32_note, ModelRow, PhasedRow, PhasedTable, COLD_NOTE, TEXT_NOTE, VS_F32_NOTE};
