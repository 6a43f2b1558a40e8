//! Tests of manifest reading and of its checks against the shader.

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
    let toml = BASE.replacen("init = \"random\"", "type = \"i32\"\ninit = \"random\"\nrange = [-5, 5]", 1);
    let k = parse_with(&toml, &SHADER.replacen("array<f32>", "array<i32>", 1).replace("x[id.x]", "f32(x[id.x])")).unwrap();
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
    // Expressions are evaluated, and override constants resolved at their defaults.
    assert!(parse_with(BASE, &SHADER.replace("@workgroup_size(64)", "@workgroup_size(32 * 2)")).is_ok());
    let with_override = |default: &str| {
        SHADER.replace("@workgroup_size(64)", "@workgroup_size(wg, 1)").replace("@compute", &format!("override wg: u32{default};\n    @compute"))
    };
    assert!(parse_with(BASE, &with_override(" = 64")).is_ok());
    assert!(parse_with(BASE, &with_override(" = 16 * 4")).is_ok());
    let text = error_with(BASE, &with_override(" = 32"), "workgroup_size");
    assert!(text.contains("[64, 1, 1] but `fn main` in k.wgsl has @workgroup_size(32) (its override constants at their defaults)"), "{text}");
    let text = error_with(BASE, &with_override(""), "wgsl");
    assert!(text.starts_with("kernel.toml:2: field `wgsl`: `override wg` in k.wgsl has no default value"), "{text}");
    assert!(text.contains("override wg: u32 = 64;"), "{text}");
}

#[test]
fn the_entry_point_must_exist_and_be_compute() {
    let text = error(&format!("entry = \"run\"\n{BASE}"), "entry");
    assert!(text.contains("no `fn run`"), "{text}");
    let commented = SHADER.replace(
        "@compute @workgroup_size(64)\n    fn main",
        "// @compute fn main\n    @compute @workgroup_size(64)\n    fn other",
    );
    let text = error_with(BASE, &commented, "entry");
    assert!(text.contains("k.wgsl has no `fn main`") && text.contains("compute entry points: `other`"), "{text}");
    let text = error_with(&format!("entry = \"helper\"\n{BASE}"), &format!("{SHADER}\nfn helper() {{}}\n"), "entry");
    assert!(text.contains("not marked @compute"), "{text}");
    let vertex = format!("{SHADER}\n@vertex fn draw() -> @builtin(position) vec4<f32> {{ return vec4<f32>(); }}\n");
    let text = error_with(&format!("entry = \"draw\"\n{BASE}"), &vertex, "entry");
    assert!(text.contains("`fn draw` in k.wgsl is a @vertex entry point, not @compute"), "{text}");
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
    assert!(text.contains("var<storage, read> x: array<f32>"), "{text}");
}

#[test]
fn buffers_must_be_bound_and_used_at_group_0() {
    let text = error_with(BASE, &SHADER.replace("@binding(1)", "@binding(5)"), "buffers[1].binding");
    assert!(text.contains("(it binds @binding(0), @binding(2), @binding(5))"), "{text}");
    let text = error_with(BASE, &SHADER.replace("@group(0) @binding(1)", "@group(1) @binding(1)"), "buffers[1].binding");
    assert!(text.contains("declares @binding(1) only in @group(1); harness binds every buffer in @group(0)"), "{text}");
    let text = error_with(BASE, &SHADER.replace("p.x * ", ""), "buffers[2].binding");
    assert!(text.contains("k.wgsl declares @group(0) @binding(2) as `var<uniform> p: vec4<f32>`, but `fn main` does not use it"), "{text}");
}

#[test]
fn every_binding_the_entry_point_uses_needs_a_buffer() {
    let extra = SHADER
        .replace("p.x * x[id.x]", "p.x * x[id.x] + z[0]")
        .replace("@compute", "@group(0) @binding(7) var<storage, read> z: array<f32>;\n    @compute");
    let text = error_with(BASE, &extra, "buffers");
    assert!(text.contains("no buffer at @group(0) @binding(7), which `fn main` in k.wgsl uses as `var<storage, read> z: array<f32>`"), "{text}");
    assert!(text.contains("add a `[[buffers]]` table with `binding = 7`"), "{text}");
    // Declared but unused by the entry point: WebGPU's layout leaves it out, so no buffer is needed.
    let unused = SHADER.replace("@compute", "@group(0) @binding(7) var<storage, read> z: array<f32>;\n    @compute");
    assert!(parse_with(BASE, &unused).is_ok());
}

#[test]
fn usage_must_match_the_address_space() {
    let toml = BASE.replace("usage = \"uniform\"\n", "");
    let text = error(&toml, "buffers[2].usage");
    assert!(text.contains("`buffers[2].usage` is \"storage\" but k.wgsl declares @group(0) @binding(2) as `var<uniform> p: vec4<f32>`"), "{text}");
    assert!(text.contains("set usage = \"uniform\""), "{text}");
}

