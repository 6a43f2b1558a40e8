//! Value parsers shared by several subcommands' options: percentages and seconds, each with the
//! reason a value is refused.

/// A percentage above 0, with or without `%`.
pub fn positive_pct(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("`{s}` is not a positive percentage")),
    }
}

/// A percentage of 0 or more, with or without `%`.
pub fn non_negative_pct(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("`{s}` is not a percentage of 0 or more")),
    }
}

/// A number of seconds above 0.
pub fn positive_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("`{s}` is not a positive number of seconds")),
    }
}
