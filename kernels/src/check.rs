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
    /// (embeddings, hidden states), and every element is within `tol`, whose `abs` is in units of
    /// the reference row's RMS: the cosine alone would pass an output whose every weight was
    /// rounded to f16, or whose rows are scaled.
    Cosine {
        /// Values per row.
        row: usize,
        /// Least cosine similarity that passes.
        min: f64,
        /// Per-element bound; `abs` is relative to the row's RMS.
        tol: Tolerance,
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
    /// The tolerance applied (with a cosine rule, its `abs` is in units of each reference row's RMS).
    pub tolerance: Tolerance,
    /// With a cosine rule: the least cosine similarity of an output row to the reference's row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_cosine: Option<f64>,
    /// With a cosine rule: the least that passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cosine_threshold: Option<f64>,
    /// With a cosine rule: the row that decided `min_cosine`: the first row with no direction (all
    /// zeros, never written, or not finite) where the reference's has one, else the least similar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_row: Option<usize>,
    /// What the output was compared with, when it is not the case's own f64 reference (a user
    /// kernel's outputs are compared with native wgpu's, or with another platform's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// For a model run in a narrower dtype than f32: how far the output lands from the same
    /// model's f32 reference. The check above compares with a reference computed from the same
    /// rounded weights, so it catches kernel bugs; this is the error the dtype itself causes,
    /// reported beside it and never deciding `passed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_f32: Option<Drift>,
}

/// How far an output computed with rounded or quantized weights (f16, q8_0, q4_0) lands from the
/// same model's output with f32 weights: the price of the dtype, not a failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Drift {
    /// The dtype whose error this is.
    pub dtype: crate::dtype::Dtype,
    /// The least cosine similarity of an output row to the f32 model's row; NaN (the string
    /// `"NaN"` in JSON) where a row has no direction.
    #[serde(with = "json_float")]
    pub min_cosine: f64,
    /// The row of `min_cosine`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_row: Option<usize>,
    /// Largest `|got - f32|` over finite elements.
    pub max_abs_err: f64,
    /// Largest `|got - f32|` in units of the f32 row's RMS, the unit of the cosine rule's
    /// per-element bound; rows whose RMS is zero are left out.
    pub max_rms_err: f64,
}

/// The [`Drift`] of `got` (run in `dtype`) from `f32` (the f32 model's reference), by rows of
/// `row` values; `None` when the lengths differ or there is nothing to compare.
pub fn drift(dtype: crate::dtype::Dtype, got: &[f64], f32: &[f64], row: usize) -> Option<Drift> {
    if got.len() != f32.len() || got.is_empty() {
        return None;
    }
    let row = row.max(1);
    let (worst_row, min_cosine) = least_similar_row(got, f32, row).map_or((None, 1.0), |(r, c)| (Some(r), c));
    let (mut max_abs_err, mut max_rms_err) = (0.0f64, 0.0f64);
    for (g, e) in got.chunks(row).zip(f32.chunks(row)) {
        let rms = row_rms(e);
        for (g, e) in g.iter().zip(e).filter(|(g, _)| g.is_finite()) {
            let err = (g - e).abs();
            max_abs_err = max_abs_err.max(err);
            if rms > 0.0 {
                max_rms_err = max_rms_err.max(err / rms);
            }
        }
    }
    Some(Drift { dtype, min_cosine, worst_row, max_abs_err, max_rms_err })
}

/// The root mean square of a row.
fn row_rms(row: &[f64]) -> f64 {
    (row.iter().map(|x| x * x).sum::<f64>() / row.len() as f64).sqrt()
}

