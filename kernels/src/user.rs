//! A user's own WGSL compute kernel, as its manifest (`harness run --kernel kernel.toml`)
//! describes it once read and resolved: the source inline, every buffer with its type, size and
//! initial contents, and the dispatch. Its reference is the expected-output file its manifest names,
//! if any: without one it has no independent reference, and its outputs are only compared across
//! platforms (agreement, not correctness: such a case reads `unchecked`).

use crate::check::Tolerance;
use crate::prng::Prng;
use crate::program::{Buffer, Init, Program, Shader, Step};
use crate::info::CaseInfo;
use serde::{Deserialize, Serialize};

/// Tolerance of a user kernel whose manifest names none.
pub const DEFAULT_TOLERANCE: Tolerance = Tolerance { abs: 1e-5, rel: 1e-4 };

/// A user kernel, ready to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserKernel {
    /// Name in reports and filters.
    pub name: String,
    /// The manifest it came from, for people.
    pub manifest: String,
    /// WGSL source.
    pub wgsl: String,
    /// Entry point.
    pub entry: String,
    /// The shader's `@workgroup_size`, as the manifest states it.
    pub workgroup_size: [u32; 3],
    /// Workgroups dispatched in x, y, z.
    pub workgroups: [u32; 3],
    /// Every buffer, at `@group(0) @binding(n)`.
    pub buffers: Vec<UserBuffer>,
    /// Floating-point operations of one dispatch, when the manifest states them.
    pub flops: Option<f64>,
    /// Bytes one dispatch moves, when the manifest states them.
    pub bytes: Option<f64>,
    /// How far an output may differ from the expected one (or, without it, between platforms).
    pub tolerance: Tolerance,
    /// The expected-output file the manifest names (JSON: every output buffer's values in binding
    /// order, concatenated), resolved against the manifest's folder: the independent reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
}

/// One buffer of a user kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserBuffer {
    /// Name, for messages.
    pub name: String,
    /// `@binding(n)` in `@group(0)`.
    pub binding: u32,
    /// Element type.
    pub ty: ElemType,
    /// Elements.
    pub len: u32,
    /// A `var<uniform>` rather than a storage buffer.
    pub uniform: bool,
    /// Contents before the run.
    pub init: BufferInit,
    /// Read back and compared after the run.
    pub output: bool,
}

/// The element type of a user buffer (all are 4 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElemType {
    /// `f32`.
    F32,
    /// `u32`.
    U32,
    /// `i32`.
    I32,
}

impl ElemType {
    /// One element's little-endian bytes as f64.
    fn decode(self, b: [u8; 4]) -> f64 {
        match self {
            ElemType::F32 => f32::from_le_bytes(b) as f64,
            ElemType::U32 => u32::from_le_bytes(b) as f64,
            ElemType::I32 => i32::from_le_bytes(b) as f64,
        }
    }

    /// `v` as this type's little-endian bytes (integers are rounded toward zero).
    fn encode(self, v: f64) -> [u8; 4] {
        match self {
            ElemType::F32 => (v as f32).to_le_bytes(),
            ElemType::U32 => (v as u32).to_le_bytes(),
            ElemType::I32 => (v as i32).to_le_bytes(),
        }
    }
}

/// What a user buffer holds before the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum BufferInit {
    /// All zero.
    Zeros,
    /// Uniform in `[lo, hi)` from the case's seed (integers: rounded toward zero).
    Random {
        /// Lower bound.
        lo: f64,
        /// Upper bound.
        hi: f64,
    },
    /// 0, 1, 2, …
    Iota,
    /// These values, repeated to fill the buffer.
    Values(Vec<f64>),
}

impl UserBuffer {
    /// The initial bytes; `stream` keeps the random buffers of one kernel apart.
    fn bytes(&self, seed: u64, stream: u64) -> Vec<u8> {
        let n = self.len as usize;
        let values: Vec<f64> = match &self.init {
            BufferInit::Zeros => vec![0.0; n],
            BufferInit::Random { lo, hi } => {
                let mut rng = Prng::new(seed, stream);
                (0..n).map(|_| rng.uniform(*lo as f32, *hi as f32) as f64).collect()
            }
            BufferInit::Iota => (0..n).map(|i| i as f64).collect(),
            BufferInit::Values(v) if v.is_empty() => vec![0.0; n],
            BufferInit::Values(v) => v.iter().copied().cycle().take(n).collect(),
        };
        let mut bytes: Vec<u8> = values.into_iter().flat_map(|v| self.ty.encode(v)).collect();
        if self.uniform {
            // Uniform buffers are laid out in 16-byte units.
            bytes.resize(bytes.len().div_ceil(16).max(1) * 16, 0);
        }
        bytes
    }
}

impl UserKernel {
    /// The one-dispatch program over the manifest's buffers; outputs come from a fresh run,
    /// because a kernel that accumulates (atomics) would otherwise depend on how often it ran.
    pub fn program(&self, seed: u64) -> Program {
        let buffers = self
            .buffers
            .iter()
            .enumerate()
            .map(|(i, b)| Buffer { label: b.name.clone(), uniform: b.uniform, init: Init::Bytes(b.bytes(seed, i as u64)), constant: false })
            .collect();
        Program {
            buffers,
            shaders: vec![Shader { label: self.name.clone(), wgsl: self.wgsl.clone(), entry: self.entry.clone() }],
            steps: vec![Step {
                shader: 0,
                bindings: self.buffers.iter().enumerate().map(|(i, b)| (b.binding, i)).collect(),
                workgroups: self.workgroups,
            }],
            outputs: self.buffers.iter().enumerate().filter(|(_, b)| b.output).map(|(i, _)| i).collect(),
            fresh_output: true,
            ..Program::default()
        }
    }

    /// The outputs' bytes (as read back, concatenated) as values, each by its buffer's type.
    pub fn decode_output(&self, bytes: &[u8]) -> Vec<f64> {
        let types = self.buffers.iter().filter(|b| b.output).flat_map(|b| std::iter::repeat_n(b.ty, b.len as usize));
        bytes.chunks_exact(4).zip(types).map(|(c, ty)| ty.decode([c[0], c[1], c[2], c[3]])).collect()
    }

    /// Elements of all outputs together.
    pub fn output_len(&self) -> usize {
        self.buffers.iter().filter(|b| b.output).map(|b| b.len as usize).sum()
    }

    /// Report metadata.
    pub fn info(&self) -> CaseInfo {
        let [x, y, z] = self.workgroups;
        let [a, b, c] = self.workgroup_size;
        let bytes = self.buffers.iter().map(|b| 4.0 * b.len as f64).sum();
        CaseInfo {
            summary: format!("user kernel from {} (entry `{}`, workgroup {a}×{b}×{c}, {x}×{y}×{z} workgroups)", self.manifest, self.entry),
            dims: vec!["x".into(), "y".into(), "z".into()],
            flops: self.flops.unwrap_or(0.0),
            bytes: self.bytes.unwrap_or(bytes),
            rate: None,
            dispatches: None,
        }
    }
}
