//! The options of `harness bench`: which crate and bench target, and the shared options of a
//! measuring run ([`PipelineArgs`]), the same as `run`'s.

use super::pipeline::PipelineArgs;
use clap::Args;
use std::path::PathBuf;

/// Options of `harness bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The Cargo.toml of the crate whose benches to run.
    #[arg(long, value_name = "PATH", default_value = "Cargo.toml")]
    pub manifest_path: PathBuf,
    /// The bench target to run (`[[bench]] name = "NAME"`, with `harness = false`); needed when
    /// the crate has more than one.
    #[arg(long, value_name = "NAME")]
    pub bench: Option<String>,
    /// Run this bench binary, built before (`cargo build --release --bench NAME`, or a
    /// `harness bench` elsewhere), instead of building the crate: for a machine without a Rust
    /// toolchain. In a browser it needs --bundle too.
    #[arg(long, value_name = "PATH")]
    pub bench_binary: Option<PathBuf>,
    /// Serve this page bundle of the bench target (the folder `harness bench` writes to
    /// TARGET_DIR/harness-bench/NAME) instead of building it for wasm32.
    #[arg(long, value_name = "DIR")]
    pub bundle: Option<PathBuf>,
    /// Measure this machine's roofline first, as `harness run --roofline` does (harness's probes
    /// `stream_copy` and `fma_chain` on WebGPU and natively): every bench that declares its bytes
    /// or FLOPs then shows its fraction of the peak that binds it.
    #[arg(long, conflicts_with = "resume")]
    pub roofline: bool,
    /// List the benches (`name@param`, CPU or GPU, checked or not) and exit, running nothing.
    /// With --json, as JSON.
    #[arg(long)]
    pub list: bool,
    /// Where benches run (`wasm`: CPU benches in the page; `webgpu`: GPU benches in the page;
    /// `native`: both, natively), browsers, sampling, baselines, output and server.
    #[command(flatten)]
    pub pipeline: PipelineArgs,
}

/// Examples after `harness bench --help`.
pub const AFTER_HELP: &str = "\
Examples:
  harness bench --platform webgpu,wasm,native     every bench of ./Cargo.toml: GPU benches on WebGPU, CPU
                                                 benches as WASM, both natively (headless Chrome/Chromium)
  harness bench --manifest-path examples/bench-quickstart/Cargo.toml --browser chrome,firefox --platform webgpu,wasm,native
  harness bench --list                            the benches, without running them
  harness bench --filter 'dot/*@1024'             some benches (NAME@PARAM, globs in either part)
  harness bench --save-baseline main ; harness bench --baseline main --fail-on-regression 5

A bench target is `[[bench]] name = \"NAME\"` with `harness = false`, whose file ends in
`harness_bench::main!(...)`; README, \"Benchmark your own crate\", shows one. Its WASM is built with
the wasm-bindgen this harness links; a crate that asks for another version is refused before any
build. A compile error exits 2 before any browser starts.";
