//! A GPU program: buffers, shaders and the dispatches that run over them. Every case becomes one
//! (a catalogue kernel is one dispatch, a user's manifest one dispatch over its own buffers, a
//! model's forward pass many), so one dispatcher, one timer and one read-back serve them all.

use crate::dtype::Dtype;
use crate::kernel::{Kernel, INPUT_ALIGN};
use crate::shape::Shape;

/// What a buffer starts with.
#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    /// These bytes (little-endian values).
    Bytes(Vec<u8>),
    /// This many zero bytes.
    Zeroed(u64),
    /// `elems` values uniform in `[lo, hi)` from stream `stream` of `seed`, stored as `dtype`:
    /// generated as the buffer is created, so a large seeded model never sits whole in memory twice.
    Seeded {
        /// Seed.
        seed: u64,
        /// Stream.
        stream: u64,
        /// Lower bound.
        lo: f32,
        /// Upper bound.
        hi: f32,
        /// Values.
        elems: u64,
        /// How they are stored.
        dtype: Dtype,
        /// Values a row, which a quantized type is stored by.
        row: u64,
    },
    /// These parts one after another: the buffer that [`View`](Init::View)s of each part share.
    Concat(Vec<Init>),
    /// No storage of its own: bytes `offset..offset + len` of buffer `of`, which is bound in its
    /// place (`offset` a multiple of [`VIEW_ALIGN`]).
    View {
        /// The buffer's index in [`Program::buffers`].
        of: usize,
        /// Where the range starts, in bytes.
        offset: u64,
        /// Its bytes.
        len: u64,
    },
}

/// What a [`Init::View`]'s offset must be a multiple of: WebGPU's default
/// `minStorageBufferOffsetAlignment`, which no device may exceed.
pub const VIEW_ALIGN: u64 = 256;

impl Init {
    /// The buffer's size in bytes.
    pub fn len(&self) -> u64 {
        match self {
            Init::Bytes(b) => b.len() as u64,
            Init::Zeroed(n) => *n,
            Init::Seeded { elems, dtype, row, .. } => dtype.storage_bytes(*elems as usize, *row as usize) as u64,
            Init::Concat(parts) => parts.iter().map(Init::len).sum(),
            Init::View { len, .. } => *len,
        }
    }

    /// The initial bytes, generated for a seeded buffer; `None` for a zeroed one and a view.
    pub fn bytes(&self) -> Option<std::borrow::Cow<'_, [u8]>> {
        match self {
            Init::Bytes(b) => Some(std::borrow::Cow::Borrowed(b)),
            Init::Zeroed(_) => None,
            Init::Seeded { seed, stream, lo, hi, elems, dtype, row } => {
                let values = crate::prng::Prng::new(*seed, *stream).fill(*elems as usize, *lo, *hi);
                // Seeded values are finite, so every row quantizes.
                let bytes = dtype.encode_rows(&values, *row as usize).unwrap_or_else(|_| vec![0; self.len() as usize]);
                Some(std::borrow::Cow::Owned(bytes))
            }
            Init::Concat(parts) => {
                let mut bytes = Vec::with_capacity(self.len() as usize);
                for part in parts {
                    match part.bytes() {
                        Some(b) => bytes.extend_from_slice(&b),
                        None => bytes.resize(bytes.len() + part.len() as usize, 0),
                    }
                }
                Some(std::borrow::Cow::Owned(bytes))
            }
            Init::View { .. } => None,
        }
    }

    /// The buffer and byte range a buffer of this init is bound as, `index` being its own.
    pub fn binding(&self, index: usize) -> (usize, u64, u64) {
        match *self {
            Init::View { of, offset, len } => (of, offset, len),
            _ => (index, 0, self.len()),
        }
    }

    /// True for a zero-sized buffer (WebGPU rejects binding one).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One buffer of a program.
