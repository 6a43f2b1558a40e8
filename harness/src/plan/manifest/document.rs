//! The manifest as a TOML document: its fields as serde reads them, and where each field and
//! value is in the text, so that every error can name the field and line it is about.

use super::ManifestError;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::ops::Range;
use toml::de::{DeTable, DeValue};

/// Fields a manifest may have at its top level.
const TOP_FIELDS: &[&str] = &["name", "wgsl", "entry", "workgroup_size", "workgroups", "threads", "flops", "bytes", "tolerance", "expected", "buffers"];
/// Fields of a `[[buffers]]` table.
const BUFFER_FIELDS: &[&str] = &["name", "binding", "type", "len", "usage", "init", "range", "output"];
/// Fields of `tolerance`.
const TOLERANCE_FIELDS: &[&str] = &["abs", "rel"];

/// The manifest as written; [`super::resolve`] checks and completes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawManifest {
    pub(super) name: Option<String>,
    pub(super) wgsl: String,
    pub(super) entry: Option<String>,
    pub(super) workgroup_size: Dims,
    pub(super) workgroups: Option<Dims>,
    pub(super) threads: Option<Dims>,
    pub(super) flops: Option<f64>,
    pub(super) bytes: Option<f64>,
    pub(super) tolerance: Option<RawTolerance>,
    pub(super) expected: Option<String>,
    #[serde(default)]
    pub(super) buffers: Vec<RawBuffer>,
}

/// `tolerance = { abs = .., rel = .. }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTolerance {
    pub(super) abs: Option<f64>,
    pub(super) rel: Option<f64>,
}

/// One `[[buffers]]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBuffer {
    pub(super) name: Option<String>,
    pub(super) binding: i64,
    #[serde(rename = "type")]
    pub(super) ty: Option<RawType>,
    pub(super) len: i64,
    pub(super) usage: Option<RawUsage>,
    pub(super) init: Option<toml::Value>,
    pub(super) range: Option<Vec<f64>>,
    pub(super) output: Option<bool>,
}

/// `type = ..`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum RawType {
    F32,
    U32,
    I32,
}

/// `usage = ..`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum RawUsage {
    Storage,
    Uniform,
}

/// One to three integers, or a single integer: sizes and counts per axis, unchecked.
#[derive(Debug)]
pub(super) struct Dims(pub(super) Vec<i64>);

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

/// The manifest's text with the place of every key and value, so that errors can name the field
/// and line they are about.
pub(super) struct Doc<'a> {
    pub(super) manifest: &'a str,
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
    pub(super) fn new(manifest: &'a str, text: &'a str, root: &DeTable<'_>) -> Self {
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
    pub(super) fn line_of(&self, path: &str) -> Option<usize> {
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
    pub(super) fn err(&self, field: &str, message: String) -> ManifestError {
        ManifestError::Field { manifest: self.manifest.to_string(), field: field.to_string(), line: self.line_of(field), message }
    }

    /// Rejects keys the format does not know, listing the ones it does.
    pub(super) fn check_known_fields(&self, root: &DeTable<'_>) -> Result<(), ManifestError> {
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
    pub(super) fn serde_error(&self, e: &toml::de::Error) -> ManifestError {
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
pub(super) fn hint(path: &str) -> &'static str {
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
        "expected" => "the path, relative to the manifest, of a JSON array of the expected output values (every output buffer in binding order), e.g. `expected = \"saxpy.expected.json\"`",
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
        .map(|k| (strsim::levenshtein(name, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4) || k.starts_with(name) || name.starts_with(*k))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
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

pub(super) fn syntax_error(manifest: &str, text: &str, e: &toml::de::Error) -> ManifestError {
    let (line, column) = e.span().map(|s| line_column(text, s.start)).unwrap_or((1, 1));
    let mut message = e.message().trim().to_string();
    if message == "duplicate key" {
        if let Some(key) = e.span().and_then(|s| text.get(s)) {
            message = format!("duplicate key `{key}` (each field may be given once)");
        }
    }
    ManifestError::Syntax { manifest: manifest.to_string(), line, column, message }
}
