//! Inside a crate, modules form layers: plain types at the bottom, algorithms above, registries
//! and catalogues on top, and nothing below imports from above. So at every level of each crate's
//! module tree the sibling modules (a file `a.rs` or a folder `a/`, with everything under it) must
//! form a DAG, where `a -> b` when code in `a` names `b` through a `crate::…` path, or a `super::…`
//! or `self::…` path that leads to a sibling. A name that a module re-exports counts as the module
//! that defines it; a child naming its parent's own items is no edge between siblings.

use proc_macro2::{Spacing, TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use syn::visit::{self, Visit};

/// The crates checked, by folder under the workspace root: one test each, and the list must name
/// every workspace member (`every_workspace_member_is_checked`).
macro_rules! checked_crates {
    ($($krate:ident),* $(,)?) => {
        // A folder's `-` is `_` in the test's name.
        const CRATES: &[&str] = &[$(folder(stringify!($krate))),*];

        mod each_crate {
            $(
                #[test]
                fn $krate() {
                    super::assert_layered(super::folder(stringify!($krate)));
                }
            )*
        }
    };
}

checked_crates!(kernels, stats, reports, history, page, harness, harness_bench);

/// The crate's folder, from the name of its test.
const fn folder(test: &str) -> &str {
    match test.as_bytes() {
        b"harness_bench" => "harness-bench",
        _ => test,
    }
}

/// A module's path from its crate root, such as `["model", "graph"]`; the root's is empty.
type ModPath = Vec<String>;

/// What a module declares, to follow names through its re-exports.
#[derive(Default)]
struct Module {
    /// Names of the items it defines itself.
    items: BTreeSet<String>,
    /// Names its `use` declarations bind, with the absolute path each names (`None`: another
    /// crate's).
    imports: BTreeMap<String, Option<Vec<String>>>,
    /// The absolute paths of its glob imports.
    globs: Vec<Vec<String>>,
}

/// A crate-internal path written in code, made absolute, and where it was written.
struct Reference {
    from: ModPath,
    to: Vec<String>,
    file: PathBuf,
    line: usize,
}

/// One crate's module tree (from one root file) and every crate-internal path in it.
#[derive(Default)]
struct Tree {
    modules: BTreeMap<ModPath, Module>,
    references: Vec<Reference>,
}

/// The dependencies between the children of one module: `(from, to)` and the first place written.
type Edges = BTreeMap<(String, String), (PathBuf, usize)>;

impl Tree {
    /// Reads the module tree whose root is `root`.
    fn load(root: &Path) -> Tree {
        let mut tree = Tree::default();
        tree.file(root, Vec::new(), root.parent().expect("a root file lies in src/"));
        tree
    }

    /// Reads the module at `path` from `file`; its child modules' files lie in `dir`.
    fn file(&mut self, file: &Path, path: ModPath, dir: &Path) {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        self.module(&ast.items, file, path, dir);
    }

    /// Reads the module at `path` made of `items`, written in `file`.
    fn module(&mut self, items: &[syn::Item], file: &Path, path: ModPath, dir: &Path) {
        let children: BTreeSet<String> = items
            .iter()
            .filter_map(|i| match i {
                syn::Item::Mod(m) => Some(m.ident.to_string()),
                _ => None,
            })
            .collect();
        let mut module = Module::default();
        for item in items {
            if let Some(name) = item_name(item) {
                module.items.insert(name);
            }
            if let syn::Item::Use(u) = item {
                for leaf in use_leaves(u) {
                    let target = absolute(&path, &children, &leaf.path);
                    match leaf.binds {
                        Some(name) => {
                            module.imports.insert(name, target);
                        }
                        None => module.globs.extend(target),
                    }
                }
            }
        }
        self.modules.insert(path.clone(), module);
        for item in items {
            match item {
                syn::Item::Mod(m) => {
                    let name = m.ident.to_string();
                    let child = [path.clone(), vec![name.clone()]].concat();
                    match &m.content {
                        Some((_, inner)) => self.module(inner, file, child, &dir.join(&name)),
                        None => {
                            let flat = dir.join(format!("{name}.rs"));
                            let nested = dir.join(&name).join("mod.rs");
                            let found = [flat, nested].into_iter().find(|f| f.is_file());
                            let found = found.unwrap_or_else(|| panic!("{}: no file for `mod {name}`", file.display()));
                            self.file(&found, child, &dir.join(&name));
                        }
                    }
                }
                item => {
                    let mut refs = Refs { at: &path, children: &children, file, out: &mut self.references };
                    refs.visit_item(item);
                }
            }
        }
    }

    /// The module an absolute path leads to, following re-exports of its item.
    fn locate(&self, path: &[String], depth: usize) -> ModPath {
        let mut module: ModPath = Vec::new();
        for seg in path {
            let child = [module.clone(), vec![seg.clone()]].concat();
            if self.modules.contains_key(&child) {
                module = child;
                continue;
            }
            return self.reexport(&module, seg, depth).unwrap_or(module);
        }
        module
    }

    /// Where the item `name` that `module` re-exports is defined; `None` when `module` defines it
    /// itself (or takes it from another crate).
    fn reexport(&self, module: &ModPath, name: &str, depth: usize) -> Option<ModPath> {
        let m = self.modules.get(module)?;
        if depth > 16 || m.items.contains(name) {
            return None;
        }
        if let Some(target) = m.imports.get(name) {
            return target.as_ref().map(|t| self.locate(t, depth + 1));
        }
        m.globs.iter().find_map(|glob| {
            let from = self.locate(glob, depth + 1);
            let defines = self.modules.get(&from).is_some_and(|g| g.items.contains(name));
            if defines {
                Some(from)
            } else {
                self.reexport(&from, name, depth + 1)
            }
        })
    }

    /// The sibling dependencies at every level, by parent module.
    fn edges(&self) -> BTreeMap<ModPath, Edges> {
        let mut edges: BTreeMap<ModPath, Edges> = BTreeMap::new();
        for r in &self.references {
            let to = self.locate(&r.to, 0);
            let common = r.from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common < r.from.len() && common < to.len() {
                let place = (r.file.clone(), r.line);
                let pair = (r.from[common].clone(), to[common].clone());
                let first = edges.entry(r.from[..common].to_vec()).or_default().entry(pair).or_insert_with(|| place.clone());
                *first = place.min(first.clone());
            }
        }
        edges
    }
}

/// The name an item defines in its module's namespace.
fn item_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Macro(i) => i.ident.as_ref()?,
        syn::Item::Mod(i) => &i.ident,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::TraitAlias(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// One path a `use` declaration names.
struct Leaf {
    path: Vec<String>,
    /// The name it binds; `None` for a glob.
    binds: Option<String>,
    line: usize,
}

/// Every path of a `use` tree (`use crate::{a, b::{self, c}}` names `crate::a`, `crate::b` and
/// `crate::b::c`); none for `use ::…`, which names another crate.
fn use_leaves(u: &syn::ItemUse) -> Vec<Leaf> {
    fn walk(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Leaf>) {
        let leaf = |prefix: &[String], ident: &syn::Ident, binds: &syn::Ident| {
            let path = if ident == "self" { prefix.to_vec() } else { [prefix, &[ident.to_string()]].concat() };
            let binds = if binds == "self" { prefix.last().cloned() } else { Some(binds.to_string()) };
            Leaf { path, binds, line: ident.span().start().line }
        };
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, out);
                prefix.pop();
            }
            syn::UseTree::Name(n) => out.push(leaf(prefix, &n.ident, &n.ident)),
            syn::UseTree::Rename(r) => out.push(leaf(prefix, &r.ident, &r.rename)),
            syn::UseTree::Glob(g) => out.push(Leaf { path: prefix.clone(), binds: None, line: g.star_token.span.start().line }),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| walk(t, prefix, out)),
        }
    }
    let mut out = Vec::new();
    if u.leading_colon.is_none() {
        walk(&u.tree, &mut Vec::new(), &mut out);
    }
    out
}

