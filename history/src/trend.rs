//! `harness trend`: the history as a static site, like `asv publish`. `index.html` lists every
//! series with its latest median and latest change ([`crate::detect`]) and every run; a page per
//! case (`case/…html`) draws each of its series over the runs (the median and its 95% interval a
//! run, a failed check in red, a new browser version or driver marked); a page per run
//! (`run/N.html`) lists its points and links its report.html, copied beside it where the run kept
//! one. Self-contained: the graphs are inline SVG drawn here, the style and the table script are
//! the reports' own, inlined; nothing is fetched.

use crate::check::History;
use crate::detect::{check, Finding, Rule};
use crate::store::{StoreError, StoredPoint, StoredSeries};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// What can go wrong writing the site.
#[derive(Debug, thiserror::Error)]
pub enum TrendError {
    /// Reading the store.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing a file.
    #[error("writing {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A template failed.
    #[error("the trend site's template: {0}")]
    Template(String),
}

/// What was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    /// Its index.html.
    pub index: PathBuf,
    /// Series drawn.
    pub series: usize,
    /// Runs.
    pub runs: usize,
    /// Case pages.
    pub cases: usize,
    /// Series whose newest run changed.
    pub changed: usize,
}

/// The file that marks a folder as a trend site (`harness open` serves it as it is): the site's
/// summary.
pub const MARKER: &str = "trend.json";

const INDEX: &str = include_str!("../templates/trend-index.html.tera");
const CASE: &str = include_str!("../templates/trend-case.html.tera");
const RUN: &str = include_str!("../templates/trend-run.html.tera");

/// A series with its points and its latest change.
struct Drawn<'a> {
    series: &'a StoredSeries,
    points: Vec<&'a StoredPoint>,
    finding: Option<Finding>,
}

/// Writes the site of `history` (read from the store at `store`) into `out`, each series' latest
/// change by `rule`.
pub fn write(history: &History, store: &Path, out: &Path, rule: &Rule) -> Result<Site, TrendError> {
    let drawn: Vec<Drawn> = history
        .series
        .iter()
        .map(|s| {
            let points: Vec<&StoredPoint> = history.points.get(&s.id).map(|p| p.iter().collect()).unwrap_or_default();
            let medians: Vec<f64> = points.iter().map(|p| p.median_ms).collect();
            Drawn { series: s, finding: check(&medians, rule), points }
        })
        .collect();
    // Each run's points, with their series, for its page.
    let mut of_run: HashMap<i64, Vec<(&StoredSeries, &StoredPoint)>> = HashMap::new();
    for d in &drawn {
        for p in &d.points {
            of_run.entry(p.run).or_default().push((d.series, p));
        }
    }
    let mut cases: Vec<&str> = drawn.iter().map(|d| d.series.key.case.as_str()).collect();
    cases.dedup();
    let slugs = slugs(&cases);
    let write = |path: PathBuf, text: String| {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| TrendError::Write { path: dir.into(), source })?;
        }
        std::fs::write(&path, text).map_err(|source| TrendError::Write { path, source })
    };
    let render = |name: &str, template: &str, value: Value| {
        let context = tera::Context::from_value(value).map_err(|e| TrendError::Template(e.to_string()))?;
        reports::template::render_template(name, template, context).map_err(|e| TrendError::Template(e.to_string()))
    };
    // Case pages.
    for case in &cases {
        let mine: Vec<Value> = drawn
            .iter()
            .filter(|d| d.series.key.case == *case)
            .map(|d| {
                let k = &d.series.key;
                json!({"browser": k.browser, "platform": k.platform, "hardware": k.hardware, "timer": k.timer, "sampling": k.sampling,
                       "change": change_words(d, history), "changeClass": change_class(d.finding), "svg": svg(&d.points, history)})
            })
            .collect();
        let page = render("trend-case.html", CASE, json!({"case": case, "series": mine}))?;
        write(out.join("case").join(format!("{}.html", slugs[*case])), page)?;
    }
    // Run pages, each report.html copied beside its page.
    for run in &history.runs {
        let report = run.report.as_deref().map(Path::new).filter(|p| p.is_file());
        let kept = match report {
            Some(from) => {
                let to = out.join("run").join(run.id.to_string()).join("report.html");
                std::fs::create_dir_all(to.parent().unwrap_or(out)).and_then(|_| std::fs::copy(from, &to)).map_err(|source| TrendError::Write { path: to.clone(), source })?;
                Some(format!("{}/report.html", run.id))
            }
            None => None,
        };
        let rows: Vec<Value> = of_run
            .get(&run.id)
            .into_iter()
            .flatten()
            .map(|(s, p)| {
                let k = &s.key;
                json!({"case": k.case, "href": format!("../case/{}.html", slugs[k.case.as_str()]), "series": format!("{}/{} · {} · {} · {}", k.browser, k.platform, k.hardware, k.timer, k.sampling),
                       "median": ms(p.median_ms), "ci": p.ci_ms.map(|(lo, hi)| format!("{}–{}", ms(lo), ms(hi))).unwrap_or_else(|| "–".into()), "status": p.status})
            })
            .collect();
        let page = render(
            "trend-run.html",
            RUN,
            json!({"id": run.id, "commit": run.commit_label(), "branch": run.key.branch.as_deref().unwrap_or("–"), "time": run.key.time, "host": run.key.host,
                   "source": run.source.as_deref().unwrap_or("–"), "report": kept, "points": rows}),
        )?;
        write(out.join("run").join(format!("{}.html", run.id)), page)?;
    }
    // The index.
    let rows: Vec<Value> = drawn
        .iter()
        .map(|d| {
            let k = &d.series.key;
            let last = d.points.last();
            json!({"case": k.case, "href": format!("case/{}.html", slugs[k.case.as_str()]), "platform": k.platform, "browser": k.browser, "hardware": k.hardware,
                   "timer": k.timer, "sampling": k.sampling, "runs": d.points.len(), "latest": last.map(|p| ms(p.median_ms)).unwrap_or_default(),
                   "latestMs": last.map(|p| p.median_ms).unwrap_or(0.0), "change": change_words(d, history), "changeClass": change_class(d.finding),
                   "status": last.map(|p| p.status.as_str()).unwrap_or("–"), "flagged": d.finding.is_some() || last.is_some_and(|p| p.status == "failed")})
        })
        .collect();
    let run_rows: Vec<Value> = history
        .runs
        .iter()
        .rev()
        .map(|r| json!({"id": r.id, "href": format!("run/{}.html", r.id), "time": r.key.time, "commit": r.commit_label(), "branch": r.key.branch.as_deref().unwrap_or("–"), "host": r.key.host, "points": of_run.get(&r.id).map_or(0, Vec::len)}))
        .collect();
    let page = render("trend-index.html", INDEX, json!({"series": rows, "runs": run_rows, "store": store.display().to_string(), "window": rule.window}))?;
    let index = out.join("index.html");
    write(index.clone(), page)?;
    let site = Site { index, series: drawn.len(), runs: history.runs.len(), cases: cases.len(), changed: drawn.iter().filter(|d| d.finding.is_some()).count() };
    let summary = json!({"store": store.display().to_string(), "series": site.series, "runs": site.runs, "cases": site.cases, "changed": site.changed});
    write(out.join(MARKER), summary.to_string())?;
    Ok(site)
}

