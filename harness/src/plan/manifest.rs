//! Kernel manifests: the small TOML file that describes a user's own WGSL compute shader to
//! `harness run --kernel path/to/kernel.toml`, read and resolved into a [`UserKernel`].
//!
//! A manifest names the WGSL file, its entry point and workgroup size, how many workgroups to
//! dispatch and every buffer the shader binds, with its type, size and initial contents. The
//! buffers marked `output` are read back after one dispatch and compared across browsers and
//! platforms (a user kernel has no reference of its own). Every buffer is re-initialised before the
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
//! tolerance = { abs = 1e-5, rel = 1e-4 }   # optional: how far outputs may differ between
//!                                # platforms; an element passes when
//!                                # |a - b| <= abs + rel * |b|; either part may be left out
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
//! Errors name the manifest file, the offending field (`buffers[1].len`) and, where it can be
//! found, the line, with a hint at what the field should hold. The shader is not compiled here (the
//! browser and native wgpu do that); it is only checked textually, ignoring comments:
//!
//! - `fn <entry>` must exist and carry `@compute`;
//! - a literal `@workgroup_size(x, y, z)` on it must equal `workgroup_size` (sizes written with
//!   override constants or expressions are not compared);
//! - every buffer's binding must appear as `@binding(n)`, and where its `@group(0)` declaration
//!   says `var<uniform>` or `var<storage>`, that must match the buffer's `usage`.

use kernels::check::Tolerance;
use kernels::user::{BufferInit, ElemType, UserBuffer, UserKernel, DEFAULT_TOLERANCE};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::ops::Range;
use std::path::Path;
use toml::de::{DeTable, DeValue};

/// The most workgroups one dispatch may have along each axis (WebGPU's default
/// `maxComputeWorkgroupsPerDimension`).
pub const MAX_WORKGROUPS_PER_AXIS: u32 = 65535;

/// Entry point used when the manifest names none.
pub const DEFAULT_ENTRY: &str = "main";

/// Fields a manifest may have at its top level.
const TOP_FIELDS: &[&str] = &["name", "wgsl", "entry", "workgroup_size", "workgroups", "threads", "flops", "bytes", "tolerance", "buffers"];
/// Fields of a `[[buffers]]` table.
const BUFFER_FIELDS: &[&str] = &["name", "binding", "type", "len", "usage", "init", "range", "output"];
/// Fields of `tolerance`.
const TOLERANCE_FIELDS: &[&str] = &["abs", "rel"];

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
    /// The field at fault (`buffers[1].len`); `wgsl` when the shader cannot be read; none for
    /// an unreadable manifest or a TOML syntax error.
    pub fn field(&self) -> Option<&str> {
        match self {
            ManifestError::Field { field, .. } => Some(field),
            ManifestError::Wgsl { .. } => Some("wgsl"),
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

// ----- Raw manifest, as serde reads it ------------------------------------------------------

/// The manifest as written; [`resolve`] checks and completes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    name: Option<String>,
    wgsl: String,
    entry: Option<String>,
    workgroup_size: Dims,
    workgroups: Option<Dims>,
    threads: Option<Dims>,
    flops: Option<f64>,
    bytes: Option<f64>,
    tolerance: Option<RawTolerance>,
    #[serde(default)]
    buffers: Vec<RawBuffer>,
}

/// `tolerance = { abs = .., rel = .. }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTolerance {
    abs: Option<f64>,
    rel: Option<f64>,
}

/// One `[[buffers]]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBuffer {
    name: Option<String>,
    binding: i64,
    #[serde(rename = "type")]
    ty: Option<RawType>,
    len: i64,
    usage: Option<RawUsage>,
    init: Option<toml::Value>,
    range: Option<Vec<f64>>,
    output: Option<bool>,
}

/// `type = ..`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RawType {
    F32,
    U32,
    I32,
}

/// `usage = ..`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RawUsage {
    Storage,
    Uniform,
}

/// One to three integers, or a single integer: sizes and counts per axis, unchecked.
#[derive(Debug)]
struct Dims(Vec<i64>);

impl<'de> Deserialize<'de> for Dims {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Dims;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a positive integer or a list of 1 to 3 positive integers")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dims, E> {
                Ok(Dims(vec![v]))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dims, E> {
                i64::try_from(v).map(|v| Dims(vec![v])).map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Dims, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = seq.next_element::<i64>()? {
                    v.push(x);
                }
                Ok(Dims(v))
            }
        }
        d.deserialize_any(V)
    }
}

// ----- Locating fields in the document ------------------------------------------------------

/// The manifest's text with the place of every key and value, so that errors can name the field
/// and line they are about.
struct Doc<'a> {
    manifest: &'a str,
    text: &'a str,
    /// Every field and array element: its path, its key's span (none for array elements) and its
    /// value's span. The span of a `[[buffers]]` element is its header.
    nodes: Vec<Node>,
}

struct Node {
    path: String,
    key: Option<Range<usize>>,
    value: Range<usize>,
}

impl<'a> Doc<'a> {
    fn new(manifest: &'a str, text: &'a str, root: &DeTable<'_>) -> Self {
        let mut doc = Doc { manifest, text, nodes: Vec::new() };
        doc.index_table(root, "");
        doc
    }