/// `segs`, written in module `at` (whose child modules are `children`), as a path from the crate
/// root; `None` for a path into another crate, or a local name.
fn absolute(at: &[String], children: &BTreeSet<String>, segs: &[String]) -> Option<Vec<String>> {
    let (first, rest) = segs.split_first()?;
    let (mut base, mut rest) = match first.as_str() {
        "crate" => (Vec::new(), rest),
        "self" => (at.to_vec(), rest),
        "super" => (at.get(..at.len().checked_sub(1)?)?.to_vec(), rest),
        name if children.contains(name) => (at.to_vec(), segs),
        _ => return None,
    };
    while let Some((_, after)) = rest.split_first().filter(|(s, _)| *s == "super") {
        base.pop()?;
        rest = after;
    }
    Some([base.as_slice(), rest].concat())
}

/// Collects the crate-internal paths of one item of module `at`.
struct Refs<'a> {
    at: &'a ModPath,
    children: &'a BTreeSet<String>,
    file: &'a Path,
    out: &'a mut Vec<Reference>,
}

impl Refs<'_> {
    fn push(&mut self, segs: &[String], line: usize) {
        if let Some(to) = absolute(self.at, self.children, segs) {
            self.out.push(Reference { from: self.at.clone(), to, file: self.file.to_path_buf(), line });
        }
    }

    /// Paths in a macro's tokens, which syn leaves unparsed: `crate::a::b`, `super::a`, `$crate::a`.
    fn tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let path_sep = |i: usize| {
            matches!((tokens.get(i), tokens.get(i + 1)),
                (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                    if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':')
        };
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Ident(id) if ["crate", "super", "self"].contains(&id.to_string().as_str()) && path_sep(i + 1) => {
                    let mut segs = vec![id.to_string()];
                    while let (true, Some(TokenTree::Ident(next))) = (path_sep(i + 1), tokens.get(i + 3)) {
                        segs.push(next.to_string());
                        i += 3;
                    }
                    self.push(&segs, id.span().start().line);
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Refs<'_> {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        for leaf in use_leaves(u) {
            self.push(&leaf.path, leaf.line);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() {
            let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            self.push(&segs, p.segments[0].ident.span().start().line);
        }
        visit::visit_path(self, p);
    }

    // `pub(in crate::a)` limits who sees an item; it uses nothing.
    fn visit_vis_restricted(&mut self, _: &'ast syn::VisRestricted) {}

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        visit::visit_macro(self, m);
        self.tokens(m.tokens.clone());
    }
}

