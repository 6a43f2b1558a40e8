//! Preparing a program to dispatch: its buffers (those of seeded contents kept from one program to
//! the next), its pipelines (compiled ones kept by shader) and bind groups, checked against what
//! the device has and allows.

use super::error::GpuError;
use super::Gpu;
use crate::catalog::matmul::subgroup_matrix;
use crate::program::{Init, Program};
use crate::sampling::now_ms;
use std::sync::atomic::{AtomicU64, Ordering};

/// A program ready to dispatch: its pipelines and bound buffers.
pub struct Prepared {
    /// Each program buffer's, a view's being the buffer it is a range of.
    pub(super) buffers: Vec<wgpu::Buffer>,
    /// Whether each is its own, freed with it: not a view (whose buffer is another's), nor a
    /// buffer the device keeps for later programs.
    owned: Vec<bool>,
    pub(super) pipelines: Vec<wgpu::ComputePipeline>,
    /// (pipeline index, bind group, workgroups) of each step.
    pub(super) steps: Vec<(usize, wgpu::BindGroup, [u32; 3])>,
    /// (buffer index, offset, bytes) of each output.
    outputs: Vec<(usize, u64, u64)>,
    /// Milliseconds spent creating the shader modules and pipelines this program compiled.
    pub pipeline_ms: f64,
    /// Its pipelines an earlier program on this device compiled, which it reused.
    pub pipelines_reused: u32,
    /// Dispatches recorded so far ([`Prepared::dispatched`]).
    pub(super) dispatched: AtomicU64,
}

impl Prepared {
    /// Each output buffer and its bytes, in the program's output order.
    pub(super) fn output_buffers(&self) -> Vec<(&wgpu::Buffer, u64, u64)> {
        self.outputs.iter().map(|&(b, offset, len)| (&self.buffers[b], offset, len)).collect()
    }

    /// The dispatches recorded into command buffers so far, every run of every batch: what a
    /// test holds against the dispatches a case's report says one run issues.
    pub fn dispatched(&self) -> u64 {
        self.dispatched.load(Ordering::Relaxed)
    }
}

// In the browser wgpu leaves freeing to JavaScript's garbage collector, which lets a long run's
// GPU memory pile up between collections (Chromium grew 0.4 MB a case): a case's buffers and
// queries are freed the moment it is done with them.
impl Drop for Prepared {
    fn drop(&mut self) {
        self.buffers.iter().zip(&self.owned).filter(|(_, owned)| **owned).for_each(|(b, _)| b.destroy());
    }
}