#[test]
fn outputs_must_be_read_write() {
    let read_only = SHADER
        .replace("var<storage, read_write> y", "var<storage, read> y")
        .replace("y[id.x] = p.x * x[id.x];", "_ = y[id.x] + p.x * x[id.x];");
    let text = error_with(BASE, &read_only, "buffers[1].output");
    assert!(text.starts_with("kernel.toml:14: "), "{text}");
    assert!(text.contains("`buffers[1].output` is true but k.wgsl declares @group(0) @binding(1) as `var<storage, read> y: array<f32>`"), "{text}");
    assert!(text.contains("var<storage, read_write>"), "{text}");
}

/// A kernel whose one buffer, an output at binding 0, is `var<storage, read_write> b: {ty}`
/// (after `prelude`), used by `body`, with `fields` in its `[[buffers]]` table.
fn single(prelude: &str, ty: &str, body: &str, fields: &str) -> Result<UserKernel, ManifestError> {
    let toml = format!("wgsl = \"k.wgsl\"\nworkgroup_size = 64\nworkgroups = 1\n\n[[buffers]]\nbinding = 0\noutput = true\n{fields}\n");
    let wgsl = format!("{prelude}\n@group(0) @binding(0) var<storage, read_write> b: {ty};\n@compute @workgroup_size(64) fn main() {{ {body} }}\n");
    parse_with(&toml, &wgsl)
}

/// The message of `single`'s error, checking that it names `field`.
fn single_error(prelude: &str, ty: &str, body: &str, fields: &str, field: &str) -> String {
    let e = single(prelude, ty, body, fields).expect_err("manifest should be rejected");
    assert_eq!(e.field(), Some(field), "{e}");
    e.to_string()
}

#[test]
fn element_types_reduce_to_a_scalar_that_must_match() {
    let text = single_error("", "array<f32>", "b[0] = 1.0;", "len = 4\ntype = \"u32\"", "buffers[0].type");
    assert!(text.starts_with("kernel.toml:9: "), "{text}");
    assert!(text.contains("`buffers[0].type` is \"u32\" but k.wgsl declares @group(0) @binding(0) as `var<storage, read_write> b: array<f32>`, whose elements are f32; set type = \"f32\""), "{text}");
    let text = single_error("", "array<u32>", "b[0] = 1u;", "len = 4", "buffers[0].type");
    assert!(text.contains("is \"f32\" (the default) but"), "{text}");
    for (ty, body, fields) in [
        ("array<vec4<i32>, 2>", "b[0] = vec4(1);", "len = 8\ntype = \"i32\""),
        ("mat2x2<f32>", "b = mat2x2<f32>();", "len = 4"),
        ("array<atomic<u32>>", "atomicAdd(&b[0], 1u);", "len = 1\ntype = \"u32\""),
        ("i32", "b = 1;", "len = 1\ntype = \"i32\""),
    ] {
        if let Err(e) = single("", ty, body, fields) {
            panic!("{ty}: {e}");
        }
    }
    // Structs: the scalar their members share; one that mixes scalars accepts any of them.
    let same = "struct S { a: vec2<u32>, n: u32 }";
    assert!(single(same, "S", "b.n = b.a.x;", "len = 4\ntype = \"u32\"").is_ok());
    let mixed = "struct P { n: u32, a: f32 }";
    for ty in ["u32", "f32"] {
        assert!(single(mixed, "P", "b.a = f32(b.n);", &format!("len = 2\ntype = \"{ty}\"")).is_ok(), "{ty}");
    }
    let text = single_error(mixed, "P", "b.a = f32(b.n);", "len = 2\ntype = \"i32\"", "buffers[0].type");
    assert!(text.contains("whose elements are u32 and f32; set type = \"u32\""), "{text}");
}

