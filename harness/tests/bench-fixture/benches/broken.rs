//! A bench target that does not compile, on purpose.

fn outcomes(c: &mut harness_bench::Benches) {
    c.cpu("ok").run(|b| b.iter(|| this_function_does_not_exist()));
}

harness_bench::group!(benches, outcomes);
harness_bench::main!(benches);
