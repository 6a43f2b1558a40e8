//! The self-contained HTML report: one file, inline CSS, SVG and script, no network fetches, so it
//! opens from disk or a CI artifact. Geometry of every chart is computed here; the template only
//! places it.

use crate::baseline::BaselineComparison;
use crate::model::{format_ci as pct, format_ms, CaseReport, PlatformRun, RunReport, Timer};
use crate::onnx_table::{onnx_tables, OnnxTable};
use crate::tables::{gpu_timer_rows, model_rows, phased_tables, vs_f32_note, GpuTimerRow, ModelRow, PhasedTable, GPU_TIMER_NOTE};
use crate::template::render_template;
use crate::ReportError;
use serde::Serialize;
use stats::outliers::Severity;
use stats::Summary;

const TEMPLATE: &str = include_str!("../templates/report.html.tera");

/// Renders `report` as one HTML document.
pub fn render(report: &RunReport) -> Result<String, ReportError> {
    let view = ReportView::new(report);
    let context = tera::Context::from_serialize(&view).map_err(|e| ReportError::Template(e.to_string()))?;
    render_template("report.html", TEMPLATE, context)
}

#[derive(Serialize)]
struct ReportView<'a> {
    report: &'a RunReport,
    sampling: String,
    runs: Vec<RunView<'a>>,
    /// The user's own ONNX files (`--onnx`) across providers and browsers: warm, then cold
    /// starts; empty without them.
    onnx: Vec<OnnxTable>,
    models: Vec<ModelRow<'a>>,
    /// Some model row has an error against its f32 model: the Models table's *vs f32* column,
    /// and what it means.
    vs_f32_note: Option<&'static str>,
    /// Cases timed in phases (`--cold-start`, `--from-text`), a table a kind.
    phased: Vec<PhasedTable<'a>>,
    /// Cases the page GPU timer timed, with what it could not time and its cost.
    gpu_timers: Vec<GpuTimerRow<'a>>,
    /// What the GPU timer table says under it.
    gpu_timer_note: &'static str,
    comparison: Option<ComparisonView>,
    /// Browsers that ran on a software adapter on a machine with a hardware GPU: a banner.
    warnings: Vec<String>,
    /// Cases measured below the report's clock (nvbench's throttle threshold).
    clock_flags: Vec<crate::probe::ClockFlag>,
    /// When some case has clocks: how few probe samples leave a case's clock unknown, said
    /// wherever clock flags and the *SM clock* column are explained.
    clock_rule: Option<String>,
    baseline: Option<BaselineView>,
    /// Some case has a roofline fraction: the case tables get their *Of peak* column.
    roofline: bool,
}

#[derive(Serialize)]
struct ComparisonView {
    runs: Vec<String>,
    flags: Vec<FlagView>,
    /// Which runs' times were left out of the ranking, and why.
    software_note: Option<String>,
    rows: Vec<ComparisonRow>,
}

#[derive(Serialize)]
struct FlagView {
    id: String,
    why: String,
}

#[derive(Serialize)]
struct ComparisonRow {
    id: String,
    timer: String,
    flagged: bool,
    cells: Vec<ComparisonCell>,
    bars: Vec<Bar>,
    bars_height: f64,
}

#[derive(Serialize)]
struct ComparisonCell {
    median: String,
    sort: String,
    spread: String,
    ratio: String,
    status: &'static str,
    slow: bool,
}

/// One horizontal bar of a cross-run chart: the median, with its CI as a whisker.
#[derive(Serialize)]
struct Bar {
    label: String,
    y: f64,
    width: f64,
    ci_from: f64,
    ci_to: f64,
    value: String,
    /// A software adapter's time: drawn grey, as it is not ranked.
    software: bool,
}

#[derive(Serialize)]
struct BaselineView {
    name: String,
    created_at: String,
    revision: String,
    noise_pct: f64,
    gate: Option<String>,
    gate_failed: bool,
    /// The runs measured on other hardware than the baseline's, in words.
    hardware_changes: Vec<String>,
    counts: crate::baseline::ChangeCounts,
    rows: Vec<BaselineRow>,
    axis_pct: f64,
}