#[test]
fn len_must_fit_the_bindings_type() {
    let fixed = |len: u32| single("", "array<f32, 64>", "b[0] = 1.0;", &format!("len = {len}"));
    assert!(fixed(64).is_ok());
    let text = single_error("", "array<f32, 64>", "b[0] = 1.0;", "len = 63", "buffers[0].len");
    assert!(text.starts_with("kernel.toml:8: "), "{text}");
    assert!(text.contains("`buffers[0].len` is 63 but k.wgsl declares @group(0) @binding(0) as `var<storage, read_write> b: array<f32, 64>`, which needs 64 elements (256 bytes), so WebGPU would reject the bind group; set len = 64"), "{text}");
    let text = single_error("", "array<f32, 64>", "b[0] = 1.0;", "len = 65", "buffers[0].len");
    assert!(text.contains("which holds 64 elements (256 bytes), so the shader cannot reach the other 1; set len = 64"), "{text}");
    // Elements are laid out with the type's stride: a vec3 takes 4.
    let text = single_error("", "array<vec3<f32>, 2>", "b[0] = vec3(1.0);", "len = 6", "buffers[0].len");
    assert!(text.contains("needs 8 elements (32 bytes)"), "{text}");
    // Runtime-sized: at least one element of the array, after the struct's fixed part.
    let tail = "struct S { n: u32, data: array<u32> }";
    assert!(single(tail, "S", "b.data[0] = b.n;", "len = 100\ntype = \"u32\"").is_ok());
    let text = single_error(tail, "S", "b.data[0] = b.n;", "len = 1\ntype = \"u32\"", "buffers[0].len");
    assert!(text.contains("which needs at least 2 elements (8 bytes)"), "{text}");
    // Uniform buffers are padded to 16 bytes, so fewer elements than a vec4 still bind.
    assert!(parse_with(&BASE.replace("len = 4\n", "len = 3\n"), SHADER).is_ok());
    let text = error(&BASE.replace("len = 4\n", "len = 5\n"), "buffers[2].len");
    assert!(text.contains("which holds 4 elements (16 bytes)"), "{text}");
    let text = error_with(BASE, &SHADER.replace("p: vec4<f32>", "p: vec2<f32>"), "buffers[2].len");
    assert!(text.contains("`buffers[2].len` is 4 but") && text.contains("which holds 2 elements (8 bytes)"), "{text}");
}

#[test]
fn wgsl_errors_are_nagas_diagnostics_with_file_line_and_column() {
    let e = parse_with(BASE, &SHADER.replace("x: array<f32>;", "x: array<f32>")).unwrap_err();
    assert!(matches!(e, ManifestError::InvalidWgsl { .. }), "{e:?}");
    assert_eq!(e.field(), Some("wgsl"));
    let text = e.to_string();
    assert!(text.starts_with("kernel.toml:2: the shader of field `wgsl` (k.wgsl) is not valid WGSL"), "{text}");
    assert!(text.contains("error: expected `;`"), "{text}");
    assert!(text.contains("k.wgsl:3:5"), "{text}");
    assert!(text.contains("3 │     @group(0) @binding(1)") && text.contains("^ expected `;`"), "{text}");
    assert!(!text.contains('\u{1b}'), "no colour: {text:?}");
    // Validation errors too: an unknown name, a non-entry function with builtins.
    let text = parse_with(BASE, &SHADER.replace("p.x * x[id.x]", "p.x * x[id.x] + q")).unwrap_err().to_string();
    assert!(text.contains("no definition in scope for identifier: `q`") && text.contains("k.wgsl:8:"), "{text}");
    let text = parse_with(BASE, &SHADER.replace("@compute ", "")).unwrap_err().to_string();
    assert!(text.contains("Function [0] 'main' is invalid") && text.contains("k.wgsl:7:5"), "{text}");
}

#[test]
fn scale_example_names_its_expected_output_and_a_wrong_length_or_format_is_refused() {
    let k = load(&example("scale.toml")).unwrap_or_else(|e| panic!("{e}"));
    let path = k.expected.clone().expect("scale.toml names an expected file");
    assert!(path.ends_with("scale.expected.json"), "{path}");
    let values = expected_values(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!((values.len(), values[0], values[1023]), (1024, 1.0, 2047.0));
    assert_eq!(load(&example("saxpy.toml")).unwrap().expected, None, "saxpy has no independent reference");

    let with_file = |contents: &'static str| {
        let toml = BASE.replace("workgroups = [4]", "workgroups = [4]\nexpected = \"out.json\"");
        parse(&toml, Path::new("kernel.toml"), move |p| match p.to_str() {
            Some("k.wgsl") => Ok(SHADER.to_string()),
            Some("out.json") => Ok(contents.to_string()),
            _ => Err(std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory")),
        })
    };
    let ones = format!("[{}]", vec!["1.0"; 256].join(","));
    let ones: &'static str = Box::leak(ones.into_boxed_str());
    assert_eq!(with_file(ones).unwrap().expected.as_deref(), Some("out.json"));
    for (contents, says) in [("[1.0, 2.0]", "holds 2 values, but the output buffers hold 256"), ("{\"y\": 1}", "not a JSON array of numbers")] {
        let e = with_file(contents).expect_err("refused").to_string();
        assert!(e.contains("`expected`") && e.contains(says), "{e}");
    }
    let e = error(&BASE.replace("workgroups = [4]", "workgroups = [4]\nexpected = \"missing.json\""), "expected");
    assert!(e.contains("cannot read the expected-output file missing.json"), "{e}");
}
