//! Benchmarks of your own Rust that `harness bench` runs in real browsers (Chrome, Firefox, Edge,
//! through WebDriver) and natively, with harness's sampling, checks and reports.
//!
//! One bench file compiles for `wasm32-unknown-unknown` (the browser page) and natively. A CPU
//! bench times a closure ([`Bencher::iter`]); a GPU bench records wgpu passes into an encoder
//! harness gives it ([`GpuWork`]), and harness times them with GPU timestamps where the adapter
//! has them, exactly as its own kernels are timed. A bench that gives a CPU reference
//! ([`Bench::reference`]) is checked against it; one without reads `unchecked`.
//!
//! ```no_run
//! use harness_bench::{black_box, Benches, Tolerance};
//!
//! fn sums(c: &mut Benches) {
//!     for n in [1_000, 100_000] {
//!         let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
//!         c.cpu("sum")
//!             .param(n)
//!             .elements(n as f64)
//!             .reference(move || vec![(0..n).map(|i| i as f64).sum()], Tolerance { abs: 0.0, rel: 1e-5 })
//!             .run(move |b| b.iter(|| black_box(&data).iter().sum::<f32>()));
//!     }
//! }
//!
//! harness_bench::group!(benches, sums);
//! harness_bench::main!(benches);
//! ```
//!
//! Registration is explicit, as with criterion's `criterion_group!`/`criterion_main!`: static
//! constructors (linkme, inventory, ctor) do not run on `wasm32-unknown-unknown`.

mod cpu;
mod gpu;
mod runner;

#[cfg(not(target_arch = "wasm32"))]
pub mod native;
#[cfg(target_arch = "wasm32")]
pub mod web;

pub use cpu::{Bencher, Output};
pub use gpu::{GpuContext, GpuWork};
pub use kernels::bench::{BenchCase, BenchKind};
pub use kernels::Tolerance;
pub use std::hint::black_box;
pub use wgpu;

use std::future::Future;
use std::pin::Pin;

/// A GPU bench's setup: builds its buffers and pipelines on the device it is given.
type GpuSetup = Box<dyn Fn(GpuContext) -> Pin<Box<dyn Future<Output = GpuWork>>>>;

/// What a bench runs.
enum Body {
    Cpu(Box<dyn Fn(&mut Bencher)>),
    Gpu(GpuSetup),
}

/// One registered bench at one parameter.
struct Registered {
    case: BenchCase,
    body: Body,
    /// Computed natively only: the page sends outputs, harness compares them.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    reference: Option<Box<dyn Fn() -> Vec<f64>>>,
}

/// Every bench of one bench target: what `group!` functions register into and `main!` hands to
/// harness.
pub struct Benches {
    target: String,
    registered: Vec<Registered>,
}

impl Benches {
    /// No benches yet, of the bench target `target` (`main!` passes the crate's name).
    pub fn new(target: &str) -> Self {
        Benches { target: target.to_string(), registered: Vec::new() }
    }

    /// Starts a CPU bench called `name`: Rust timed on the CPU, in WASM in the page
    /// (`--platform wasm`) and natively.
    pub fn cpu(&mut self, name: &str) -> Bench<'_, Cpu> {
        Bench::new(self, name, BenchKind::Cpu)
    }

    /// Starts a GPU bench called `name`: wgpu passes on the browser's WebGPU
    /// (`--platform webgpu`) and on native Vulkan/Metal/DX12.
    pub fn gpu(&mut self, name: &str) -> Bench<'_, Gpu> {
        Bench::new(self, name, BenchKind::Gpu)
    }

    /// Every registered bench, as harness lists and plans them.
    pub fn cases(&self) -> Vec<BenchCase> {
        self.registered.iter().map(|r| r.case.clone()).collect()
    }

    fn find(&self, case: &BenchCase) -> Option<&Registered> {
        self.registered.iter().find(|r| r.case.name == case.name && r.case.param == case.param)
    }

    fn add(&mut self, registered: Registered) {
        // A name and parameter registered twice would make two cases one id.
        if let Some(twice) = self.find(&registered.case) {
            panic!("the bench `{}` is registered twice", twice.case.label());
        }
        self.registered.push(registered);
    }
}

/// Marks a [`Bench`] as a CPU bench.
pub struct Cpu;
/// Marks a [`Bench`] as a GPU bench.
pub struct Gpu;

/// A bench being described: its parameter, what one iteration does (for rates and the
/// roofline) and its reference; `run` registers it.
pub struct Bench<'a, Kind> {
    benches: &'a mut Benches,
    case: BenchCase,
    reference: Option<Box<dyn Fn() -> Vec<f64>>>,
    kind: std::marker::PhantomData<Kind>,
}

