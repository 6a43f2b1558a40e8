//! The stages every measuring subcommand shares: plan → bundle → serve → drive → sample → report.
//! The subcommand plans its cases ([`Planned`]) and fills [`Settings`] from its options (in
//! `commands`, the one place options become settings); [`Pipeline`] then checks the baseline,
//! builds or takes the page bundle, serves it, drives every browser and platform in turn (picking
//! up a journaled run where asked), runs the native cases, writes the reports, keeps tuning
//! winners and baselines, and says the exit status. Nothing here knows the command line.

mod finish;
pub mod history;
mod page;
mod resume;
mod signals;

pub use finish::{exit_code, write_reports, EXIT_UNUSABLE};
/// What runs a plan's `--platform native` cases (`harness bench`: the user's bench binary).
pub use crate::measure::native::Worker as NativeRunner;
pub use page::serve_page;
pub use signals::interrupt_watch;

use crate::measure::browser::{BrowserFlags, BrowserKind, GpuFlags};
use crate::measure::controller::{self, BrowserRunRequest, CaseLimits};
use crate::measure::events::Reporter;
use crate::measure::probe::RunProbe;
use crate::measure::npm::{self, EngineFiles};
use crate::measure::{host, webnn};
use crate::output::journal::{self, Journal, Journaled};
use crate::output::progress::TerminalReporter;
use crate::output::summary;
use crate::plan::baseline;
use crate::plan::reference::References;
use crate::plan::tuning::{self, TuneCache};
use crate::plan::workload;
use anyhow::{Context, Result};
use kernels::{CaseSpec, Platform, RunPlan};
use reports::{PlatformRun, RunReport, SCHEMA_VERSION};
use resume::resume_or_run;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use tokio::sync::watch;

/// One browser of a run, and how it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Browser {
    /// Which browser.
    pub kind: BrowserKind,
    /// Its executable, instead of searching (`--browser-path`).
    pub browser_path: Option<PathBuf>,
    /// Its WebDriver executable, instead of searching (`--driver-path`).
    pub driver_path: Option<PathBuf>,
    /// The user's arguments and prefs for it, added after harness's own.
    pub flags: BrowserFlags,
    /// Whether it gets the flags that reach a hardware GPU (`--gpu-flags`).
    pub gpu_flags: GpuFlags,
}

/// Where the page comes from and where it is served.
#[derive(Debug, Clone, PartialEq)]
pub struct Serve {
    /// The address and port the server listens on (port 0: a free one).
    pub listen: SocketAddr,
    /// The server's URL as the browser must use it (for a remote browser).
    pub public_url: Option<String>,
    /// A ready bundle folder, laid out like `target/harness-bundle`, to serve instead of building
    /// the page: `run --bundle`, or the folder of `harness bench`'s own wasm-bindgen output.
    pub bundle: Option<PathBuf>,
}

/// The baseline a run is compared with and the one it is saved as.
#[derive(Debug, Clone, PartialEq)]
pub struct Baselines {
    /// Compare with this baseline name, run folder or results.json, and gate on it.
    pub compare_with: Option<String>,
    /// Save the run as the baseline of this name.
    pub save_as: Option<String>,
    /// Where baselines live and what counts as a regression.
    pub gate: baseline::Gate,
}

/// Whether a run tunes its kernels, and the cache of tuning winners.
#[derive(Debug, Clone, PartialEq)]
pub enum Tuning {
    /// Run every case as planned.
    Off,
    /// Each tunable kernel takes the winner kept in this cache for its browser (or native).
    Cached(PathBuf),
    /// The cases are every variant of the tunable kernels (`tuning::expand`): rank them and keep
    /// the winners in this cache.
    Tune(PathBuf),
}

/// Which planned cases a platform runs, chosen by the subcommand.
#[derive(Debug, Clone, Copy)]
pub struct CaseFilter {
    /// Whether `platform` runs the case.
    pub keep: fn(Platform, &CaseSpec) -> bool,
    /// Why a browser platform left with no case is skipped, for the message that says so.
    pub skipped: &'static str,
}

impl CaseFilter {
    /// Every platform runs every case.
    pub const ALL: CaseFilter = CaseFilter { keep: |_, _| true, skipped: "no case runs there" };
}

