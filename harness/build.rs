//! Records the git revision harness is built from (`HARNESS_BUILD_REVISION`), so that a binary
//! copied to another machine still says which sources it is, beside the revision of the tree it
//! runs in.

use std::path::{Path, PathBuf};

#[path = "src/measure/revision.rs"]
mod revision;

/// The folders whose edits change what harness is: every workspace member's `src` (harness links
/// kernels, reports and stats, and bundles the page) and `static`, where it has one. Watching only
/// harness's own, an edit of kernels left a binary that named the
/// last commit, without `-dirty`, though built from other sources.
pub fn watched(root: &Path) -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let members = manifest.lines().find_map(|l| l.trim().strip_prefix("members")).unwrap_or_default();
    members
        .split('"')
        .skip(1)
        .step_by(2)
        .flat_map(|m| ["src", "static"].map(|d| root.join(m).join(d)))
        .filter(|d| d.is_dir())
        .collect()
}

fn main() {
    let revision = revision::describe(Path::new(".")).unwrap_or_default();
    println!("cargo:rustc-env=HARNESS_BUILD_REVISION={revision}");
    // Again after a commit, a checkout or a staged change, and after an edit of any member's sources.
    if let Some(dir) = revision::git(Path::new("."), &["rev-parse", "--absolute-git-dir"]) {
        for watched in ["HEAD", "index", "refs"] {
            println!("cargo:rerun-if-changed={dir}/{watched}");
        }
    }
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    for dir in watched(&Path::new(&manifest_dir).join("..")) {
        println!("cargo:rerun-if-changed={}", dir.display());
    }
}
