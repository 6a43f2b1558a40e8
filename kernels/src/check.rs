//! Comparing a platform's output with the f64 reference.

use serde::{Deserialize, Serialize};

/// How far an f32 result may stray: an element passes when
/// `|got - expected| <= abs + rel * |expected|`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    /// Absolute part.
    pub abs: f64,
    /// Relative part.
    pub rel: f64,
}

/// How a case's output is checked.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CheckRule {
    /// Every element within the tolerance.
    Elementwise(Tolerance),
    /// Every row of `row` values has cosine similarity at least `min` to the reference's row
    /// (embeddings, hidden states); elementwise errors are still reported.
    Cosine {
        /// Values per row.
        row: usize,
        /// Least cosine similarity that passes.
        min: f64,
    },
}

/// One element that failed the check, kept so a report can show what went wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Mismatch {
    /// Index into the output buffer.
    pub index: usize,
    /// What the platform computed; JSON has no NaN or infinity, so those are the strings
    /// `"NaN"`, `"Infinity"` and `"-Infinity"`.
    #[serde(with = "json_float")]
    pub got: f64,
    /// The reference value.
    #[serde(with = "json_float")]
    pub expected: f64,
}

/// f64 in JSON with NaN and the infinities as strings, so they survive a round trip.
mod json_float {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Number(f64),
        Text(String),
    }

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_nan() {
            s.serialize_str("NaN")
        } else if v.is_infinite() {
            s.serialize_str(if *v > 0.0 { "Infinity" } else { "-Infinity" })
        } else {
            s.serialize_f64(*v)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Repr::deserialize(d)? {
            Repr::Number(v) => Ok(v),
            Repr::Text(t) => match t.as_str() {
                "NaN" => Ok(f64::NAN),
                "Infinity" => Ok(f64::INFINITY),
                "-Infinity" => Ok(f64::NEG_INFINITY),
                other => Err(serde::de::Error::custom(format!("`{other}` is not a number"))),
            },
        }
    }
}

/// The outcome of checking one output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// True when every element is finite where the reference is, within tolerance, and the
    /// output has the expected length.
    pub passed: bool,
    /// Largest `|got - expected|` over finite elements.
    pub max_abs_err: f64,
    /// Largest `|got - expected| / |expected|` over elements whose reference is not ~zero.
    pub max_rel_err: f64,
    /// Elements that are NaN.
    pub nan_count: usize,
    /// Elements that are infinite.
    pub inf_count: usize,
    /// Elements outside tolerance (NaN and infinities included).
    pub mismatches: usize,
    /// The first few mismatching elements.
    pub first_mismatches: Vec<Mismatch>,
    /// Elements compared.
    pub len: usize,
    /// Elements expected.
    pub expected_len: usize,
    /// The tolerance applied.
    pub tolerance: Tolerance,
    /// With a cosine rule: the least cosine similarity of an output row to the reference's row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_cosine: Option<f64>,
    /// With a cosine rule: the least that passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cosine_threshold: Option<f64>,
    /// What the output was compared with, when it is not the case's own f64 reference (a user
    /// kernel's outputs are compared with native wgpu's, or with another platform's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

/// Elementwise errors a cosine check still reports, for people; they do not decide it.
const COSINE_REPORTING: Tolerance = Tolerance { abs: 1e-2, rel: 1e-2 };

/// Checks `got` against `expected` by `rule`.
pub fn check(got: &[f64], expected: &[f64], rule: CheckRule) -> Verdict {
    let (row, min) = match rule {
        CheckRule::Elementwise(tol) => return compare(got, expected, tol),
        CheckRule::Cosine { row, min } => (row.max(1), min),
    };
    let mut v = compare(got, expected, COSINE_REPORTING);
    let worst = got
        .chunks(row)
        .zip(expected.chunks(row))
        .map(|(g, e)| cosine(g, e))
        .fold(f64::INFINITY, |a, b| if b.is_nan() { f64::NAN } else { a.min(b) });
    v.min_cosine = Some(if worst.is_infinite() { 1.0 } else { worst });
    v.cosine_threshold = Some(min);
    v.passed = v.len == v.expected_len && v.nan_count + v.inf_count == 0 && worst >= min;
    v
}

