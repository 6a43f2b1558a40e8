//! Tuning: `harness run --tune` runs every variant of the tunable kernels it selects, and the
//! fastest correct one per browser (or native), kernel and shape is kept in a cache file that
//! later runs read, so each browser runs the variant measured best on it.
//!
//! The cache is JSON (`runs/tune.json` by default). A cache that cannot be read is ignored with
//! a warning: it only ever makes a run faster, never possible.

use kernels::{CaseSpec, Shape};
use reports::{CaseStatus, RunReport};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The cache's format version; a cache of another version is ignored.
pub const CACHE_VERSION: u32 = 1;

/// The winners of earlier tunings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TuneCache {
    /// [`CACHE_VERSION`].
    pub version: u32,
    /// One entry per target, kernel and shape.
    pub winners: Vec<Winner>,
}

/// The fastest correct variant of a kernel at a shape on one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Winner {
    /// Where it was measured: a browser key (`chrome`, `firefox`) or `native`.
    pub target: String,
    /// The adapter it ran on, as the run reported it.
    pub adapter: String,
    /// The kernel.
    pub kernel: String,
    /// The shape it was tuned at.
    pub shape: Shape,
    /// The winning variant.
    pub variant: String,
    /// Its median ms per dispatch.
    pub median_ms: f64,
    /// The timer of that median (`gpu` or `wall`).
    pub timer: String,
    /// When it was measured (RFC 3339).
    pub tuned_at: String,
}

impl TuneCache {
    /// The cache at `path`: empty when there is none, and empty with a warning (the returned
    /// text) when it cannot be read.
    pub fn load(path: &Path) -> (TuneCache, Option<String>) {
        let empty = TuneCache { version: CACHE_VERSION, winners: Vec::new() };
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (empty, None),
            Err(e) => return (empty, Some(format!("tune cache {}: {e}; ignored", path.display()))),
        };
        match serde_json::from_str::<TuneCache>(&text) {
            Ok(c) if c.version == CACHE_VERSION => (c, None),
            Ok(c) => (empty, Some(format!("tune cache {}: version {} is not {CACHE_VERSION}; ignored (run --tune again)", path.display(), c.version))),
            Err(e) => (empty, Some(format!("tune cache {}: not a tune cache ({e}); ignored (delete it or run --tune again)", path.display()))),
        }
    }

    /// Writes the cache to `path`, creating its folder.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(path, json + "\n")
    }

    /// Adds `winners`, replacing earlier ones for the same target, kernel and shape.
    pub fn record(&mut self, winners: &[Winner]) {
        for w in winners {
            self.winners.retain(|o| (&o.target, &o.kernel, &o.shape) != (&w.target, &w.kernel, &w.shape));
            self.winners.push(w.clone());
        }
    }

    /// The variant to run `kernel` with on `target` at `shape`: the one tuned at that shape,
    /// else the one tuned at the nearest shape by element count.
    pub fn pick(&self, target: &str, kernel: &str, shape: &Shape) -> Option<&Winner> {
        let size = |s: &Shape| s.0.iter().map(|&d| f64::from(d.max(1))).product::<f64>().ln();
        let ours = || self.winners.iter().filter(|w| w.target == target && w.kernel == kernel);
        // The exact shape first: a transposed one (matvec 2048×5632 and 5632×2048) has the same
        // element count, so "nearest" alone would tie.
        ours().find(|w| w.shape == *shape).or_else(|| {
            ours().min_by(|a, b| (size(&a.shape) - size(shape)).abs().total_cmp(&(size(&b.shape) - size(shape)).abs()))
        })
    }

    /// `cases` with the cached variant for `target` wherever a tunable kernel runs its default.
    /// Ids stay as they are, so browsers that picked different variants still line up case by
    /// case in the report.
    pub fn apply(&self, target: &str, cases: &[CaseSpec]) -> Vec<CaseSpec> {
        cases
            .iter()
            .map(|c| match (c.variant.is_none() && c.workload.is_none(), self.pick(target, &c.kernel, &c.shape)) {
                (true, Some(w)) if kernels::catalog::variant(&c.kernel, &w.variant).is_ok() => {
                    CaseSpec { variant: Some(w.variant.clone()), ..c.clone() }
                }
                _ => c.clone(),
            })
            .collect()
    }
}