/// What the run measures and how, already turned from options into values: what `harness run`
/// and `harness bench` both build (see `commands::pipeline_settings`), then adjust.
#[derive(Debug)]
pub struct Settings {
    /// The browsers to drive, one after the other; empty when no platform runs in a browser.
    pub browsers: Vec<Browser>,
    /// Browsers run without a window.
    pub headless: bool,
    /// A running WebDriver endpoint or Selenium Grid to use instead of launching drivers.
    pub webdriver_url: Option<String>,
    /// The `--browser-arg` values as given, for the report and `--replay`.
    pub browser_args: Vec<String>,
    /// The `--browser-pref` values as given, for the report and `--replay`.
    pub browser_prefs: Vec<String>,
    /// Where the cases run, each once, in order.
    pub platforms: Vec<Platform>,
    /// The suite the cases came from, for the report.
    pub suite: kernels::Suite,
    /// The kernel filters as given, for the report.
    pub filters: Vec<String>,
    /// The inputs' seed, for the report.
    pub seed: u64,
    /// How each case is sampled.
    pub sampling: kernels::Sampling,
    /// How each case is sampled instead on a CPU adapter (a software one), where the user left
    /// the sampling to harness.
    pub cpu_sampling: Option<kernels::Sampling>,
    /// Models choose their kernels as for a GPU even on a CPU adapter (`--gpu-kernels`).
    pub gpu_kernels: bool,
    /// The case timeout and retries.
    pub limits: CaseLimits,
    /// The device a WebNN context is asked for.
    pub webnn_device: kernels::webnn::Device,
    /// GEMMs stay off the tensor cores (`--no-tensor-cores`).
    pub no_tensor_cores: bool,
    /// Where TensorFlow.js is installed, instead of the source tree's `target/tfjs`.
    pub tfjs_dir: Option<PathBuf>,
    /// Where onnxruntime-web is installed, instead of the source tree's `target/ort`.
    pub ort_dir: Option<PathBuf>,
    /// Where transformers.js is installed, instead of the source tree's `target/transformers`.
    pub transformers_dir: Option<PathBuf>,
    /// Tuning, and the cache of its winners.
    pub tuning: Tuning,
    /// Baselines to compare with and save.
    pub baselines: Baselines,
    /// The page and its server.
    pub serve: Serve,
    /// The report folder [default: `runs/<timestamp>-<browsers>`]; a resumed run's own.
    pub out: Option<PathBuf>,
    /// Print results.json instead of the summary.
    pub json: bool,
    /// The history store the run is added to (none: `--no-history`).
    pub history: Option<PathBuf>,
    /// `--fail-on-regression=history`: the window the run's series are checked over.
    pub history_gate: Option<u32>,
    /// The journal of the run being resumed: its settled cases are not run again.
    pub journaled: Option<Journaled>,
    /// What runs the `native` platform's cases.
    pub native: NativeRunner,
    /// Which cases each platform runs.
    pub cases_for: CaseFilter,
}

/// The cases a subcommand planned, with what their outputs are checked against.
pub struct Planned {
    /// Every case, in order (tuning variants, roofline probes and repeats included).
    pub cases: Vec<CaseSpec>,
    /// The references every platform's outputs are checked against.
    pub references: Arc<References>,
    /// Model weights files the page fetches, by key.
    pub weights: HashMap<String, PathBuf>,
}

/// A run ready to go: its settings, with the baseline already read.
pub struct Pipeline {
    settings: Settings,
    baseline: Option<RunReport>,
}

/// The browser platforms' runs, as planned.
type Requests = Vec<BrowserRunRequest>;

impl Pipeline {
    /// Checks what should fail before cases are planned: the name to save the baseline as, and
    /// the baseline to compare with (a typo should cost nothing, not a whole run).
    pub fn prepare(settings: Settings) -> Result<Pipeline> {
        if let Some(name) = &settings.baselines.save_as {
            baseline::check_name(name)?;
        }
        let baseline = match &settings.baselines.compare_with {
            Some(spec) => Some(baseline::load(spec, &settings.baselines.gate.dir)?),
            None => None,
        };
        Ok(Pipeline { settings, baseline })
    }