#[derive(Serialize)]
struct BaselineRow {
    run: String,
    id: String,
    timer: &'static str,
    old: String,
    new: String,
    change: String,
    change_sort: f64,
    class: String,
    forest: Option<Forest>,
}

/// A forest-plot row: the change's interval and point on an axis centred on zero, with the noise
/// band shaded.
#[derive(Serialize)]
struct Forest {
    low: f64,
    high: f64,
    point: f64,
    zero: f64,
    noise_from: f64,
    noise_to: f64,
}

#[derive(Serialize)]
struct RunView<'a> {
    run: &'a PlatformRun,
    anchor: String,
    title: String,
    counts: crate::model::Counts,
    /// The completion latency in words, where measured.
    latency: Option<String>,
    /// The peaks its roofline probes reached, in words, where it ran them.
    peaks: Option<String>,
    /// How memory grew after warm-up, in words, where it was read.
    memory: Option<String>,
    /// The optional WebGPU features its cases' shaders used, in words, where any.
    features: Option<String>,
    rows: Vec<RowView<'a>>,
    distributions: Vec<Distribution>,
    profiles: Vec<ProfileView>,
    /// Where its cases' time went, phase by phase, where they say.
    time: Option<TimeView>,
    /// How it was sampled on a CPU adapter in place of the settings, in words, where it was.
    cpu_policy: Option<String>,
}

/// Where a run's cases' time went ([`crate::model::CaseTime`]): a row a case and the total, a
/// column a phase the run's cases had.
#[derive(Serialize)]
struct TimeView {
    phases: Vec<String>,
    rows: Vec<TimeRow>,
    total: TimeRow,
    /// What no phase accounts for, in words.
    unattributed: String,
}

#[derive(Serialize)]
struct TimeRow {
    id: String,
    wall: String,
    /// Each phase's ms, in [`TimeView::phases`]' order, then the unattributed.
    cells: Vec<String>,
    /// The stacked bar: each phase's share of the wall time, %, with its name.
    bars: Vec<(String, f64)>,
}

impl TimeRow {
    fn new(id: String, wall_ms: f64, phases: &[String], ms_of: impl Fn(&str) -> f64) -> Self {
        let names = phases.iter().map(String::as_str).chain(["unattributed"]);
        let values: Vec<(String, f64)> = names.map(|n| (n.to_string(), ms_of(n))).collect();
        let share = |ms: f64| if wall_ms > 0.0 { 100.0 * ms / wall_ms } else { 0.0 };
        TimeRow {
            id,
            wall: format_ms(wall_ms),
            cells: values.iter().map(|(_, ms)| if *ms > 0.0 { format_ms(*ms) } else { "–".into() }).collect(),
            bars: values.iter().filter(|(_, ms)| *ms > 0.0).map(|(n, ms)| (n.clone(), share(*ms))).collect(),
        }
    }
}

fn time(run: &PlatformRun) -> Option<TimeView> {
    let timed: Vec<(&str, &crate::model::CaseTime)> = run.cases.iter().filter_map(|c| c.case_time.as_ref().map(|t| (c.id.as_str(), t))).collect();
    if timed.is_empty() {
        return None;
    }
    let (totals, wall) = crate::model::case_time_totals(timed.iter().map(|(_, t)| *t));
    let phases: Vec<String> = totals.iter().map(|p| p.name.clone()).filter(|n| n != "unattributed").collect();
    let total_of = |name: &str| totals.iter().find(|p| p.name == name).map_or(0.0, |p| p.ms);
    let unattributed = total_of("unattributed");
    let rows = timed
        .iter()
        .map(|(id, t)| TimeRow::new(id.to_string(), t.wall_ms, &phases, |n| if n == "unattributed" { t.unattributed_ms } else { t.ms(n) }))
        .collect();
    Some(TimeView {
        total: TimeRow::new(format!("all {} cases", timed.len()), wall, &phases, total_of),
        phases,
        rows,
        unattributed: format!("{} ms of {} ms ({:.1}%)", format_ms(unattributed), format_ms(wall), if wall > 0.0 { 100.0 * unattributed / wall } else { 0.0 }),
    })
}

