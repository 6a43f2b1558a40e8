//! Kernel manifests: the small TOML file that describes a user's own WGSL compute shader to
//! `harness run --kernel path/to/kernel.toml`, read and resolved into a [`UserKernel`].
//!
//! A manifest names the WGSL file, its entry point and workgroup size, how many workgroups to
//! dispatch and every buffer the shader binds, with its type, size and initial contents. The
//! buffers marked `output` are read back after one dispatch and checked against the manifest's
//! `expected` file; without one they are only compared across platforms, which shows agreement,
//! not correctness, and the case reads `unchecked`. Every buffer is re-initialised before the
//! output is read, so kernels that accumulate (atomics) compare just as well as idempotent ones.
//!
//! # Format
//!
//! ```toml
//! name = "saxpy"                 # optional; default: the manifest file's stem
//! wgsl = "saxpy.wgsl"            # required; path relative to the manifest
//! entry = "main"                 # optional; default "main"
//! workgroup_size = [64, 1, 1]    # required; 1 to 3 numbers, missing ones are 1; must equal the
//!                                # shader's @workgroup_size for the entry point
//! # exactly one of:
//! workgroups = [16, 1, 1]        # workgroups to dispatch (1 to 3 numbers, at most 65535 each)
//! threads = [1024, 1, 1]         # or invocations wanted: workgroups = ceil(threads / workgroup_size)
//!                                # per axis
//! flops = 2048                   # optional: floating-point operations per dispatch (for GFLOP/s)
//! bytes = 12288                  # optional: bytes moved per dispatch (for GB/s);
//!                                # default: the sum of the buffers' sizes
//! tolerance = { abs = 1e-5, rel = 1e-4 }   # optional: how far an output may differ from the
//!                                # expected one (or between platforms); an element passes when
//!                                # |a - b| <= abs + rel * |b|; either part may be left out
//! expected = "saxpy.expected.json"   # optional: a JSON array of the expected output values,
//!                                # every output buffer in binding order, computed independently
//!                                # (your CPU code, NumPy, ...); without it the kernel has no
//!                                # independent reference and its cases read `unchecked`
//!
//! [[buffers]]                    # one table per buffer, at @group(0) @binding(n)
//! name = "x"                     # optional; default "buffer<binding>"
//! binding = 0                    # required; the n of @group(0) @binding(n)
//! type = "f32"                   # f32 | u32 | i32 (default f32)
//! len = 1024                     # required: elements (> 0); every type is 4 bytes
//! usage = "storage"              # storage (default) | uniform
//! init = "random"                # zeros (default) | random | iota (0, 1, 2, ...) |
//!                                # [1.0, 2.0, ...] (values, repeated to fill the buffer)
//! range = [-1.0, 1.0]            # only with init = "random": values uniform in [lo, hi);
//!                                # default [-1, 1] for f32; u32 and i32 buffers must state it,
//!                                # and their values are rounded toward zero
//! output = true                  # read back and compared across browsers and platforms
//!                                # (default false); at least one buffer must be an output
//! ```
//!
//! Single numbers are accepted where a list of 1 to 3 is expected (`workgroup_size = 64`).
//! Uniform buffers take `init` zeros, iota or a list of values (not random) and cannot be outputs,
//! since a shader cannot write them; they are padded to 16 bytes, so an f32 parameter block is
//! best declared as `vec4<f32>` in WGSL with `len = 4`.
//!
//! # Checks
//!
//! Everything is checked before any browser starts. Errors name the manifest file, the offending
//! field (`buffers[1].len`) and, where it can be found, the line, with a hint at what the field
//! should hold.
//!
//! The shader is parsed and validated by naga (wgpu's WGSL compiler, as native runs use it),
//! with the capabilities of a WebGPU device without optional features, which is what harness
//! requests. A WGSL error comes out as naga's own diagnostic: the WGSL file, line and column, the
//! line itself and a caret under the fault. Then the manifest is checked against the entry
//! point's real interface, and each message names the WGSL file, the binding, what the manifest
//! says and what the shader says:
//!
//! - `entry` must be an entry point marked `@compute`;
//! - `workgroup_size` must equal its `@workgroup_size`, with override constants
//!   (`override WG: u32 = 64; @workgroup_size(WG)`) resolved at their defaults: harness sets no
//!   pipeline constants, so an override the entry point uses must have a default;
//! - every buffer must be declared at `@group(0) @binding(n)` and used by the entry point (WebGPU
//!   leaves unused bindings out of the pipeline's layout, so the bind group would be rejected),
//!   and every binding the entry point uses must be one of the manifest's buffers;
//! - `usage` must match the address space (`var<storage, ..>` or `var<uniform>`), and an
//!   `output` must be `var<storage, read_write>`;
//! - `type` must be the binding's element type: its type reduced to a scalar, where `array<T>`,
//!   `array<T, N>`, `vecN<T>`, `matCxR<T>` and `atomic<T>` reduce to `T`, and a struct to the
//!   scalar all its members reduce to. A struct whose members mix scalars (`n: u32, a: f32`)
//!   accepts any of them: the buffer is written and compared as the manifest's one type, so
//!   values meant for the other members must be given as that type's bits (zeros are zeros in
//!   every type);
//! - `len` must fit the binding's type: a fixed-size one (`array<f32, 64>`, `vec4<f32>`, a
//!   struct) takes exactly its size, since a shorter buffer is rejected by WebGPU and a longer
//!   one has elements the shader cannot reach; a uniform buffer is padded to 16 bytes, so fewer
//!   elements still bind (`len = 3` for a `vec4<f32>`, whose fourth is then 0), but no more; a
//!   runtime-sized array (`array<f32>`, or a struct ending in one) needs at least one element.