    /// Runs `planned` in every browser and platform, writes the reports and returns the exit
    /// status: 1 when the baseline gate fails, else [`exit_code`]'s.
    pub async fn run(self, planned: Planned) -> Result<ExitCode> {
        let Pipeline { settings: s, baseline } = self;
        let mut tune_cache = s.tune_cache();
        let plan = s.plan(planned.cases);
        let created = chrono::Utc::now();
        let engines = s.check_platforms()?;
        // While the bundle builds and the browser starts and works, not after each result.
        planned.references.prefetch(&plan.cases);
        let probe = RunProbe::detect();
        let requests = s.requests(&plan, &tune_cache, &planned.references, &probe);
        let out_dir = s.out.clone().unwrap_or_else(|| s.default_out(created));
        if !s.serve.listen.ip().is_loopback() {
            eprintln!(
                "WARNING: the server listens on {} — any machine that can reach it can load the page. \
                 Results are accepted only with the run's random token.",
                s.serve.listen.ip()
            );
        }
        let mut report = s.report(&plan, &planned.weights, created);
        let mut interrupted = interrupt_watch();
        let mut reporter = match &s.journaled {
            Some(_) => Journal::append(&out_dir, TerminalReporter::new()),
            None => Journal::create(&out_dir, &report, TerminalReporter::new()),
        };
        let mut runs = s.drive(&requests, &planned.weights, &engines, &probe, &mut reporter, &mut interrupted).await?;
        if s.platforms.contains(&Platform::Native) && !*interrupted.borrow() {
            let native_plan = RunPlan { cases: s.variants(&tune_cache, "native", &plan.cases), ..plan.clone() };
            let label = journal::run_label(crate::measure::native::BROWSER, Platform::Native.as_str());
            let (native, limits, references) = (&s.native, s.limits, &planned.references);
            let (probe, reporter, interrupted) = (&probe, &mut reporter, &mut interrupted);
            runs.push(
                resume_or_run(s.journaled.as_ref(), &label, &native_plan, |plan| async move {
                    crate::measure::native::run_native(&plan, native, limits, references, probe, reporter, interrupted).await
                })
                .await,
            );
        }
        drop(reporter);
        report.runs = runs;
        if let (Some(old), Some(name)) = (&baseline, &s.baselines.compare_with) {
            report.baseline = Some(s.baselines.gate.compare(name, old, &report));
        }
        if matches!(s.tuning, Tuning::Cached(_)) {
            for warning in tuning::tuned_elsewhere(&report, &tune_cache) {
                eprintln!("warning: {warning}");
            }
        }
        write_reports(&mut report, &out_dir, s.json)?;
        s.keep_winners(&report, &mut tune_cache)?;
        s.save_baseline(&report)?;
        let history_fails = match &s.history {
            Some(path) => history::record(path, &report, &out_dir, s.history_gate)?,
            None => false,
        };
        match report.baseline.as_ref().is_some_and(|b| b.gate_fails()) || history_fails {
            true => Ok(ExitCode::from(1)),
            false => Ok(exit_code(&report)),
        }
    }
}

impl Settings {
    /// The tuning winners kept so far (none without tuning); a cache that cannot be read is
    /// ignored with a warning.
    fn tune_cache(&self) -> TuneCache {
        let (Tuning::Cached(path) | Tuning::Tune(path)) = &self.tuning else { return TuneCache::default() };
        let (cache, warning) = TuneCache::load(path);
        if let Some(w) = warning {
            eprintln!("warning: {w}");
        }
        cache
    }

    fn tuning(&self) -> bool {
        matches!(self.tuning, Tuning::Tune(_))
    }

    /// The cases `target` (a browser key, or `native`) runs of `cases`: tuning runs every
    /// variant; other runs take the target's cached winner.
    fn variants(&self, cache: &TuneCache, target: &str, cases: &[CaseSpec]) -> Vec<CaseSpec> {
        match self.tuning {
            Tuning::Cached(_) => cache.apply(target, cases),
            Tuning::Off | Tuning::Tune(_) => cases.to_vec(),
        }
    }

    /// The plan every platform's run starts from.
    fn plan(&self, cases: Vec<CaseSpec>) -> RunPlan {
        let stand_in = std::env::var_os(webnn::STAND_IN_ENV).is_some();
        let webnn = Some(kernels::webnn::Options { device: self.webnn_device, stand_in });
        RunPlan { platform: Platform::Webgpu, sampling: self.sampling, cases, webnn, no_tensor_cores: self.no_tensor_cores, cpu_sampling: self.cpu_sampling, gpu_kernels: self.gpu_kernels }
    }

