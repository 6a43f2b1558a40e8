//! The "Your ONNX models" tables: each of the user's own ONNX files (`harness run --onnx`) at each
//! set of dims a row, each execution provider in each browser a column, so that which provider
//! and browser to ship with reads off one row. A case is the user's file when its planned spec in
//! `settings.cases` has an ONNX workload (not by its platform: harness's own models run on
//! onnxruntime-web too), except a Hugging Face folder's (`--hf-model`), whose transformers.js
//! pipeline is timed a call at a time, as the From text table shows it. Built once here for the
//! HTML report and the Markdown summary.

use crate::compare::{not_compared, ratios, row_times, software_note, RowTime};
use crate::hardware::cpu_platform;
use crate::model::{format_ci, format_ms, CaseReport, CaseStatus, RunReport};
use kernels::placement::{cpu_fallback, fallback_words, ProviderNodes};
use kernels::{CaseSpec, Workload};
use serde::Serialize;

/// What the warm table says under it.
pub const ONNX_NOTE: &str = "Each of your ONNX files (--onnx) at each set of dims a row; each onnxruntime-web execution \
    provider in each browser a column. A row is timed by one timer, as Across browsers compares a case: GPU time where \
    every measured cell of the row has one (gpu…, the Cases table says which GPU timer), else the wall clock for every \
    cell (it also holds the call's overhead in the page; ort-wasm, which has no GPU, has only it). A cell: the median ms \
    of one warm run of the model over its timed samples by that timer, which it names, ±CI = half the median's 95% CI as \
    a share of the median. fastest: the least median among the cells whose output passed its check; every other cell: \
    its median over that one's. A failed or unchecked cell is never the fastest, whatever its time. software: a cell \
    timed on a software adapter (SwiftShader, lavapipe), whose time measures the CPU, is not ranked (ort-wasm is the CPU \
    by design, and is). CPU n/m: n of the session's m nodes onnxruntime-web placed on its CPU provider instead of the \
    column's, with their ops (hover for the nodes).";

/// What the cold-start table says under it.
pub const ONNX_COLD_NOTE: &str = "Each sample a fresh page in a new browser profile, timed from navigation to the first \
    result read back (wall clock): the median over the pages, ±CI as above; fastest and ratios as above. The Cold start \
    table has each page's phases.";

/// One column: an execution provider (a run's platform) in one browser.
#[derive(Debug, Clone, Serialize)]
pub struct OnnxColumn {
    /// The provider, the run's platform (`ort-webgpu`, `ort-jsep`, `ort-wasm`).
    pub provider: String,
    /// The browser, with the host's OS where two runs share browser and provider (`chrome`,
    /// `chrome@Linux`): the run's [`labels`](crate::model::labels) without its provider.
    pub browser: String,
}

/// One case in one column, formatted for both writers.
#[derive(Debug, Clone, Serialize)]
pub struct OnnxCell {
    /// The case's status (`passed`, `failed`, …), or `absent` where the run did not plan it.
    pub status: &'static str,
    /// Median ms of the row's timer ([`format_ms`]); `None` where it was not measured.
    pub median: Option<String>,
    /// The median in ms unformatted, for sorting; `None` where not measured.
    pub median_ms: Option<f64>,
    /// The row's timer as this cell has it (`gpu span·page`, `gpu`, `wall`): GPU time where every
    /// measured cell of the row has one, else the wall clock.
    pub timer: &'static str,
    /// The median's 95% CI half-width ([`format_ci`]: `±1.2%`, or `–`).
    pub ci: String,
    /// The fastest passed cell of its row.
    pub fastest: bool,
    /// Its median over the fastest passed cell's; `None` where the row ranks nothing (fewer
    /// than two measured cells, or none passed).
    pub ratio: Option<f64>,
    /// Its place in the row as both reports print it: `fastest`, `2.31×`, `software` where its
    /// time is not ranked, or `None` where the row ranks nothing.
    pub rank: Option<String>,
    /// Why its time is not ranked: the software adapter it ran on, in words.
    pub software: Option<String>,
    /// Not a pass, so it must stand out: any status but `passed` (failed, unchecked, timed
    /// out, …); an absent cell does not.
    pub stands_out: bool,
    /// Why it did not pass, in words, where the case says.
    pub message: Option<String>,
    /// The nodes onnxruntime-web placed on its CPU provider instead of the column's
    /// ([`fallback_words`]: `1 of 6 nodes on the CPU: Cast`); `None` where none were, or on a
    /// CPU platform.
    pub cpu_fallback: Option<String>,
    /// The same in brief, for the Markdown summary: `CPU 1/6: Cast`.
    pub cpu_brief: Option<String>,
    /// Each of those nodes as ORT names them (`Cast (/Cast_3), Shape (/Shape)`), where its log
    /// listed them.
    pub cpu_nodes: Option<String>,
}

