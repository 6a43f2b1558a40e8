use super::elementwise::{binary_wgsl, ADD};
use super::shapes;
use crate::check::Tolerance;
use crate::kernel::{Fault, Kernel};
use crate::suite::Suite;
use crate::shape::Shape;

/// Adds, but corrupts every 1000th element: must be reported as a correctness failure.
pub static WRONG: SelfTest = SelfTest { kind: Kind::Wrong };
/// Never finishes in the page: must be reported as timed out while the run goes on.
pub static HANG: SelfTest = SelfTest { kind: Kind::Hang };
/// Throws a JavaScript exception in the page: must reach the terminal and the report.
pub static THROW: SelfTest = SelfTest { kind: Kind::Throw };
/// Destroys its GPU device: must be reported as `deviceLost`, and the next case must pass.
pub static LOSE_DEVICE: SelfTest = SelfTest { kind: Kind::LoseDevice };

#[derive(Clone, Copy)]
enum Kind {
    Wrong,
    Hang,
    Throw,
    LoseDevice,
}

/// A deliberately broken `out = a + b`, proving that harness catches each kind of failure.
/// Suites never include these; `--filter 'selftest_*'` does.
pub struct SelfTest {
    kind: Kind,
}

impl Kernel for SelfTest {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Wrong => "selftest_wrong",
            Kind::Hang => "selftest_hang",
            Kind::Throw => "selftest_throw",
            Kind::LoseDevice => "selftest_lose_device",
        }
    }
    fn summary(&self) -> &'static str {
        match self.kind {
            Kind::Wrong => "self-test: a + b with every 1000th element off by 0.5 (must fail the check)",
            Kind::Hang => "self-test: never completes in the page (must time out)",
            Kind::Throw => "self-test: throws a JavaScript exception in the page (must be reported)",
            Kind::LoseDevice => "self-test: destroys its GPU device (must be deviceLost, then the next case passes on a new device)",
        }
    }
    fn dims(&self) -> &'static [&'static str] {
        &["N"]
    }
    fn shapes(&self, _suite: Suite) -> Vec<Shape> {
        shapes(&[&[4096]])
    }
    // Everything but the shader and the fault is `add`'s: the check compares against a true sum.
    fn input_lens(&self, s: &Shape) -> Vec<usize> {
        ADD.input_lens(s)
    }
    fn output_len(&self, s: &Shape) -> usize {
        ADD.output_len(s)
    }
    fn params(&self, s: &Shape) -> Vec<u32> {
        ADD.params(s)
    }
    fn wgsl(&self) -> String {
        match self.kind {
            Kind::Wrong => binary_wgsl("x + y + select(0.0, 0.5, i % 1000u == 7u)"),
            _ => ADD.wgsl(),
        }
    }
    fn workgroups(&self, s: &Shape) -> [u32; 3] {
        ADD.workgroups(s)
    }
    fn reference(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f64> {
        ADD.reference(s, inputs)
    }
    fn cpu(&self, s: &Shape, inputs: &[Vec<f32>]) -> Vec<f32> {
        ADD.cpu(s, inputs)
    }
    fn tolerance(&self, s: &Shape) -> Tolerance {
        ADD.tolerance(s)
    }
    fn flops(&self, s: &Shape) -> f64 {
        ADD.flops(s)
    }
    fn fault(&self) -> Option<Fault> {
        match self.kind {
            Kind::Wrong => None,
            Kind::Hang => Some(Fault::Hang),
            Kind::Throw => Some(Fault::Throw),
            Kind::LoseDevice => Some(Fault::LoseDevice),
        }
    }
    fn is_selftest(&self) -> bool {
        true
    }
}