    fn index_table(&mut self, table: &DeTable<'_>, prefix: &str) {
        for (k, v) in table.iter() {
            let path = if prefix.is_empty() { k.get_ref().to_string() } else { format!("{prefix}.{}", k.get_ref()) };
            self.nodes.push(Node { path: path.clone(), key: Some(k.span()), value: v.span() });
            self.index_value(v.get_ref(), &path);
        }
    }

    fn index_value(&mut self, value: &DeValue<'_>, path: &str) {
        match value {
            DeValue::Table(t) => self.index_table(t, path),
            DeValue::Array(a) => {
                for (i, item) in a.iter().enumerate() {
                    let path = format!("{path}[{i}]");
                    self.nodes.push(Node { path: path.clone(), key: None, value: item.span() });
                    self.index_value(item.get_ref(), &path);
                }
            }
            _ => {}
        }
    }

    /// 1-based line of byte `offset`.
    fn line_at(&self, offset: usize) -> usize {
        line_column(self.text, offset).0
    }

    /// Line of the field at `path`, if the manifest has it.
    fn line_of(&self, path: &str) -> Option<usize> {
        let node = self.nodes.iter().find(|n| n.path == path)?;
        Some(self.line_at(node.key.clone().unwrap_or(node.value.clone()).start))
    }

    /// The field an error's span points at: the value or key with exactly that span, else the
    /// smallest value around it.
    fn path_at(&self, span: &Range<usize>) -> Option<&Node> {
        if let Some(n) = self.nodes.iter().find(|n| &n.value == span || n.key.as_ref() == Some(span)) {
            return Some(n);
        }
        if span.is_empty() {
            return None;
        }
        self.nodes.iter().filter(|n| n.value.start <= span.start && span.end <= n.value.end).min_by_key(|n| n.value.end - n.value.start)
    }

    /// An error about `field`, located at its line where the manifest has it.
    fn err(&self, field: &str, message: String) -> ManifestError {
        ManifestError::Field { manifest: self.manifest.to_string(), field: field.to_string(), line: self.line_of(field), message }
    }

    /// Rejects keys the format does not know, listing the ones it does.
    fn check_known_fields(&self, root: &DeTable<'_>) -> Result<(), ManifestError> {
        self.known_in(root, "", TOP_FIELDS)?;
        if let Some(t) = root.get("tolerance").and_then(|v| v.get_ref().as_table()) {
            self.known_in(t, "tolerance.", TOLERANCE_FIELDS)?;
        }
        if let Some(a) = root.get("buffers").and_then(|v| v.get_ref().as_array()) {
            for (i, item) in a.iter().enumerate() {
                if let Some(t) = item.get_ref().as_table() {
                    self.known_in(t, &format!("buffers[{i}]."), BUFFER_FIELDS)?;
                }
            }
        }
        Ok(())
    }

    fn known_in(&self, table: &DeTable<'_>, prefix: &str, known: &[&str]) -> Result<(), ManifestError> {
        // Report the first unknown key in the file, not in the map's order.
        let unknown = table.iter().filter(|(k, _)| !known.contains(&k.get_ref().as_ref())).min_by_key(|(k, _)| k.span().start);
        let Some((key, _)) = unknown else { return Ok(()) };
        let name: &str = key.get_ref();
        let field = format!("{prefix}{name}");
        let mut message = format!("unknown field `{field}` (known: {})", known.join(", "));
        if let Some(close) = closest(name, known) {
            message.push_str(&format!("; did you mean `{prefix}{close}`?"));
        }
        Err(ManifestError::Field { manifest: self.manifest.to_string(), field, line: Some(self.line_at(key.span().start)), message })
    }

    /// A serde error (wrong type, missing field) as a message naming the field and its line.
    fn serde_error(&self, e: &toml::de::Error) -> ManifestError {
        let msg = e.message();
        let node = e.span().and_then(|s| self.path_at(&s));
        let line = e.span().map(|s| self.line_at(s.start));
        let here = node.map(|n| n.path.as_str()).unwrap_or("");
        if let Some(missing) = backticked(msg, "missing field `") {
            let field = if here.is_empty() { missing.to_string() } else { format!("{here}.{missing}") };
            let message = format!("missing field `{field}` ({})", hint(&field));
            let line = if here.is_empty() { None } else { line };
            return ManifestError::Field { manifest: self.manifest.to_string(), field, line, message };
        }
        if let Some(unknown) = backticked(msg, "unknown field `") {
            // Normally caught by `check_known_fields` first.
            let field = match here.rsplit_once('.') {
                Some((parent, _)) => format!("{parent}.{unknown}"),
                None => unknown.to_string(),
            };
            let message = format!("unknown field `{field}`: {msg}");
            return ManifestError::Field { manifest: self.manifest.to_string(), field, line, message };
        }
        let field = if here.is_empty() { "(manifest)".to_string() } else { here.to_string() };
        let what = msg
            .strip_prefix("invalid type: ")
            .or_else(|| msg.strip_prefix("invalid value: "))
            .map(|m| m.split(", expected").next().unwrap_or(m).to_string())
            .or_else(|| backticked(msg, "unknown variant `").map(|v| format!("\"{v}\"")));
        let message = match what {
            Some(what) => format!("field `{field}` is {what}; expected {}", hint(&field)),
            None => format!("field `{field}`: {msg}; expected {}", hint(&field)),
        };
        ManifestError::Field { manifest: self.manifest.to_string(), field, line, message }
    }
}