/// Every cycle among siblings, each as its nodes with the first repeated at the end: for each
/// edge on a cycle, the shortest cycle through it.
fn cycles(edges: &Edges) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    for (a, b) in edges.keys() {
        let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = VecDeque::from([b.as_str()]);
        while let Some(n) = queue.pop_front() {
            for (_, m) in edges.keys().filter(|(from, _)| from == n) {
                if m != b && !prev.contains_key(m.as_str()) {
                    prev.insert(m, n);
                    queue.push_back(m);
                }
            }
        }
        if !prev.contains_key(a.as_str()) {
            continue;
        }
        let mut back = vec![a.as_str()];
        while back.last() != Some(&b.as_str()) {
            back.push(prev[back.last().expect("starts with a")]);
        }
        let mut nodes: Vec<String> = back.iter().rev().map(|s| s.to_string()).collect();
        nodes.rotate_right(1);
        let smallest = nodes.iter().enumerate().min_by_key(|(_, n)| *n).map_or(0, |(i, _)| i);
        nodes.rotate_left(smallest);
        nodes.push(nodes[0].clone());
        found.insert(nodes);
    }
    found
}

/// The cycles of the crate whose sources are in `src`, each as `label: a -> b -> a` followed by
/// one `file:line` per edge, files relative to `base`.
fn cycles_in(src: &Path, label: &str, base: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for root in ["lib.rs", "main.rs"].map(|f| src.join(f)).into_iter().filter(|f| f.is_file()) {
        for (parent, edges) in Tree::load(&root).edges() {
            let name = |n: &str| [parent.as_slice(), &[n.to_string()]].concat().join("::");
            for cycle in cycles(&edges) {
                let mut text = format!("{label}: {}", cycle.iter().map(|n| name(n)).collect::<Vec<_>>().join(" -> "));
                for pair in cycle.windows(2) {
                    let (file, line) = &edges[&(pair[0].clone(), pair[1].clone())];
                    let file = file.strip_prefix(base).unwrap_or(file).display();
                    text += &format!("\n    {} -> {}: {file}:{line}", name(&pair[0]), name(&pair[1]));
                }
                out.push(text);
            }
        }
    }
    out
}

/// The workspace root, whose folders hold the checked crates.
fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("harness lies in the workspace")
}