/// Where one case's GPU time went, kernel by kernel ([`crate::model::EngineProfile`]).
#[derive(Serialize)]
struct ProfileView {
    id: String,
    caption: String,
    ops: Vec<ProfileOp>,
}

#[derive(Serialize)]
struct ProfileOp {
    op: String,
    count: usize,
    ms: String,
    share: String,
}

#[derive(Serialize)]
struct RowView<'a> {
    case: &'a CaseReport,
    status: &'static str,
    shape: String,
    timer: &'static str,
    median: String,
    median_sort: f64,
    ci: String,
    min: String,
    p95: String,
    cv: String,
    n: String,
    stop: &'static str,
    outliers: String,
    sampling: String,
    sampling_how: String,
    sm_clock: String,
    clock_how: String,
    warmup: String,
    warmup_how: String,
    wall_median: String,
    gflops: String,
    gbps: String,
    roofline: String,
    roofline_sort: f64,
    roofline_how: String,
    pipeline: String,
    error: String,
}

/// A box plot of one case's samples.
#[derive(Serialize)]
struct Distribution {
    id: String,
    timer: &'static str,
    status: &'static str,
    caption: String,
    width: f64,
    q1: f64,
    q3: f64,
    median: f64,
    ci_from: f64,
    ci_to: f64,
    whisker_low: f64,
    whisker_high: f64,
    points: Vec<Point>,
    ticks: Vec<Tick>,
}

#[derive(Serialize)]
struct Point {
    x: f64,
    severe: bool,
}

#[derive(Serialize)]
struct Tick {
    x: f64,
    label: String,
    anchor: &'static str,
}

const BOX_WIDTH: f64 = 310.0;
const BOX_MARGIN: f64 = 8.0;
const BAR_SPAN: f64 = 150.0;
const BAR_ROW: f64 = 14.0;
const FOREST_WIDTH: f64 = 180.0;
/// Pixels between tick labels, so they never overlap.
const MIN_LABEL_GAP: f64 = 48.0;
/// Most outlier dots drawn per case; the table gives the full counts.
const MAX_POINTS: usize = 200;

fn ms(v: Option<f64>) -> String {
    v.map(format_ms).unwrap_or_else(|| "–".into())
}

fn num(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.2}")).unwrap_or_else(|| "–".into())
}

impl<'a> ReportView<'a> {
    fn new(report: &'a RunReport) -> Self {
        let labels = crate::model::labels(report);
        let runs = report
            .runs
            .iter()
            .zip(labels)
            .enumerate()
            .map(|(i, (r, l))| RunView::new(r, l, i, r.cpu_policy(&report.settings)))
            .collect();
        let s = &report.settings;
        let target = s.target_ci_pct.map(|t| format!(", until the median's 95% CI is within ±{t}%")).unwrap_or_default();
        let mode = match s.sampling {
            kernels::SamplingMode::Steady => "steady: each sample a batch of back-to-back dispatches sized to ~5 ms of GPU work, batches queued ahead so the GPU never idles, times per dispatch",
            kernels::SamplingMode::Isolated => "isolated: one dispatch per sample, the GPU idle in between",
        };
        let nudged = match (s.sampling, s.nudge) {
            (kernels::SamplingMode::Steady, kernels::Nudge::Auto) => {
                "; where a browser reports completion on a timer (its completion latency below), every engine's batches nudged alike: an empty command buffer submitted every few ms while one waits"
            }
            _ => "",
        };
        let sampling = format!(
            "{mode}{nudged}; {} samples{} (or {} s of sampling) per case after the first dispatch and warm-up ({})",
            if s.target_ci_pct.is_some() { format!("at least {}", s.samples) } else { format!("up to {}", s.samples) },
            target,
            s.max_time_s,
            s.warmup
        );
        let clock_flags = crate::probe::clock_flags(report);
        let models = model_rows(report);
        ReportView {
            report,
            sampling,
            runs,
            vs_f32_note: vs_f32_note(&models),
            onnx: onnx_tables(report),
            models,
            phased: phased_tables(report),
            gpu_timers: gpu_timer_rows(report),
            gpu_timer_note: GPU_TIMER_NOTE,
            comparison: comparison(report, &clock_flags),
            warnings: crate::adapter::software_adapter_warnings(report),
            clock_flags,
            clock_rule: crate::probe::case_clocks(report).next().is_some().then(crate::probe::judging_rule),
            baseline: report.baseline.as_ref().map(baseline),
            roofline: crate::model::roofline::any_roofline(report),
        }
    }
}