impl OnnxCell {
    /// The cell of `case` (`None`: its run did not plan it) of a run on `platform`, timed by its
    /// row's timer, with its `ratio` to the row's fastest cell, which it is where `fastest`.
    fn of(case: Option<&CaseReport>, platform: &str, time: RowTime, ratio: Option<f64>, fastest: bool) -> Self {
        let placement = case.filter(|_| !cpu_platform(platform)).map_or(&[][..], |c| c.placement.as_slice());
        let rank = match (fastest, ratio, &time.software) {
            (true, ..) => Some("fastest".into()),
            (false, Some(r), _) => Some(format!("{r:.2}×")),
            (false, None, Some(_)) => Some("software".into()),
            (false, None, None) => None,
        };
        OnnxCell {
            status: case.map_or("absent", |c| c.status.as_str()),
            median: time.stats.map(|s| format_ms(s.median)),
            median_ms: time.stats.map(|s| s.median),
            timer: time.timer,
            ci: format_ci(time.stats.and_then(|s| s.ci_half_width_pct)),
            fastest,
            ratio,
            rank,
            software: time.software,
            stands_out: case.is_some_and(|c| c.status != CaseStatus::Passed),
            message: case.and_then(|c| c.message.clone()),
            cpu_fallback: fallback_words(placement),
            cpu_brief: fallback_brief(placement),
            cpu_nodes: cpu_fallback(placement).filter(|p| !p.listed.is_empty()).map(|p| p.listed.join(", ")),
        }
    }
}

/// The CPU fallback of `placement` in brief: `CPU 1/6: Cast` where [`fallback_words`] says `1 of
/// 6 nodes on the CPU: Cast`.
fn fallback_brief(placement: &[ProviderNodes]) -> Option<String> {
    let cpu = cpu_fallback(placement)?;
    let total: u32 = placement.iter().map(|p| p.nodes).sum();
    let ops = fallback_words(placement)?.split_once(": ").map(|(_, ops)| format!(": {ops}")).unwrap_or_default();
    Some(format!("CPU {}/{total}{ops}", cpu.nodes))
}

/// One row: a model file at one set of dims (its case id), across the columns.
#[derive(Debug, Clone, Serialize)]
pub struct OnnxRow {
    /// The case id (`model.onnx/batch_size=1,sequence_length=128`, `…/cold`).
    pub id: String,
    /// One cell per column of its table, in the table's order.
    pub cells: Vec<OnnxCell>,
}

/// One table: warm runs, or cold starts.
#[derive(Debug, Clone, Serialize)]
pub struct OnnxTable {
    /// Its anchor in the HTML report (`onnx`, `onnx-cold`).
    pub id: &'static str,
    /// Its heading.
    pub title: &'static str,
    /// What its cells hold, said above or under it.
    pub note: &'static str,
    /// Which runs' times it does not rank, and why: a software adapter's
    /// ([`Comparison::software_note`](crate::compare::Comparison::software_note)); `None` where
    /// it ranks every run's.
    pub software_note: Option<String>,
    /// Its columns: providers in the order the runs first name them, browsers likewise within
    /// a provider; only runs that hold one of its cases.
    pub columns: Vec<OnnxColumn>,
    /// Its rows, in plan order.
    pub rows: Vec<OnnxRow>,
}