#[derive(Debug, Clone, PartialEq)]
pub struct Buffer {
    /// Name, for validation messages.
    pub label: String,
    /// A uniform (`var<uniform>`) rather than a storage buffer.
    pub uniform: bool,
    /// Its contents before the first run.
    pub init: Init,
    /// No step writes it, so a device may keep it, contents and all, for a later program with a
    /// buffer of the same seeded contents: a model's prefill, decode step and ops share their
    /// weights ([`crate::gpu::Gpu`] keeps the last program's).
    pub constant: bool,
}

impl Buffer {
    /// A storage buffer of `values` stored as `dtype`.
    pub fn values(label: impl Into<String>, values: &[f32], dtype: Dtype) -> Self {
        Buffer { label: label.into(), uniform: false, init: Init::Bytes(dtype.encode(values)), constant: false }
    }

    /// A storage buffer of `values`.
    pub fn u32s(label: impl Into<String>, values: &[u32]) -> Self {
        Buffer { label: label.into(), uniform: false, init: Init::Bytes(words_to_bytes(values)), constant: false }
    }

    /// A zeroed storage buffer of `elems` 4-byte values.
    pub fn zeroed(label: impl Into<String>, elems: usize) -> Self {
        Buffer { label: label.into(), uniform: false, init: Init::Zeroed(4 * elems.max(1) as u64), constant: false }
    }

    /// A uniform of `words`, padded to 16 bytes as uniform layout requires.
    pub fn uniform(label: impl Into<String>, words: Vec<u32>) -> Self {
        Buffer { label: label.into(), uniform: true, init: Init::Bytes(words_to_bytes(&crate::kernel::pad_params(words))), constant: false }
    }
}

/// One compute shader of a program.
#[derive(Debug, Clone, PartialEq)]
pub struct Shader {
    /// Name, for validation messages and reports.
    pub label: String,
    /// WGSL source.
    pub wgsl: String,
    /// Entry point.
    pub entry: String,
}

/// One dispatch: a shader, which program buffer sits at each `@group(0) @binding(n)`, and how
/// many workgroups.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Index into [`Program::shaders`].
    pub shader: usize,
    /// `(binding, index into Program::buffers)`.
    pub bindings: Vec<(u32, usize)>,
    /// Workgroups in x, y, z.
    pub workgroups: [u32; 3],
}

/// What a device offers beyond core WebGPU that lowering a model may use; where one is missing
/// the plain kernel runs instead.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caps {
    /// `subgroups`: matvec reductions go through subgroup operations.
    pub subgroups: bool,
    /// [`subgroup_matrix::FEATURE`](crate::catalog::matmul::subgroup_matrix::FEATURE), with f16
    /// inputs and an f32 result at 16×16×16, and `shader-f16`: GEMMs on tensor cores.
    pub subgroup_matrix: bool,
    /// The adapter is a CPU (a software adapter: SwiftShader, lavapipe, llvmpipe): a few large
    /// workgroups keep its cores busy where a GPU needs thousands, so linear layers choose
    /// kernels for it ([`crate::catalog::linear::Linear::choose`]).
    pub cpu: bool,
}

impl Caps {
    /// Core WebGPU only, on a GPU.
    pub const NONE: Caps = Caps { subgroups: false, subgroup_matrix: false, cpu: false };
    /// Subgroups, no tensor cores: a GPU natively.
    pub const SUBGROUPS: Caps = Caps { subgroups: true, subgroup_matrix: false, cpu: false };
}

/// Buffers, shaders and dispatches; one timed sample runs every step, in order, in one compute
/// pass (WebGPU makes each dispatch see the writes of the ones before it).
///
/// Unless it asks for a [`fresh_output`](Program::fresh_output), a program must be idempotent:
/// running it again from the buffers it left gives the same outputs, since timing runs it many
/// times without resetting anything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Program {
    /// Every buffer.
    pub buffers: Vec<Buffer>,
    /// Every shader.
    pub shaders: Vec<Shader>,
    /// The dispatches of one run, in order.
    pub steps: Vec<Step>,
    /// Buffers read back after the last run; their bytes, concatenated in this order, are the
    /// case's output.
    pub outputs: Vec<usize>,
    /// WebGPU features its shaders need (`shader-f16`), by their WebGPU names: a device without
    /// one refuses the program with a clear error before compiling anything.
    pub features: Vec<String>,
    /// Read the outputs from one run over freshly initialised buffers rather than after the
    /// last timed run: for programs that are not idempotent (a user kernel may accumulate).
    pub fresh_output: bool,
}

