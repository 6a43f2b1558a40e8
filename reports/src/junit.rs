//! `junit.xml` for CI test reporters: one test case per kernel × shape × browser/platform. A wrong
//! answer and a regression beyond the gate are failures with a message; a timeout or page error is
//! an error; a case never reached is skipped.

use crate::model::{format_ms, CaseStatus, RunReport};
use std::fmt::Write;

/// Escapes text for an XML attribute or element.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 forbids most control characters even when escaped.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

enum Outcome {
    Pass,
    Failure(String, String),
    Error(String, String),
    Skipped(String),
}

/// Renders the JUnit XML of `report`.
pub fn render(report: &RunReport) -> String {
    let labels = crate::model::labels(report);
    let regressions: Vec<(&str, &str, String)> = report
        .baseline
        .iter()
        .flat_map(|b| {
            b.failing().map(move |(c, ch)| {
                (c.run.as_str(), c.id.as_str(), format!("regressed {} against baseline {} ({} → {} ms)", ch.describe(), b.name, format_ms(ch.old_median), format_ms(ch.new_median)))
            })
        })
        .chain(report.baseline.iter().filter(|b| b.fail_on_regression_pct.is_some()).flat_map(|b| {
            // A gate fails on a run it could not compare: so does each of its cases.
            b.hardware_changes.iter().flat_map(move |h| {
                b.cases
                    .iter()
                    .filter(move |c| c.run == h.run && c.note.as_deref().is_some_and(|n| n.starts_with(crate::baseline::OTHER_HARDWARE)))
                    .map(move |c| (c.run.as_str(), c.id.as_str(), format!("not compared with baseline {}: {}", b.name, h.describe())))
            })
        }))
        .collect();
    let mut suites = String::new();
    let (mut total, mut total_failures, mut total_errors, mut total_skipped) = (0, 0, 0, 0);
    for (run, label) in report.runs.iter().zip(&labels) {
        let (mut failures, mut errors, mut skipped) = (0, 0, 0);
        let mut cases = String::new();
        for case in &run.cases {
            let message = case.message.clone().unwrap_or_default();
            let mut outcome = match case.status {
                CaseStatus::Passed => Outcome::Pass,
                CaseStatus::Failed => Outcome::Failure("wrong answer".into(), message),
                CaseStatus::TimedOut => Outcome::Error("timed out".into(), message),
                CaseStatus::Crashed => Outcome::Error("crashed".into(), message),
                CaseStatus::DeviceLost => Outcome::Error("GPU device lost".into(), message),
                CaseStatus::Error => Outcome::Error("error".into(), message),
                CaseStatus::NotRun => Outcome::Skipped(if message.is_empty() { "not run".into() } else { message }),
                CaseStatus::Unsupported => Outcome::Skipped(if message.is_empty() { "unsupported on this platform".into() } else { message }),
                CaseStatus::Unchecked => Outcome::Skipped(format!("unchecked (no independent reference): {message}")),
            };
            if let Some((_, _, why)) = regressions.iter().find(|(r, id, _)| *r == label && *id == case.id) {
                outcome = match outcome {
                    Outcome::Failure(kind, m) => Outcome::Failure(kind, format!("{m}; {why}")),
                    Outcome::Pass => Outcome::Failure("regression".into(), why.clone()),
                    other => other,
                };
            }
            let seconds = (case.first_dispatch_ms.unwrap_or(0.0)
                + case.warmup_ms.unwrap_or(0.0)
                + case.samples.iter().map(|s| s.wall_ms).sum::<f64>())
                / 1e3;
            let _ = write!(cases, r#"    <testcase classname="{}" name="{}" time="{seconds:.3}""#, xml(label), xml(&case.id));
            match outcome {
                Outcome::Pass => cases.push_str("/>\n"),
                Outcome::Failure(kind, m) => {
                    failures += 1;
                    let _ = writeln!(cases, ">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>", xml(&kind), xml(&m), xml(&m));
                }
                Outcome::Error(kind, m) => {
                    errors += 1;
                    let _ = writeln!(cases, ">\n      <error type=\"{}\" message=\"{}\">{}</error>\n    </testcase>", xml(&kind), xml(&m), xml(&m));
                }
                Outcome::Skipped(m) => {
                    skipped += 1;
                    let _ = writeln!(cases, ">\n      <skipped message=\"{}\"/>\n    </testcase>", xml(&m));
                }
            }
        }
        let failure = run.failure.as_deref().map(|f| format!("    <system-err>{}</system-err>\n", xml(f))).unwrap_or_default();
        let _ = write!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{:.3}\">\n{cases}{failure}  </testsuite>\n",
            xml(label),
            run.cases.len(),
            run.phases.cases_ms / 1e3
        );
        total += run.cases.len();
        total_failures += failures;
        total_errors += errors;
        total_skipped += skipped;
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"harness {}\" tests=\"{total}\" failures=\"{total_failures}\" errors=\"{total_errors}\" skipped=\"{total_skipped}\">\n{suites}</testsuites>\n",
        xml(&report.settings.suite)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::BaselineComparison;
    use crate::testdata::{case, report_with};

    fn parse(text: &str) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(text).expect("junit.xml is well-formed XML")
    }

    #[test]
    fn failures_errors_and_skips_are_counted_per_suite_and_in_total() {
        let mut timed_out = case("t<&>\"", &[], true, false);
        timed_out.status = CaseStatus::TimedOut;
        timed_out.message = Some("case took longer than 60 s".into());
        let mut not_run = case("n", &[], true, false);
        not_run.status = CaseStatus::NotRun;
        let report = report_with(vec![
            ("chrome", vec![case("a", &[1.0], true, true), case("b", &[1.0], false, true), timed_out, not_run]),
            ("firefox", vec![case("a", &[1.0], true, true)]),
        ]);
        let text = render(&report);
        let doc = parse(&text);
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "testsuites");
        assert_eq!((root.attribute("tests"), root.attribute("failures"), root.attribute("errors"), root.attribute("skipped")), (Some("5"), Some("1"), Some("1"), Some("1")));
        let suites: Vec<_> = root.children().filter(|n| n.is_element()).collect();
        assert_eq!(suites.len(), 2);
        assert_eq!(suites[0].attribute("name"), Some("chrome/webgpu"));
        let failure = doc.descendants().find(|n| n.has_tag_name("failure")).unwrap();
        assert!(failure.attribute("message").unwrap().contains("elements outside tolerance"));
        let error = doc.descendants().find(|n| n.has_tag_name("error")).unwrap();
        assert_eq!(error.parent().unwrap().attribute("name"), Some("t<&>\""));
    }

    #[test]
    fn regressions_beyond_the_gate_are_failures() {
        let old = report_with(vec![("chrome", vec![case("a", &[1.0, 1.01, 0.99, 1.0], true, true), case("b", &[1.0, 1.0, 1.0], true, true)])]);
        let mut new = report_with(vec![("chrome", vec![case("a", &[1.3, 1.31, 1.29, 1.3], true, true), case("b", &[1.0, 1.0, 1.0], true, true)])]);
        new.baseline = Some(BaselineComparison::new("main", &old, &new, 2.0, Some(5.0)));
        let text = render(&new);
        let doc = parse(&text);
        assert_eq!(doc.root_element().attribute("failures"), Some("1"));
        let failure = doc.descendants().find(|n| n.has_tag_name("failure")).unwrap();
        assert_eq!(failure.attribute("type"), Some("regression"));
        assert!(failure.attribute("message").unwrap().contains("against baseline main"), "{text}");
    }

    #[test]
    fn a_gate_fails_each_case_of_a_run_on_other_hardware_and_without_a_gate_none() {
        let old = report_with(vec![("chrome", vec![case("a", &[1.0, 1.0], true, true), case("b", &[1.0, 1.0], true, true)])]);
        let mut new = old.clone();
        new.runs[0].adapter = Some(crate::adapter::tests::swiftshader());
        new.baseline = Some(BaselineComparison::new("gpu", &old, &new, 2.0, Some(5.0)));
        let doc_text = render(&new);
        let doc = parse(&doc_text);
        assert_eq!(doc.root_element().attribute("failures"), Some("0"), "no adapter on the baseline's side: nothing to tell apart\n{doc_text}");
        let mut old = old;
        old.runs[0].adapter = Some(kernels::wire::AdapterReport { available: true, vendor: "nvidia".into(), is_fallback_adapter: Some(false), ..Default::default() });
        new.baseline = Some(BaselineComparison::new("gpu", &old, &new, 2.0, Some(5.0)));
        let text = render(&new);
        let doc = parse(&text);
        assert_eq!(doc.root_element().attribute("failures"), Some("2"), "{text}");
        let failure = doc.descendants().find(|n| n.has_tag_name("failure")).unwrap();
        assert!(failure.attribute("message").unwrap().starts_with("not compared with baseline gpu: chrome/webgpu ran on other hardware"), "{text}");
        new.baseline = Some(BaselineComparison::new("gpu", &old, &new, 2.0, None));
        assert_eq!(parse(&render(&new)).root_element().attribute("failures"), Some("0"));
    }
}