fn comparison(report: &RunReport, clock_flags: &[crate::probe::ClockFlag]) -> Option<ComparisonView> {
    let cmp = crate::compare::compare_runs(report)?;
    let rows = cmp
        .cases
        .iter()
        .map(|c| {
            let top = c
                .entries
                .iter()
                .filter_map(|e| e.stats.map(|s| s.median_ci.map_or(s.median, |ci| ci.high.max(s.median))))
                .fold(0.0f64, f64::max)
                .max(f64::MIN_POSITIVE);
            let scale = |v: f64| v / top * BAR_SPAN;
            let bars = c
                .entries
                .iter()
                .filter_map(|e| e.stats.map(|s| (e, s)))
                .enumerate()
                .map(|(i, (e, s))| Bar {
                    label: e.run.clone(),
                    y: i as f64 * BAR_ROW,
                    width: scale(s.median).max(1.0),
                    ci_from: scale(s.median_ci.map_or(s.median, |ci| ci.low)),
                    ci_to: scale(s.median_ci.map_or(s.median, |ci| ci.high)),
                    value: format_ms(s.median),
                    software: e.software.is_some(),
                })
                .collect::<Vec<_>>();
            ComparisonRow {
                id: c.id.clone(),
                timer: c.timer_words(),
                flagged: c.correctness_disagrees || !c.slow_runs.is_empty(),
                bars_height: bars.len() as f64 * BAR_ROW + 2.0,
                bars,
                cells: c
                    .entries
                    .iter()
                    .map(|e| ComparisonCell {
                        median: ms(e.stats.map(|s| s.median)),
                        sort: e.stats.map(|s| s.median.to_string()).unwrap_or_else(|| "inf".into()),
                        spread: e
                            .stats
                            .map(|s| format!("{} CI, cv {:.1}%, p95 {}", pct(s.ci_half_width_pct), s.cv * 100.0, ms(Some(s.p95))))
                            .unwrap_or_default(),
                        ratio: e.rank().unwrap_or_default(),
                        status: e.status.map(|s| s.as_str()).unwrap_or("absent"),
                        slow: c.slow_runs.contains(&e.run),
                    })
                    .collect(),
            }
        })
        .collect();
    Some(ComparisonView {
        runs: cmp.runs.clone(),
        flags: cmp
            .flagged()
            .map(|c| FlagView { id: c.id.clone(), why: c.reasons().join("; ") })
            .chain(clock_flags.iter().map(|f| FlagView { id: f.id.clone(), why: format!("{}: {}", f.run, f.why) }))
            .collect(),
        software_note: cmp.software_note(),
        rows,
    })
}