impl Gpu {
    /// How many buffers this device keeps from the last program for the next ([`Buffer::constant`]
    /// ones of seeded contents: a model's weights).
    ///
    /// [`Buffer::constant`]: crate::program::Buffer::constant
    pub fn kept(&self) -> usize {
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Creates the program's buffers, compiles its pipelines (timed) and bind groups, and readies
    /// GPU timestamps for the batches in flight.
    pub async fn prepare(&self, label: &str, program: &Program) -> Result<Prepared, GpuError> {
        Ok(self.prepare_timed(label, program, false, true).await?.0)
    }

    /// [`Gpu::prepare`], and when the buffers were uploaded (the page's clock). With `precompile`,
    /// every pipeline is compiled at once through the browser's `createComputePipelineAsync`
    /// while the buffers upload ([`Gpu::precompile`]); the pipeline time runs from the upload's end
    /// either way.
    /// With `reuse`, buffers and pipelines kept from earlier programs serve this one
    /// ([`Gpu::create_buffers`], [`Gpu::create_pipelines`]); without (a cold start, which may load
    /// several programs at once, each as a fresh page would), nothing is kept or taken.
    pub(super) async fn prepare_timed(&self, label: &str, program: &Program, precompile: bool, reuse: bool) -> Result<(Prepared, f64), GpuError> {
        let failed = |message: String| GpuError::Pipeline { kernel: label.to_string(), message };
        self.check_features(label, program)?;
        let compiling = precompile.then(|| self.precompile(program));
        let (buffers, owned) = self.create_buffers(program, reuse).await.map_err(failed)?;
        let uploaded = now_ms();
        if let Some(compiling) = compiling {
            compiling.await.map_err(failed)?;
        }
        Ok((self.create_pipelines(label, program, buffers, owned, uploaded, reuse).await?, uploaded))
    }

    /// Refuses a program that needs a feature the device lacks, saying what offers it.
    fn check_features(&self, label: &str, program: &Program) -> Result<(), GpuError> {
        let Some(feature) = program.features.iter().find(|f| !self.has(f)) else { return Ok(()) };
        let hint = match feature.as_str() {
            "shader-f16" => " (f16 kernels store their inputs in f16; most GPUs have it, software adapters often do not)",
            // wgpu 30's WebGPU backend has no mapping for `subgroups`: the page asks the browser
            // for it (static/subgroup-matrix.js), but wgpu cannot see it on the device.
            "subgroups" if cfg!(target_arch = "wasm32") => " to wgpu (wgpu 30's WebGPU backend cannot see `subgroups` on a browser's device, so subgroup variants run natively only)",
            "subgroups" => " (subgroup variants are tuner candidates where the adapter has it; the others run everywhere)",
            subgroup_matrix::FEATURE => " (tensor cores through Chromium's WebGPU; harness asks for it where the adapter has f16 products with an f32 result at 16×16×16)",
            _ => "",
        };
        Err(GpuError::MissingFeature { label: label.to_string(), feature: feature.clone(), hint })
    }

    /// The program's buffers, each with its initial contents uploaded (a view, the buffer it is
    /// a range of), and whether the program's [`Prepared`] owns each (not a view, nor one this
    /// device keeps); the validation error where one is refused.
    ///
    /// Constant buffers of seeded contents are the device's, kept from one program to the next
    /// ([`Kept`]): a model's prefill, decode step and ops share weights that take seconds to
    /// generate and upload (TinyLlama's are 4.4 GB in f32). A buffer the last program had too is
    /// that program's; a part of one (a layer's weights, which a prefill's GEMMs join into one
    /// buffer and a decode step's matvecs read alone) is copied on the GPU from where the last
    /// program had it. What this program does not have is freed once its buffers are made.
    async fn create_buffers(&self, program: &Program, reuse: bool) -> Result<(Vec<wgpu::Buffer>, Vec<bool>), String> {
        let keeps = |b: &crate::program::Buffer| reuse && b.constant && !b.uniform && generated(&b.init);
        let old: Vec<Kept> = match reuse {
            true => std::mem::take(&mut *self.kept.lock().unwrap_or_else(|e| e.into_inner())),
            false => Vec::new(),
        };
        let mut kept: Vec<Kept> = Vec::new();
        let mut copies = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("kept weights") });
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let created: Vec<Option<wgpu::Buffer>> = program
            .buffers
            .iter()
            .map(|b| {
                if let Init::View { .. } = b.init {
                    return None;
                }
                let usage = wgpu::BufferUsages::COPY_DST
                    | match b.uniform {
                        true => wgpu::BufferUsages::UNIFORM,
                        false => wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                    };
                if keeps(b) {
                    let buffer = match old.iter().find(|k| k.init == b.init) {
                        Some(whole) => whole.buffer.clone(),
                        None => self.assemble(&b.label, &b.init, usage, &old, &mut copies),
                    };
                    kept.push(Kept { init: b.init.clone(), buffer: buffer.clone() });
                    return Some(buffer);
                }
                let buffer = match b.init.bytes() {
                    Some(bytes) => self.buffer_of(&b.label, &bytes, usage),
                    None => self.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some(&b.label),
                        size: b.init.len(),
                        usage,
                        mapped_at_creation: false,
                    }),
                };
                Some(buffer)
            })
            .collect();
        self.queue.submit([copies.finish()]);
        // What this program does not have goes (after the copies from it, which the device
        // finishes first).
        for k in &old {
            if !kept.iter().any(|n| n.buffer == k.buffer) {
                k.buffer.destroy();
            }
        }
        if reuse {
            *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = kept;
        }
        let buffers = (0..created.len()).map(|i| {
            let of = program.buffers[i].init.binding(i).0;
            created.get(of).cloned().flatten().ok_or_else(|| format!("buffer `{}` is a view of no buffer of its own", program.buffers[i].label))
        });
        let buffers = buffers.collect::<Result<Vec<_>, String>>();
        let owned = program.buffers.iter().map(|b| !matches!(b.init, Init::View { .. }) && !keeps(b)).collect();
        match scope.pop().await {
            Some(err) => {
                // A refused buffer must not be handed to the next program.
                self.kept.lock().unwrap_or_else(|e| e.into_inner()).clear();
                Err(err.to_string())
            }
            None => buffers.map(|b| (b, owned)),
        }
    }

    /// A new buffer of `init`'s seeded contents (in parts, where joined): each part copied on
    /// the GPU where a buffer of `old` holds it, else generated into the buffer mapped at its
    /// creation, as `create_buffer_init` writes (in Chrome, TinyLlama's weights through
    /// `writeBuffer` took half as long again).
    fn assemble(&self, label: &str, init: &Init, usage: wgpu::BufferUsages, old: &[Kept], copies: &mut wgpu::CommandEncoder) -> wgpu::Buffer {
        let size = init.len().next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: true });
        for (part, offset) in parts(init) {
            let len = part.len().next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
            if let Some((from, at)) = old.iter().find_map(|k| parts(&k.init).into_iter().find(|(p, _)| *p == part).map(|(_, at)| (&k.buffer, at))) {
                copies.copy_buffer_to_buffer(from, at, &buffer, offset, Some(len));
            } else if let Some(bytes) = part.bytes() {
                write_mapped(&buffer, offset, &bytes);
            }
        }
        buffer.unmap();
        buffer
    }

    /// A buffer of `bytes` (padded to 4), written mapped at its creation ([`write_mapped`]).
    fn buffer_of(&self, label: &str, bytes: &[u8], usage: wgpu::BufferUsages) -> wgpu::Buffer {
        let size = (bytes.len() as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT).max(wgpu::COPY_BUFFER_ALIGNMENT);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: true });
        write_mapped(&buffer, 0, bytes);
        buffer.unmap();
        buffer
    }

    /// Creates the program's pipelines and bind groups over `buffers` (those `owned` freed with
    /// it); its pipeline time runs from `since_ms` (when a precompilation began, or now).
    async fn create_pipelines(&self, label: &str, program: &Program, buffers: Vec<wgpu::Buffer>, owned: Vec<bool>, since_ms: f64, reuse: bool) -> Result<Prepared, GpuError> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        // The lock is held only for each lookup, never across an await: two programs may be
        // prepared at once (a cold start's parts), and a second lock in the same thread panics
        // in WASM.
        let compiled = |s| self.compiled.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(shader, _)| shader == s).map(|(_, p)| p.clone());
        let mut reused = 0;
        let mut fresh = Vec::new();
        let pipelines: Vec<wgpu::ComputePipeline> = program
            .shaders
            .iter()
            .map(|s| {
                if let Some(pipeline) = reuse.then(|| compiled(s)).flatten() {
                    reused += 1;
                    return pipeline;
                }
                let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&s.label),
                    source: wgpu::ShaderSource::Wgsl(for_this_compiler(&s.wgsl)),
                });
                let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&s.label),
                    layout: None,
                    module: &module,
                    entry_point: Some(&s.entry),
                    compilation_options: Default::default(),
                    cache: None,
                });
                fresh.push((s.clone(), pipeline.clone()));
                pipeline
            })
            .collect();
        let pipeline_ms = now_ms() - since_ms;
        if let Some(err) = scope.pop().await {
            return Err(GpuError::Pipeline { kernel: label.to_string(), message: err.to_string() });
        }
        // Only pipelines known good are kept for later programs.
        if reuse {
            self.compiled.lock().unwrap_or_else(|e| e.into_inner()).extend(fresh);
        }
        // Bind groups come after the pipelines are known good: an invalid pipeline's layout
        // would only add a second, less helpful error.
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let steps = program
            .steps
            .iter()
            .map(|step| {
                let pipeline = &pipelines[step.shader];
                let entries: Vec<wgpu::BindGroupEntry> = step
                    .bindings
                    .iter()
                    .map(|&(binding, b)| {
                        let resource = match program.buffers[b].init {
                            Init::View { offset, len, .. } => {
                                wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer: &buffers[b], offset, size: std::num::NonZeroU64::new(len) })
                            }
                            _ => buffers[b].as_entire_binding(),
                        };
                        wgpu::BindGroupEntry { binding, resource }
                    })
                    .collect();
                let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&program.shaders[step.shader].label),
                    layout: &pipeline.get_bind_group_layout(0),
                    entries: &entries,
                });
                (step.shader, bind_group, step.workgroups)
            })
            .collect();
        if let Some(err) = scope.pop().await {
            return Err(GpuError::Pipeline { kernel: label.to_string(), message: err.to_string() });
        }
        let outputs = program.outputs.iter().map(|&i| { let (_, offset, len) = program.buffers[i].init.binding(i); (i, offset, len) }).collect();
        Ok(Prepared { buffers, owned, pipelines, steps, outputs, pipeline_ms, pipelines_reused: reused, dispatched: AtomicU64::new(0) })
    }

    /// Compiles every pipeline of `program` at once through the browser's
    /// `createComputePipelineAsync` (wgpu 30 has no asynchronous creation): the page's
    /// `precompile.js` keeps each, and hands it to wgpu when wgpu creates the same pipeline.
    /// Natively there is nothing to do: wgpu creates pipelines as it is asked.
    fn precompile(&self, program: &Program) -> impl std::future::Future<Output = Result<(), String>> {
        #[cfg(target_arch = "wasm32")]
        let pending = {
            let shaders: js_sys::Array = program
                .shaders
                .iter()
                .map(|s| js_sys::Array::of2(&for_this_compiler(&s.wgsl).as_ref().into(), &s.entry.as_str().into()))
                .collect();
            match self.device.as_webgpu() {
                Some(device) => precompile_js(device, &shaders).map(wasm_bindgen_futures::JsFuture::from).map_err(|e| format!("{e:?}")),
                None => Err("wgpu's device is not the browser's WebGPU device".to_string()),
            }
        };
        #[cfg(not(target_arch = "wasm32"))]
        let _ = program;
        async move {
            #[cfg(target_arch = "wasm32")]
            pending?.await.map_err(|e| format!("precompiling: {}", js_sys::Error::from(e).message()))?;
            Ok(())
        }
    }

    /// Refuses a program with a buffer larger than the device allows, naming it, before WebGPU
    /// refuses it with a less helpful validation error.
    pub(super) fn check_fits(&self, label: &str, program: &Program) -> Result<(), GpuError> {
        let limits = self.device.limits();
        let most = limits.max_buffer_size.min(limits.max_storage_buffer_binding_size);
        match program.buffers.iter().find(|b| b.init.len() > most) {
            Some(b) => Err(GpuError::Pipeline {
                kernel: label.to_string(),
                message: format!("buffer `{}` needs {} bytes, more than this device allows in one binding ({most})", b.label, b.init.len()),
            }),
            None => Ok(()),
        }
    }

    /// Replaces the contents of `program`'s buffer `label` with `bytes` before the next run: a
    /// run from text writes each call's token ids and lengths so.
    pub fn write_input(&self, case: &Prepared, program: &Program, label: &str, bytes: &[u8]) -> Result<(), GpuError> {
        let index = program.buffers.iter().position(|b| b.label == label);
        let range = index.map(|i| (i, program.buffers[i].init.binding(i))).filter(|(_, (.., len))| *len >= bytes.len() as u64);
        let Some((buffer, offset)) = range.and_then(|(i, (_, offset, _))| Some((case.buffers.get(i)?, offset))) else {
            return Err(GpuError::Pipeline { kernel: label.to_string(), message: format!("the program has no buffer `{label}` of {} bytes to write", bytes.len()) });
        };
        self.queue.write_buffer(buffer, offset, bytes);
        Ok(())
    }
}