/// The runs of `report` that took cached winners tuned on another adapter than their own, one
/// warning each: the variants are the page's choice before the browser has said which adapter
/// it got, so a Chrome that fell back to SwiftShader, or a cache carried to another machine,
/// runs another adapter's fastest, which may well not be its own.
pub fn tuned_elsewhere(report: &RunReport, cache: &TuneCache) -> Vec<String> {
    let mut warnings = Vec::new();
    // The WASM CPU runs the same code whichever variant it is given.
    for (run, label) in report.runs.iter().zip(reports::labels(report)).filter(|(r, _)| r.platform != "wasm") {
        let target = target_of(run);
        let Some(adapter) = run.adapter.as_ref().filter(|a| a.available).map(|a| a.label()) else { continue };
        let mut elsewhere: Vec<(&str, Vec<&str>)> = Vec::new();
        for case in run.cases.iter().filter(|c| c.variant.is_some()) {
            let Some(w) = cache.pick(target, &case.kernel, &case.shape).filter(|w| Some(&w.variant) == case.variant.as_ref() && w.adapter != adapter) else { continue };
            match elsewhere.iter_mut().find(|(a, _)| *a == w.adapter) {
                Some((_, kernels)) if kernels.contains(&w.kernel.as_str()) => {}
                Some((_, kernels)) => kernels.push(&w.kernel),
                None => elsewhere.push((&w.adapter, vec![&w.kernel])),
            }
        }
        for (tuned_on, kernels) in elsewhere {
            warnings.push(format!(
                "{label} ran {} with variants tuned on another adapter or driver ({tuned_on}), not on its own ({adapter}): they may not be its fastest; run --tune on it to tune for it",
                kernels.join(", ")
            ));
        }
    }
    warnings
}

/// Every variant of each tunable kernel among `cases`, in place of its default; other cases
/// are left out. Errors when none of `cases` is tunable.
pub fn expand(cases: &[CaseSpec]) -> Result<Vec<CaseSpec>, String> {
    let tuned: Vec<CaseSpec> = cases
        .iter()
        .filter(|c| c.workload.is_none() && c.variant.is_none())
        .flat_map(|c| kernels::catalog::variants(&c.kernel).into_iter().filter_map(move |v| c.clone().with_variant(&v).ok()))
        .collect();
    match tuned.is_empty() {
        true => Err(format!(
            "--tune: none of the selected kernels has variants to tune; select one of {} with --filter",
            kernels::catalog::TUNABLE.join(", ")
        )),
        false => Ok(tuned),
    }
}

/// What `run` tunes for and takes winners of: its browser key, or `native`.
fn target_of(run: &reports::PlatformRun) -> &str {
    if run.platform == "native" { "native" } else { &run.browser }
}

/// One tuned group: a kernel at a shape on one target, its variants ranked.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    /// The target (browser key or `native`) and platform, for the table's title.
    pub title: String,
    /// The kernel and shape.
    pub case: String,
    /// Variants that passed, fastest first: (variant, median ms, GFLOP/s).
    pub passed: Vec<(String, f64, Option<f64>)>,
    /// Variants that were wrong or did not finish, with their status.
    pub excluded: Vec<(String, CaseStatus)>,
    /// What goes into the cache, when any variant passed.
    pub winner: Option<Winner>,
}

