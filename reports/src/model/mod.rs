//! The data model of `results.json`. Field names are camelCase on disk; the JSON Schema in
//! `reports/schema/results.schema.json` documents every field and is checked against real runs
//! by the test suite. Bump [`SCHEMA_VERSION`] on any change that breaks readers.

mod case;
mod case_time;
mod change;
mod clock;
mod correctness;
mod hardware;
mod measurement;
mod memory;
mod peaks;
pub mod roofline;
mod run;
mod schema;

pub use case::{untold_variant, Attempt, CaseReport, CaseStatus, Counts};
pub use case_time::{describe as describe_case_times, totals as case_time_totals, CaseTime};
pub use change::{BaselineComparison, CaseChange, ChangeCounts, HardwareChange, Presence, OTHER_HARDWARE};
pub use clock::{ClockStats, ProbeInfo, ProbeStatus};
pub use correctness::{describe_failure, format_check, format_drift};
pub use hardware::HostInfo;
pub use measurement::{format_ci, format_ms, phases_line, ColdStartReport, EngineOp, EngineProfile, Latency, TextReport, Throughput, Timer};
pub use memory::{MemoryGrowth, MemorySample};
pub use peaks::{Bound, CaseRoofline, Peak, Peaks};
pub use run::{labels, BrowserInfo, CpuAdapterPolicy, DriverInfo, HarnessInfo, Phases, PlatformRun, RunReport, RunStatus, Settings};
pub use schema::SCHEMA_VERSION;
