//! The page's JavaScript unit tests (page/tests/, `node --test`): the GPU timer's pass bookkeeping
//! over a fake WebGPU (query indices across many passes and encoders, more passes than one query
//! set holds, passes with their own timestamps, render passes and copies) and busy against span on
//! synthetic timestamps; the rejected-shader keeper and the `subgroups` request and uniformity rule
//! (shader-errors.test.js). Node.js comes with npm, which ci/setup.sh installs.

mod common;
use common::*;

#[test]
fn the_page_gpu_timers_unit_tests_pass_under_node() {
    let out = std::process::Command::new("node")
        .args(["--test", "page/tests/"])
        .current_dir(workspace())
        .output()
        .expect("node runs (ci/setup.sh installs npm, and Node.js with it)");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "node --test page/tests/ failed:\n{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("# pass 18") && stdout.contains("# fail 0"), "{stdout}");
}