/// The row that decides a cosine rule and its cosine: the first with no direction (NaN) where the
/// reference's has one, else the least similar; `None` for no rows.
fn least_similar_row(got: &[f64], expected: &[f64], row: usize) -> Option<(usize, f64)> {
    // A NaN must not vanish in a `min`, which returns its other argument.
    let mut worst: Option<(usize, f64)> = None;
    for (r, (g, e)) in got.chunks(row).zip(expected.chunks(row)).enumerate() {
        let c = row_cosine(g, e);
        match worst {
            Some((_, w)) if w.is_nan() || (!c.is_nan() && c >= w) => {}
            _ => worst = Some((r, c)),
        }
    }
    worst
}

/// Checks `got` against `expected` by `rule`.
pub fn check(got: &[f64], expected: &[f64], rule: CheckRule) -> Verdict {
    let (row, min, tol) = match rule {
        CheckRule::Elementwise(tol) => return compare(got, expected, tol),
        CheckRule::Cosine { row, min, tol } => (row.max(1), min, tol),
    };
    let rms: Vec<f64> = expected.chunks(row).map(row_rms).collect();
    let mut v = compare_scaled(got, expected, tol, |i| rms[i / row]);
    let (worst_row, worst) = least_similar_row(got, expected, row).map_or((None, 1.0), |(r, c)| (Some(r), c));
    v.min_cosine = Some(worst);
    v.cosine_threshold = Some(min);
    v.worst_row = worst_row;
    v.passed &= worst >= min;
    v
}

/// A row's cosine similarity to the reference's; 1 where both are all zeros (nothing to point
/// anywhere), NaN where only the output's is (it was never written) or anything is not finite.
fn row_cosine(got: &[f64], expected: &[f64]) -> f64 {
    let zero = |v: &[f64]| v.iter().all(|&x| x == 0.0);
    if zero(expected) && zero(got) {
        return 1.0;
    }
    cosine(got, expected)
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
    compare_scaled(got, expected, tol, |_| 1.0)
}