/// Writes `bytes` at `offset` of `buffer`, which is mapped at its creation. In the browser they go
/// straight into the mapped `ArrayBuffer`: wgpu's writable view first copies the whole mapping
/// into the WASM heap and back out on drop, three copies of a model's weights where one will do
/// (Chrome took 12–23 s to upload a seeded TinyLlama on the H200). A buffer refused at its
/// creation (too large) maps to nothing: the error scope says why.
///
/// A mapped range's size must be a multiple of 4 (WebGPU's `getMappedRange`): the range covers
/// `bytes` padded to it (the buffer is), else an odd count of f16s maps to nothing and stays zero.
fn write_mapped(buffer: &wgpu::Buffer, offset: u64, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    let len = (bytes.len() as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
    let range = buffer.slice(offset..offset + len);
    #[cfg(target_arch = "wasm32")]
    if let Ok(view) = range.get_mapped_range() {
        // SAFETY: nothing allocates between the view of WASM memory and the copy out of it.
        unsafe { view.as_uint8array().set(&js_sys::Uint8Array::view(bytes), 0) };
    }
    #[cfg(not(target_arch = "wasm32"))]
    if let Ok(mut view) = range.get_mapped_range_mut() {
        view.slice(..bytes.len()).copy_from_slice(bytes);
    }
}

/// A buffer of seeded contents a device keeps for the next program: its contents, and it.
pub(super) struct Kept {
    init: Init,
    buffer: wgpu::Buffer,
}

/// The parts of a buffer of `init` and where each starts: a joined buffer's, or the whole one;
/// zeroed parts left out (a new buffer is zeroed).
fn parts(init: &Init) -> Vec<(&Init, u64)> {
    match init {
        Init::Concat(parts) => {
            let mut offset = 0;
            parts
                .iter()
                .filter_map(|p| {
                    let at = offset;
                    offset += p.len();
                    (!matches!(p, Init::Zeroed(_))).then_some((p, at))
                })
                .collect()
        }
        Init::Zeroed(_) => Vec::new(),
        whole => vec![(whole, 0)],
    }
}

/// Whether a buffer of `init` is generated from a seed (in parts, where joined), and so worth
/// keeping for a later program rather than generating and uploading it again.
fn generated(init: &Init) -> bool {
    match init {
        Init::Seeded { .. } => true,
        Init::Concat(parts) => parts.iter().all(|p| generated(p) || matches!(p, Init::Zeroed(_))) && parts.iter().any(generated),
        _ => false,
    }
}

/// The WGSL as this platform's compiler takes it. Browsers want `enable subgroups;` before subgroup
/// built-ins; naga 30 (the native path) lists that directive as unimplemented and refuses it, yet
/// compiles the built-ins without it where the device has the `SUBGROUP` feature.
fn for_this_compiler(wgsl: &str) -> std::borrow::Cow<'_, str> {
    const ENABLE: &str = crate::catalog::matvec::SUBGROUPS_ENABLE;
    match wgsl.strip_prefix(ENABLE) {
        Some(rest) if !cfg!(target_arch = "wasm32") => rest.into(),
        _ => wgsl.into(),
    }
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `static/precompile.js`: creates each `[code, entryPoint]` pipeline on `device` with
    /// `createComputePipelineAsync`, all at once; resolves when all are ready.
    #[wasm_bindgen(catch, js_namespace = harnessPrecompile, js_name = compile)]
    fn precompile_js(device: &wgpu::webgpu::GpuDevice, shaders: &js_sys::Array) -> Result<js_sys::Promise, wasm_bindgen::JsValue>;
    /// How many precompiled pipelines wgpu has not taken.
    #[wasm_bindgen(js_namespace = harnessPrecompile, js_name = unused)]
    pub(super) fn precompile_unused() -> u32;
}