mod document;
mod shader;
#[cfg(test)]
mod tests;

use document::{hint, syntax_error, Dims, Doc, RawBuffer, RawManifest, RawType, RawUsage};
use kernels::check::Tolerance;
use kernels::user::{BufferInit, ElemType, UserBuffer, UserKernel, DEFAULT_TOLERANCE};
use std::path::Path;
use toml::de::DeTable;

/// The most workgroups one dispatch may have along each axis (WebGPU's default
/// `maxComputeWorkgroupsPerDimension`).
pub const MAX_WORKGROUPS_PER_AXIS: u32 = 65535;

/// Entry point used when the manifest names none.
pub const DEFAULT_ENTRY: &str = "main";

/// Largest `len` of a buffer: its size in bytes must fit in 32 bits.
const MAX_LEN: i64 = (u32::MAX / 4) as i64;

/// Why a manifest cannot be turned into a [`UserKernel`]. Every message starts with the
/// manifest's path (and the line, where known) and names the field at fault with a hint to fix
/// it, because people read these straight from the command line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The manifest file itself cannot be read.
    #[error("{manifest}: cannot read the kernel manifest: {io}")]
    Read {
        /// The manifest's path, as given.
        manifest: String,
        /// What reading it said.
        io: std::io::Error,
    },
    /// The manifest is not valid TOML.
    #[error("{manifest}:{line}:{column}: TOML syntax error: {message}")]
    Syntax {
        /// The manifest's path, as given.
        manifest: String,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column (in characters) of the error.
        column: usize,
        /// What the TOML parser said.
        message: String,
    },
    /// The WGSL file named by `wgsl` cannot be read.
    #[error(
        "{manifest}: wgsl file `{wgsl}` cannot be read: {io} (paths are relative to the manifest, so it was looked for at `{resolved}`)"
    )]
    Wgsl {
        /// The manifest's path, as given.
        manifest: String,
        /// The `wgsl` field, as written.
        wgsl: String,
        /// Where that was looked for.
        resolved: String,
        /// What reading it said.
        io: std::io::Error,
    },
    /// The WGSL file is not valid WGSL: naga's diagnostic, which names the file, line and
    /// column and shows the line with a caret.
    #[error("{manifest}{}: the shader of field `wgsl` ({wgsl}) is not valid WGSL; naga (wgpu's WGSL compiler) says:\n{diagnostic}", line_suffix(*.line))]
    InvalidWgsl {
        /// The manifest's path, as given.
        manifest: String,
        /// 1-based line of the `wgsl` field.
        line: Option<usize>,
        /// The WGSL file's path, relative to where harness runs.
        wgsl: String,
        /// naga's diagnostic, without colour.
        diagnostic: String,
    },
    /// A field is missing, unknown, of the wrong type, out of range, or disagrees with another
    /// field or with the shader.
    #[error("{manifest}{}: {message}", line_suffix(*.line))]
    Field {
        /// The manifest's path, as given.
        manifest: String,
        /// The field at fault, as a path: `workgroup_size`, `buffers[1].len`, `tolerance.abs`.
        field: String,
        /// 1-based line of the field in the manifest, where it is there to find.
        line: Option<usize>,
        /// What is wrong and how to fix it; it names the field too.
        message: String,
    },
}