/// The text between `prefix` (which ends in a backtick) and the next backtick.
fn backticked<'m>(msg: &'m str, prefix: &str) -> Option<&'m str> {
    msg.strip_prefix(prefix)?.split('`').next()
}

/// What a field should hold, for messages; `path` may have indices (`buffers[1].len`).
fn hint(path: &str) -> &'static str {
    let mut generic = String::new();
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        if c == '[' {
            for c in chars.by_ref() {
                if c == ']' {
                    break;
                }
            }
        } else {
            generic.push(c);
        }
    }
    match generic.as_str() {
        "name" => "a string, e.g. `name = \"saxpy\"`",
        "wgsl" => "the WGSL file's path, relative to the manifest, e.g. `wgsl = \"saxpy.wgsl\"`",
        "entry" => "the entry point's function name, e.g. `entry = \"main\"`",
        "workgroup_size" => "1 to 3 positive integers equal to the shader's @workgroup_size, e.g. `workgroup_size = [64, 1, 1]`",
        "workgroups" => "1 to 3 positive integers, the workgroups to dispatch, e.g. `workgroups = [16, 1, 1]`",
        "threads" => "1 to 3 positive integers, the invocations wanted, e.g. `threads = [1024, 1, 1]`",
        "flops" => "a non-negative number of floating-point operations per dispatch, e.g. `flops = 2048`",
        "bytes" => "a non-negative number of bytes moved per dispatch, e.g. `bytes = 12288`",
        "tolerance" => "a table such as `tolerance = { abs = 1e-5, rel = 1e-4 }`",
        "tolerance.abs" | "tolerance.rel" => "a non-negative number, e.g. `tolerance = { abs = 1e-5, rel = 1e-4 }`",
        "buffers" => "one `[[buffers]]` table per buffer the shader binds",
        "buffers.name" => "a string, e.g. `name = \"x\"`",
        "buffers.binding" => "the buffer's n in `@group(0) @binding(n)`, e.g. `binding = 0`",
        "buffers.type" => "\"f32\", \"u32\" or \"i32\"",
        "buffers.len" => "a positive number of elements, e.g. `len = 1024`",
        "buffers.usage" => "\"storage\" or \"uniform\"",
        "buffers.init" => "\"zeros\", \"random\", \"iota\" or a list of values such as [1.0, 2.0]",
        "buffers.range" => "two numbers lo < hi, e.g. `range = [-1.0, 1.0]`",
        "buffers.output" => "true or false",
        _ => "see the manifest format in the documentation",
    }
}

