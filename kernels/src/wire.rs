//! Messages between the page and the harness's server: results POSTed per case, progress on the
//! WebSocket. JSON on the wire; field names in camelCase because the page's JavaScript writes some.

use crate::sampling::{Sample, Sampled, SamplingMode, StopReason, WarmupStop};
use base64::Engine;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How long a platform takes to say that trivial GPU work is done: a property of the browser
/// (Firefox resolves on a timer of about 100 ms), and the floor under every wall-clock time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionLatency {
    /// Wall ms from submitting a trivial command buffer until `onSubmittedWorkDone` resolved,
    /// one per round.
    pub work_done_ms: Vec<f64>,
    /// Wall ms from submitting a 4-byte copy until `mapAsync` of its destination resolved, one
    /// per round.
    pub map_async_ms: Vec<f64>,
    /// `work_done_ms` again, nudged (an empty command buffer submitted every few ms while
    /// waiting, as steady batches are where the latency is long: `kernels::gpu::nudges`); empty
    /// where the browser is not nudged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nudged_work_done_ms: Vec<f64>,
    /// `map_async_ms` again, nudged; empty where the browser is not nudged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nudged_map_async_ms: Vec<f64>,
}

/// Everything a platform measured for one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseMeasurement {
    /// `CaseSpec::id`.
    pub case_id: String,
    /// Milliseconds spent in the shader-module and pipeline creation calls, for the pipelines
    /// this case compiled (see `pipelines_reused`).
    pub pipeline_ms: f64,
    /// Its pipelines an earlier case on the same device compiled, which it reused rather than
    /// compiled again: `pipeline_ms` leaves them out. 0 where none were.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub pipelines_reused: u32,
    /// Wall milliseconds of the first dispatch, which absorbs lazy compilation and first-use costs.
    pub first_dispatch_ms: f64,
    /// Per-dispatch milliseconds of each warm-up sample by the headline timer (GPU where
    /// timestamped), in order.
    pub warmup: Vec<f64>,
    /// What ended warm-up.
    pub warmup_stop: WarmupStop,
    /// The timed samples, in order.
    pub samples: Vec<Sample>,
    /// Whether the sample count or the time budget ended sampling.
    pub stopped_by: StopReason,
    /// Steady batches or isolated dispatches.
    #[serde(default = "SamplingMode::legacy")]
    pub sampling: SamplingMode,
    /// Dispatches per sample.
    #[serde(default = "one")]
    pub batch: u32,
    /// Batches kept in flight while sampling.
    #[serde(default = "one")]
    pub in_flight: u32,
    /// Empty command buffers submitted while this case's steady batches waited
    /// (`kernels::gpu::nudges`); 0 where none were.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub nudges: u64,
    /// When the timed samples began and ended, and when this measurement was sent, on the
    /// platform's own clock (`performance.now()`, or `Instant` natively): the receiver lines
    /// them up with its own clock by the arrival time, to know what the GPU's clocks were while
    /// the samples were taken. Zeros where unknown.
    #[serde(default)]
    pub timed_span_ms: (f64, f64),
    /// See `timed_span_ms`.
    #[serde(default)]
    pub sent_ms: f64,
    /// The output buffer after the last sample, as little-endian f32 bytes in base64.
    pub output: String,
    /// The wall clock's smallest step, ms, where the platform measured it (a CPU bench): browsers
    /// coarsen `performance.now()`, and a sample is never reported below one step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_resolution_ms: Option<f64>,
    /// The engine's own GPU time of one run, kernel by kernel, where it has a profile on an
    /// adapter with `timestamp-query`: harness's for a program of several dispatches (each alone
    /// between timestamps, [`crate::gpu::Gpu::profile`]), onnxruntime-web's JSEP's. Beside the
    /// samples, never one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_profile: Option<Vec<EngineKernel>>,
    /// Where onnxruntime-web placed the session's nodes, provider by provider
    /// ([`crate::placement`]); absent for other engines and where ORT's log did not say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement: Vec<crate::placement::ProviderNodes>,
    /// A cold-start case's phases, from navigation to the first output read back; its one
    /// sample is their sum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold: Option<ColdMeasurement>,
    /// A from-text case's phases (`tokenize`, `run`, `pool`), one list per timed sample, in
    /// order: each sample is their sum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<Vec<Vec<Phase>>>,
    /// Where the case's time went on the platform, from its announcement to its output read back
    /// ([`crate::sampling::CaseClock`]): `weights` (fetched and parsed, where this case fetched
    /// them), `build` (its program made), `upload` (buffers created with their contents: seeded
    /// weights are generated here), `pipelines`, `warmup` (the first run, calibration and
    /// warm-up), `samples` (the timed samples), `readback`, `profile`. Empty where the platform
    /// does not say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<Phase>,
    /// Dispatches one run of the case's program issued, where the platform ran harness's
    /// program: the kernels it chose for its adapter (a CPU's differ from a GPU's) decide it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatches: Option<u32>,
    /// The optional WebGPU features the case's shaders used (`shader-f16`, `subgroups`,
    /// `chromium-experimental-subgroup-matrix`: its GEMMs ran on tensor cores), so the report says
    /// how the numbers were made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    /// Which GPU timer gave the samples' GPU times, and what the page's timer could not time; or
    /// why there are none. `None` for harness's own timestamps on a case of one pass a batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_timer: Option<crate::gpu_timer::GpuTimerUse>,
}