/// Milliseconds in four significant digits (a kernel of microseconds keeps its digits).
fn ms(v: f64) -> String {
    let magnitude = if v == 0.0 || !v.is_finite() { 0 } else { v.abs().log10().floor() as i32 };
    let digits = (3 - magnitude).clamp(0, 9) as usize;
    format!("{v:.digits$} ms")
}

/// The latest change in words, with the commits it lies between.
fn change_words(d: &Drawn, history: &History) -> String {
    let Some(f) = d.finding else { return "no change at the newest run".into() };
    let at = |n: usize| d.points.get(n).map(|p| history.commit(p.run)).unwrap_or_default();
    format!("{} {:+.1}% ({}, between {} and {})", f.direction.as_str(), f.pct, f.kind.words(), at(f.last_before), at(f.first_after))
}

fn change_class(f: Option<Finding>) -> &'static str {
    f.map_or("", |f| f.direction.as_str())
}

/// Each case's file name: its id with what a file name cannot hold made `-`, numbered where two
/// ids come out the same.
fn slugs<'a>(cases: &[&'a str]) -> HashMap<&'a str, String> {
    let mut taken: HashMap<String, usize> = HashMap::new();
    cases
        .iter()
        .map(|&case| {
            let base: String = case.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '_' { c } else { '-' }).collect();
            let n = taken.entry(base.clone()).or_default();
            *n += 1;
            (case, if *n == 1 { base } else { format!("{base}-{n}") })
        })
        .collect()
}