#[cfg(test)]
impl ManifestError {
    /// The field at fault (`buffers[1].len`); `wgsl` when the shader cannot be read or is not
    /// valid WGSL; none for
    /// an unreadable manifest or a TOML syntax error.
    pub fn field(&self) -> Option<&str> {
        match self {
            ManifestError::Field { field, .. } => Some(field),
            ManifestError::Wgsl { .. } | ManifestError::InvalidWgsl { .. } => Some("wgsl"),
            ManifestError::Read { .. } | ManifestError::Syntax { .. } => None,
        }
    }
}

/// `:N` after the manifest's path when the line is known.
fn line_suffix(line: Option<usize>) -> String {
    line.map(|l| format!(":{l}")).unwrap_or_default()
}

/// Reads the manifest at `path` and the WGSL file it names, and resolves them into a kernel.
pub fn load(path: &Path) -> Result<UserKernel, ManifestError> {
    let text = std::fs::read_to_string(path).map_err(|io| ManifestError::Read { manifest: path.display().to_string(), io })?;
    parse(&text, path, |p| std::fs::read_to_string(p))
}

/// Resolves the manifest `text`, read from `manifest_path`, into a kernel. `read_wgsl` reads the
/// shader at the path the `wgsl` field gives, joined to the manifest's folder; tests pass a
/// closure so that no file is needed.
pub fn parse(text: &str, manifest_path: &Path, read_wgsl: impl Fn(&Path) -> std::io::Result<String>) -> Result<UserKernel, ManifestError> {
    let manifest = manifest_path.display().to_string();
    let root = DeTable::parse(text).map_err(|e| syntax_error(&manifest, text, &e))?;
    let doc = Doc::new(&manifest, text, root.get_ref());
    doc.check_known_fields(root.get_ref())?;
    let raw: RawManifest = toml::from_str(text).map_err(|e| doc.serde_error(&e))?;
    resolve(&doc, raw, manifest_path, read_wgsl)
}

