//! The bench target as a native program, which `harness bench` runs: it lists the benches, computes
//! their references, and measures a plan on this machine (CPU benches, and GPU benches through
//! native wgpu), writing what it sees as JSON lines, one [`PageEvent`] each, after
//! [`EVENT_PREFIX`] (anything else the benches print passes through).

use crate::runner::{references, run_case};
use crate::Benches;
use kernels::case_loop::{open_gpu, run_cases, Sink};
use kernels::gpu::GpuError;
use kernels::sampling::NoClock;
use kernels::wire::{AdapterReport, PageEvent, Progress};
use kernels::{CaseSpec, RunPlan, Workload};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// What starts an event line on standard output.
pub const EVENT_PREFIX: &str = "harness-bench-event ";
/// Lists the benches as JSON ([`crate::BenchCase`]s).
pub const LIST: &str = "--harness-list";
/// Prints every reference as JSON: the values by the bench's label.
pub const REFERENCES: &str = "--harness-references";
/// Measures the plan read from standard input.
pub const RUN: &str = "--harness-run";

/// The last panic's message, for the case it failed.
static PANIC: Mutex<Option<String>> = Mutex::new(None);

/// The bench target's `main` natively; returns the exit status.
pub fn main(benches: Benches) -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let answer = match args.first().map(String::as_str) {
        Some(LIST) => serde_json::to_string(&benches.cases()).map_err(|e| e.to_string()),
        Some(REFERENCES) => Ok(all_references(&benches)),
        Some(RUN) => run_plan(&benches).map(|()| String::new()),
        // `cargo bench` runs the target with `--bench`: say where the benches run.
        _ => {
            eprintln!("{} bench(es) in `{}`; `harness bench` runs them in browsers and natively:", benches.registered.len(), benches.target);
            for case in benches.cases() {
                eprintln!("  {}", case.label());
            }
            return 0;
        }
    };
    match answer {
        Ok(out) => {
            println!("{out}");
            0
        }
        Err(e) => {
            eprintln!("harness-bench: {e}");
            2
        }
    }
}

/// Every reference the benches give, as JSON; one that panics is left out and said on stderr
/// (its bench's check then fails, naming the missing reference).
fn all_references(benches: &Benches) -> String {
    let mut out = BTreeMap::new();
    for (label, reference) in references(benches) {
        match catch_unwind(AssertUnwindSafe(reference)) {
            Ok(values) => {
                out.insert(label, values);
            }
            Err(_) => eprintln!("harness-bench: the reference of `{label}` panicked"),
        }
    }
    serde_json::to_string(&out).unwrap_or_default()
}

/// Where the bench binary's case loop sends its events: a JSON line each on standard output.
/// Where harness is gone (killed, its end of the pipe closed), this process ends: nobody reads
/// what it would go on to measure.
struct Stdout;

impl Stdout {
    fn emit(&self, event: &PageEvent) {
        if let Ok(json) = serde_json::to_string(event) {
            let mut out = std::io::stdout().lock();
            if writeln!(out, "{EVENT_PREFIX}{json}").and_then(|()| out.flush()).is_err() {
                std::process::exit(3);
            }
        }
    }
}

impl Sink for Stdout {
    type Error = std::convert::Infallible;

    fn progress(&self, event: Progress) {
        self.emit(&PageEvent::Progress(event));
    }

    async fn send(&mut self, event: PageEvent) -> Result<(), Self::Error> {
        self.emit(&event);
        Ok(())
    }

    fn latency_unmeasured(&mut self, error: GpuError) -> Result<(), Self::Error> {
        eprintln!("harness-bench: the completion latency could not be measured: {error}");
        Ok(())
    }

    /// The message the panic hook kept, which says where the bench panicked.
    fn panic_message(&self, payload: Box<dyn std::any::Any + Send>) -> String {
        PANIC.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or_else(|| kernels::case_loop::panic_message(payload.as_ref()))
    }
}

/// Measures the plan on standard input, case by case; a bench that panics fails its case with the
/// panic's message and the rest still run.
fn run_plan(benches: &Benches) -> Result<(), String> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).map_err(|e| format!("the plan on standard input: {e}"))?;
    let plan: RunPlan = serde_json::from_str(&text).map_err(|e| format!("the plan on standard input: {e}"))?;
    std::panic::set_hook(Box::new(|info| {
        *PANIC.lock().unwrap_or_else(|e| e.into_inner()) = Some(info.to_string());
    }));
    // Everything but a CPU bench (GPU benches, the roofline's probes) needs the GPU.
    let gpu_cases = plan.cases.iter().any(|c| !matches!(&c.workload, Some(Workload::Bench(b)) if b.kind == kernels::bench::BenchKind::Cpu));
    let Ok(()) = pollster::block_on(async {
        let mut gpu = match gpu_cases {
            true => match open_gpu(&mut Stdout, plan.sampling.nudge, |_| {}).await? {
                Some(gpu) => Some(gpu),
                None => return Ok(()),
            },
            false => {
                Stdout.emit(&PageEvent::Adapter(cpu_only()));
                None
            }
        };
        run_cases(&plan.cases, &mut Stdout, async |case: &CaseSpec, on_sample: &dyn Fn(u32)| Ok(run_case(benches, gpu.as_mut(), &plan, case, &mut NoClock, on_sample).await?)).await
    });
    Ok(())
}

/// The platform of a plan with CPU benches only: this machine's CPU, no adapter asked for.
fn cpu_only() -> AdapterReport {
    AdapterReport {
        available: true,
        description: format!("the CPU ({}, {})", std::env::consts::ARCH, std::env::consts::OS),
        device: "CPU".into(),
        user_agent: "harness-bench (native)".into(),
        ..Default::default()
    }
}