/// One cold start: a fresh page's way to its first result, phase by phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ColdMeasurement {
    /// The phases in order, each timed from the end of the one before; the first from the
    /// page's navigation (`performance.timeOrigin`).
    pub phases: Vec<Phase>,
    /// `performance.timeOrigin`: when navigation began, ms since the Unix epoch.
    pub time_origin_ms: f64,
    /// When harness received the result, ms since the Unix epoch (set by harness, not the page):
    /// with `time_origin_ms`, a wall time independent of the page's own marks.
    #[serde(default)]
    pub arrived_ms: f64,
}

pub use crate::sampling::Phase;

impl ColdMeasurement {
    /// The phases that end at the page's clock readings `marks` (`performance.now()`, ms since
    /// navigation), named in order.
    pub fn of_marks(marks: &[(&str, f64)], time_origin_ms: f64) -> Self {
        ColdMeasurement { phases: crate::sampling::phases_of_marks(0.0, marks), time_origin_ms, arrived_ms: 0.0 }
    }

    /// From navigation to the first result: the phases' sum.
    pub fn first_result_ms(&self) -> f64 {
        self.phases.iter().map(|p| p.ms).sum()
    }

    /// The measurement of a cold start: its one sample is [`ColdMeasurement::first_result_ms`],
    /// by the wall clock, and `output` its first result.
    pub fn into_measurement(self, case_id: String, output: String) -> CaseMeasurement {
        let sample = Sample::new(self.first_result_ms(), None);
        let sampled = Sampled {
            first_ms: sample.wall_ms,
            warmup: Vec::new(),
            warmup_stop: WarmupStop::Fixed,
            samples: vec![sample],
            stopped_by: StopReason::SampleCount,
            mode: SamplingMode::Isolated,
            batch: 1,
            in_flight: 1,
            timed_span: (0.0, 0.0),
            nudges: 0,
            gpu_timer: None,
        };
        CaseMeasurement { cold: Some(self), ..CaseMeasurement::of_sampled(case_id, 0.0, sampled, output) }
    }
}

/// One kernel of an engine's profile of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EngineKernel {
    /// The op it runs (`MatMul`, `Softmax`; harness's: its shader's label).
    pub op: String,
    /// The graph node it runs (harness's: [`crate::program::Program::step_name`]).
    pub node: String,
    /// Its GPU time between the timestamps around it, ms.
    pub ms: f64,
}