/// Checks the manifest's fields, reads its shader and checks the two against each other.
fn resolve(
    doc: &Doc<'_>,
    raw: RawManifest,
    manifest_path: &Path,
    read_wgsl: impl Fn(&Path) -> std::io::Result<String>,
) -> Result<UserKernel, ManifestError> {
    let name = match raw.name {
        Some(n) if n.trim().is_empty() => {
            return Err(
                doc.err("name", "field `name` is empty; give the kernel a name or leave the field out to use the file's stem".into())
            )
        }
        Some(n) => n.trim().to_string(),
        None => match manifest_path.file_stem().map(|s| s.to_string_lossy().into_owned()) {
            Some(stem) if !stem.is_empty() => stem,
            _ => "kernel".to_string(),
        },
    };

    if raw.wgsl.trim().is_empty() {
        return Err(doc.err("wgsl", format!("field `wgsl` is empty; expected {}", hint("wgsl"))));
    }

    let entry = raw.entry.unwrap_or_else(|| DEFAULT_ENTRY.to_string());
    if !is_identifier(&entry) {
        return Err(
            doc.err("entry", format!("field `entry` is \"{entry}\", which is not a WGSL function name; expected {}", hint("entry")))
        );
    }

    let workgroup_size = dims(doc, "workgroup_size", &raw.workgroup_size, u32::MAX as i64)?;

    let workgroups = match (&raw.workgroups, &raw.threads) {
        (Some(_), Some(_)) => {
            return Err(doc.err("threads", "`workgroups` and `threads` are both given; keep one (`threads` is the invocations wanted, `workgroups` the count to dispatch)".into()))
        }
        (None, None) => {
            return Err(doc.err(
                "workgroups",
                "missing field `workgroups` or `threads`: give the workgroups to dispatch (e.g. `workgroups = [16, 1, 1]`) or the invocations wanted (e.g. `threads = [1024, 1, 1]`)".into(),
            ))
        }
        (Some(w), None) => {
            let w = dims(doc, "workgroups", w, i64::MAX)?;
            for (axis, &n) in w.iter().enumerate() {
                if n > MAX_WORKGROUPS_PER_AXIS {
                    return Err(doc.err(
                        "workgroups",
                        format!(
                            "field `workgroups` asks for {n} workgroups along {}; WebGPU allows at most {MAX_WORKGROUPS_PER_AXIS} per axis (spread them over y and z, or use a larger workgroup_size)",
                            AXES[axis]
                        ),
                    ));
                }
            }
            w
        }
        (None, Some(t)) => {
            let t = dims(doc, "threads", t, i64::MAX)?;
            let mut w = [1u32; 3];
            for axis in 0..3 {
                let n = (t[axis] as u64).div_ceil(workgroup_size[axis] as u64);
                if n > MAX_WORKGROUPS_PER_AXIS as u64 {
                    return Err(doc.err(
                        "threads",
                        format!(
                            "field `threads` needs {n} workgroups along {} ({} threads / workgroup_size {}, rounded up); WebGPU allows at most {MAX_WORKGROUPS_PER_AXIS} per axis (spread them over y and z, or use a larger workgroup_size)",
                            AXES[axis], t[axis], workgroup_size[axis]
                        ),
                    ));
                }
                w[axis] = n as u32;
            }
            w
        }
    };

    let flops = non_negative(doc, "flops", raw.flops)?;
    let bytes = non_negative(doc, "bytes", raw.bytes)?;
    let tolerance = match raw.tolerance {
        None => DEFAULT_TOLERANCE,
        Some(t) => Tolerance {
            abs: non_negative(doc, "tolerance.abs", t.abs)?.unwrap_or(DEFAULT_TOLERANCE.abs),
            rel: non_negative(doc, "tolerance.rel", t.rel)?.unwrap_or(DEFAULT_TOLERANCE.rel),
        },
    };

    let mut buffers = Vec::with_capacity(raw.buffers.len());
    for (i, b) in raw.buffers.into_iter().enumerate() {
        buffers.push(resolve_buffer(doc, i, b)?);
    }
    check_buffers_together(doc, &buffers)?;

    let wgsl_path = manifest_path.parent().unwrap_or(Path::new("")).join(&raw.wgsl);
    let wgsl = read_wgsl(&wgsl_path).map_err(|io| ManifestError::Wgsl {
        manifest: doc.manifest.to_string(),
        wgsl: raw.wgsl.clone(),
        resolved: wgsl_path.display().to_string(),
        io,
    })?;
    shader::check(doc, &wgsl, &wgsl_path.display().to_string(), &entry, workgroup_size, &buffers)?;

    let expected = match raw.expected {
        None => None,
        Some(file) => {
            let path = manifest_path.parent().unwrap_or(Path::new("")).join(&file);
            let text = read_wgsl(&path)
                .map_err(|e| doc.err("expected", format!("field `expected`: cannot read the expected-output file {} ({e}); expected {}", path.display(), hint("expected"))))?;
            let outputs: usize = buffers.iter().filter(|b| b.output).map(|b| b.len as usize).sum();
            let values = expected_values(&text).map_err(|e| doc.err("expected", format!("field `expected`: {}: {e}; expected {}", path.display(), hint("expected"))))?;
            if values.len() != outputs {
                return Err(doc.err(
                    "expected",
                    format!("field `expected`: {} holds {} values, but the output buffers hold {outputs}: give every output buffer's values, in binding order", path.display(), values.len()),
                ));
            }
            Some(path.display().to_string())
        }
    };

    Ok(UserKernel { name, manifest: doc.manifest.to_string(), wgsl, entry, workgroup_size, workgroups, buffers, flops, bytes, tolerance, expected })
}

/// The values of an expected-output file: a JSON array of numbers.
pub fn expected_values(text: &str) -> Result<Vec<f64>, String> {
    serde_json::from_str::<Vec<f64>>(text).map_err(|e| format!("not a JSON array of numbers ({e})"))
}

const AXES: [&str; 3] = ["x", "y", "z"];