/// Ranks the variants `report` measured, per run and tuned case.
pub fn rank(report: &RunReport) -> Vec<Ranking> {
    let mut out = Vec::new();
    // The WASM CPU baseline runs the same code for every variant: nothing to rank there.
    for run in report.runs.iter().filter(|r| r.platform != "wasm") {
        let target = target_of(run).to_string();
        let adapter = run.adapter.as_ref().map(|a| a.label()).unwrap_or_default();
        let mut groups: Vec<((&str, &Shape), Vec<&reports::CaseReport>)> = Vec::new();
        for case in run.cases.iter().filter(|c| c.variant.is_some()) {
            let key = (case.kernel.as_str(), &case.shape);
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, g)) => g.push(case),
                None => groups.push((key, vec![case])),
            }
        }
        for ((kernel, shape), cases) in groups {
            let median = |c: &reports::CaseReport| c.headline().map(|h| h.median);
            let variant = |c: &reports::CaseReport| c.variant.clone().unwrap_or_default();
            let (mut passed, excluded): (Vec<_>, Vec<_>) =
                cases.into_iter().partition(|c| c.status == CaseStatus::Passed && median(c).is_some());
            passed.sort_by(|a, b| median(a).unwrap_or(f64::INFINITY).total_cmp(&median(b).unwrap_or(f64::INFINITY)));
            let winner = passed.first().map(|c| Winner {
                target: target.clone(),
                adapter: adapter.clone(),
                kernel: kernel.to_string(),
                shape: shape.clone(),
                variant: variant(c),
                median_ms: median(c).unwrap_or_default(),
                timer: c.timer.map(|t| t.short()).unwrap_or("wall").to_string(),
                tuned_at: report.created_at.clone(),
            });
            out.push(Ranking {
                title: format!("{}/{}", run.browser, run.platform),
                case: format!("{kernel}/{shape}"),
                passed: passed.iter().map(|c| (variant(c), median(c).unwrap_or_default(), c.gflops)).collect(),
                excluded: excluded.iter().map(|c| (variant(c), c.status)).collect(),
                winner,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::Shape;

    fn winner(target: &str, shape: &[u32], variant: &str) -> Winner {
        winner_of("matmul", target, shape, variant)
    }

    fn winner_of(kernel: &str, target: &str, shape: &[u32], variant: &str) -> Winner {
        Winner {
            target: target.into(),
            adapter: "a".into(),
            kernel: kernel.into(),
            shape: Shape(shape.to_vec()),
            variant: variant.into(),
            median_ms: 1.0,
            timer: "gpu".into(),
            tuned_at: "t".into(),
        }
    }

    #[test]
    fn a_cache_is_written_read_back_and_replaced_per_target_kernel_and_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/tune.json");
        let mut cache = TuneCache::load(&path).0;
        cache.record(&[winner("chrome", &[64, 64, 64], "bm64-bn64-bk8-tm4-tn4-v4"), winner("firefox", &[64, 64, 64], "bm32-bn32-bk16-tm4-tn4-v1")]);
        cache.record(&[winner("chrome", &[64, 64, 64], "bm128-bn128-bk8-tm8-tn8-v4")]);
        cache.save(&path).unwrap();
        let (back, warning) = TuneCache::load(&path);
        assert_eq!(warning, None);
        assert_eq!(back, cache);
        assert_eq!(back.winners.len(), 2);
        assert_eq!(back.pick("chrome", "matmul", &Shape(vec![64, 64, 64])).unwrap().variant, "bm128-bn128-bk8-tm8-tn8-v4");
    }

    #[test]
    fn a_corrupted_cache_is_ignored_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tune.json");
        for text in ["{not json", r#"{"version": 99, "winners": []}"#, r#"{"version": 1, "winners": [{"target": 3}]}"#] {
            std::fs::write(&path, text).unwrap();
            let (cache, warning) = TuneCache::load(&path);
            assert!(cache.winners.is_empty());
            let warning = warning.expect("a warning");
            assert!(warning.contains("tune.json") && warning.contains("ignored"), "{warning}");
        }
        assert_eq!(TuneCache::load(&dir.path().join("none.json")).1, None, "no cache is no warning");
    }

    #[test]
    fn runs_use_the_winner_of_their_target_at_the_nearest_shape() {
        let mut cache = TuneCache::default();
        cache.record(&[winner("chrome", &[64, 64, 64], "bm32-bn32-bk16-tm4-tn4-v4"), winner("chrome", &[1024, 1024, 1024], "bm128-bn128-bk8-tm8-tn8-v4")]);
        let cases = vec![
            CaseSpec::new("matmul", Shape(vec![33, 70, 45]), 1),
            CaseSpec::new("matmul", Shape(vec![2048, 2048, 2048]), 1),
            CaseSpec::new("matmul_tiled", Shape(vec![64, 64, 64]), 1),
        ];
        let chrome = cache.apply("chrome", &cases);
        assert_eq!(chrome[0].variant.as_deref(), Some("bm32-bn32-bk16-tm4-tn4-v4"));
        assert_eq!(chrome[0].id, cases[0].id, "ids line up across browsers");
        assert_eq!(chrome[1].variant.as_deref(), Some("bm128-bn128-bk8-tm8-tn8-v4"));
        assert_eq!(chrome[2], cases[2], "only tunable kernels get variants");
        assert_eq!(cache.apply("firefox", &cases), cases, "another browser's winners are not used");
        // A transposed shape has as many elements: each case takes the winner of its own shape,
        // whichever order the cache holds them in (the H100's matvec 5632×2048 took 2048×5632's).
        for order in [[0, 1], [1, 0]] {
            let tuned = [winner_of("matvec", "chrome", &[2048, 5632], "wg64-r2-v4"), winner_of("matvec", "chrome", &[5632, 2048], "wg256-r2-v4")];
            let mut cache = TuneCache::default();
            cache.record(&[tuned[order[0]].clone(), tuned[order[1]].clone()]);
            let cases = [CaseSpec::new("matvec", Shape(vec![2048, 5632]), 1), CaseSpec::new("matvec", Shape(vec![5632, 2048]), 1)];
            let picked: Vec<Option<String>> = cache.apply("chrome", &cases).into_iter().map(|c| c.variant).collect();
            assert_eq!(picked, [Some("wg64-r2-v4".to_string()), Some("wg256-r2-v4".to_string())], "order {order:?}");
        }
    }

    #[test]
    fn a_run_on_another_adapter_than_its_winners_is_warned_about() {
        let case = |kernel: &str, variant: Option<&str>| {
            let spec = CaseSpec::new(kernel, Shape(vec![64, 64, 64]), 1);
            let mut c = reports::CaseReport::unmeasured(&spec, &spec.info().unwrap(), CaseStatus::Passed, None);
            c.variant = variant.map(String::from);
            c
        };
        let mut report: RunReport = serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/hardware/h100-native/default-results.json")).unwrap()).unwrap();
        report.runs.truncate(1);
        let adapter = report.runs[0].adapter.as_ref().unwrap().label();
        report.runs[0].cases = vec![case("matmul", Some("v1")), case("matmul_tiled", None)];
        let mut cache = TuneCache::default();
        cache.record(&[Winner { adapter: adapter.clone(), ..winner("native", &[64, 64, 64], "v1") }]);
        assert!(tuned_elsewhere(&report, &cache).is_empty(), "tuned on this very adapter");
        cache.record(&[Winner { adapter: "llvmpipe (LLVM 15.0.6, 256 bits)".into(), ..winner("native", &[64, 64, 64], "v1") }]);
        let warnings = tuned_elsewhere(&report, &cache);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("wgpu/native ran matmul with variants tuned on another adapter or driver (llvmpipe") && warnings[0].contains("NVIDIA H100"), "{warnings:?}");
        // In a browser the same, except on the WASM CPU, which runs the same code whatever the variant.
        let mut in_chrome = report.clone();
        in_chrome.runs[0].browser = "chrome".into();
        cache.record(&[Winner { adapter: "google swiftshader".into(), ..winner("chrome", &[64, 64, 64], "v1") }]);
        for (platform, warned) in [("webgpu", 1), ("wasm", 0)] {
            in_chrome.runs[0].platform = platform.into();
            assert_eq!(tuned_elsewhere(&in_chrome, &cache).len(), warned, "{platform}");
        }
        // A variant the run asked for itself (not the cache's) is no cached winner.
        report.runs[0].cases = vec![case("matmul", Some("v2"))];
        assert!(tuned_elsewhere(&report, &cache).is_empty());
    }

    #[test]
    fn tuning_expands_tunable_kernels_into_every_variant() {
        let cases = vec![CaseSpec::new("matmul", Shape(vec![64, 64, 64]), 1), CaseSpec::new("add", Shape(vec![1024]), 1)];
        let tuned = expand(&cases).unwrap();
        assert_eq!(tuned.len(), kernels::catalog::variants("matmul").len());
        assert!(tuned.iter().all(|c| c.kernel == "matmul" && c.variant.is_some() && c.reference_id() == cases[0].id));
        assert!(expand(&cases[1..]).unwrap_err().contains("matmul"));
    }
}