fn one() -> u32 {
    1
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// f32 values as the little-endian bytes GPU buffers and the wire both use.
pub fn f32s_to_le_bytes(values: &[f32]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(values.len() * 4);
    values.iter().for_each(|v| bytes.extend_from_slice(&v.to_le_bytes()));
    bytes
}

/// Little-endian bytes back to f32 values (a trailing partial value is dropped).
pub fn le_bytes_to_f32s(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

impl CaseMeasurement {
    /// What a platform sends for case `case_id`: how it was `sampled`, the time its pipelines
    /// took to build, and its `output` ([`CaseMeasurement::encode_output`]).
    pub fn of_sampled(case_id: String, pipeline_ms: f64, sampled: Sampled, output: String) -> Self {
        CaseMeasurement {
            case_id,
            pipeline_ms,
            pipelines_reused: 0,
            first_dispatch_ms: sampled.first_ms,
            warmup: sampled.warmup,
            warmup_stop: sampled.warmup_stop,
            samples: sampled.samples,
            output,
            stopped_by: sampled.stopped_by,
            sampling: sampled.mode,
            batch: sampled.batch,
            in_flight: sampled.in_flight,
            nudges: sampled.nudges,
            timed_span_ms: sampled.timed_span,
            gpu_timer: sampled.gpu_timer,
            sent_ms: 0.0,
            timer_resolution_ms: None,
            engine_profile: None,
            placement: Vec::new(),
            cold: None,
            split: None,
            phases: Vec::new(),
            dispatches: None,
            features: Vec::new(),
        }
    }

    /// The timed samples' span moved onto a receiver's clock, given when the measurement arrived
    /// there (`arrived_ms`); `None` for a measurement that carries no times.
    pub fn timed_span_at(&self, arrived_ms: f64) -> Option<(f64, f64)> {
        (self.sent_ms > 0.0).then_some(arrived_ms - self.sent_ms).and_then(|offset| self.timed_span_on(offset))
    }

    /// The timed span on the receiver's clock, given the receiver's clock minus the platform's.
    pub fn timed_span_on(&self, offset_ms: f64) -> Option<(f64, f64)> {
        let (from, to) = self.timed_span_ms;
        (to >= from && to > 0.0).then_some((from + offset_ms, to + offset_ms))
    }

    /// Encodes an output buffer of f32 values for the wire.
    pub fn encode_output(values: &[f32]) -> String {
        Self::encode_bytes(&f32s_to_le_bytes(values))
    }

    /// Encodes output bytes (4-byte values, little-endian) for the wire.
    pub fn encode_bytes(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// The output bytes; `None` when they are not base64 of whole 4-byte values.
    pub fn output_bytes(&self) -> Option<Vec<u8>> {
        let bytes = base64::engine::general_purpose::STANDARD.decode(&self.output).ok()?;
        (bytes.len() % 4 == 0).then_some(bytes)
    }

    /// Decodes the output buffer as f32 values; `None` when it is not base64 of whole f32s.
    pub fn decode_output(&self) -> Option<Vec<f32>> {
        self.output_bytes().map(|b| le_bytes_to_f32s(&b))
    }
}

/// What the browser says about its WebGPU adapter (`GPUAdapter`, `GPUAdapterInfo`), as the page's
/// JavaScript reads it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AdapterReport {
    /// False when `navigator.gpu` is missing or no adapter was granted.
    pub available: bool,
    /// Why not, when unavailable.
    pub reason: Option<String>,
    /// `GPUAdapterInfo.vendor`.
    pub vendor: String,
    /// `GPUAdapterInfo.architecture`.
    pub architecture: String,
    /// `GPUAdapterInfo.device`.
    pub device: String,
    /// `GPUAdapterInfo.description`.
    pub description: String,
    /// `isFallbackAdapter`, where the browser exposes it.
    pub is_fallback_adapter: Option<bool>,
    /// Adapter features, sorted.
    pub features: Vec<String>,
    /// Adapter limits by name.
    pub limits: BTreeMap<String, f64>,
    /// `navigator.userAgent`.
    pub user_agent: String,
    /// Whether the page is cross-origin isolated (precise `performance.now()`).
    pub cross_origin_isolated: bool,
}

impl AdapterReport {
    /// The adapter's vendor, architecture, device and description, those it gives, in one
    /// line; `unnamed adapter` where the browser hides them all (Firefox does).
    pub fn label(&self) -> String {
        let parts: Vec<&str> = [&self.vendor, &self.architecture, &self.device, &self.description]
            .into_iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .collect();
        if parts.is_empty() {
            "unnamed adapter".to_string()
        } else {
            parts.join(" ")
        }
    }
}

/// An exception or failure in the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageError {
    /// The message.
    pub message: String,
    /// The JavaScript stack, when there is one.
    #[serde(default)]
    pub stack: Option<String>,
    /// The case that was running, when known.
    #[serde(default)]
    pub case_id: Option<String>,
    /// True when the page stopped: the harness reloads it to go on with the remaining cases.
    #[serde(default)]
    pub fatal: bool,
    /// True when the case needs something this adapter does not have (`shader-f16`): the case
    /// is `unsupported` there, not an error.
    #[serde(default)]
    pub unsupported: bool,
    /// True when the GPU device was lost while the case ran: the case is `deviceLost`, and the
    /// page goes on with a fresh device.
    #[serde(default)]
    pub device_lost: bool,
    /// True when the browser or its driver died (harness went on in a fresh session): news for
    /// the exit status even when no case was running then.
    #[serde(default)]
    pub crashed: bool,
}

impl PageError {
    /// A case that could not be measured, for `message`; the run goes on.
    pub fn case(case_id: &str, message: String) -> PageError {
        PageError { message, stack: None, case_id: Some(case_id.to_string()), fatal: false, unsupported: false, device_lost: false, crashed: false }
    }
}

/// What a page (or a worker playing its part) tells harness, in arrival order: over HTTP from a
/// page, over a channel from the native worker, as JSON lines from a natively built bench binary.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "camelCase")]
pub enum PageEvent {
    /// The adapter the page got (or why it got none).
    Adapter(AdapterReport),
    /// How long the platform takes to report trivial GPU work done.
    Latency(CompletionLatency),
    /// A case started or a sample finished.
    Progress(Progress),
    /// A case's measurement.
    Result(Box<CaseMeasurement>),
    /// An exception or error.
    Error(PageError),
    /// Every case of the plan was sent.
    Done,
}

/// Progress the page streams over the WebSocket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Progress {
    /// A case began (its timeout starts now).
    #[serde(rename_all = "camelCase")]
    CaseStarted {
        /// The case.
        case_id: String,
        /// When, on the platform's clock (`performance.now()`, or `Instant` natively); 0 where
        /// unknown. A small message sent at once, so its delay is a good measure of the offset
        /// between the platform's clock and the receiver's.
        #[serde(default)]
        at_ms: f64,
    },
    /// A timed sample finished.
    #[serde(rename_all = "camelCase")]
    SampleDone {
        /// The case.
        case_id: String,
        /// Samples done so far.
        done: u32,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_round_trips_bit_exactly() {
        let v = [1.5f32, -0.0, f32::NAN, f32::INFINITY, 1e-30];
        let m = CaseMeasurement {
            case_id: "x".into(),
            pipeline_ms: 0.0,
            pipelines_reused: 0,
            first_dispatch_ms: 0.0,
            warmup: vec![],
            warmup_stop: WarmupStop::Fixed,
            samples: vec![],
            stopped_by: StopReason::SampleCount,
            sampling: SamplingMode::Steady,
            batch: 1,
            in_flight: 1,
            nudges: 0,
            timed_span_ms: (0.0, 0.0),
            sent_ms: 0.0,
            output: CaseMeasurement::encode_output(&v),
            timer_resolution_ms: None,
            engine_profile: None,
            placement: Vec::new(),
            cold: None,
            split: None,
            phases: Vec::new(),
            dispatches: None,
            features: Vec::new(),
            gpu_timer: None,
        };
        let back = m.decode_output().unwrap();
        assert_eq!(
            back.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn progress_uses_a_type_tag() {
        let p: Progress = serde_json::from_str(r#"{"type":"caseStarted","caseId":"a"}"#).unwrap();
        assert_eq!(p, Progress::CaseStarted { case_id: "a".into(), at_ms: 0.0 });
    }
}