/// 1 to 3 positive integers up to `max`, padded with 1s.
fn dims(doc: &Doc<'_>, field: &str, d: &Dims, max: i64) -> Result<[u32; 3], ManifestError> {
    if d.0.is_empty() || d.0.len() > 3 {
        return Err(doc.err(field, format!("field `{field}` has {} numbers; expected {}", d.0.len(), hint(field))));
    }
    let max = max.min(u32::MAX as i64);
    let mut out = [1u32; 3];
    for (axis, &n) in d.0.iter().enumerate() {
        if n < 1 || n > max {
            return Err(doc.err(
                field,
                format!(
                    "field `{field}` is {n} along {}; every axis must be a positive integer (at most {max}); expected {}",
                    AXES[axis],
                    hint(field)
                ),
            ));
        }
        out[axis] = n as u32;
    }
    Ok(out)
}

/// An optional finite, non-negative number.
fn non_negative(doc: &Doc<'_>, field: &str, v: Option<f64>) -> Result<Option<f64>, ManifestError> {
    match v {
        Some(x) if !x.is_finite() || x < 0.0 => Err(doc.err(field, format!("field `{field}` is {x}; expected {}", hint(field)))),
        other => Ok(other),
    }
}

fn resolve_buffer(doc: &Doc<'_>, i: usize, b: RawBuffer) -> Result<UserBuffer, ManifestError> {
    let at = |f: &str| format!("buffers[{i}].{f}");

    let binding = u32::try_from(b.binding).map_err(|_| {
        doc.err(&at("binding"), format!("field `{}` is {}; expected {}", at("binding"), b.binding, hint("buffers.binding")))
    })?;
    let name = match b.name {
        Some(n) if n.trim().is_empty() => {
            return Err(doc.err(&at("name"), format!("field `{}` is empty; name the buffer or leave the field out", at("name"))))
        }
        Some(n) => n.trim().to_string(),
        None => format!("buffer{binding}"),
    };
    let ty = match b.ty.unwrap_or(RawType::F32) {
        RawType::F32 => ElemType::F32,
        RawType::U32 => ElemType::U32,
        RawType::I32 => ElemType::I32,
    };
    if b.len < 1 {
        return Err(doc.err(&at("len"), format!("field `{}` must be a positive number of elements (it is {})", at("len"), b.len)));
    }
    if b.len > MAX_LEN {
        return Err(
            doc.err(&at("len"), format!("field `{}` is {} elements; at most {MAX_LEN} fit in a buffer (4 bytes each)", at("len"), b.len))
        );
    }
    let uniform = b.usage == Some(RawUsage::Uniform);
    let output = b.output.unwrap_or(false);

    let init = match &b.init {
        None => BufferInit::Zeros,
        Some(toml::Value::String(s)) => match s.as_str() {
            "zeros" => BufferInit::Zeros,
            "iota" => BufferInit::Iota,
            "random" => {
                let (lo, hi) = random_range(doc, i, ty, b.range.as_deref())?;
                BufferInit::Random { lo, hi }
            }
            other => {
                return Err(doc.err(
                    &at("init"),
                    format!("field `{}`: unknown init `{other}` (choose zeros, random, iota or a list of values)", at("init")),
                ))
            }
        },
        Some(toml::Value::Array(items)) => BufferInit::Values(init_values(doc, i, ty, items)?),
        Some(other) => {
            return Err(doc.err(&at("init"), format!("field `{}` is a {}; expected {}", at("init"), other.type_str(), hint("buffers.init"))))
        }
    };
    if b.range.is_some() && !matches!(init, BufferInit::Random { .. }) {
        return Err(doc
            .err(&at("range"), format!("field `{}` is given without init = \"random\"; remove it or set init = \"random\"", at("range"))));
    }
    if uniform && matches!(init, BufferInit::Random { .. }) {
        return Err(doc.err(
            &at("init"),
            format!(
                "field `{}`: a uniform buffer takes init zeros, iota or a list of values, not random (or set usage = \"storage\")",
                at("init")
            ),
        ));
    }
    if uniform && output {
        return Err(doc.err(
            &at("output"),
            format!(
                "field `{}`: a uniform buffer cannot be an output, shaders cannot write it; use usage = \"storage\" or drop output",
                at("output")
            ),
        ));
    }
    Ok(UserBuffer { name, binding, ty, len: b.len as u32, uniform, init, output })
}

/// The inclusive-exclusive bounds values of `ty` can take, as f64.
fn type_bounds(ty: ElemType) -> (f64, f64) {
    match ty {
        ElemType::F32 => (-(f32::MAX as f64), f32::MAX as f64),
        ElemType::U32 => (0.0, 4294967296.0),
        ElemType::I32 => (-2147483648.0, 2147483648.0),
    }
}

