//! Tukey's fences: a sample beyond 1.5 interquartile ranges from the quartiles is a mild outlier,
//! beyond 3 a severe one. Outliers are counted and shown, never dropped: a GPU that stalls now and
//! then is part of what a user should see.

use crate::order::quantile;
use serde::{Deserialize, Serialize};

/// Outlier counts of one set of samples, and the fences that define them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outliers {
    /// Below Q1 − 3·IQR.
    pub low_severe: usize,
    /// Between Q1 − 3·IQR and Q1 − 1.5·IQR.
    pub low_mild: usize,
    /// Between Q3 + 1.5·IQR and Q3 + 3·IQR.
    pub high_mild: usize,
    /// Above Q3 + 3·IQR.
    pub high_severe: usize,
    /// Q1 − 1.5·IQR: samples below it are outliers.
    pub low_fence: f64,
    /// Q3 + 1.5·IQR: samples above it are outliers.
    pub high_fence: f64,
}

/// How far outside the fences a sample lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Inside the inner fences.
    None,
    /// Beyond 1.5·IQR.
    Mild,
    /// Beyond 3·IQR.
    Severe,
}

impl Outliers {
    /// Classifies `sorted` (ascending) samples.
    pub fn classify(sorted: &[f64]) -> Outliers {
        if sorted.is_empty() {
            return Outliers::default();
        }
        let (q1, q3) = (quantile(sorted, 0.25), quantile(sorted, 0.75));
        let iqr = q3 - q1;
        let mut o = Outliers { low_fence: q1 - 1.5 * iqr, high_fence: q3 + 1.5 * iqr, ..Outliers::default() };
        for &v in sorted {
            match (v < q1, Self::severity_at(v, q1, q3)) {
                (true, Severity::Severe) => o.low_severe += 1,
                (true, Severity::Mild) => o.low_mild += 1,
                (false, Severity::Mild) => o.high_mild += 1,
                (false, Severity::Severe) => o.high_severe += 1,
                (_, Severity::None) => {}
            }
        }
        o
    }

    fn severity_at(v: f64, q1: f64, q3: f64) -> Severity {
        let iqr = q3 - q1;
        let beyond = if v < q1 { q1 - v } else { v - q3 };
        if beyond > 3.0 * iqr {
            Severity::Severe
        } else if beyond > 1.5 * iqr {
            Severity::Mild
        } else {
            Severity::None
        }
    }

    /// The severity of sample `v` against these fences.
    pub fn severity(&self, v: f64) -> Severity {
        // The fences are Q1 − 1.5·IQR and Q3 + 1.5·IQR, so the quartiles follow from them.
        let iqr = (self.high_fence - self.low_fence) / 4.0;
        Self::severity_at(v, self.low_fence + 1.5 * iqr, self.high_fence - 1.5 * iqr)
    }

    /// All outliers.
    pub fn total(&self) -> usize {
        self.low_severe + self.low_mild + self.high_mild + self.high_severe
    }

    /// Mild outliers, both sides.
    pub fn mild(&self) -> usize {
        self.low_mild + self.high_mild
    }

    /// Severe outliers, both sides.
    pub fn severe(&self) -> usize {
        self.low_severe + self.high_severe
    }

    /// `0`, `2 mild`, `1 severe` or `2 mild, 1 severe`, as tables show it.
    pub fn describe(&self) -> String {
        match (self.mild(), self.severe()) {
            (0, 0) => "0".into(),
            (m, 0) => format!("{m} mild"),
            (0, v) => format!("{v} severe"),
            (m, v) => format!("{m} mild, {v} severe"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crafted_sample_is_classified() {
        // Q1 = 10, Q3 = 12 (IQR 2): inner fences 7 and 15, outer fences 4 and 18.
        let mut s = vec![10.0, 10.0, 10.0, 10.0, 11.0, 11.0, 11.0, 11.0, 12.0, 12.0, 12.0, 12.0];
        s.extend([2.0, 6.0, 16.0, 30.0, 17.9, 18.1]);
        s.sort_by(f64::total_cmp);
        let o = Outliers::classify(&s);
        let (q1, q3) = (quantile(&s, 0.25), quantile(&s, 0.75));
        assert_eq!((q1, q3), (10.0, 12.0));
        assert_eq!((o.low_fence, o.high_fence), (7.0, 15.0));
        assert_eq!((o.low_severe, o.low_mild, o.high_mild, o.high_severe), (1, 1, 2, 2));
        assert_eq!((o.total(), o.mild(), o.severe()), (6, 3, 3));
        assert_eq!(o.describe(), "3 mild, 3 severe");
        assert_eq!(o.severity(2.0), Severity::Severe);
        assert_eq!(o.severity(6.0), Severity::Mild);
        assert_eq!(o.severity(17.9), Severity::Mild);
        assert_eq!(o.severity(18.1), Severity::Severe);
        assert_eq!(o.severity(11.0), Severity::None);
    }

    #[test]
    fn identical_samples_have_no_outliers() {
        assert_eq!(Outliers::classify(&[3.0; 10]).total(), 0);
    }
}