fn baseline(b: &BaselineComparison) -> BaselineView {
    // One axis for every row, so intervals compare at a glance; ±100% at most.
    let axis_pct = b
        .cases
        .iter()
        .filter_map(|c| c.change.map(|ch| ch.ci_pct.low.abs().max(ch.ci_pct.high.abs())))
        .fold(b.noise_pct * 2.0, f64::max)
        .clamp(1.0, 100.0);
    let x = |p: f64| ((p.clamp(-axis_pct, axis_pct) + axis_pct) / (2.0 * axis_pct) * FOREST_WIDTH * 100.0).round() / 100.0;
    let rows = b
        .cases
        .iter()
        .map(|c| BaselineRow {
            run: c.run.clone(),
            id: c.id.clone(),
            timer: c.timer.map(Timer::short).unwrap_or("–"),
            old: ms(c.change.map(|ch| ch.old_median)),
            new: ms(c.change.map(|ch| ch.new_median)),
            change: c.change.map(|ch| ch.describe()).unwrap_or_else(|| "–".into()),
            change_sort: c.change.map(|ch| ch.pct).unwrap_or(f64::NAN),
            class: c.class().map(|k| k.as_str().to_string()).unwrap_or_else(|| c.note.clone().unwrap_or_default()),
            forest: c.change.map(|ch| Forest {
                low: x(ch.ci_pct.low),
                high: x(ch.ci_pct.high).max(x(ch.ci_pct.low) + 1.0),
                point: x(ch.pct),
                zero: x(0.0),
                noise_from: x(-b.noise_pct),
                noise_to: x(b.noise_pct),
            }),
        })
        .collect();
    BaselineView {
        name: b.name.clone(),
        created_at: b.baseline_created_at.clone(),
        revision: b.baseline_revision.clone().unwrap_or_else(|| "unknown".into()),
        noise_pct: b.noise_pct,
        gate: b.fail_on_regression_pct.map(|p| format!("{p}%")),
        gate_failed: b.gate_fails(),
        hardware_changes: b.hardware_changes.iter().map(crate::baseline::HardwareChange::describe).collect(),
        counts: b.counts(),
        rows,
        axis_pct,
    }
}

impl<'a> RunView<'a> {
    fn new(run: &'a PlatformRun, label: String, index: usize, cpu_policy: Option<&crate::model::CpuAdapterPolicy>) -> Self {
        let rows = run.cases.iter().map(|c| row(c, run.completion_latency.as_ref())).collect();
        let title = match &run.browser_info {
            Some(b) => format!("{label} — {} {}", b.name, b.version),
            None => label,
        };
        RunView {
            run,
            anchor: format!("run-{index}"),
            title,
            counts: run.counts(),
            latency: run.completion_latency.as_ref().map(|l| l.describe()),
            peaks: run.roofline.as_ref().map(|p| p.describe()),
            memory: run.memory_growth().map(|m| m.describe()),
            features: run.features_used(),
            rows,
            distributions: run.cases.iter().filter_map(distribution).collect(),
            profiles: run.cases.iter().filter_map(profile).collect(),
            time: time(run),
            cpu_policy: cpu_policy.map(|p| p.describe()),
        }
    }
}

fn profile(c: &CaseReport) -> Option<ProfileView> {
    let p = c.engine_profile.as_ref()?;
    let whole = match (&c.gpu, &c.wall) {
        (Some(gpu), _) => format!("; a whole run's GPU median {} ms, which the kernels alone sum to {:.0}% of", format_ms(gpu.median), 100.0 * p.gpu_ms / gpu.median),
        (None, Some(wall)) => format!("; a whole run's wall median {} ms", format_ms(wall.median)),
        (None, None) => String::new(),
    };
    let ops = p.by_op.iter().map(|o| ProfileOp { op: o.op.clone(), count: o.count, ms: format_ms(o.ms), share: format!("{:.1}%", 100.0 * o.ms / p.gpu_ms) });
    Some(ProfileView { id: c.id.clone(), caption: format!("{} kernels, {} ms summed{whole}", p.kernels, format_ms(p.gpu_ms)), ops: ops.collect() })
}

