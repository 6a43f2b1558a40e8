//! The manifest against its shader: naga (wgpu's WGSL compiler) parses and validates the WGSL,
//! and the manifest's entry point, workgroup size and buffers are compared with the entry
//! point's real interface (see the module doc's "Checks").

use super::document::Doc;
use super::{type_name, ManifestError, DEFAULT_ENTRY};
use kernels::user::{ElemType, UserBuffer};
use naga::back::pipeline_constants::{process_overrides, PipelineConstantError};
use naga::back::PipelineConstants;
use naga::common::wgsl::{TryToWgsl, TypeContext};
use naga::valid::{Capabilities, FunctionInfo, ValidationFlags, Validator};
use naga::{AddressSpace, ArraySize, GlobalVariable, Handle, Module, ResourceBinding, Scalar, ShaderStage, StorageAccess, Type, TypeInner};

/// Checks the WGSL `source`, read from `file`, and the manifest's `entry`, `workgroup_size` and
/// `buffers` against it.
pub(super) fn check(
    doc: &Doc<'_>,
    source: &str,
    file: &str,
    entry: &str,
    workgroup_size: [u32; 3],
    buffers: &[UserBuffer],
) -> Result<(), ManifestError> {
    let invalid = |diagnostic: String| ManifestError::InvalidWgsl {
        manifest: doc.manifest.to_string(),
        line: doc.line_of("wgsl"),
        wgsl: file.to_string(),
        diagnostic: diagnostic.trim_end().to_string(),
    };
    let module = naga::front::wgsl::parse_str(source).map_err(|e| invalid(e.emit_to_string_with_path(source, file)))?;
    let info = Validator::new(ValidationFlags::all(), Capabilities::default())
        .validate(&module)
        .map_err(|e| invalid(e.emit_to_string_with_path(source, file)))?;
    let shader = Shader { doc, module: &module, file, entry };
    let index = shader.entry_point()?;

    let resolved = match process_overrides(&module, &info, Some((ShaderStage::Compute, entry)), &PipelineConstants::default()) {
        Ok((resolved, _)) => resolved,
        Err(PipelineConstantError::ValidationError(e)) => return Err(invalid(e.emit_to_string_with_path(source, file))),
        Err(e) => return Err(shader.override_error(&e)),
    };
    let ep = &module.entry_points[index];
    let resolved_size = resolved.entry_points.iter().find(|r| r.name == entry).map_or(ep.workgroup_size, |r| r.workgroup_size);
    shader.check_workgroup_size(ep, resolved_size, workgroup_size)?;

    let uses = info.get_entry_point(index);
    for (i, buffer) in buffers.iter().enumerate() {
        shader.check_buffer(uses, i, buffer)?;
    }
    shader.check_all_bound(uses, buffers)
}

/// The parsed shader, with what messages about it need.
struct Shader<'a> {
    doc: &'a Doc<'a>,
    module: &'a Module,
    /// The WGSL file's path, for messages.
    file: &'a str,
    /// The entry point's name.
    entry: &'a str,
}

