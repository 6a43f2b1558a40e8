//! What machine and source tree a run comes from, for the report's metadata.

use reports::{HarnessInfo, HostInfo};
use std::path::Path;

/// The OS, CPU, core count and hardware GPUs of this machine.
pub fn host_info() -> HostInfo {
    HostInfo {
        os: os_name(),
        arch: std::env::consts::ARCH.to_string(),
        cpu: cpu_model(),
        cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        gpus: super::gpu_stack::this_machine().gpus.iter().map(|g| g.name.clone()).collect(),
    }
}

/// This harness's version, the revision of the source tree `source_dir` it runs in, and the
/// revision it was built from.
pub fn harness_info(source_dir: Option<&Path>) -> HarnessInfo {
    let git_revision = source_dir.and_then(super::revision::describe);
    HarnessInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        git_revision,
        build_revision: Some(env!("HARNESS_BUILD_REVISION").to_string()).filter(|r| !r.is_empty()),
    }
}

fn os_name() -> String {
    let pretty = std::fs::read_to_string("/etc/os-release").ok().and_then(|text| {
        text.lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim_matches('"').to_string())
    });
    match pretty {
        Some(p) => format!("{} ({p})", std::env::consts::OS),
        None => std::env::consts::OS.to_string(),
    }
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_names_the_commit_it_was_built_from_wherever_it_runs() {
        let head = std::process::Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output().unwrap();
        let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
        // Run outside any checkout, the tree's revision is unknown but the build's is not.
        let info = harness_info(None);
        assert_eq!(info.git_revision, None);
        let built = info.build_revision.expect("built from a checkout");
        assert!(built.contains(&head), "built at {built}, HEAD is {head}");
    }

    /// A run names the tree's revision without rewriting `.git/index`, which the build script
    /// watches: `git describe --dirty` rewrote it, and the next cargo command compiled harness again.
    #[test]
    fn the_trees_revision_is_read_without_writing_the_git_index() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| assert!(std::process::Command::new("git").args(args).current_dir(dir.path()).output().unwrap().status.success(), "git {args:?}");
        git(&["init", "-q"]);
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        git(&["add", "a.txt"]);
        git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a"]);
        // The same contents with a new mtime: stat data the index no longer matches, which
        // `describe --dirty` refreshes and writes back.
        let file = std::fs::File::options().write(true).open(dir.path().join("a.txt")).unwrap();
        file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5)).unwrap();
        let index = || std::fs::read(dir.path().join(".git/index")).unwrap();
        let before = index();
        let revision = harness_info(Some(dir.path())).git_revision.unwrap();
        assert!(!revision.ends_with("-dirty"), "{revision}");
        assert!(before == index(), "the index was rewritten");
        std::fs::write(dir.path().join("a.txt"), "b").unwrap();
        assert_eq!(harness_info(Some(dir.path())).git_revision.unwrap(), format!("{revision}-dirty"));
        assert!(before == index(), "the index was rewritten");
    }
}