/// The known name nearest `name`, if it is a plausible typo of it.
fn closest<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .map(|k| (edit_distance(name, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4) || k.starts_with(name) || name.starts_with(*k))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// 1-based line and column (in characters) of byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

fn syntax_error(manifest: &str, text: &str, e: &toml::de::Error) -> ManifestError {
    let (line, column) = e.span().map(|s| line_column(text, s.start)).unwrap_or((1, 1));
    let mut message = e.message().trim().to_string();
    if message == "duplicate key" {
        if let Some(key) = e.span().and_then(|s| text.get(s)) {
            message = format!("duplicate key `{key}` (each field may be given once)");
        }
    }
    ManifestError::Syntax { manifest: manifest.to_string(), line, column, message }
}

// ----- Resolution ---------------------------------------------------------------------------

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
    check_wgsl(doc, &wgsl, &raw.wgsl, &entry, workgroup_size, &buffers)?;

    Ok(UserKernel { name, manifest: doc.manifest.to_string(), wgsl, entry, workgroup_size, workgroups, buffers, flops, bytes, tolerance })
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

// ----- Light WGSL checks --------------------------------------------------------------------

fn check_wgsl(
    doc: &Doc<'_>,
    source: &str,
    file: &str,
    entry: &str,
    workgroup_size: [u32; 3],
    buffers: &[UserBuffer],
) -> Result<(), ManifestError> {
    let tokens = tokenize(source);
    let is = |i: usize, t: &Tok| tokens.get(i) == Some(t);

    // The entry point: `fn <entry> (`.
    let fn_at =
        (0..tokens.len()).find(|&i| is(i, &Tok::Ident("fn".into())) && is(i + 1, &Tok::Ident(entry.into())) && is(i + 2, &Tok::Punct('(')));
    let Some(fn_at) = fn_at else {
        return Err(doc.err(
            "entry",
            format!("{file} has no `fn {entry}`; field `entry` names the compute entry point (default \"{DEFAULT_ENTRY}\")"),
        ));
    };
    let attributes = attributes_before(&tokens, fn_at);
    if !attributes.iter().any(|a| a.name == "compute") {
        return Err(
            doc.err("entry", format!("`fn {entry}` in {file} is not marked @compute; field `entry` must name a compute entry point"))
        );
    }
    if let Some(size) = attributes.iter().find(|a| a.name == "workgroup_size") {
        let args = split_args(&size.args);
        let literal: Option<Vec<u64>> = args.iter().map(|a| single_int(a)).collect();
        if let Some(values) = literal.filter(|v| (1..=3).contains(&v.len())) {
            let mut shader = [1u64; 3];
            shader[..values.len()].copy_from_slice(&values);
            if shader != workgroup_size.map(u64::from) {
                let written = values.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
                return Err(doc.err(
                    "workgroup_size",
                    format!(
                        "field `workgroup_size` is {workgroup_size:?} but `fn {entry}` in {file} has @workgroup_size({written}); make them equal"
                    ),
                ));
            }
        }
    }

    // Bindings, with the address space of their @group(0) declarations.
    let mut declared: Vec<(Option<u64>, u64, Option<String>)> = Vec::new();
    for i in 0..tokens.len() {
        let Tok::Punct('@') = tokens[i] else { continue };
        if !is(i + 1, &Tok::Ident("binding".into())) || !is(i + 2, &Tok::Punct('(')) {
            continue;
        }
        let Some(n) = tokens.get(i + 3).and_then(int_token) else { continue };
        let close = if is(i + 4, &Tok::Punct(',')) { i + 5 } else { i + 4 };
        if !is(close, &Tok::Punct(')')) {
            continue;
        }
        declared.push((None, n, None));
    }
    for i in 0..tokens.len() {
        if tokens[i] != Tok::Ident("var".into()) {
            continue;
        }
        let attrs = attributes_before(&tokens, i);
        let arg = |name: &str| attrs.iter().find(|a| a.name == name).and_then(|a| single_int(&a.args));
        let (Some(group), Some(binding)) = (arg("group"), arg("binding")) else { continue };
        let space = match (tokens.get(i + 1), tokens.get(i + 2)) {
            (Some(Tok::Punct('<')), Some(Tok::Ident(s))) => Some(s.clone()),
            _ => None,
        };
        declared.push((Some(group), binding, space));
    }
    for (i, b) in buffers.iter().enumerate() {
        let field = format!("buffers[{i}].binding");
        if !declared.iter().any(|d| d.1 == b.binding as u64) {
            return Err(doc.err(
                &field,
                format!(
                    "field `{field}` is {} but {file} has no @binding({}); bind the buffer at @group(0) @binding({}) or fix the number",
                    b.binding, b.binding, b.binding
                ),
            ));
        }
        let spaces: Vec<&str> =
            declared.iter().filter(|d| d.0 == Some(0) && d.1 == b.binding as u64).filter_map(|d| d.2.as_deref()).collect();
        if let [space] = spaces[..] {
            let wanted = if b.uniform { "uniform" } else { "storage" };
            if (space == "uniform" || space == "storage") && space != wanted {
                let usage = format!("buffers[{i}].usage");
                return Err(doc.err(
                    &usage,
                    format!(
                        "field `{usage}` is \"{wanted}\" but {file} declares @group(0) @binding({}) as var<{space}>; make them agree",
                        b.binding
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A WGSL token, as far as these checks need: comments are dropped, numbers kept as written.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Number(String),
    Punct(char),
}

fn tokenize(src: &str) -> Vec<Tok> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Block comments nest in WGSL.
            let mut depth = 0usize;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit() || (c == '.' && next.is_some_and(|n| n.is_ascii_digit())) {
            let start = i;
            let hex = c == '0' && matches!(next, Some('x' | 'X'));
            while i < chars.len() {
                let d = chars[i];
                let sign_ok = matches!(d, '+' | '-')
                    && i > start
                    && if hex { matches!(chars[i - 1], 'p' | 'P') } else { matches!(chars[i - 1], 'e' | 'E') };
                if d.is_alphanumeric() || d == '_' || d == '.' || sign_ok {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push(Tok::Number(chars[start..i].iter().collect()));
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
    }
    out
}

/// An integer literal such as `64`, `64u`, `0x40`, `64i`.
fn int_token(t: &Tok) -> Option<u64> {
    let Tok::Number(s) = t else { return None };
    let s = s.strip_suffix(['u', 'i']).unwrap_or(s);
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The value of an attribute argument that is one integer literal.
fn single_int(tokens: &[Tok]) -> Option<u64> {
    match tokens {
        [t] | [t, Tok::Punct(',')] => int_token(t),
        _ => None,
    }
}

/// `@name(args)`, with the argument tokens between the parentheses.
struct Attribute {
    name: String,
    args: Vec<Tok>,
}

/// The attributes written right before token `at` (`@compute @workgroup_size(64) fn ...`),
/// scanning backwards.
fn attributes_before(tokens: &[Tok], at: usize) -> Vec<Attribute> {
    let mut out = Vec::new();
    let mut end = at; // exclusive
    loop {
        let (name_at, args) = if end >= 1 && tokens[end - 1] == Tok::Punct(')') {
            // Find the matching '('.
            let mut depth = 0usize;
            let mut open = None;
            for j in (0..end).rev() {
                match tokens[j] {
                    Tok::Punct(')') => depth += 1,
                    Tok::Punct('(') => {
                        depth -= 1;
                        if depth == 0 {
                            open = Some(j);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let Some(open) = open else { break };
            if open == 0 {
                break;
            }
            (open - 1, tokens[open + 1..end - 1].to_vec())
        } else if end >= 1 {
            (end - 1, Vec::new())
        } else {
            break;
        };
        match (name_at.checked_sub(1).map(|a| &tokens[a]), &tokens[name_at]) {
            (Some(Tok::Punct('@')), Tok::Ident(name)) => {
                out.push(Attribute { name: name.clone(), args });
                end = name_at - 1;
            }
            _ => break,
        }
    }
    out
}

/// Splits attribute arguments at top-level commas, dropping a trailing empty one.
fn split_args(tokens: &[Tok]) -> Vec<Vec<Tok>> {
    let mut args = vec![Vec::new()];
    let mut depth = 0i32;
    for t in tokens {
        match t {
            Tok::Punct('(' | '[' | '<') => depth += 1,
            Tok::Punct(')' | ']' | '>') => depth -= 1,
            Tok::Punct(',') if depth == 0 => {
                args.push(Vec::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = args.last_mut() {
            last.push(t.clone());
        }
    }
    if args.last().is_some_and(|a| a.is_empty()) {
        args.pop();
    }
    args
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
        && s != "_"
        && !s.starts_with("__")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// The examples shipped in `examples/kernels/`.
    fn example(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/kernels").join(name)
    }

    const SHADER: &str = "
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<storage, read_write> y: array<f32>;
        @group(0) @binding(2) var<uniform> p: vec4<f32>;
        // fn main() is below; this comment must not count.
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            if (id.x < arrayLength(&y)) { y[id.x] = p.x * x[id.x]; }
        }
    ";

    const BASE: &str = r#"
wgsl = "k.wgsl"
workgroup_size = [64]
workgroups = [4]

[[buffers]]
binding = 0
len = 256
init = "random"

[[buffers]]
binding = 1
len = 256
output = true

[[buffers]]
binding = 2
usage = "uniform"
len = 4
init = [2.0, 0, 0, 0]
"#;

    fn parse_with(toml: &str, wgsl: &str) -> Result<UserKernel, ManifestError> {
        let wgsl = wgsl.to_string();
        parse(toml, Path::new("kernel.toml"), move |p| {
            if p == Path::new("k.wgsl") {
                Ok(wgsl.clone())
            } else {
                Err(std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory"))
            }
        })
    }

    /// The error `toml` (with the standard shader) gives, checking that it names the manifest
    /// and `field`, and returning its text.
    fn error(toml: &str, field: &str) -> String {
        error_with(toml, SHADER, field)
    }

    fn error_with(toml: &str, wgsl: &str, field: &str) -> String {
        let e = parse_with(toml, wgsl).expect_err("manifest should be rejected");
        let text = e.to_string();
        assert!(text.starts_with("kernel.toml"), "no manifest in: {text}");
        assert!(text.contains(&format!("`{field}`")), "field `{field}` not named in: {text}");
        assert_eq!(e.field(), Some(field), "{text}");
        text
    }

    #[test]
    fn base_manifest_resolves_with_defaults() {
        let k = parse_with(BASE, SHADER).unwrap();
        assert_eq!(k.name, "kernel");
        assert_eq!(k.manifest, "kernel.toml");
        assert_eq!(k.entry, "main");
        assert_eq!(k.wgsl, SHADER);
        assert_eq!(k.workgroup_size, [64, 1, 1]);
        assert_eq!(k.workgroups, [4, 1, 1]);
        assert_eq!(k.tolerance, DEFAULT_TOLERANCE);
        assert_eq!((k.flops, k.bytes), (None, None));
        let b = &k.buffers;
        assert_eq!(b.len(), 3);
        assert_eq!((b[0].name.as_str(), b[0].ty, b[0].uniform, b[0].output), ("buffer0", ElemType::F32, false, false));
        assert_eq!(b[0].init, BufferInit::Random { lo: -1.0, hi: 1.0 });
        assert_eq!(b[1].init, BufferInit::Zeros);
        assert!(b[1].output);
        assert!(b[2].uniform);
        assert_eq!(b[2].init, BufferInit::Values(vec![2.0, 0.0, 0.0, 0.0]));
    }

    #[test]
    fn saxpy_example_loads() {
        let path = example("saxpy.toml");
        let k = load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(k.name, "saxpy");
        assert_eq!(k.manifest, path.display().to_string());
        assert!(k.wgsl.contains("fn main"));
        assert_eq!(k.workgroup_size, [256, 1, 1]);
        assert_eq!(k.workgroups, [256, 1, 1]);
        assert_eq!(k.flops, Some(131072.0));
        assert_eq!(k.bytes, None);
        let names: Vec<&str> = k.buffers.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["params", "x", "y", "out"]);
        assert_eq!(k.buffers.iter().map(|b| b.binding).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert!(k.buffers[0].uniform);
        assert_eq!(k.buffers[0].init, BufferInit::Values(vec![2.0, 0.0, 0.0, 0.0]));
        assert_eq!(k.buffers[1].init, BufferInit::Random { lo: -1.0, hi: 1.0 });
        assert_eq!(k.buffers[2].init, BufferInit::Random { lo: -10.0, hi: 10.0 });
        assert_eq!(k.buffers[3].init, BufferInit::Zeros);
        assert_eq!(k.buffers.iter().filter(|b| b.output).count(), 1);
        assert!(k.buffers[3].output);
        assert_eq!(k.output_len(), 65536);
    }

    #[test]
    fn histogram_example_loads() {
        let k = load(&example("histogram.toml")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(k.name, "histogram");
        assert_eq!(k.workgroup_size, [256, 1, 1]);
        assert_eq!(k.workgroups, [256, 1, 1]);
        assert_eq!(k.bytes, Some(263168.0));
        assert_eq!(k.tolerance, Tolerance { abs: 0.0, rel: 0.0 });
        let [data, bins] = &k.buffers[..] else { panic!("two buffers expected") };
        assert_eq!((data.ty, data.len, data.output), (ElemType::U32, 65536, false));
        assert_eq!(data.init, BufferInit::Random { lo: 0.0, hi: 256.0 });
        assert_eq!((bins.ty, bins.len, bins.output), (ElemType::U32, 256, true));
        assert_eq!(bins.init, BufferInit::Zeros);
        // Random u32 values in [0, 256) land in 0..=255.
        let program = k.program(7);
        let kernels::program::Init::Bytes(bytes) = &program.buffers[0].init else { panic!("bytes expected") };
        assert!(bytes.chunks_exact(4).all(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) < 256));
    }

    #[test]
    fn threads_round_up_to_workgroups_per_axis() {
        let toml = BASE.replace("workgroup_size = [64]", "workgroup_size = [8, 8]").replace("workgroups = [4]", "threads = [100, 9, 3]");
        let k = parse_with(&toml, &SHADER.replace("@workgroup_size(64)", "@workgroup_size(8u, 8 ,)")).unwrap();
        assert_eq!(k.workgroup_size, [8, 8, 1]);
        assert_eq!(k.workgroups, [13, 2, 3]);
        // A single number is a list of one.
        let k = parse_with(&BASE.replace("workgroups = [4]", "workgroups = 4"), SHADER).unwrap();
        assert_eq!(k.workgroups, [4, 1, 1]);
    }

    #[test]
    fn name_defaults_to_the_file_stem_and_wgsl_is_relative_to_the_manifest() {
        let k = parse(BASE, Path::new("dir/sub/my_kernel.toml"), |p| {
            assert_eq!(p, Path::new("dir/sub/k.wgsl"));
            Ok(SHADER.to_string())
        })
        .unwrap();
        assert_eq!(k.name, "my_kernel");
        assert_eq!(k.manifest, "dir/sub/my_kernel.toml");
    }

    #[test]
    fn missing_workgroup_size_is_named() {
        let text = error(&BASE.replace("workgroup_size = [64]", ""), "workgroup_size");
        assert!(text.starts_with("kernel.toml: missing field `workgroup_size`"), "{text}");
    }

    #[test]
    fn missing_buffer_field_names_the_buffer() {
        let toml = BASE.replacen("binding = 1\nlen = 256", "binding = 1", 1);
        let text = error(&toml, "buffers[1].len");
        assert!(text.contains("missing field `buffers[1].len`"), "{text}");
        assert!(text.starts_with("kernel.toml:11:"), "line of the [[buffers]] header: {text}");
    }

    #[test]
    fn unknown_fields_are_listed_with_the_known_ones() {
        let text = error(&format!("workgroup = [64]\n{BASE}"), "workgroup");
        assert!(text.contains("unknown field `workgroup` (known: name, wgsl, entry, workgroup_size"), "{text}");
        assert!(text.contains("did you mean `workgroups`"), "{text}");
        assert!(text.starts_with("kernel.toml:1:"), "{text}");
        let text = error(&BASE.replace("len = 256\ninit", "lenght = 256\nlen = 256\ninit"), "buffers[0].lenght");
        assert!(text.contains("did you mean `buffers[0].len`"), "{text}");
        error(&format!("tolerance = {{ abs = 1e-3, relative = 1e-2 }}\n{BASE}"), "tolerance.relative");
    }

    #[test]
    fn zero_or_negative_len_is_rejected() {
        let toml = BASE.replacen("binding = 1\nlen = 256", "binding = 1\nlen = 0", 1);
        let text = error(&toml, "buffers[1].len");
        assert!(text.contains("field `buffers[1].len` must be a positive number of elements"), "{text}");
        assert!(text.starts_with("kernel.toml:13: "), "{text}");
        error(&BASE.replacen("len = 256", "len = -3", 1), "buffers[0].len");
    }

    #[test]
    fn wrong_types_name_the_field_and_line() {
        let text = error(&BASE.replacen("len = 256", "len = \"many\"", 1), "buffers[0].len");
        assert!(text.starts_with("kernel.toml:8: field `buffers[0].len` is string \"many\"; expected a positive number"), "{text}");
        let text = error(&BASE.replace("workgroup_size = [64]", "workgroup_size = [64, \"a\"]"), "workgroup_size[1]");
        assert!(text.contains("1 to 3 positive integers"), "{text}");
        let text = error(&BASE.replacen("binding = 0", "binding = 0\ntype = \"f64\"", 1), "buffers[0].type");
        assert!(text.contains("\"f32\", \"u32\" or \"i32\""), "{text}");
        error(&BASE.replacen("binding = 0", "binding = 0\nusage = \"read\"", 1), "buffers[0].usage");
        error(&format!("flops = \"lots\"\n{BASE}"), "flops");
        error(&format!("flops = -1\n{BASE}"), "flops");
        error(&format!("tolerance = {{ abs = -1 }}\n{BASE}"), "tolerance.abs");
        let text = error("wgsl = \"k.wgsl\"\nworkgroup_size = 64\nworkgroups = 1\n[buffers]\nbinding = 0\nlen = 4\n", "buffers");
        assert!(text.contains("[[buffers]]"), "{text}");
    }

    #[test]
    fn workgroups_and_threads_are_exclusive_and_one_is_needed() {
        let text = error(&BASE.replace("workgroups = [4]", "workgroups = [4]\nthreads = [256]"), "threads");
        assert!(text.contains("`workgroups` and `threads` are both given; keep one"), "{text}");
        let text = error(&BASE.replace("workgroups = [4]", ""), "workgroups");
        assert!(text.contains("`workgroups` or `threads`"), "{text}");
        error(&BASE.replace("workgroups = [4]", "workgroups = [4, 0]"), "workgroups");
        error(&BASE.replace("workgroups = [4]", "workgroups = [1, 1, 1, 1]"), "workgroups");
        error(&BASE.replace("workgroups = [4]", "workgroups = []"), "workgroups");
    }

    #[test]
    fn workgroup_counts_above_the_limit_are_rejected() {
        let text = error(&BASE.replace("workgroups = [4]", "workgroups = [65536]"), "workgroups");
        assert!(text.contains("65535"), "{text}");
        let text = error(&BASE.replace("workgroups = [4]", "threads = [1, 65536]"), "threads");
        assert!(text.contains("65536 workgroups along y"), "{text}");
        assert!(parse_with(&BASE.replace("workgroups = [4]", "threads = [4194240]"), SHADER).is_ok());
        error(&BASE.replace("workgroups = [4]", "threads = [4194241]"), "threads");
    }

    #[test]
    fn unreadable_wgsl_says_paths_are_relative() {
        let e = parse_with(&BASE.replace("k.wgsl", "x.wgsl"), SHADER).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("kernel.toml: wgsl file `x.wgsl` cannot be read: No such file or directory"), "{text}");
        assert!(text.contains("paths are relative to the manifest"), "{text}");
        assert_eq!(e.field(), Some("wgsl"));
        assert!(matches!(load(Path::new("/nonexistent/kernel.toml")), Err(ManifestError::Read { .. })));
    }

    #[test]
    fn toml_syntax_errors_have_line_and_column() {
        let e = parse_with(&BASE.replace("workgroups = [4]", "workgroups = 4 4"), SHADER).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, ManifestError::Syntax { line: 4, .. }), "{text}");
        assert!(text.starts_with("kernel.toml:4:") && text.contains("TOML syntax error"), "{text}");
        let text = parse_with(&format!("wgsl = \"a\"\n{BASE}"), SHADER).unwrap_err().to_string();
        assert!(text.contains("duplicate key `wgsl`"), "{text}");
    }

    #[test]
    fn init_must_be_known() {
        let text = error(&BASE.replacen("init = \"random\"", "init = \"ones\"", 1), "buffers[0].init");
        assert!(text.contains("`buffers[0].init`: unknown init `ones` (choose zeros, random, iota or a list of values)"), "{text}");
        error(&BASE.replacen("init = \"random\"", "init = true", 1), "buffers[0].init");
        error(&BASE.replacen("init = \"random\"", "init = []", 1), "buffers[0].init");
        let text = error(&BASE.replacen("init = \"random\"", "init = [1, \"two\"]", 1), "buffers[0].init[1]");
        assert!(text.starts_with("kernel.toml:9: "), "{text}");
        let text = error(&BASE.replacen("init = \"random\"", "type = \"u32\"\ninit = [1, -2]", 1), "buffers[0].init[1]");
        assert!(text.contains("not a u32 value"), "{text}");
        error(&BASE.replacen("init = \"random\"", "type = \"i32\"\ninit = [1.5]", 1), "buffers[0].init[0]");
        error(&BASE.replacen("init = \"random\"", "init = [1e39]", 1), "buffers[0].init[0]");
    }

    #[test]
    fn random_integers_need_a_range_in_the_types_bounds() {
        let text = error(&BASE.replacen("init = \"random\"", "type = \"u32\"\ninit = \"random\"", 1), "buffers[0].init");
        assert!(text.contains("range"), "{text}");
        error(&BASE.replacen("init = \"random\"", "type = \"u32\"\ninit = \"random\"\nrange = [-1, 5]", 1), "buffers[0].range");
        let k = parse_with(&BASE.replacen("init = \"random\"", "type = \"i32\"\ninit = \"random\"\nrange = [-5, 5]", 1), SHADER).unwrap();
        assert_eq!(k.buffers[0].init, BufferInit::Random { lo: -5.0, hi: 5.0 });
    }

    #[test]
    fn range_needs_random_and_lo_below_hi() {
        let text = error(&BASE.replacen("output = true", "output = true\nrange = [0, 1]", 1), "buffers[1].range");
        assert!(text.contains("without init = \"random\""), "{text}");
        let text = error(&BASE.replacen("init = \"random\"", "init = \"random\"\nrange = [1, 1]", 1), "buffers[0].range");
        assert!(text.contains("lo < hi"), "{text}");
        error(&BASE.replacen("init = \"random\"", "init = \"random\"\nrange = [1, 2, 3]", 1), "buffers[0].range");
        error(&BASE.replacen("init = \"random\"", "init = \"random\"\nrange = [0, inf]", 1), "buffers[0].range");
    }

    #[test]
    fn uniform_buffers_are_neither_random_nor_outputs() {
        let text = error(&BASE.replace("init = [2.0, 0, 0, 0]", "init = \"random\""), "buffers[2].init");
        assert!(text.contains("uniform buffer takes init zeros, iota or a list of values"), "{text}");
        let text = error(&BASE.replace("init = [2.0, 0, 0, 0]", "output = true"), "buffers[2].output");
        assert!(text.contains("cannot be an output"), "{text}");
    }

    #[test]
    fn bindings_and_names_must_be_unique() {
        let text = error(&BASE.replacen("binding = 1", "binding = 0", 1), "buffers[1].binding");
        assert!(text.contains("`buffers[0]`"), "{text}");
        let toml = BASE.replacen("binding = 0", "name = \"a\"\nbinding = 0", 1).replacen("binding = 1", "name = \"a\"\nbinding = 1", 1);
        error(&toml, "buffers[1].name");
        error(&BASE.replacen("binding = 0", "binding = -1", 1), "buffers[0].binding");
    }

    #[test]
    fn at_least_one_output_is_needed() {
        let text = error(&BASE.replace("output = true", ""), "buffers");
        assert!(text.contains("output = true"), "{text}");
        error("wgsl = \"k.wgsl\"\nworkgroup_size = 64\nworkgroups = 1\n", "buffers");
    }

    #[test]
    fn workgroup_size_must_match_the_shader() {
        let text = error_with(BASE, &SHADER.replace("@workgroup_size(64)", "@workgroup_size(128, 2)"), "workgroup_size");
        assert!(text.contains("@workgroup_size(128, 2)"), "{text}");
        assert!(text.starts_with("kernel.toml:3: "), "{text}");
        // Hex and suffixes are literals too.
        assert!(parse_with(BASE, &SHADER.replace("@workgroup_size(64)", "@workgroup_size( 0x40u , 1u )")).is_ok());
        // Override constants and expressions are not compared.
        let shader = SHADER.replace("@workgroup_size(64)", "@workgroup_size(wg)").replace("@compute", "override wg: u32 = 32;\n@compute");
        assert!(parse_with(BASE, &shader).is_ok());
        assert!(parse_with(BASE, &SHADER.replace("@workgroup_size(64)", "@workgroup_size(32 * 2)")).is_ok());
    }

    #[test]
    fn the_entry_point_must_exist_and_be_compute() {
        let text = error(&format!("entry = \"run\"\n{BASE}"), "entry");
        assert!(text.contains("no `fn run`"), "{text}");
        let commented = SHADER.replace(
            "@compute @workgroup_size(64)\n        fn main",
            "// @compute fn main\n        @compute @workgroup_size(64)\n        fn other",
        );
        error_with(BASE, &commented, "entry");
        let text = error_with(BASE, &SHADER.replace("@compute ", ""), "entry");
        assert!(text.contains("not marked @compute"), "{text}");
        error(&format!("entry = \"not valid\"\n{BASE}"), "entry");
    }

    #[test]
    fn every_binding_must_be_in_the_shader_with_the_right_usage() {
        let text = error_with(BASE, &SHADER.replace("@binding(1)", "@binding(5)"), "buffers[1].binding");
        assert!(text.contains("no @binding(1)"), "{text}");
        let text = error(
            &BASE.replacen("binding = 0", "binding = 0\nusage = \"uniform\"", 1).replacen("init = \"random\"", "", 1),
            "buffers[0].usage",
        );
        assert!(text.contains("var<storage>"), "{text}");
    }

    #[test]
    fn wgsl_tokens_skip_comments() {
        let toks = tokenize("a /* b /* nested */ c */ d // e\n f 1.5e-3 0x1fu");
        let idents: Vec<Tok> = ["a", "d", "f"].iter().map(|s| Tok::Ident(s.to_string())).collect();
        assert_eq!(&toks[..3], &idents[..]);
        assert_eq!(toks[3], Tok::Number("1.5e-3".into()));
        assert_eq!(int_token(&toks[4]), Some(31));
    }
}