/// The graph of one series' `points` (oldest first) as inline SVG: a dot a run at its median,
/// the 95% interval as a bar, the line through the medians, a dashed mark where the browser
/// version or the driver changed; each dot titled with its run.
fn svg(points: &[&StoredPoint], history: &History) -> String {
    let (w, h, left, right, top, bottom) = (900.0, 240.0, 70.0, 20.0, 16.0, 40.0);
    let lows = points.iter().map(|p| p.ci_ms.map_or(p.median_ms, |c| c.0));
    let highs = points.iter().map(|p| p.ci_ms.map_or(p.median_ms, |c| c.1));
    let (lo, hi) = (lows.fold(f64::INFINITY, f64::min), highs.fold(f64::NEG_INFINITY, f64::max));
    let (lo, hi) = if hi > lo { (lo - (hi - lo) * 0.08, hi + (hi - lo) * 0.08) } else { (lo * 0.95, hi * 1.05 + 1e-9) };
    let n = points.len().max(1);
    let x = |i: usize| left + (w - left - right) * if n == 1 { 0.5 } else { i as f64 / (n - 1) as f64 };
    let y = |v: f64| top + (h - top - bottom) * (1.0 - (v - lo) / (hi - lo));
    let mut s = String::new();
    let _ = write!(s, r#"<svg class="trend" viewBox="0 0 {w} {h}" width="100%" role="img" aria-label="median per run">"#);
    let _ = write!(s, r#"<line class="axis" x1="{left}" y1="{}" x2="{}" y2="{}"/>"#, h - bottom, w - right, h - bottom);
    for v in [lo, (lo + hi) / 2.0, hi] {
        let _ = write!(s, r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#, left - 6.0, y(v) + 4.0, ms(v));
    }
    let mut line = String::new();
    for (i, p) in points.iter().enumerate() {
        let _ = write!(line, "{:.1},{:.1} ", x(i), y(p.median_ms));
        let prev = i.checked_sub(1).map(|j| points[j]);
        let changed: Vec<String> = prev
            .into_iter()
            .flat_map(|q| {
                let browser = (q.browser_version != p.browser_version).then(|| format!("browser {}", p.browser_version.as_deref().unwrap_or("?")));
                let driver = (q.driver != p.driver).then(|| format!("driver {}", p.driver.as_deref().unwrap_or("?")));
                browser.into_iter().chain(driver)
            })
            .collect();
        if !changed.is_empty() {
            let mx = (x(i) + x(i - 1)) / 2.0;
            let _ = write!(s, r#"<line class="mark" x1="{mx:.1}" y1="{top}" x2="{mx:.1}" y2="{}"><title>{}</title></line>"#, h - bottom, escape(&changed.join(", ")));
        }
        if let Some((l, u)) = p.ci_ms {
            let _ = write!(s, r#"<line class="ci" x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}"/>"#, x(i), y(l), y(u));
        }
    }
    let _ = write!(s, r#"<polyline class="line" points="{}"/>"#, line.trim_end());
    for (i, p) in points.iter().enumerate() {
        let label = history.run(p.run).map(|r| format!("run {} · {} · {}", r.id, r.commit_label(), r.key.time)).unwrap_or_default();
        let ci = p.ci_ms.map(|(l, u)| format!(" [{}, {}]", ms(l), ms(u))).unwrap_or_default();
        let _ = write!(
            s,
            r#"<a href="../run/{}.html"><circle class="point {}" cx="{:.1}" cy="{:.1}" r="4"><title>{} — {}{} · {}</title></circle></a>"#,
            p.run,
            escape(&p.status),
            x(i),
            y(p.median_ms),
            escape(&label),
            ms(p.median_ms),
            ci,
            escape(&p.status)
        );
    }
    if let (Some(first), Some(last)) = (points.first(), points.last()) {
        let _ = write!(s, r#"<text x="{left}" y="{}">{}</text>"#, h - 12.0, escape(&history.commit(first.run)));
        let _ = write!(s, r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#, w - right, h - 12.0, escape(&history.commit(last.run)));
    }
    s.push_str("</svg>");
    s
}

/// `text` safe inside SVG text and attributes.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_keep_four_significant_digits() {
        assert_eq!((ms(0.0019341), ms(0.0236), ms(2.58814), ms(123.456)), ("0.001934 ms".into(), "0.02360 ms".into(), "2.588 ms".into(), "123.5 ms".into()));
    }

    #[test]
    fn case_ids_become_distinct_file_names() {
        let s = slugs(&["matmul/64x64/seed=1", "matmul/64x64/seed:1", "add/1001/seed=1"]);
        assert_eq!(s["matmul/64x64/seed=1"], "matmul-64x64-seed-1");
        assert_eq!(s["matmul/64x64/seed:1"], "matmul-64x64-seed-1-2");
        assert_eq!(s["add/1001/seed=1"], "add-1001-seed-1");
    }
}
