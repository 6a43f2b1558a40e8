//! `harness history check`'s reading of the store: every series' newest run against the runs
//! before it ([`crate::detect`]), each change named with the commits it lies between.

use crate::detect::{self, Direction, Finding, Kind, Rule};
use crate::store::{Store, StoreError, StoredPoint, StoredRun, StoredSeries};
use crate::SeriesKey;
use serde_json::{json, Value};
use std::collections::HashMap;

/// The store read whole: its runs, series, and each series' points (oldest first).
pub struct History {
    /// Every run, oldest first.
    pub runs: Vec<StoredRun>,
    /// Where each run is in `runs`, by id.
    index: HashMap<i64, usize>,
    /// Every series.
    pub series: Vec<StoredSeries>,
    /// Each series' points, by series id, oldest first.
    pub points: HashMap<i64, Vec<StoredPoint>>,
}

impl History {
    /// Reads `store`.
    pub fn read(store: &Store) -> Result<History, StoreError> {
        let runs = store.runs()?;
        let index = runs.iter().enumerate().map(|(n, r)| (r.id, n)).collect();
        let mut points: HashMap<i64, Vec<StoredPoint>> = HashMap::new();
        for p in store.points()? {
            points.entry(p.series).or_default().push(p);
        }
        Ok(History { runs, index, series: store.series()?, points })
    }

    /// The run of id `id`.
    pub fn run(&self, id: i64) -> Option<&StoredRun> {
        self.index.get(&id).map(|&n| &self.runs[n])
    }

    /// Run `run`'s commit as pages show it ([`StoredRun::commit_label`]).
    pub fn commit(&self, run: i64) -> String {
        self.run(run).map(StoredRun::commit_label).unwrap_or_default()
    }

    /// Every series' change at its newest run by `rule`, limited to the series with a point of
    /// run `only` where given; and how many series were checked.
    pub fn changes(&self, rule: &Rule, only: Option<i64>) -> (Vec<Flagged<'_>>, usize) {
        let mut flagged = Vec::new();
        let mut checked = 0;
        for s in &self.series {
            let Some(points) = self.points.get(&s.id) else { continue };
            if only.is_some_and(|run| points.last().is_none_or(|p| p.run != run)) {
                continue;
            }
            checked += 1;
            let medians: Vec<f64> = points.iter().map(|p| p.median_ms).collect();
            if let Some(finding) = detect::check(&medians, rule) {
                flagged.push(Flagged {
                    series: &s.key,
                    finding,
                    before: self.commit(points[finding.last_before].run),
                    after: self.commit(points[finding.first_after].run),
                    latest_ms: medians[medians.len() - 1],
                });
            }
        }
        (flagged, checked)
    }
}

/// A series whose newest run changed.
pub struct Flagged<'a> {
    /// The series.
    pub series: &'a SeriesKey,
    /// The change.
    pub finding: Finding,
    /// The commit of the last run before it.
    pub before: String,
    /// The commit of the first run of it.
    pub after: String,
    /// The newest median, ms.
    pub latest_ms: f64,
}

impl Flagged<'_> {
    /// Whether it is a regression.
    pub fn regressed(&self) -> bool {
        self.finding.direction == Direction::Regressed
    }

    /// In one line.
    pub fn line(&self) -> String {
        let k = self.series;
        let kind = self.finding.kind.words();
        format!(
            "{} {:+.1}%  {} on {}/{} · {} · {} · {}: {kind}, between {} and {} (now {:.4} ms)",
            self.finding.direction.as_str(),
            self.finding.pct,
            k.case,
            k.browser,
            k.platform,
            k.hardware,
            k.timer,
            k.sampling,
            self.before,
            self.after,
            self.latest_ms
        )
    }

    /// As `--json` prints it.
    pub fn json(&self) -> Value {
        let k = self.series;
        json!({"case": k.case, "platform": k.platform, "browser": k.browser, "hardware": k.hardware, "timer": k.timer, "sampling": k.sampling,
               "direction": self.finding.direction.as_str(), "kind": match self.finding.kind { Kind::Step { .. } => "step", Kind::Drift => "drift" },
               "pct": self.finding.pct, "z": self.finding.z, "lastBefore": self.before, "firstAfter": self.after, "latestMs": self.latest_ms})
    }
}
