//! The catalogue's `matmul` at 1024³ and 4096³, recorded in harness's pass and in a pass per run
//! (src/lib.rs).

use bench_matmul::{register, Passes};
use harness_bench::Benches;

fn matmul(c: &mut Benches) {
    for (name, passes) in [("matmul", Passes::One), ("matmul/pass-per-run", Passes::PerRun)] {
        for n in [1024u32, 4096] {
            register(c, name, passes, n);
        }
    }
}

harness_bench::group!(benches, matmul);
harness_bench::main!(benches);
