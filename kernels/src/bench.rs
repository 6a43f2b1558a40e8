//! A case from a user's own bench (`harness bench`): what harness knows of it without running
//! it, as the bench binary lists it. The bench itself runs in the user's code, built with
//! `harness-bench`; its output travels as little-endian f64s.

use crate::check::Tolerance;
use crate::info::{CaseInfo, Rate};
use serde::{Deserialize, Serialize};

/// Tolerance of a bench whose reference names none.
pub const DEFAULT_TOLERANCE: Tolerance = Tolerance { abs: 1e-5, rel: 1e-4 };

/// Where a bench runs: its code on the CPU, or its passes on a GPU through wgpu.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BenchKind {
    /// Rust on the CPU: WASM in the page (`--platform wasm`) or natively.
    Cpu,
    /// wgpu passes: the browser's WebGPU (`--platform webgpu`) or native wgpu.
    Gpu,
}

/// One bench at one parameter, as the bench binary lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BenchCase {
    /// The name the bench was registered under (`dot/scalar`).
    pub name: String,
    /// The parameter it runs at, as the bench shows it (`1024`); `None` for a bench without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// CPU or GPU.
    pub kind: BenchKind,
    /// The bench target it comes from (`cargo bench --bench NAME`).
    pub target: String,
    /// Floating-point operations of one iteration, where declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops: Option<f64>,
    /// Bytes one iteration moves, where declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<f64>,
    /// Elements one iteration processes, where declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elements: Option<f64>,
    /// The tolerance of its CPU reference; `None` when it gives none (it reads `unchecked`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Tolerance>,
}

impl BenchCase {
    /// The case's name in reports and filters: the bench's name, and its parameter after `@`
    /// as `--filter KERNEL@SHAPE` reads it.
    pub fn label(&self) -> String {
        match &self.param {
            Some(p) => format!("{}@{p}", self.name),
            None => self.name.clone(),
        }
    }

    /// What a report says of it before it runs.
    pub fn info(&self) -> CaseInfo {
        let kind = match self.kind {
            BenchKind::Cpu => "CPU",
            BenchKind::Gpu => "GPU",
        };
        CaseInfo {
            summary: format!("{kind} bench `{}` of bench target `{}`", self.name, self.target),
            dims: self.param.iter().map(|_| "param".to_string()).collect(),
            flops: self.flops.unwrap_or(0.0),
            bytes: self.bytes.unwrap_or(0.0),
            rate: self.elements.map(|per_run| Rate { item: "element".into(), per_run }),
            dispatches: None,
        }
    }

    /// The output as sent: little-endian f64s.
    pub fn decode_output(bytes: &[u8]) -> Vec<f64> {
        bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8-byte chunk"))).collect()
    }

    /// `values` as sent.
    pub fn encode_output(values: &[f64]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }
}