fn row<'a>(c: &'a CaseReport, latency: Option<&crate::model::Latency>) -> RowView<'a> {
    let h = c.headline();
    let share = c.latency_share_pct(latency).map(|p| format!("; wall clock only: the completion latency is {p:.1}% of a sample")).unwrap_or_default();
    RowView {
        case: c,
        status: c.status.as_str(),
        shape: c.dims.iter().zip(&c.shape.0).map(|(d, v)| format!("{d}={v}")).collect::<Vec<_>>().join(" "),
        timer: c.timer_label(),
        median: ms(h.map(|s| s.median)),
        median_sort: h.map(|s| s.median).unwrap_or(f64::INFINITY),
        ci: pct(h.and_then(|s| s.ci_half_width_pct)),
        min: ms(h.map(|s| s.min)),
        p95: ms(h.map(|s| s.p95)),
        cv: h.map(|s| format!("{:.1}%", s.cv * 100.0)).unwrap_or_else(|| "–".into()),
        n: h.map(|s| s.n.to_string()).unwrap_or_else(|| "–".into()),
        stop: c.stopped_by.map(|s| s.describe()).unwrap_or("–"),
        outliers: h.map(|s| s.outliers.describe()).unwrap_or_else(|| "–".into()),
        sampling: c.sampling_label(),
        sampling_how: c.sampling_description().map(|d| d + &share).unwrap_or_default(),
        sm_clock: crate::probe::format_sm(c.clock.as_ref()),
        clock_how: c.clock.as_ref().map(crate::probe::describe).unwrap_or_default(),
        warmup: match c.warmup_stop {
            Some(stop) => format!("{} ({})", c.warmup.len(), stop.as_str()),
            None => "–".into(),
        },
        warmup_how: c.warmup_explanation().unwrap_or_default(),
        wall_median: ms(c.wall.map(|s| s.median)),
        gflops: num(c.gflops),
        gbps: num(c.gbps),
        roofline: crate::model::roofline::format_roofline(c),
        roofline_sort: c.roofline.as_ref().map_or(-1.0, |r| r.fraction),
        roofline_how: c.roofline.as_ref().map(|r| r.explain()).unwrap_or_default(),
        pipeline: match c.pipelines_reused {
            Some(n) => format!("{} (+{n} reused)", ms(c.pipeline_ms)),
            None => ms(c.pipeline_ms),
        },
        error: c.correctness.as_ref().map(|v| format!("{:.2e}", v.max_abs_err)).unwrap_or_else(|| "–".into()),
    }
}

