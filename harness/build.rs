//! Records the git revision harness is built from (`HARNESS_BUILD_REVISION`), so that a binary
//! copied to another machine still says which sources it is, beside the revision of the tree it
//! runs in.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    let revision = git(&["describe", "--always", "--dirty", "--abbrev=12"]).unwrap_or_default();
    println!("cargo:rustc-env=HARNESS_BUILD_REVISION={revision}");
    // Again after a commit, a checkout or a staged change, and after an edit of harness itself.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        for watched in ["HEAD", "index", "refs"] {
            println!("cargo:rerun-if-changed={dir}/{watched}");
        }
    }
    println!("cargo:rerun-if-changed=src");
}