/// [`compare`] with element `i`'s absolute tolerance multiplied by `scale(i)`.
fn compare_scaled<T: Copy + Into<f64>>(got: &[T], expected: &[f64], tol: Tolerance, scale: impl Fn(usize) -> f64) -> Verdict {
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
        worst_row: None,
        reference: None,
        vs_f32: None,
    };
    for (index, (&g, &e)) in got.iter().zip(expected).enumerate() {
        let g: f64 = g.into();
        if g.is_nan() {
            v.nan_count += 1;
        } else if g.is_infinite() {
            v.inf_count += 1;
        }
        let err = (g - e).abs();
        let ok = err <= tol.abs * scale(index) + tol.rel * e.abs();
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

    const COSINE: CheckRule = CheckRule::Cosine { row: 2, min: 0.999, tol: Tolerance { abs: 1e-3, rel: 0.0 } };

    #[test]
    fn cosine_rule_fails_a_rotated_row_and_a_scaled_one() {
        assert!(check(&[1.0, 0.0, 1.0, 1.0], &[1.0, 0.0, 1.0, 1.0], COSINE).passed);
        let v = check(&[1.0, 0.0, 0.0, 1.0], &[1.0, 0.0, 1.0, 0.0], COSINE);
        assert!(!v.passed);
        assert!(v.min_cosine.unwrap().abs() < 1e-12);
        assert_eq!(v.worst_row, Some(1));
        // Cosine 1, yet twice the reference: the per-element bound fails it.
        let v = check(&[1.0, 0.0, 2.0, 2.0], &[1.0, 0.0, 1.0, 1.0], COSINE);
        assert!(!v.passed && v.min_cosine.unwrap() > 0.999_999 && v.mismatches == 2, "{v:?}");
        assert!(!check(&[f64::NAN, 0.0], &[1.0, 0.0], COSINE).passed);
    }

    #[test]
    fn a_row_never_written_fails_wherever_it_is_and_is_named() {
        let rows = 5;
        let row = 4;
        let expected: Vec<f64> = (0..rows * row).map(|i| (i as f64 * 0.7).sin() + 0.1).collect();
        let rule = CheckRule::Cosine { row, min: 0.999, tol: Tolerance { abs: 1e-3, rel: 0.0 } };
        assert!(check(&expected, &expected, rule).passed);
        for zeroed in 0..rows {
            for bad in [0.0, f64::NAN] {
                let mut got = expected.clone();
                got[zeroed * row..][..row].fill(bad);
                let v = check(&got, &expected, rule);
                assert!(!v.passed, "row {zeroed} of {rows} set to {bad} passed: {v:?}");
                assert_eq!(v.worst_row, Some(zeroed), "{bad}");
                assert!(v.min_cosine.unwrap().is_nan());
            }
        }
        // A row the reference has as zeros too is right when zero.
        let mut zero_ref = expected.clone();
        zero_ref[..row].fill(0.0);
        assert!(check(&zero_ref, &zero_ref, rule).passed);
    }

    #[test]
    fn the_per_element_bound_is_relative_to_the_row_scale() {
        // Rows of very different scale: an error of 1e-4 in a row of RMS 1 is within 1e-3 RMS,
        // the same error in a row of RMS 0.01 is not.
        let expected = [1.0, -1.0, 0.01, -0.01];
        let rule = CheckRule::Cosine { row: 2, min: 0.9, tol: Tolerance { abs: 1e-3, rel: 0.0 } };
        assert!(check(&[1.0001, -1.0, 0.01, -0.01], &expected, rule).passed);
        let v = check(&[1.0, -1.0, 0.0101, -0.01], &expected, rule);
        assert!(!v.passed && v.mismatches == 1 && v.first_mismatches[0].index == 2, "{v:?}");
    }

    #[test]
    fn drift_measures_the_dtype_s_error_per_row_and_in_row_rms() {
        use crate::dtype::Dtype;
        let f32 = [3.0, 4.0, 0.3, 0.4];
        let same = drift(Dtype::F16, &f32, &f32, 2).unwrap();
        assert_eq!((same.min_cosine, same.max_abs_err, same.max_rms_err), (1.0, 0.0, 0.0));
        // The same error of 0.01 is 0.01/3.54 of the first row's RMS and 0.01/0.354 of the second's.
        let got = [3.01, 4.0, 0.31, 0.4];
        let d = drift(Dtype::Q8_0, &got, &f32, 2).unwrap();
        assert_eq!(d.dtype, Dtype::Q8_0);
        assert!((d.max_abs_err - 0.01).abs() < 1e-12, "{d:?}");
        assert!((d.max_rms_err - 0.01 / (0.125f64).sqrt()).abs() < 1e-9, "{d:?}");
        assert_eq!(d.worst_row, Some(1));
        assert!(d.min_cosine < 1.0 && d.min_cosine > 0.999, "{d:?}");
        // A row with no direction is the worst and stays NaN through JSON; the rest still count.
        let d = drift(Dtype::Q4_0, &[f64::NAN, 4.0, 0.3, 0.5], &f32, 2).unwrap();
        assert!(d.min_cosine.is_nan() && d.worst_row == Some(0));
        assert!((d.max_abs_err - 0.1).abs() < 1e-12);
        let back: Drift = serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
        assert!(back.min_cosine.is_nan());
        assert!(drift(Dtype::F16, &[1.0], &f32, 2).is_none());
    }

    #[test]
    fn a_verdict_carries_its_drift_in_camel_case_and_omits_none() {
        let mut v = compare(&[1.0f64], &[1.0], TOL);
        assert!(!serde_json::to_string(&v).unwrap().contains("vsF32"));
        v.vs_f32 = drift(crate::dtype::Dtype::F16, &[1.0, 2.0], &[1.0, 2.001], 2);
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["vsF32"]["dtype"], "f16");
        assert!(json["vsF32"]["maxRmsErr"].as_f64().unwrap() > 0.0 && json["vsF32"]["minCosine"].as_f64().unwrap() < 1.0, "{json}");
        assert_eq!(serde_json::from_value::<Verdict>(json).unwrap(), v);
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
