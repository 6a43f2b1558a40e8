//! A run compared with a saved baseline, as `results.json` holds it: per case the change of the
//! median with its 95% bootstrap interval, classed improved, regressed or unchanged.

use super::Timer;
use serde::{Deserialize, Serialize};
use stats::{Change, Class};

/// Whether a case was in both runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Presence {
    /// Planned by both.
    Both,
    /// Only the baseline has it.
    OnlyBaseline,
    /// Only the new run has it.
    OnlyNew,
}

/// One case of one run, baseline against new.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseChange {
    /// `browser/platform` of the run.
    pub run: String,
    /// Case id.
    pub id: String,
    /// Which side has it.
    pub presence: Presence,
    /// The timer compared: GPU timestamps when both sides have them, else wall clock.
    pub timer: Option<Timer>,
    /// The change, when both sides measured the case (two samples or more each).
    pub change: Option<Change>,
    /// Why there is no change to show, when there is none.
    pub note: Option<String>,
}

impl CaseChange {
    /// The class, `None` when nothing could be compared.
    pub fn class(&self) -> Option<Class> {
        self.change.map(|c| c.class)
    }
}

/// How many cases fell in each class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeCounts {
    /// Faster beyond noise.
    pub improved: usize,
    /// Slower beyond noise.
    pub regressed: usize,
    /// Within noise.
    pub unchanged: usize,
    /// In both runs but not measured in one of them (wrong, timed out, not run).
    pub not_compared: usize,
    /// Only in the baseline.
    pub only_baseline: usize,
    /// Only in the new run.
    pub only_new: usize,
}

/// The comparison of a run with its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BaselineComparison {
    /// The baseline's name, or the path it was read from.
    pub name: String,
    /// When the baseline was measured.
    pub baseline_created_at: String,
    /// The baseline's harness revision, when known.
    pub baseline_revision: Option<String>,
    /// Changes under this many percent are unchanged.
    pub noise_pct: f64,
    /// `--fail-on-regression`: a regression above this many percent fails the run.
    pub fail_on_regression_pct: Option<f64>,
    /// Every case of either run.
    pub cases: Vec<CaseChange>,
    /// The runs measured on other hardware than the baseline's: their cases are not compared,
    /// and a gate fails on them, since it cannot vouch for what it did not compare.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hardware_changes: Vec<HardwareChange>,
}

/// How the note of a case not compared for a [`HardwareChange`] begins.
pub const OTHER_HARDWARE: &str = "other hardware";

/// A run whose times measure other hardware than the baseline's run of the same name: another
/// adapter (a software one in place of a GPU, say) or, for CPU times, another CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HardwareChange {
    /// `browser/platform` of the run.
    pub run: String,
    /// What the baseline was measured on.
    pub baseline: String,
    /// What the new run was measured on.
    pub new: String,
}

impl HardwareChange {
    /// The change in words, with what to do about it.
    pub fn describe(&self) -> String {
        format!("{} ran on other hardware than the baseline's (baseline: {}; now: {}): its cases are not compared; save a baseline on this hardware", self.run, self.baseline, self.new)
    }
}

impl BaselineComparison {
    /// Cases in each class.
    pub fn counts(&self) -> ChangeCounts {
        let mut c = ChangeCounts::default();
        for case in &self.cases {
            match (case.presence, case.class()) {
                (Presence::OnlyBaseline, _) => c.only_baseline += 1,
                (Presence::OnlyNew, _) => c.only_new += 1,
                (Presence::Both, Some(Class::Improved)) => c.improved += 1,
                (Presence::Both, Some(Class::Regressed)) => c.regressed += 1,
                (Presence::Both, Some(Class::Unchanged)) => c.unchanged += 1,
                (Presence::Both, None) => c.not_compared += 1,
            }
        }
        c
    }

    /// Regressions that fail the gate: regressed by more than `--fail-on-regression` (every
    /// regression when no threshold was given).
    pub fn failing(&self) -> impl Iterator<Item = (&CaseChange, &Change)> {
        let threshold = self.fail_on_regression_pct.unwrap_or(0.0);
        self.cases
            .iter()
            .filter_map(|c| c.change.as_ref().map(|ch| (c, ch)))
            .filter(move |(_, ch)| ch.class == Class::Regressed && ch.pct > threshold)
    }

    /// Whether `--fail-on-regression` was given and a regression exceeds it, or a run could not
    /// be compared because its hardware changed.
    pub fn gate_fails(&self) -> bool {
        self.fail_on_regression_pct.is_some() && (self.failing().next().is_some() || !self.hardware_changes.is_empty())
    }

    /// Why the gate fails, one line each: the regressions beyond it, then the runs whose
    /// hardware changed. Empty when it passes or there is no gate.
    pub fn gate_failures(&self) -> Vec<String> {
        if self.fail_on_regression_pct.is_none() {
            return Vec::new();
        }
        let regressed = self.failing().map(|(c, ch)| format!("{} {} {}", c.run, c.id, ch.describe()));
        regressed.chain(self.hardware_changes.iter().map(HardwareChange::describe)).collect()
    }
}
