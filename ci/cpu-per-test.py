#!/usr/bin/env python3
"""Where the test suite's CPU time goes: a cargo target runner that runs one test process,
adopts every process it starts (browsers, drivers, SwiftShader's and Firefox's helpers, which a
plain `time` misses once they are reparented), reaps them all and appends a line to a log:
CPU seconds (user + system) of the whole tree, wall seconds, test binary, test name.

On 2 cores the suite is CPU-bound (both cores busy throughout), so CPU seconds, not wall time,
say what a change to a test saves. Use it as cargo's runner, then sort the log:

    CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=ci/cpu-per-test.py \
        cargo nextest run --workspace --exclude page
    sort -rn target/cpu-per-test.log | head -30

The log goes to $CPU_PER_TEST_LOG (default target/cpu-per-test.log in this checkout); nextest's
listing runs are not logged.
"""
import ctypes
import os
import resource
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
# The tests run in their package's folder: the default log is named from this checkout's root.
LOG = os.environ.get("CPU_PER_TEST_LOG") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "cpu-per-test.log")
# How long to wait for descendants that outlive the test itself before reporting without them.
GRACE_S = 20


def main() -> int:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    start = time.time()
    pid = os.fork()
    if pid == 0:
        os.execvp(sys.argv[1], sys.argv[1:])
    _, status = os.waitpid(pid, 0)
    deadline = time.time() + GRACE_S
    while time.time() < deadline:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                time.sleep(0.05)
        except ChildProcessError:
            break
    args = sys.argv[2:]
    if "--list" not in args:
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        name = " ".join(a for a in args if not a.startswith("-"))
        os.makedirs(os.path.dirname(LOG), exist_ok=True)
        with open(LOG, "a") as f:
            f.write(f"{used.ru_utime + used.ru_stime:.1f}\t{time.time() - start:.1f}\t{os.path.basename(sys.argv[1])}\t{name}\n")
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