impl Shader<'_> {
    /// The index of the entry point, which must exist and be `@compute`.
    fn entry_point(&self) -> Result<usize, ManifestError> {
        let (file, entry) = (self.file, self.entry);
        let Some(index) = self.module.entry_points.iter().position(|ep| ep.name == entry) else {
            let message = if self.module.functions.iter().any(|(_, f)| f.name.as_deref() == Some(entry)) {
                format!("`fn {entry}` in {file} is not marked @compute; field `entry` must name a compute entry point")
            } else {
                let compute: Vec<String> = self
                    .module
                    .entry_points
                    .iter()
                    .filter(|ep| ep.stage == ShaderStage::Compute)
                    .map(|ep| format!("`{}`", ep.name))
                    .collect();
                let has = if compute.is_empty() { "none".to_string() } else { compute.join(", ") };
                format!("{file} has no `fn {entry}`; field `entry` names the compute entry point (default \"{DEFAULT_ENTRY}\"); the shader's compute entry points: {has}")
            };
            return Err(self.doc.err("entry", message));
        };
        let stage = self.module.entry_points[index].stage;
        if stage != ShaderStage::Compute {
            let stage = format!("{stage:?}").to_lowercase();
            return Err(self.doc.err(
                "entry",
                format!("`fn {entry}` in {file} is a @{stage} entry point, not @compute; field `entry` must name a compute entry point"),
            ));
        }
        Ok(index)
    }

    /// A failure to resolve the entry point's override constants at their defaults.
    fn override_error(&self, e: &PipelineConstantError) -> ManifestError {
        let (file, entry) = (self.file, self.entry);
        match e {
            PipelineConstantError::MissingValue(name) => self.doc.err(
                "wgsl",
                format!(
                    "field `wgsl`: `override {name}` in {file} has no default value, and harness sets no pipeline constants, so `fn {entry}` cannot be built; give it one, e.g. `override {name}: u32 = 64;`"
                ),
            ),
            PipelineConstantError::NegativeWorkgroupSize => self.doc.err(
                "workgroup_size",
                format!("field `workgroup_size` cannot match: the @workgroup_size of `fn {entry}` in {file} is 0 along some axis with its override constants at their defaults; every axis must be positive"),
            ),
            other => self.doc.err("wgsl", format!("field `wgsl`: the override constants of `fn {entry}` in {file} cannot be evaluated at their defaults: {other}")),
        }
    }

    /// `workgroup_size` against the entry point's, `resolved` with the overrides' defaults.
    fn check_workgroup_size(&self, ep: &naga::EntryPoint, resolved: [u32; 3], manifest: [u32; 3]) -> Result<(), ManifestError> {
        if resolved == manifest {
            return Ok(());
        }
        let axes = resolved.iter().rposition(|&n| n != 1).map_or(1, |last| last + 1);
        let written = resolved[..axes].iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        let through = if ep.workgroup_size_overrides.is_some() { " (its override constants at their defaults)" } else { "" };
        Err(self.doc.err(
            "workgroup_size",
            format!(
                "field `workgroup_size` is {manifest:?} but `fn {}` in {} has @workgroup_size({written}){through}; make them equal",
                self.entry, self.file
            ),
        ))
    }

    /// One manifest buffer against the variable at its binding: declared and used at
    /// `@group(0)`, the same address space, element type and size, and writable if an output.
    fn check_buffer(&self, uses: &FunctionInfo, i: usize, b: &UserBuffer) -> Result<(), ManifestError> {
        let (file, entry, n) = (self.file, self.entry, b.binding);
        let field = |f: &str| format!("buffers[{i}].{f}");
        let Some((handle, var, _)) = self.bindings().find(|(_, _, r)| r.group == 0 && r.binding == n) else {
            let elsewhere: Vec<String> =
                self.bindings().filter(|(_, _, r)| r.binding == n).map(|(_, _, r)| format!("@group({})", r.group)).collect();
            let message = if elsewhere.is_empty() {
                format!(
                    "field `{}` is {n} but {file} has no @binding({n}) in @group(0) (it binds {}); bind the buffer at @group(0) @binding({n}) or fix the number",
                    field("binding"),
                    self.listing()
                )
            } else {
                format!(
                    "field `{}` is {n} but {file} declares @binding({n}) only in {}; harness binds every buffer in @group(0), so move it there",
                    field("binding"),
                    elsewhere.join(", ")
                )
            };
            return Err(self.doc.err(&field("binding"), message));
        };
        let decl = self.declaration(var);
        let at = format!("{file} declares @group(0) @binding({n}) as `{decl}`");
        if uses[handle].is_empty() {
            return Err(self.doc.err(
                &field("binding"),
                format!(
                    "field `{}` is {n} and {at}, but `fn {entry}` does not use it: WebGPU leaves unused bindings out of the pipeline's layout, so the bind group would be rejected; use it in `fn {entry}` or remove `buffers[{i}]`",
                    field("binding")
                ),
            ));
        }
        let writable = match var.space {
            AddressSpace::Uniform if b.uniform => false,
            AddressSpace::Storage { access } if !b.uniform => access.contains(StorageAccess::STORE),
            AddressSpace::Uniform | AddressSpace::Storage { .. } => {
                let (manifest, shader) = if b.uniform { ("uniform", "storage") } else { ("storage", "uniform") };
                return Err(self.doc.err(
                    &field("usage"),
                    format!("field `{}` is \"{manifest}\" but {at}; set usage = \"{shader}\" or change the shader", field("usage")),
                ));
            }
            _ => {
                return Err(self.doc.err(
                    &field("binding"),
                    format!("field `{}` is {n} but {at}, which is not a buffer; bind a var<storage> or var<uniform> there", field("binding")),
                ))
            }
        };
        if b.output && !writable {
            return Err(self.doc.err(
                &field("output"),
                format!(
                    "field `{}` is true but {at}, which the shader cannot write; declare it var<storage, read_write> or drop `output`",
                    field("output")
                ),
            ));
        }
        self.check_type(i, b, var, &at)?;
        self.check_len(i, b, var.ty, &at)
    }

    /// The buffer's `type` against the scalar the binding's type reduces to.
    fn check_type(&self, i: usize, b: &UserBuffer, var: &GlobalVariable, at: &str) -> Result<(), ManifestError> {
        let mut scalars = Vec::new();
        self.scalars(var.ty, &mut scalars);
        if scalars.contains(&scalar(b.ty)) {
            return Ok(());
        }
        let field = format!("buffers[{i}].type");
        let default = if self.doc.line_of(&field).is_none() { " (the default)" } else { "" };
        let names: Vec<String> = scalars.iter().map(|s| s.to_wgsl_for_diagnostics()).collect();
        let fix = match scalars.iter().find_map(|&s| elem_type(s)) {
            Some(ty) => format!("set type = \"{}\" or change the shader", type_name(ty)),
            None => "a manifest buffer holds f32, u32 or i32, so change the shader".to_string(),
        };
        Err(self.doc.err(
            &field,
            format!(
                "field `{field}` is \"{}\"{default} but {at}, whose elements are {}; {fix}",
                type_name(b.ty),
                names.join(" and ")
            ),
        ))
    }

    /// The buffer's `len` against the size of the binding's type.
    fn check_len(&self, i: usize, b: &UserBuffer, ty: Handle<Type>, at: &str) -> Result<(), ManifestError> {
        let field = format!("buffers[{i}].len");
        let needed = self.module.types[ty].inner.size(self.module.to_ctx()).div_ceil(4);
        let runtime = self.runtime_sized(ty);
        // Uniform buffers are padded to 16 bytes.
        let usable = if b.uniform { b.len.div_ceil(4) * 4 } else { b.len };
        let message = if usable < needed {
            let least = if runtime { "at least " } else { "" };
            format!(
                "field `{field}` is {} but {at}, which needs {least}{needed} elements ({} bytes), so WebGPU would reject the bind group; set len = {needed}",
                b.len,
                needed * 4
            )
        } else if !runtime && b.len > needed {
            format!(
                "field `{field}` is {} but {at}, which holds {needed} elements ({} bytes), so the shader cannot reach the other {}; set len = {needed}",
                b.len,
                needed * 4,
                b.len - needed
            )
        } else {
            return Ok(());
        };
        Err(self.doc.err(&field, message))
    }

    /// Every binding the entry point uses must be one of the manifest's buffers.
    fn check_all_bound(&self, uses: &FunctionInfo, buffers: &[UserBuffer]) -> Result<(), ManifestError> {
        let bound = |r: &ResourceBinding| r.group == 0 && buffers.iter().any(|b| b.binding == r.binding);
        let Some((_, var, r)) = self.bindings().find(|&(h, _, r)| !uses[h].is_empty() && !bound(r)) else {
            return Ok(());
        };
        let (file, entry) = (self.file, self.entry);
        let decl = self.declaration(var);
        let fix = match (var.space, r.group) {
            (AddressSpace::Handle, _) => "harness binds only buffers (var<storage> or var<uniform>), not textures or samplers".to_string(),
            (_, 0) => format!("add a `[[buffers]]` table with `binding = {}`", r.binding),
            _ => "harness binds only @group(0): move it there and add a `[[buffers]]` table for it".to_string(),
        };
        Err(self.doc.err(
            "buffers",
            format!(
                "field `buffers` has no buffer at @group({}) @binding({}), which `fn {entry}` in {file} uses as `{decl}`; {fix}",
                r.group, r.binding
            ),
        ))
    }

    /// The module's variables that have a `@group(g) @binding(n)`, with it.
    fn bindings(&self) -> impl Iterator<Item = (Handle<GlobalVariable>, &GlobalVariable, &ResourceBinding)> {
        self.module.global_variables.iter().filter_map(|(h, v)| v.binding.as_ref().map(|r| (h, v, r)))
    }

    /// The shader's `@group(0)` bindings, for messages: `@binding(0), @binding(2)`, or `none`.
    fn listing(&self) -> String {
        let mut numbers: Vec<u32> = self.bindings().filter(|(_, _, r)| r.group == 0).map(|(_, _, r)| r.binding).collect();
        numbers.sort_unstable();
        let listed: Vec<String> = numbers.iter().map(|n| format!("@binding({n})")).collect();
        if listed.is_empty() {
            "none".to_string()
        } else {
            listed.join(", ")
        }
    }

    /// A binding's declaration as WGSL would write it: `var<storage, read> x: array<f32>`.
    fn declaration(&self, var: &GlobalVariable) -> String {
        let space = match var.space {
            AddressSpace::Uniform => "<uniform>".to_string(),
            AddressSpace::Storage { access } if access.contains(StorageAccess::STORE) => "<storage, read_write>".to_string(),
            AddressSpace::Storage { .. } => "<storage, read>".to_string(),
            AddressSpace::Handle => String::new(),
            other => format!("<{}>", naga::common::wgsl::address_space_str(other).0.unwrap_or("?")),
        };
        let name = var.name.as_deref().unwrap_or("_");
        format!("var{space} {name}: {}", self.module.to_ctx().type_to_string(var.ty))
    }

    /// The scalars `ty` reduces to, each once: arrays, vectors, matrices and atomics to their
    /// element's, structs to their members'.
    fn scalars(&self, ty: Handle<Type>, out: &mut Vec<Scalar>) {
        let found = match self.module.types[ty].inner {
            TypeInner::Scalar(s) | TypeInner::Atomic(s) | TypeInner::Vector { scalar: s, .. } | TypeInner::Matrix { scalar: s, .. } => s,
            TypeInner::Array { base, .. } => return self.scalars(base, out),
            TypeInner::Struct { ref members, .. } => return members.iter().for_each(|m| self.scalars(m.ty, out)),
            _ => return,
        };
        if !out.contains(&found) {
            out.push(found);
        }
    }

    /// Whether `ty` is a runtime-sized array or a struct that ends in one.
    fn runtime_sized(&self, ty: Handle<Type>) -> bool {
        match self.module.types[ty].inner {
            TypeInner::Array { size, .. } => matches!(size, ArraySize::Dynamic),
            TypeInner::Struct { ref members, .. } => members.last().is_some_and(|m| self.runtime_sized(m.ty)),
            _ => false,
        }
    }
}

/// The naga scalar of a manifest element type.
fn scalar(ty: ElemType) -> Scalar {
    match ty {
        ElemType::F32 => Scalar::F32,
        ElemType::U32 => Scalar::U32,
        ElemType::I32 => Scalar::I32,
    }
}

/// The manifest element type of a naga scalar, where a manifest buffer can hold it.
fn elem_type(s: Scalar) -> Option<ElemType> {
    [ElemType::F32, ElemType::U32, ElemType::I32].into_iter().find(|&ty| scalar(ty) == s)
}