    /// Checks the platforms before any browser starts, and finds the JavaScript engines they run
    /// (TensorFlow.js, onnxruntime-web) before a browser starts, so a missing install costs nothing.
    fn check_platforms(&self) -> Result<Vec<EngineFiles>> {
        anyhow::ensure!(
            !self.tuning() || self.platforms.iter().any(|p| *p != Platform::Wasm),
            "--tune measures GPU variants: add --platform webgpu or native (on the WASM CPU every variant is the same code)"
        );
        if self.platforms.iter().any(|p| p.on_webnn()) && std::env::var_os(webnn::STAND_IN_ENV).is_some() {
            eprintln!("WARNING: {}", webnn::STAND_IN_WARNING);
        }
        let mut engines = Vec::new();
        if self.platforms.contains(&Platform::Tfjs) && !self.tuning() {
            engines.push(npm::TFJS.find(self.tfjs_dir.as_deref())?);
        }
        if self.platforms.iter().any(|p| p.ort_ep().is_some()) && !self.tuning() {
            engines.push(npm::ORT.find(self.ort_dir.as_deref())?);
        }
        if self.platforms.contains(&Platform::Transformers) && !self.tuning() {
            engines.push(npm::TRANSFORMERS.find(self.transformers_dir.as_deref())?);
        }
        let in_browser = self.platforms.iter().any(|p| p.in_browser());
        anyhow::ensure!(
            !in_browser || !self.browsers.is_empty(),
            "no supported browser is installed; `harness browsers` says how to install one"
        );
        Ok(engines)
    }

    /// One request per browser and browser platform, each with the cases it runs; platforms
    /// with none are skipped, saying why.
    fn requests(&self, plan: &RunPlan, cache: &TuneCache, references: &Arc<References>, probe: &RunProbe) -> Requests {
        let mut requests = Vec::new();
        let page_platforms: Vec<Platform> = self.platforms.iter().copied().filter(|p| p.in_browser()).collect();
        for (browser, &platform) in self.browsers.iter().flat_map(|b| page_platforms.iter().map(move |p| (b, p))) {
            if self.tuning() && platform == Platform::Wasm {
                eprintln!("--platform wasm: skipped with --tune, every variant is the same code on the CPU");
                continue;
            }
            if self.tuning() && platform.other_engine() {
                eprintln!("--platform {}: skipped with --tune, it runs its own kernel for every variant", platform.as_str());
                continue;
            }
            let cases: Vec<CaseSpec> = plan.cases.iter().filter(|c| (self.cases_for.keep)(platform, c)).cloned().collect();
            // Tuned variants are harness's own WGSL: TensorFlow.js and WebNN run the cases as planned.
            let cases = match platform {
                p if p.other_engine() => cases,
                _ => self.variants(cache, browser.kind.spec().key, &cases),
            };
            if cases.is_empty() {
                eprintln!("--platform {}: skipped, {}", platform.as_str(), self.cases_for.skipped);
                continue;
            }
            requests.push(BrowserRunRequest {
                browser: browser.kind,
                platform,
                headless: self.headless,
                browser_path: browser.browser_path.clone(),
                driver_path: browser.driver_path.clone(),
                webdriver_url: self.webdriver_url.clone(),
                user_flags: browser.flags.clone(),
                gpu_flags: browser.gpu_flags,
                plan: RunPlan { cases, ..plan.clone() },
                limits: self.limits,
                read_diagnostics: false,
                references: references.clone(),
                probe: probe.clone(),
            });
        }
        requests
    }

    /// `runs/<timestamp>-<browsers>[+native]`.
    fn default_out(&self, created: chrono::DateTime<chrono::Utc>) -> PathBuf {
        let mut keys: Vec<&str> = self.browsers.iter().map(|b| b.kind.spec().key).collect();
        if self.platforms.contains(&Platform::Native) {
            keys.push("native");
        }
        PathBuf::from("runs").join(format!("{}-{}", created.format("%Y%m%d-%H%M%S"), keys.join("+")))
    }

