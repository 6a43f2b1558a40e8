//! The git revision of a source tree, named as `git describe --always --dirty --abbrev=12` names
//! it, read without writing `.git/index`. `describe --dirty` refreshes the index and rewrites it
//! (always, in a fresh clone), and harness's build script watches the index: each run, and the
//! build script itself, made the next cargo command compile harness again. Shared by the build
//! script (the revision harness is built from) and [`super::host`] (the one it runs in).

use std::path::Path;
use std::process::Command;

/// `git ARGS` in `dir`, its trimmed stdout where it succeeds. Optional locks are off, so nothing
/// git would only refresh (the index's stat data) is written.
pub fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("--no-optional-locks").args(args).current_dir(dir).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The revision of the tree at `dir`, `-dirty` where a tracked file differs from it; `None`
/// outside a git tree.
pub fn describe(dir: &Path) -> Option<String> {
    let name = git(dir, &["describe", "--always", "--abbrev=12"]).filter(|n| !n.is_empty())?;
    let changed = git(dir, &["status", "--porcelain", "--untracked-files=no"])?;
    Some(if changed.is_empty() { name } else { format!("{name}-dirty") })
}