impl<'a, Kind> Bench<'a, Kind> {
    fn new(benches: &'a mut Benches, name: &str, kind: BenchKind) -> Self {
        let case = BenchCase {
            name: name.to_string(),
            param: None,
            kind,
            target: benches.target.clone(),
            flops: None,
            bytes: None,
            elements: None,
            reference: None,
        };
        Bench { benches, case, reference: None, kind: std::marker::PhantomData }
    }

    /// The parameter this registration runs at (a size): one case per parameter, named
    /// `name@param`.
    pub fn param(mut self, param: impl std::fmt::Display) -> Self {
        self.case.param = Some(param.to_string());
        self
    }

    /// Floating-point operations of one iteration: reports give GFLOP/s and the roofline
    /// fraction.
    pub fn flops(mut self, flops: f64) -> Self {
        self.case.flops = Some(flops);
        self
    }

    /// Bytes one iteration moves at least: reports give GB/s and the roofline fraction.
    pub fn bytes(mut self, bytes: f64) -> Self {
        self.case.bytes = Some(bytes);
        self
    }

    /// Elements one iteration processes: reports give elements per second.
    pub fn elements(mut self, elements: f64) -> Self {
        self.case.elements = Some(elements);
        self
    }

    /// The expected output, computed independently of the code measured (plain, obviously
    /// right Rust; f64 where it matters), and how far the measured output may be from it. The
    /// reference runs natively, once, in the bench binary harness builds. Without one the bench
    /// reads `unchecked`, and its platforms are only compared with each other.
    pub fn reference(mut self, expected: impl Fn() -> Vec<f64> + 'static, tolerance: Tolerance) -> Self {
        self.case.reference = Some(tolerance);
        self.reference = Some(Box::new(expected));
        self
    }

    fn register(self, body: Body) {
        let Bench { benches, case, reference, .. } = self;
        benches.add(Registered { case, body, reference });
    }
}

impl Bench<'_, Cpu> {
    /// Registers the bench: `body` sets up its inputs (untimed) and calls [`Bencher::iter`] with
    /// the work to time.
    pub fn run(self, body: impl Fn(&mut Bencher) + 'static) {
        self.register(Body::Cpu(Box::new(body)));
    }
}

impl Bench<'_, Gpu> {
    /// Registers the bench: `setup` builds buffers and pipelines on the device it is given
    /// (untimed) and returns the [`GpuWork`] to time.
    pub fn run<F, Fut>(self, setup: F)
    where
        F: Fn(GpuContext) -> Fut + 'static,
        Fut: Future<Output = GpuWork> + 'static,
    {
        self.register(Body::Gpu(Box::new(move |gpu| Box::pin(setup(gpu)))));
    }
}

/// Defines `fn $name(&mut Benches)` that registers the benches of every function listed, as
/// `criterion_group!` does.
#[macro_export]
macro_rules! group {
    ($name:ident, $($bench:path),+ $(,)?) => {
        /// The benches of this group.
        pub fn $name(benches: &mut $crate::Benches) {
            $($bench(benches);)+
        }
    };
}

/// The bench target's `main`: hands the groups' benches to harness, in the page (WASM) and
/// natively, as `criterion_main!` does. The bench target needs `harness = false`.
#[macro_export]
macro_rules! main {
    ($($group:path),+ $(,)?) => {
        /// Every bench of this target; harness-bench's entry points call it.
        #[unsafe(no_mangle)]
        pub fn __harness_bench_registered() -> $crate::Benches {
            let mut benches = $crate::Benches::new(env!("CARGO_CRATE_NAME"));
            $($group(&mut benches);)+
            benches
        }

        fn main() {
            #[cfg(not(target_arch = "wasm32"))]
            ::std::process::exit($crate::native::main(__harness_bench_registered()));
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two(c: &mut Benches) {
        c.cpu("a").param(1).flops(2.0).run(|b| b.iter(|| 1.0f32));
        c.gpu("b").reference(Vec::new, Tolerance { abs: 0.0, rel: 0.0 }).run(|_gpu| async { GpuWork::new(|_| {}) });
    }

    fn three(c: &mut Benches) {
        c.cpu("a").param(2).run(|b| b.iter(|| ()));
    }

    crate::group!(benches, two, three);

    #[test]
    fn a_group_registers_every_bench_of_its_functions_in_order() {
        let mut b = Benches::new("target");
        benches(&mut b);
        let listed: Vec<(String, BenchKind, bool)> = b.cases().into_iter().map(|c| (c.label(), c.kind, c.reference.is_some())).collect();
        assert_eq!(listed, [("a@1".into(), BenchKind::Cpu, false), ("b".into(), BenchKind::Gpu, true), ("a@2".into(), BenchKind::Cpu, false)]);
        assert_eq!(b.cases()[0].flops, Some(2.0));
        assert!(b.cases().iter().all(|c| c.target == "target"));
    }

    #[test]
    #[should_panic(expected = "the bench `a@1` is registered twice")]
    fn a_bench_registered_twice_is_refused() {
        let mut b = Benches::new("target");
        two(&mut b);
        two(&mut b);
    }
}