    /// The report before any run: this machine, the settings and the plan.
    fn report(&self, plan: &RunPlan, weights: &HashMap<String, PathBuf>, created: chrono::DateTime<chrono::Utc>) -> RunReport {
        let sampling = &self.sampling;
        RunReport {
            schema_version: SCHEMA_VERSION,
            harness: host::harness_info(crate::plan::source_dir().as_deref()),
            host: host::host_info(),
            created_at: self.journaled.as_ref().map_or_else(|| created.to_rfc3339(), |j| j.started.created_at.clone()),
            settings: reports::Settings {
                suite: self.suite.to_string(),
                filters: self.filters.clone(),
                samples: sampling.samples,
                warmup: sampling.warmup,
                sampling: sampling.mode,
                target_ci_pct: sampling.target_ci_pct,
                nudge: sampling.nudge,
                browsers: self.browsers.iter().map(|b| b.kind.spec().key.to_string()).collect(),
                platforms: self.platforms.iter().map(|p| p.as_str().to_string()).collect(),
                cases: plan.cases.clone(),
                command: std::env::args().collect(),
                seed: self.seed,
                max_time_s: sampling.max_time_ms / 1e3,
                case_timeout_s: self.limits.timeout.as_secs_f64(),
                cpu_adapter: crate::measure::controller::cpu_policy(plan, &self.limits),
                gpu_kernels: self.gpu_kernels,
                retries: self.limits.retries,
                webnn_device: self.platforms.iter().any(|p| p.on_webnn()).then_some(self.webnn_device),
                no_tensor_cores: self.no_tensor_cores,
                profile: sampling.profile,
                gpu_timer: sampling.gpu_timer,
                gpu_timer_cost: sampling.timer_cost,
                headless: self.headless,
                weights: weights.get(workload::MINILM).and_then(|p| p.parent()).map(|p| p.display().to_string()),
                gguf: weights.get(workload::GGUF).map(|p| p.display().to_string()),
                browser_args: self.browser_args.clone(),
                browser_prefs: self.browser_prefs.clone(),
            },
            runs: Vec::new(),
            baseline: None,
        }
    }

    /// Serves the page and runs every request in turn (each resumed from the journal where it
    /// holds the run), until done or interrupted.
    async fn drive(
        &self,
        requests: &[BrowserRunRequest],
        weights: &HashMap<String, PathBuf>,
        engines: &[EngineFiles],
        probe: &RunProbe,
        reporter: &mut dyn Reporter,
        interrupted: &mut watch::Receiver<bool>,
    ) -> Result<Vec<PlatformRun>> {
        let mut runs = Vec::new();
        if requests.is_empty() {
            return Ok(runs);
        }
        let (server, bundle_ms, server_ms) = serve_page(self.serve.bundle.clone(), self.serve.listen, self.serve.public_url.as_deref(), reporter).await?;
        for (key, path) in weights {
            server.serve_weights(key, path.clone());
        }
        if let Some(check) = probe.check() {
            server.set_clock(check);
        }
        for files in engines {
            server.serve_engine(files);
        }
        for request in requests {
            if *interrupted.borrow() {
                break;
            }
            let label = journal::run_label(request.browser.spec().key, request.platform.as_str());
            let (server, reporter, interrupted) = (&server, &mut *reporter, &mut *interrupted);
            runs.push(
                resume_or_run(self.journaled.as_ref(), &label, &request.plan, |plan| async move {
                    let mut run = controller::run_browser(&BrowserRunRequest { plan, ..request.clone() }, server, reporter, interrupted).await;
                    run.phases.bundle_ms = bundle_ms;
                    run.phases.server_ms = server_ms;
                    run
                })
                .await,
            );
        }
        Ok(runs)
    }

    /// After a tuning run: ranks the variants, keeps the winners in the cache and prints them.
    fn keep_winners(&self, report: &RunReport, cache: &mut TuneCache) -> Result<()> {
        let Tuning::Tune(path) = &self.tuning else { return Ok(()) };
        let rankings = tuning::rank(report);
        let winners: Vec<tuning::Winner> = rankings.iter().filter_map(|r| r.winner.clone()).collect();
        cache.record(&winners);
        cache.save(path).with_context(|| format!("writing the tune cache {}", path.display()))?;
        if !self.json {
            print!("{}", summary::tuning(&rankings));
            println!("kept {} winner(s) in {}", winners.len(), path.display());
        }
        Ok(())
    }

    /// Saves the run as the baseline asked for, if any.
    fn save_baseline(&self, report: &RunReport) -> Result<()> {
        if let Some(name) = &self.baselines.save_as {
            let folder = baseline::save(report, &self.baselines.gate.dir, name)?;
            if !self.json {
                println!("saved baseline `{name}` in {}", folder.display());
            }
        }
        Ok(())
    }
}

/// Reads the journal of the run in `dir` that `--resume` completes.
pub fn read_journal(dir: &Path) -> Result<Journaled> {
    journal::read(dir).with_context(|| format!("resuming {}", dir.display()))
}
