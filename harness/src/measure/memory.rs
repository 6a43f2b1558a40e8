//! Memory in use during a run, read from Linux's `/proc`: harness's own resident set, and the
//! proportional set of the browser (every process in its driver's process group), so a soak
//! (`--repeat`) shows whether either grows case after case. Elsewhere, and for a remote
//! WebDriver, there is nothing to read and no sample is taken.

use reports::MemorySample;

/// harness's and the browser's memory now, after `cases` settled cases; `None` where `/proc`
/// cannot say. `group` is the process group of the driver harness started.
pub fn sample(cases: usize, group: Option<i32>) -> Option<MemorySample> {
    if cases > 0 {
        leak_for_tests();
    }
    let harness_rss_kib = status_kib("self", "VmRSS:")?;
    Some(MemorySample { cases, harness_rss_kib, browser_pss_kib: group.and_then(group_pss_kib) })
}

/// A deliberate leak of `HARNESS_TEST_LEAK_KIB` KiB a case, written so it is resident: the soak
/// test's proof that its per-case bound catches a leak that size. Unset, as everywhere but that
/// test, it does nothing.
fn leak_for_tests() {
    static KIB: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let kib = *KIB.get_or_init(|| std::env::var("HARNESS_TEST_LEAK_KIB").ok().and_then(|v| v.parse().ok()).unwrap_or(0));
    if kib > 0 {
        Vec::leak(vec![1u8; kib * 1024]);
    }
}

/// A `kB` field of `/proc/PID/status`.
fn status_kib(pid: &str, field: &str) -> Option<u64> {
    kib_field(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?, field)
}

fn kib_field(text: &str, field: &str) -> Option<u64> {
    text.lines().find_map(|l| l.strip_prefix(field)).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The summed proportional set size of the processes in `group` but its leader (the driver):
/// shared pages are split among their sharers, so a multi-process browser is not counted twice.
fn group_pss_kib(group: i32) -> Option<u64> {
    let mut total = None;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().filter(|n| n.parse::<i32>().is_ok_and(|p| p != group)) else { continue };
        if process_group(pid) != Some(group) {
            continue;
        }
        let pss = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok().and_then(|t| kib_field(&t, "Pss:"));
        if let Some(kib) = pss {
            *total.get_or_insert(0) += kib;
        }
    }
    total
}

/// The process group of `pid`, from `/proc/PID/stat` (its fifth field; the second, the command
/// name, may hold spaces and parentheses, so fields are counted after its last `)`).
fn process_group(pid: &str) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(2)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_harness_and_a_process_groups_memory() {
        let Some(now) = sample(3, None) else {
            eprintln!("SKIPPED: no /proc here");
            return;
        };
        assert_eq!(now.cases, 3);
        assert!(now.harness_rss_kib > 1000, "{now:?}");
        assert_eq!(now.browser_pss_kib, None);
        // A child in a group of its own stands in for the browser: its memory is counted, the
        // leader's (the driver's) is not.
        use std::os::unix::process::CommandExt;
        let mut leader = std::process::Command::new("sh").args(["-c", "sleep 30 & wait"]).process_group(0).spawn().unwrap();
        let group = leader.id() as i32;
        let mut pss = None;
        for _ in 0..100 {
            pss = sample(0, Some(group)).and_then(|s| s.browser_pss_kib);
            if pss.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        kill_group(group);
        let _ = leader.wait();
        assert!(pss.is_some_and(|k| k > 0), "the sleeping child's memory: {pss:?}");
        assert_eq!(kib_field("VmRSS:\t  4242 kB\n", "VmRSS:"), Some(4242));
        assert_eq!(process_group(&std::process::id().to_string()).map(|g| g > 0), Some(true));
    }

    /// Ends the test's process group with `kill(1)`, as harness ends drivers.
    fn kill_group(group: i32) {
        let _ = std::process::Command::new("kill").args(["-s", "KILL", "--", &format!("-{group}")]).status();
    }
}
