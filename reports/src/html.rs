//! The self-contained HTML report: one file, inline CSS and SVG, no network fetches.

use crate::model::{CaseReport, PlatformRun, RunReport, Timer};
use crate::ReportError;
use serde::Serialize;

const TEMPLATE: &str = include_str!("../templates/report.html.tera");

/// Renders `report` as one HTML document.
pub fn render(report: &RunReport) -> Result<String, ReportError> {
    let mut tera = tera::Tera::default();
    tera.add_raw_template("report.html", TEMPLATE)
        .map_err(|e| ReportError::Template(format!("{e:?}")))?;
    let view = ReportView::new(report);
    let context = tera::Context::from_serialize(&view).map_err(|e| ReportError::Template(e.to_string()))?;
    tera.render("report.html", &context).map_err(|e| ReportError::Template(format!("{e:?}")))
}

#[derive(Serialize)]
struct ReportView<'a> {
    report: &'a RunReport,
    runs: Vec<RunView<'a>>,
    comparison: Option<ComparisonView>,
}

#[derive(Serialize)]
struct ComparisonView {
    runs: Vec<String>,
    flags: Vec<FlagView>,
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
    timer: &'static str,
    flagged: bool,
    cells: Vec<ComparisonCell>,
}

#[derive(Serialize)]
struct ComparisonCell {
    median: String,
    spread: String,
    ratio: String,
    status: &'static str,
    slow: bool,
}

#[derive(Serialize)]
struct RunView<'a> {
    run: &'a PlatformRun,
    title: String,
    counts: crate::model::Counts,
    rows: Vec<RowView<'a>>,
    charts: Vec<ChartView>,
}

#[derive(Serialize)]
struct RowView<'a> {
    case: &'a CaseReport,
    status: &'static str,
    shape: String,
    timer: &'static str,
    median: String,
    min: String,
    p95: String,
    cv: String,
    wall_median: String,
    n: String,
    gflops: String,
    gbps: String,
    pipeline: String,
    error: String,
}

#[derive(Serialize)]
struct ChartView {
    kernel: String,
    width: f64,
    height: f64,
    bars: Vec<BarView>,
}

#[derive(Serialize)]
struct BarView {
    label: String,
    y: f64,
    width: f64,
    whisker_from: f64,
    whisker_to: f64,
    value: String,
}

const CHART_WIDTH: f64 = 720.0;
const LABEL_WIDTH: f64 = 200.0;
const VALUE_WIDTH: f64 = 90.0;
const BAR_HEIGHT: f64 = 16.0;
const BAR_GAP: f64 = 6.0;

fn ms(v: Option<f64>) -> String {
    v.map(crate::model::format_ms).unwrap_or_else(|| "–".into())
}

fn num(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.2}")).unwrap_or_else(|| "–".into())
}

impl<'a> ReportView<'a> {
    fn new(report: &'a RunReport) -> Self {
        let labels = crate::compare::labels(report);
        let runs = report.runs.iter().zip(labels).map(|(r, l)| RunView::new(r, l)).collect();
        let comparison = crate::compare::compare_runs(report).map(|cmp| ComparisonView {
            runs: cmp.runs.clone(),
            flags: cmp
                .flagged()
                .map(|c| FlagView { id: c.id.clone(), why: c.reasons().join("; ") })
                .collect(),
            rows: cmp
                .cases
                .iter()
                .map(|c| ComparisonRow {
                    id: c.id.clone(),
                    timer: c.timer.short(),
                    flagged: c.correctness_disagrees || !c.slow_runs.is_empty(),
                    cells: c
                        .entries
                        .iter()
                        .map(|e| ComparisonCell {
                            median: ms(e.stats.map(|s| s.median)),
                            spread: e.stats.map(|s| format!("cv {:.1}%, p95 {}", s.cv * 100.0, ms(Some(s.p95)))).unwrap_or_default(),
                            ratio: e.ratio.map(|r| format!("×{r:.2}")).unwrap_or_default(),
                            status: e.status.map(|s| s.as_str()).unwrap_or("absent"),
                            slow: c.slow_runs.contains(&e.run),
                        })
                        .collect(),
                })
                .collect(),
        });
        ReportView { report, runs, comparison }
    }
}

impl<'a> RunView<'a> {
    fn new(run: &'a PlatformRun, label: String) -> Self {
        let rows = run
            .cases
            .iter()
            .map(|c| {
                let h = c.headline();
                RowView {
                    case: c,
                    status: c.status.as_str(),
                    shape: c
                        .dims
                        .iter()
                        .zip(&c.shape.0)
                        .map(|(d, v)| format!("{d}={v}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                    timer: c.timer.map(Timer::short).unwrap_or("–"),
                    median: ms(h.map(|s| s.median)),
                    min: ms(h.map(|s| s.min)),
                    p95: ms(h.map(|s| s.p95)),
                    cv: h.map(|s| format!("{:.1}%", s.cv * 100.0)).unwrap_or_else(|| "–".into()),
                    wall_median: ms(c.wall.map(|s| s.median)),
                    n: match (h, c.stopped_by) {
                        (Some(s), Some(kernels::wire::StopReason::MaxTime)) => format!("{} (time budget)", s.n),
                        (Some(s), _) => s.n.to_string(),
                        (None, _) => "–".into(),
                    },
                    gflops: num(c.gflops),
                    gbps: num(c.gbps),
                    pipeline: ms(c.pipeline_ms),
                    error: c
                        .correctness
                        .as_ref()
                        .map(|v| format!("{:.2e}", v.max_abs_err))
                        .unwrap_or_else(|| "–".into()),
                }
            })
            .collect();
        let title = match &run.browser_info {
            Some(b) => format!("{label} — {} {}", b.name, b.version),
            None => label,
        };
        RunView {
            run,
            title,
            counts: run.counts(),
            rows,
            charts: charts(&run.cases),
        }
    }
}

/// One chart per kernel: the headline median of each shape as a bar, min to p95 as a whisker,
/// all on the kernel's own scale.
fn charts(cases: &[CaseReport]) -> Vec<ChartView> {
    let mut kernels: Vec<&str> = Vec::new();
    for c in cases {
        if c.headline().is_some() && !kernels.contains(&c.kernel.as_str()) {
            kernels.push(&c.kernel);
        }
    }
    kernels
        .into_iter()
        .map(|kernel| {
            let measured: Vec<&CaseReport> =
                cases.iter().filter(|c| c.kernel == kernel && c.headline().is_some()).collect();
            let max = measured
                .iter()
                .filter_map(|c| c.headline().map(|h| h.p95))
                .fold(0.0f64, f64::max)
                .max(f64::MIN_POSITIVE);
            let span = CHART_WIDTH - LABEL_WIDTH - VALUE_WIDTH;
            let bars = measured
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let h = c.headline().expect("filtered to measured cases");
                    BarView {
                        label: c.shape.to_string(),
                        y: i as f64 * (BAR_HEIGHT + BAR_GAP),
                        width: (h.median / max * span).max(1.0),
                        whisker_from: h.min / max * span,
                        whisker_to: h.p95 / max * span,
                        value: format!("{} ms", ms(Some(h.median))),
                    }
                })
                .collect::<Vec<_>>();
            ChartView {
                kernel: kernel.to_string(),
                width: CHART_WIDTH,
                height: bars.len() as f64 * (BAR_HEIGHT + BAR_GAP) + BAR_GAP,
                bars,
            }
        })
        .collect()
}
