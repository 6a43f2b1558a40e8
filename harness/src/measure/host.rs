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
    let git_revision = source_dir.and_then(|dir| {
        let out = std::process::Command::new("git")
            .args(["describe", "--always", "--dirty", "--abbrev=12"])
            .current_dir(dir)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    });
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
}