/// Cosine similarity; NaN when either vector is zero.
pub fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f64 = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// Checks `got` against `expected` under `tol`.
pub fn compare<T: Copy + Into<f64>>(got: &[T], expected: &[f64], tol: Tolerance) -> Verdict {
    let mut v = Verdict {
        passed: got.len() == expected.len(),
        max_abs_err: 0.0,
        max_rel_err: 0.0,
        nan_count: 0,
        inf_count: 0,
        mismatches: 0,
        first_mismatches: Vec::new(),
        len: got.len(),
        expected_len: expected.len(),
        tolerance: tol,
        min_cosine: None,
        cosine_threshold: None,
        reference: None,
    };
    for (index, (&g, &e)) in got.iter().zip(expected).enumerate() {
        let g: f64 = g.into();
        if g.is_nan() {
            v.nan_count += 1;
        } else if g.is_infinite() {
            v.inf_count += 1;
        }
        let err = (g - e).abs();
        let ok = err <= tol.abs + tol.rel * e.abs();
        if g.is_finite() {
            v.max_abs_err = v.max_abs_err.max(err);
            if e.abs() > tol.abs {
                v.max_rel_err = v.max_rel_err.max(err / e.abs());
            }
        }
        if !ok {
            v.mismatches += 1;
            if v.first_mismatches.len() < 5 {
                v.first_mismatches.push(Mismatch { index, got: g, expected: e });
            }
        }
    }
    v.passed &= v.mismatches == 0;
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOL: Tolerance = Tolerance { abs: 1e-5, rel: 1e-4 };

    #[test]
    fn exact_output_passes() {
        let v = compare(&[1.0, -2.0, 0.0], &[1.0, -2.0, 0.0], TOL);
        assert!(v.passed);
        assert_eq!(v.mismatches, 0);
        assert_eq!(v.max_abs_err, 0.0);
    }

    #[test]
    fn error_beyond_tolerance_fails_and_is_located() {
        let v = compare(&[1.0, 2.5, 3.0], &[1.0, 2.0, 3.0], TOL);
        assert!(!v.passed);
        assert_eq!(v.mismatches, 1);
        assert_eq!(v.first_mismatches[0].index, 1);
        assert!((v.max_abs_err - 0.5).abs() < 1e-12);
        assert!((v.max_rel_err - 0.25).abs() < 1e-12);
    }

    #[test]
    fn nan_and_inf_fail() {
        let v = compare(&[f32::NAN, f32::INFINITY, 1.0], &[0.0, 1.0, 1.0], TOL);
        assert!(!v.passed);
        assert_eq!((v.nan_count, v.inf_count, v.mismatches), (1, 1, 2));
    }

    #[test]
    fn non_finite_mismatches_survive_json() {
        let v = compare(&[f32::NAN, f32::NEG_INFINITY], &[0.0, 1.0], TOL);
        let json = serde_json::to_string(&v).unwrap();
        assert!(json.contains("\"NaN\"") && json.contains("\"-Infinity\""), "{json}");
        let back: Verdict = serde_json::from_str(&json).unwrap();
        assert!(back.first_mismatches[0].got.is_nan());
        assert_eq!(back.first_mismatches[1].got, f64::NEG_INFINITY);
    }

    #[test]
    fn cosine_rule_passes_a_scaled_row_and_fails_a_rotated_one() {
        let rule = CheckRule::Cosine { row: 2, min: 0.999 };
        let v = check(&[1.0, 0.0, 2.0, 2.0], &[1.0, 0.0, 1.0, 1.0], rule);
        assert!(v.passed, "{v:?}");
        assert!(v.mismatches > 0, "elementwise errors are still reported");
        let v = check(&[1.0, 0.0, 0.0, 1.0], &[1.0, 0.0, 1.0, 0.0], rule);
        assert!(!v.passed);
        assert!(v.min_cosine.unwrap().abs() < 1e-12);
        assert!(!check(&[f64::NAN, 0.0], &[1.0, 0.0], rule).passed);
    }

    #[test]
    fn wrong_length_fails() {
        assert!(!compare(&[1.0], &[1.0, 2.0], TOL).passed);
    }

    #[test]
    fn relative_part_scales_with_magnitude() {
        assert!(compare(&[1000.05], &[1000.0], TOL).passed);
        assert!(!compare(&[1.05], &[1.0], TOL).passed);
    }
}