fn type_name(ty: ElemType) -> &'static str {
    match ty {
        ElemType::F32 => "f32",
        ElemType::U32 => "u32",
        ElemType::I32 => "i32",
    }
}

fn random_range(doc: &Doc<'_>, i: usize, ty: ElemType, range: Option<&[f64]>) -> Result<(f64, f64), ManifestError> {
    let field = format!("buffers[{i}].range");
    let Some(range) = range else {
        return match ty {
            ElemType::F32 => Ok((-1.0, 1.0)),
            _ => Err(doc.err(
                &format!("buffers[{i}].init"),
                format!(
                    "field `buffers[{i}].init` is \"random\" on a {} buffer, which needs a `range` (values are rounded toward zero), e.g. `range = [0, 256]`",
                    type_name(ty)
                ),
            )),
        };
    };
    let &[lo, hi] = range else {
        return Err(doc.err(&field, format!("field `{field}` has {} numbers; expected {}", range.len(), hint("buffers.range"))));
    };
    if !lo.is_finite() || !hi.is_finite() || lo >= hi {
        return Err(doc.err(&field, format!("field `{field}` is [{lo}, {hi}]; expected {}", hint("buffers.range"))));
    }
    let (min, max) = type_bounds(ty);
    if lo < min || hi > max {
        return Err(doc.err(&field, format!("field `{field}` is [{lo}, {hi}], outside what a {} holds ([{min}, {max}])", type_name(ty))));
    }
    Ok((lo, hi))
}

fn init_values(doc: &Doc<'_>, i: usize, ty: ElemType, items: &[toml::Value]) -> Result<Vec<f64>, ManifestError> {
    let field = format!("buffers[{i}].init");
    if items.is_empty() {
        return Err(doc.err(
            &field,
            format!("field `{field}` is an empty list; give at least one value (they repeat to fill the buffer) or use \"zeros\""),
        ));
    }
    let (min, max) = type_bounds(ty);
    let mut values = Vec::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let v = match item {
            toml::Value::Integer(n) => *n as f64,
            toml::Value::Float(x) => *x,
            other => {
                let at = format!("{field}[{j}]");
                return Err(doc.err(&at, format!("field `{at}` is a {}; the list must hold numbers", other.type_str())));
            }
        };
        let fits = match ty {
            // NaN and infinities are allowed in f32 inputs on purpose; finite values must fit.
            ElemType::F32 => !v.is_finite() || (min..=max).contains(&v),
            _ => v.fract() == 0.0 && v >= min && v < max,
        };
        if !fits {
            let at = format!("{field}[{j}]");
            return Err(doc.err(&at, format!("field `{at}` is {v}, which is not a {} value", type_name(ty))));
        }
        values.push(v);
    }
    Ok(values)
}

fn check_buffers_together(doc: &Doc<'_>, buffers: &[UserBuffer]) -> Result<(), ManifestError> {
    if buffers.is_empty() {
        return Err(doc.err("buffers", "field `buffers` is empty: the manifest declares no buffers; add a `[[buffers]]` table for every @binding of the shader and mark the ones it writes `output = true`".into()));
    }
    for (j, b) in buffers.iter().enumerate() {
        if let Some(i) = buffers[..j].iter().position(|a| a.binding == b.binding) {
            return Err(doc.err(
                &format!("buffers[{j}].binding"),
                format!(
                    "field `buffers[{j}].binding` is {}, which `buffers[{i}]` (\"{}\") uses too; each buffer needs its own binding",
                    b.binding, buffers[i].name
                ),
            ));
        }
        if let Some(i) = buffers[..j].iter().position(|a| a.name == b.name) {
            return Err(doc.err(
                &format!("buffers[{j}].name"),
                format!("field `buffers[{j}].name` is \"{}\", which `buffers[{i}]` has too; names must differ", b.name),
            ));
        }
    }
    if !buffers.iter().any(|b| b.output) {
        return Err(doc.err("buffers", "field `buffers`: no buffer has `output = true`; mark at least one buffer that the shader writes, so its contents can be compared".into()));
    }
    Ok(())
}

/// Whether `s` can name a WGSL function, so that a typo in `entry` is caught before the shader is
/// read.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
        && s != "_"
        && !s.starts_with("__")
}