/// The box plot of a measured case on its own scale: box from Q1 to Q3, median line, the median's
/// CI shaded, whiskers to the furthest samples inside Tukey's fences, outliers as dots (hollow
/// mild, filled severe).
fn distribution(c: &CaseReport) -> Option<Distribution> {
    let timer = c.timer?;
    let s: &Summary = c.headline()?;
    let times = c.times(timer);
    if times.is_empty() {
        return None;
    }
    let (mut lo, mut hi) = (s.min, s.max);
    if hi - lo < 1e-12 {
        lo -= (lo.abs() * 0.01).max(1e-6);
        hi += (hi.abs() * 0.01).max(1e-6);
    }
    let span = BOX_WIDTH - 2.0 * BOX_MARGIN;
    let x = |v: f64| ((BOX_MARGIN + (v - lo) / (hi - lo) * span) * 100.0).round() / 100.0;
    let o = &s.outliers;
    let inside = times.iter().copied().filter(|v| o.severity(*v) == Severity::None);
    let whisker_low = inside.clone().fold(f64::INFINITY, f64::min).min(s.q1);
    let whisker_high = inside.fold(f64::NEG_INFINITY, f64::max).max(s.q3);
    let points = times
        .iter()
        .filter_map(|&v| match o.severity(v) {
            Severity::None => None,
            sev => Some(Point { x: x(v), severe: sev == Severity::Severe }),
        })
        .take(MAX_POINTS)
        .collect();
    let ci = s.median_ci;
    Some(Distribution {
        id: c.id.clone(),
        timer: timer.short(),
        status: c.status.as_str(),
        caption: format!(
            "n={}, median {} ms {} (95% CI), IQR {}–{} ms, {} outliers",
            s.n,
            format_ms(s.median),
            pct(s.ci_half_width_pct),
            format_ms(s.q1),
            format_ms(s.q3),
            o.total()
        ),
        width: BOX_WIDTH,
        q1: x(s.q1),
        q3: x(s.q3).max(x(s.q1) + 1.0),
        median: x(s.median),
        ci_from: x(ci.map_or(s.median, |i| i.low)),
        ci_to: x(ci.map_or(s.median, |i| i.high)),
        whisker_low: x(whisker_low),
        whisker_high: x(whisker_high),
        points,
        ticks: {
            // The median's label only where it does not collide with the end labels.
            let (a, m, b) = (x(s.min), x(s.median), x(s.max));
            let mut ticks = vec![Tick { x: a, label: format_ms(s.min), anchor: "start" }];
            if m - a > MIN_LABEL_GAP && b - m > MIN_LABEL_GAP {
                ticks.push(Tick { x: m, label: format_ms(s.median), anchor: "middle" });
            }
            if b - a > MIN_LABEL_GAP {
                ticks.push(Tick { x: b, label: format_ms(s.max), anchor: "end" });
            }
            ticks
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{case, model_case, report_with};

    #[test]
    fn every_measured_case_gets_one_box_plot_and_the_page_is_self_contained() {
        let mut samples: Vec<f64> = (0..30).map(|i| 1.0 + (i % 5) as f64 * 0.01).collect();
        samples.push(9.0);
        let report = report_with(vec![
            ("chrome", vec![case("a", &samples, true, true), case("b", &[2.0, 2.1, 2.2], false, true)]),
            ("firefox", vec![case("a", &samples, true, false)]),
        ]);
        let html = render(&report).unwrap();
        assert_eq!(html.matches(r#"<svg class="dist""#).count(), 3);
        assert_eq!(html.matches(r#"<svg class="dist" data-case="a""#).count(), 2);
        // The 9 ms sample is a severe outlier, drawn filled.
        assert!(html.contains(r#"class="outlier severe""#));
        assert_eq!(html.matches(r#"<svg class="bars""#).count(), 2);
        // Nothing to fetch: no external scripts, stylesheets, images or fonts, and an inline
        // favicon so browsers do not ask for one.
        for banned in ["<link rel=\"stylesheet", " src=", "url(", "@import", "href=\"http"] {
            assert!(!html.contains(banned), "{banned}");
        }
        assert!(html.contains(r#"<link rel="icon" href="data:,">"#));
    }

    #[test]
    fn model_cases_get_a_sortable_models_table_and_kernel_runs_none() {
        let report = report_with(vec![
            ("chrome", vec![case("a", &[1.0], true, true), model_case("prefill", &[2.0, 2.5, 1.5])]),
            ("firefox", vec![model_case("prefill", &[4.0, 4.0, 4.0])]),
        ]);
        let html = render(&report).unwrap();
        assert!(html.contains(r#"<table id="models-table" class="sortable cases">"#), "{html}");
        assert!(html.contains(r#"data-filter-for="models-table""#));
        let section = &html[html.find(r#"<section id="models">"#).unwrap()..];
        // Tera escapes `/` in text as `&#x2F;`; browsers show it as `/`.
        let section = section[..section.find("</section>").unwrap()].replace("&#x2F;", "/");
        assert_eq!(section.matches("<tr data-case=").count(), 2, "one row per model case per run");
        // 16 tokens per run at the 2 ms median; the kernel case `a` has no row.
        let median = report.runs[0].cases[1].headline().unwrap().median;
        assert!(section.contains(&format!("{:.1} tokens/s", 16.0 / median * 1e3)), "{section}");
        assert!(section.contains("8000.0 tokens/s") && section.contains("4000.0 tokens/s"), "{section}");
        assert!(section.contains("0.1250 ms/token") && section.contains("cos ≥ 0.99987"), "{section}");
        assert!(section.contains("chrome/webgpu") && !section.contains(">a<"), "{section}");

        let kernels_only = render(&report_with(vec![("chrome", vec![case("a", &[1.0], true, true)])])).unwrap();
        assert!(!kernels_only.contains("models-table") && !kernels_only.contains("tokens/s"));
    }

    #[test]
    fn a_software_adapters_time_is_drawn_grey_unranked_and_the_reason_given() {
        let mut report = report_with(vec![("chrome", vec![case("a", &[9.0], true, true)]), ("firefox", vec![case("a", &[1.0], true, true)])]);
        report.runs[0].adapter = Some(crate::adapter::tests::swiftshader());
        let html = render(&report).unwrap();
        let section = &html[html.find(r#"<section id="across">"#).unwrap()..];
        let section = &section[..section.find("</section>").unwrap()];
        assert!(section.contains("<b>Not ranked:</b> Speed not compared for chrome&#x2F;webgpu (SwiftShader") && section.contains("harness verify gives"), "{section}");
        assert!(section.contains(r#"<span class="muted">software</span>"#) && section.contains(r##"fill="#bbb""##) && section.contains(r##"fill="#4c78a8""##), "{section}");
        assert!(section.contains("Nothing flagged"), "{section}");
    }

    #[test]
    fn the_users_browser_flags_are_shown_and_marked_as_theirs() {
        let mut report = report_with(vec![("chrome", vec![case("a", &[1.0], true, true)]), ("firefox", vec![case("a", &[1.0], true, true)])]);
        let html = render(&report).unwrap();
        assert!(!html.contains("User flags") && !html.contains("User browser flags"), "none given, none shown");

        report.settings.browser_args = vec!["chrome=--enable-features=Vulkan".into()];
        report.settings.browser_prefs = vec!["firefox=a.b=true".into()];
        let info = |flags: &[&str], user: &[&str]| crate::BrowserInfo {
            name: "b".into(),
            version: "1".into(),
            path: None,
            flags: flags.iter().map(|f| f.to_string()).collect(),
            user_flags: user.iter().map(|f| f.to_string()).collect(),
            ..Default::default()
        };
        report.runs[0].browser_info = Some(info(&["--headless=new", "--enable-features=Vulkan"], &["--enable-features=Vulkan"]));
        report.runs[1].browser_info = Some(info(&["-headless", "a.b=true"], &["a.b=true"]));
        let html = render(&report).unwrap().replace("&#x2F;", "/");
        assert!(html.contains("<dt>User browser flags</dt><dd><code>--browser-arg chrome=--enable-features=Vulkan</code> <code>--browser-pref firefox=a.b=true</code>"), "{html}");
        let section = |i: usize| {
            let rest = &html[html.find(&format!(r#"<section id="run-{i}">"#)).unwrap()..];
            rest[..rest.find("</section>").unwrap()].to_string()
        };
        let user_flags = |section: &str| section.split(r#"<dd class="user-flags"><code>"#).nth(1).map(|s| s[..s.find("</code>").unwrap()].to_string());
        assert_eq!(user_flags(&section(0)).as_deref(), Some("--enable-features=Vulkan"));
        assert_eq!(user_flags(&section(1)).as_deref(), Some("a.b=true"));
        assert!(section(0).contains("<dt>User flags</dt>") && section(0).contains("(yours, from --browser-arg and --browser-pref"));
        // A Firefox profile started from a seed says so, and from where.
        assert!(!html.contains("Profile seed"));
        report.runs[1].browser_info.as_mut().unwrap().profile_seed = Some("startupCache and compatibility.ini from /seeds/firefox-1".into());
        let html = render(&report).unwrap().replace("&#x2F;", "/");
        assert!(html.contains("<dt>Profile seed</dt><dd>startupCache and compatibility.ini from /seeds/firefox-1 (the browser's own compiled code"), "{html}");
    }

    #[test]
    fn a_baseline_comparison_is_drawn_as_a_forest_plot() {
        let old = report_with(vec![("chrome", vec![case("a", &[1.0, 1.01, 0.99], true, true)])]);
        let mut new = report_with(vec![("chrome", vec![case("a", &[1.5, 1.51, 1.49], true, true)])]);
        new.baseline = Some(BaselineComparison::new("main", &old, &new, 2.0, Some(5.0)));
        let html = render(&new).unwrap();
        assert!(html.contains(r#"<svg class="forest""#));
        assert!(html.contains("Regression gate (--fail-on-regression 5%): failed"), "{html}");
        assert!(!html.contains("Not compared:"));
        let mut old = old;
        old.runs[0].adapter = Some(kernels::wire::AdapterReport { available: true, vendor: "nvidia".into(), is_fallback_adapter: Some(false), ..Default::default() });
        new.runs[0].adapter = Some(crate::adapter::tests::swiftshader());
        new.baseline = Some(BaselineComparison::new("main", &old, &new, 2.0, Some(5.0)));
        let html = render(&new).unwrap().replace("&#x2F;", "/");
        assert!(html.contains("<b>Not compared:</b> chrome/webgpu ran on other hardware than the baseline&#x27;s (baseline: nvidia; now: google swiftshader, software: SwiftShader"), "{html}");
        assert!(html.contains("Regression gate (--fail-on-regression 5%): failed"), "{html}");
    }
}