/// Fails with every cycle among the modules of `krate`.
fn assert_layered(krate: &str) {
    let cycles = cycles_in(&workspace().join(krate).join("src"), krate, workspace());
    assert!(
        cycles.is_empty(),
        "modules of {krate} import each other in a circle; move what they share below both (plain types down, catalogues up):\n{}",
        cycles.join("\n")
    );
}

#[test]
fn every_workspace_member_is_checked() {
    let manifest: toml::Table = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap().parse().unwrap();
    let members: BTreeSet<&str> = manifest["workspace"]["members"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    assert_eq!(members, CRATES.iter().copied().collect(), "list every workspace member in checked_crates!");
}

/// The rooms a change is looked for in: folders of one concern a file, which the layering check
/// above walks like any module (`kernels::gpu`'s files are siblings that must form a DAG). A room
/// merged back, renamed or left out fails here, and README's layout table with it.
const ROOMS: &[(&str, &[&str])] = &[
    ("kernels/src/gpu", &["mod", "device", "error", "latency", "prepare", "timing", "readback", "run"]),
    ("harness/src/measure/controller", &["mod", "lifecycle", "crash", "session", "cold_start", "unavailable"]),
    ("harness/src/plan/workload", &["mod", "minilm", "decoder", "perception", "clip"]),
    ("reports/src/model", &["mod", "run", "case", "measurement", "memory", "correctness", "hardware", "peaks", "roofline", "schema"]),
];

#[test]
fn each_room_is_a_file_of_its_folder_and_readmes_layout_names_only_paths_that_exist() {
    for (folder, rooms) in ROOMS {
        for room in *rooms {
            let file = workspace().join(folder).join(format!("{room}.rs"));
            assert!(file.is_file(), "{} is gone: README's layout table sends readers to it", file.display());
        }
    }
    // Every path README's layout table names from the workspace root (`kernels/src/gpu/`, `harness/src/measure/native.rs`).
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let table = readme.split("\n| step | where | what |").nth(1).expect("README has its layout table").split("\n\n").next().unwrap();
    let tops = ["harness/", "harness-bench/", "kernels/", "page/", "reports/", "stats/"];
    let named: Vec<&str> = table.split('`').skip(1).step_by(2).filter(|p| tops.iter().any(|t| p.starts_with(t)) && !p.contains(' ')).collect();
    assert!(named.len() > 10, "the table names its rooms by path: {named:?}");
    for path in named {
        assert!(workspace().join(path).exists(), "README's layout table names `{path}`, which does not exist");
    }
}

#[test]
fn the_checker_finds_cycles_through_uses_paths_macros_and_reexports() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\nmod shapes;\npub use c::Thing;\n"),
        // a -> b in a grouped use; a -> shapes.
        ("a.rs", "use crate::{b::B, shapes};\npub struct A;\n"),
        // b -> c through the root's re-export, in a return type.
        ("b.rs", "pub struct B;\npub fn f() -> crate::Thing {\n    crate::Thing\n}\n"),
        // c -> a through super, inside a test module's macro.
        ("c.rs", "pub struct Thing;\n#[cfg(test)]\nmod tests {\n    fn t() {\n        let _ = vec![super::super::a::A];\n    }\n}\n"),
        // d uses c, and nothing uses d: no cycle.
        ("d.rs", "use super::c::Thing;\n"),
        ("shapes/mod.rs", "mod circle;\nmod square;\npub struct Unit;\n"),
        // A child naming its parent's item is no edge; circle -> square through self and super.
        ("shapes/circle.rs", "use super::Unit;\npub struct Circle;\nfn s() {\n    self::super::square::s();\n}\n"),
        ("shapes/square.rs", "pub fn s() -> crate::shapes::circle::Circle {\n    todo!()\n}\n"),
    ];
    for (name, text) in files {
        let path = dir.path().join("src").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let cycles = cycles_in(&dir.path().join("src"), "demo", dir.path());
    assert_eq!(
        cycles,
        [
            "demo: a -> b -> c -> a\n    a -> b: src/a.rs:1\n    b -> c: src/b.rs:2\n    c -> a: src/c.rs:5",
            "demo: shapes::circle -> shapes::square -> shapes::circle\n    shapes::circle -> shapes::square: src/shapes/circle.rs:4\n    shapes::square -> shapes::circle: src/shapes/square.rs:1",
        ]
    );
}