impl Program {
    /// Adds a buffer and returns its index.
    pub fn buffer(&mut self, buffer: Buffer) -> usize {
        self.buffers.push(buffer);
        self.buffers.len() - 1
    }

    /// Adds a shader (entry point `main`) once per label and returns its index.
    pub fn shader(&mut self, label: &str, wgsl: impl FnOnce() -> String) -> usize {
        if let Some(i) = self.shaders.iter().position(|s| s.label == label) {
            return i;
        }
        self.shaders.push(Shader { label: label.to_string(), wgsl: wgsl(), entry: "main".into() });
        self.shaders.len() - 1
    }

    /// Adds a dispatch of `shader` with `buffers` at bindings 0, 1, 2, … in order.
    pub fn step(&mut self, shader: usize, buffers: &[usize], workgroups: [u32; 3]) {
        let bindings = buffers.iter().enumerate().map(|(i, &b)| (i as u32, b)).collect();
        self.steps.push(Step { shader, bindings, workgroups });
    }

    /// What step `i` does, for a profile: the op its uniform is named after (a model's dispatches
    /// bind `"{op} params"` first), else its place in the run.
    pub fn step_name(&self, i: usize) -> String {
        let first = self.steps[i].bindings.first().map(|&(_, b)| &self.buffers[b]);
        match first.filter(|b| b.uniform).and_then(|b| b.label.strip_suffix(" params")) {
            Some(op) => op.to_string(),
            None => format!("step {i}"),
        }
    }

    /// Records that the program needs `feature`, once.
    pub fn require(&mut self, feature: Option<&str>) {
        if let Some(f) = feature.filter(|f| !self.features.iter().any(|g| g == f)) {
            self.features.push(f.to_string());
        }
    }

    /// A catalogue kernel as a program: one dispatch ([`Program::kernel_step`]) whose output is
    /// the program's.
    pub fn of_kernel(kernel: &dyn Kernel, shape: &Shape, inputs: &[Vec<f32>]) -> Program {
        let mut p = Program::default();
        let output = p.kernel_step(kernel, shape, inputs);
        p.outputs = vec![output];
        p
    }

    /// Adds a dispatch of `kernel` at `shape` in the layout [`Kernel`] documents, over buffers of
    /// its own: the uniform at binding 0, `inputs` after it (zero-padded to whole
    /// [`INPUT_ALIGN`]s, encoded by its [`input_bytes`](Kernel::input_bytes)), a zeroed output last; returns the output's index. Steps of one kernel
    /// name share one shader, so several shapes of a kernel compile it once.
    pub fn kernel_step(&mut self, kernel: &dyn Kernel, shape: &Shape, inputs: &[Vec<f32>]) -> usize {
        let mut bound = vec![self.buffer(Buffer::uniform("params", kernel.params(shape)))];
        for (i, x) in inputs.iter().enumerate() {
            let mut bytes = kernel.input_bytes(shape, i, x);
            bytes.resize(bytes.len().max(1).next_multiple_of(INPUT_ALIGN), 0);
            bound.push(self.buffer(Buffer { label: "input".into(), uniform: false, init: Init::Bytes(bytes), constant: false }));
        }
        let output = self.buffer(Buffer::zeroed("output", kernel.output_len(shape)));
        bound.push(output);
        let shader = self.shader(kernel.name(), || kernel.wgsl());
        self.step(shader, &bound, kernel.workgroups(shape));
        for feature in kernel.features() {
            self.require(Some(feature));
        }
        output
    }
}

/// u32 words as little-endian bytes.
pub fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}