/// The tables of a report's own ONNX cases: the warm one, then the cold starts (`--cold-start`);
/// each only where it has a row, so none for a report without `--onnx` cases.
pub fn onnx_tables(report: &RunReport) -> Vec<OnnxTable> {
    let own: Vec<&CaseSpec> = report.settings.cases.iter().filter(|c| matches!(&c.workload, Some(Workload::Onnx(o)) if o.pipeline.is_none())).collect();
    let warm = table(report, &own, false, ("onnx", "Your ONNX models", ONNX_NOTE));
    let cold = table(report, &own, true, ("onnx-cold", "Your ONNX models: cold start (first result)", ONNX_COLD_NOTE));
    [warm, cold].into_iter().flatten().collect()
}

/// The table of the cold (or warm) cases of `own`, headed `(id, title, note)`; `None` where no
/// run holds one.
fn table(report: &RunReport, own: &[&CaseSpec], cold: bool, (id, title, note): (&'static str, &'static str, &'static str)) -> Option<OnnxTable> {
    let ids: Vec<&str> = own.iter().filter(|c| c.cold.is_some() == cold).map(|c| c.id.as_str()).collect();
    let holds = |run: usize, id: &str| report.runs[run].cases.iter().find(|c| c.id == id);
    let runs = column_order(report, |run| ids.iter().any(|id| holds(run, id).is_some()));
    let labels = crate::model::labels(report);
    let rows: Vec<OnnxRow> = ids
        .iter()
        .filter(|id| runs.iter().any(|&run| holds(run, id).is_some()))
        .map(|id| row(id, runs.iter().map(|&run| (&report.runs[run], holds(run, id))).collect()))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let columns = runs
        .iter()
        .map(|&i| {
            let run = &report.runs[i];
            OnnxColumn { provider: run.platform.clone(), browser: labels[i].replacen(&format!("/{}", run.platform), "", 1) }
        })
        .collect();
    let runs: Vec<String> = runs.iter().map(|&i| labels[i].clone()).collect();
    let software_note = software_note(&not_compared(&runs, |i| rows.iter().find_map(|r| r.cells[i].software.clone())));
    Some(OnnxTable { id, title, note, software_note, columns, rows })
}

/// The row of case `id` across `found` (each column's run, with its case where it planned one):
/// every cell timed by the row's one timer ([`row_times`], as Across browsers), the fastest
/// passed cell marked and every ranked one's ratio to it ([`ratios`]).
fn row(id: &str, found: Vec<(&crate::model::PlatformRun, Option<&CaseReport>)>) -> OnnxRow {
    let (_, times) = row_times(&found);
    let passed = |i: usize| found[i].1.is_some_and(|c| c.status == CaseStatus::Passed);
    let (fastest, ratios) = ratios(&times, passed);
    let cells = found
        .iter()
        .zip(times)
        .zip(ratios)
        .enumerate()
        .map(|(i, (((run, case), time), ratio))| OnnxCell::of(*case, &run.platform, time, ratio, fastest == Some(i)))
        .collect();
    OnnxRow { id: id.to_string(), cells }
}

/// The indices of the runs `keep` keeps, grouped by provider in the order the runs first name
/// each, and within a provider by browser likewise.
fn column_order(report: &RunReport, keep: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut runs: Vec<usize> = (0..report.runs.len()).filter(|&i| keep(i)).collect();
    runs.sort_by_key(|&i| {
        let r = &report.runs[i];
        let provider = report.runs.iter().position(|x| x.platform == r.platform);
        let browser = report.runs.iter().position(|x| x.browser == r.browser);
        (provider, browser)
    });
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::h200_onnx;

    /// The cell of `provider` in `browser` on the row whose id starts with `id`.
    fn cell<'t>(t: &'t OnnxTable, id: &str, provider: &str, browser: &str) -> &'t OnnxCell {
        let col = t.columns.iter().position(|c| c.provider == provider && c.browser == browser).unwrap();
        &t.rows.iter().find(|r| r.id.starts_with(id)).unwrap().cells[col]
    }

    const F32_B1: &str = "model.onnx/batch_size=1,";

    #[test]
    fn one_row_per_file_and_dims_one_column_per_provider_and_browser() {
        let tables = onnx_tables(&h200_onnx());
        assert_eq!(tables.len(), 1, "no cold starts in this evidence");
        let t = &tables[0];
        let columns: Vec<String> = t.columns.iter().map(|c| format!("{} {}", c.provider, c.browser)).collect();
        assert_eq!(columns, ["ort-webgpu chrome", "ort-webgpu firefox", "ort-jsep chrome", "ort-jsep firefox", "ort-wasm chrome", "ort-wasm firefox"]);
        let rows: Vec<&str> = t.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(rows, ["model.onnx/batch_size=1,sequence_length=128", "model.onnx/batch_size=8,sequence_length=128", "model_int8.onnx/batch_size=1,sequence_length=128", "model_int8.onnx/batch_size=8,sequence_length=128"]);
        // ort-wasm has no GPU time, so every row is timed by the wall clock, in every cell.
        let c = cell(t, F32_B1, "ort-webgpu", "chrome");
        assert_eq!((c.median.as_deref(), c.timer, c.ci.as_str()), (Some("30.673"), "wall", "±13.2%"));
        assert!(t.rows.iter().all(|r| r.cells.iter().all(|c| c.timer == "wall")), "{t:?}");
        assert!(t.software_note.is_none(), "every run on the H200 or the CPU");
    }

    #[test]
    fn the_fastest_passed_cell_is_marked_and_every_other_reads_its_ratio_to_it() {
        let report = h200_onnx();
        let wall = |platform: &str| report.runs.iter().find(|r| r.browser == "chrome" && r.platform == platform).unwrap().cases[0].wall.unwrap().median;
        let t = &onnx_tables(&report)[0];
        let row = &t.rows[0];
        assert_eq!(row.cells.iter().filter(|c| c.fastest).count(), 1);
        let fastest = cell(t, F32_B1, "ort-jsep", "chrome");
        assert!(fastest.fastest && fastest.rank.as_deref() == Some("fastest"), "{fastest:?}");
        let webgpu = cell(t, F32_B1, "ort-webgpu", "chrome");
        let expected = wall("ort-webgpu") / wall("ort-jsep");
        assert!((webgpu.ratio.unwrap() - expected).abs() < 1e-12, "{webgpu:?}");
        assert_eq!(webgpu.rank.as_deref().unwrap(), format!("{expected:.2}×"));
        assert_eq!(webgpu.rank.as_deref().unwrap(), "1.64×");
        // ort-wasm's wall time is ranked against the WebGPU providers' wall time, not their GPU span.
        let wasm = cell(t, F32_B1, "ort-wasm", "chrome");
        assert!((wasm.ratio.unwrap() - wall("ort-wasm") / wall("ort-jsep")).abs() < 1e-12, "{wasm:?}");
    }

    #[test]
    fn a_row_is_timed_on_the_gpu_only_where_every_measured_cell_has_a_gpu_time() {
        // Without ort-wasm every cell has the page GPU timer's span: the rows are ranked on it.
        let mut report = h200_onnx();
        report.runs.retain(|r| r.platform != "ort-wasm");
        let t = &onnx_tables(&report)[0];
        let c = cell(t, F32_B1, "ort-webgpu", "chrome");
        assert_eq!((c.median.as_deref(), c.timer, c.ci.as_str(), c.rank.as_deref()), (Some("25.724"), "gpu span·page", "±12.1%", Some("1.68×")));
        assert!(cell(t, F32_B1, "ort-jsep", "chrome").fastest);
        // One GPU cell that lost its GPU time turns its whole row to the wall clock, and no other.
        report.runs[0].cases[0].gpu = None;
        let t = &onnx_tables(&report)[0];
        assert!(t.rows[0].cells.iter().all(|c| c.timer == "wall") && t.rows[1].cells.iter().all(|c| c.timer == "gpu span·page"), "{t:?}");
        assert_eq!(cell(t, F32_B1, "ort-webgpu", "chrome").median.as_deref(), Some("30.673"));
    }

    #[test]
    fn a_cpu_fallback_shows_in_its_cell_with_its_nodes() {
        use kernels::placement::{ProviderNodes, CPU_PROVIDER};
        let mut report = h200_onnx();
        let webgpu = report.runs.iter_mut().find(|r| r.browser == "chrome" && r.platform == "ort-webgpu").unwrap();
        webgpu.cases[0].placement = vec![
            ProviderNodes { provider: CPU_PROVIDER.into(), nodes: 1, listed: vec!["Cast (/embeddings/Cast_3)".into()] },
            ProviderNodes { provider: "WebGpuExecutionProvider".into(), nodes: 5, listed: vec![] },
        ];
        let t = &onnx_tables(&report)[0];
        let c = cell(t, F32_B1, "ort-webgpu", "chrome");
        assert_eq!((c.cpu_fallback.as_deref(), c.cpu_brief.as_deref(), c.cpu_nodes.as_deref()), (Some("1 of 6 nodes on the CPU: Cast"), Some("CPU 1/6: Cast"), Some("Cast (/embeddings/Cast_3)")));
        // Its time and rank stand as they were; no other cell has a fallback.
        assert_eq!(c.rank.as_deref(), Some("1.64×"));
        assert_eq!(t.rows.iter().flat_map(|r| &r.cells).filter(|c| c.cpu_fallback.is_some()).count(), 1);
        // A fallback ORT did not list node by node is counted only.
        report.runs[0].cases[0].placement[0].listed.clear();
        let c = onnx_tables(&report)[0].rows[0].cells[0].clone();
        assert_eq!((c.cpu_fallback.as_deref(), c.cpu_brief.as_deref(), c.cpu_nodes), (Some("1 of 6 nodes on the CPU"), Some("CPU 1/6"), None));
        // On ort-wasm every node is on the CPU by design: no fallback.
        let wasm = report.runs.iter_mut().find(|r| r.platform == "ort-wasm").unwrap();
        wasm.cases[0].placement = vec![ProviderNodes { provider: CPU_PROVIDER.into(), nodes: 6, listed: vec![] }];
        assert!(cell(&onnx_tables(&report)[0], F32_B1, "ort-wasm", "chrome").cpu_fallback.is_none());
    }

    #[test]
    fn a_software_adapters_cells_are_shown_but_not_ranked_and_ort_wasms_cpu_times_still_are() {
        use crate::adapter::tests::swiftshader;
        let mut report = h200_onnx();
        // Chrome's pages got SwiftShader: its WebGPU providers' times measure the CPU through it;
        // its ort-wasm's are the CPU's by design, as on any adapter.
        for run in report.runs.iter_mut().filter(|r| r.browser == "chrome") {
            run.adapter = Some(swiftshader());
        }
        let t = &onnx_tables(&report)[0];
        for provider in ["ort-webgpu", "ort-jsep"] {
            let c = cell(t, F32_B1, provider, "chrome");
            assert!(!c.fastest && c.ratio.is_none() && c.rank.as_deref() == Some("software") && c.software.as_deref().unwrap().contains("SwiftShader"), "{c:?}");
            assert_eq!((c.status, c.median.is_some()), ("passed", true), "its time and status are still shown");
        }
        let wasm = cell(t, F32_B1, "ort-wasm", "chrome");
        assert!(wasm.software.is_none() && wasm.ratio.is_some(), "{wasm:?}");
        // Firefox's jsep, on the H200, is now the fastest passed cell.
        assert!(cell(t, F32_B1, "ort-jsep", "firefox").fastest);
        let note = t.software_note.as_deref().unwrap();
        assert!(note.starts_with("Speed not compared for chrome/ort-webgpu (SwiftShader") && note.contains("chrome/ort-jsep (") && !note.contains("ort-wasm"), "{note}");
        // The same as Across browsers: the same runs left out, for the same reason.
        assert_eq!(crate::compare::compare_runs(&report).unwrap().software_note().as_deref(), Some(note));
    }

    #[test]
    fn a_failed_cell_is_never_the_fastest_however_fast() {
        let t = &onnx_tables(&h200_onnx())[0];
        // int8 at batch 1 passed on ort-wasm only: Firefox's is the fastest of those, and the
        // failed GPU cells stand out with their ratios.
        let wasm = cell(t, "model_int8.onnx/batch_size=1,", "ort-wasm", "firefox");
        assert!(wasm.fastest, "{wasm:?}");
        let jsep = cell(t, "model_int8.onnx/batch_size=1,", "ort-jsep", "chrome");
        assert!(jsep.stands_out && jsep.status == "failed" && !jsep.fastest && jsep.ratio.is_some(), "{jsep:?}");
        // int8 at batch 8 failed everywhere: nothing is ranked.
        let all_failed = &t.rows[3];
        assert!(all_failed.cells.iter().all(|c| !c.fastest && c.ratio.is_none() && c.stands_out), "{all_failed:?}");
        // The fastest f32 cell, wrong: the next passed one is the fastest, and the wrong one
        // reads faster than it, but is not marked.
        let mut report = h200_onnx();
        let jsep = report.runs.iter_mut().find(|r| r.browser == "chrome" && r.platform == "ort-jsep").unwrap();
        jsep.cases[0].status = CaseStatus::Failed;
        let t = &onnx_tables(&report)[0];
        let wrong = cell(t, F32_B1, "ort-jsep", "chrome");
        assert!(!wrong.fastest && wrong.ratio.unwrap() < 1.0, "{wrong:?}");
        assert!(cell(t, F32_B1, "ort-webgpu", "chrome").fastest);
        // Unchecked is no pass either.
        report.runs[0].cases[0].status = CaseStatus::Unchecked;
        let t = &onnx_tables(&report)[0];
        assert!(!cell(t, F32_B1, "ort-webgpu", "chrome").fastest && cell(t, F32_B1, "ort-jsep", "firefox").fastest);
    }

    #[test]
    fn no_table_without_onnx_cases_whatever_the_platforms() {
        use crate::testdata::{case, model_case, report_with};
        assert!(onnx_tables(&report_with(vec![("chrome", vec![case("a", &[1.0], true, true), model_case("m", &[2.0])])])).is_empty());
        // The same runs, planned as harness's own models on the same providers: no table.
        let mut report = h200_onnx();
        for c in &mut report.settings.cases {
            c.workload = None;
        }
        assert!(onnx_tables(&report).is_empty());
        // Nor for a Hugging Face folder's pipeline (--hf-model): the From text table times its calls.
        let mut report = h200_onnx();
        for c in &mut report.settings.cases {
            let Some(Workload::Onnx(o)) = &mut c.workload else { continue };
            let task = kernels::hf_pipeline::Task::FeatureExtraction;
            o.pipeline = Some(kernels::hf_pipeline::HfPipeline { task, folder: "/m".into(), files: vec![], texts: vec!["a".into()], output: "last_hidden_state".into(), width: 384 });
        }
        assert!(onnx_tables(&report).is_empty());
    }

    #[test]
    fn cold_starts_get_a_table_of_their_own() {
        let mut report = h200_onnx();
        let spec = report.settings.cases[0].clone().cold_start(kernels::ColdStart { samples: 3, precompile: false, parallel: false });
        assert!(spec.id.ends_with("/cold"));
        for run in &mut report.runs {
            let mut first = run.cases[0].clone();
            first.id = spec.id.clone();
            run.cases.push(first);
        }
        report.settings.cases.push(spec.clone());
        let tables = onnx_tables(&report);
        assert_eq!(tables.iter().map(|t| (t.id, t.rows.len())).collect::<Vec<_>>(), [("onnx", 4), ("onnx-cold", 1)]);
        assert_eq!(tables[1].rows[0].id, spec.id);
        assert_eq!(tables[1].columns.len(), 6);
        assert!(tables[0].rows.iter().all(|r| !r.id.ends_with("/cold")));
    }
}
