//! A case's check against its reference in words: why it failed, the check in brief for tables, and
//! a model's error against its f32 model. (The check itself, its [`Verdict`], is kernels'.)

use kernels::check::{Drift, Verdict};

/// A one-line reason for a failed check.
pub fn describe_failure(v: &Verdict) -> String {
    if v.len != v.expected_len {
        return format!("output has {} elements, expected {}", v.len, v.expected_len);
    }
    if let (Some(cos), Some(min)) = (v.min_cosine, v.cosine_threshold) {
        let row = v.worst_row.map_or_else(|| "a row".to_string(), |r| format!("row {r}"));
        if cos.is_nan() {
            return format!("{row} has no direction: all zeros (never written?) or not finite, where the reference's is not");
        }
        if cos < min {
            return format!("cosine similarity to the reference {cos:.6} in {row} is below {min} (max abs error {:.3e})", v.max_abs_err);
        }
    }
    let mut s = format!("{} of {} elements outside tolerance", v.mismatches, v.len);
    if v.nan_count + v.inf_count > 0 {
        s += &format!(" ({} NaN, {} Inf)", v.nan_count, v.inf_count);
    }
    if let Some(m) = v.first_mismatches.first() {
        s += &format!("; first at [{}]: got {} expected {}", m.index, m.got, m.expected);
    }
    s
}

/// A check in a few characters, for tables: a cosine check as its worst row's similarity
/// (`cos ≥ 0.99987`, rounded down so the claim holds), otherwise the largest absolute error.
pub fn format_check(v: &Verdict) -> String {
    match (v.min_cosine, v.cosine_threshold) {
        (Some(cos), _) => format!("cos ≥ {:.5}", (cos * 1e5).floor() / 1e5),
        (None, Some(_)) => "cos NaN".into(),
        (None, None) => format!("max abs err {:.1e}", v.max_abs_err),
    }
}

/// A model's error against its f32 model in a few words, for tables (`cos 0.99999988, max Δ
/// 7.7e-5 (0.15% of row RMS)`; no `|`, which would split a Markdown cell). The cosine is rounded
/// down, with digits enough to show how far from 1 it is, so an error never reads as none.
pub fn format_drift(d: &Drift) -> String {
    let cos = match 1.0 - d.min_cosine {
        gap if gap.is_nan() => "NaN".to_string(),
        gap if gap <= 0.0 => "1".to_string(),
        gap => {
            let decimals = (1 - gap.log10().floor() as i32).clamp(5, 12);
            let scale = 10f64.powi(decimals);
            format!("{:.*}", decimals as usize, (d.min_cosine * scale).floor() / scale)
        }
    };
    let share = 100.0 * d.max_rms_err;
    let decimals = if share > 0.0 { (1 - share.log10().floor() as i32).clamp(1, 6) as usize } else { 0 };
    format!("cos {cos}, max Δ {:.1e} ({share:.decimals$}% of row RMS)", d.max_abs_err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::check::{check, CheckRule, Tolerance};

    #[test]
    fn a_failed_cosine_check_names_its_row() {
        let rule = CheckRule::Cosine { row: 2, min: 0.999, tol: Tolerance { abs: 1e-3, rel: 0.0 } };
        let unwritten = check(&[1.0, 1.0, 0.0, 0.0], &[1.0, 1.0, 1.0, 1.0], rule);
        assert_eq!(describe_failure(&unwritten), "row 1 has no direction: all zeros (never written?) or not finite, where the reference's is not");
        let rotated = check(&[1.0, 0.0, 1.0, 1.0], &[0.0, 1.0, 1.0, 1.0], rule);
        assert!(describe_failure(&rotated).starts_with("cosine similarity to the reference 0.000000 in row 0 is below 0.999"), "{}", describe_failure(&rotated));
    }

    #[test]
    fn a_drift_reads_in_a_few_words_and_never_rounds_up_to_a_perfect_cosine() {
        let d = |min_cosine, max_rms_err| kernels::check::Drift { dtype: kernels::Dtype::Q4_0, min_cosine, worst_row: None, max_abs_err: 0.25, max_rms_err };
        assert_eq!(format_drift(&d(0.995, 0.125)), "cos 0.99500, max Δ 2.5e-1 (12.5% of row RMS)");
        // f16's error is far below 1e-5: the digits go on until it shows.
        assert_eq!(format_drift(&d(0.999_999_887_8, 0.0015)), "cos 0.99999988, max Δ 2.5e-1 (0.15% of row RMS)");
        assert_eq!(format_drift(&d(0.999_999_994, 0.000_29)), "cos 0.9999999940, max Δ 2.5e-1 (0.029% of row RMS)");
        assert_eq!(format_drift(&d(1.000_000_000_000_000_2, 0.0)), "cos 1, max Δ 2.5e-1 (0% of row RMS)");
        assert_eq!(format_drift(&d(f64::NAN, 0.125)), "cos NaN, max Δ 2.5e-1 (12.5% of row RMS)");
        assert!(!format_drift(&d(0.9, 0.1)).contains('|'), "a Markdown cell");
    }
}
