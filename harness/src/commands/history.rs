//! `harness history import|check|find` and `harness trend`, over the history store (`history`
//! crate).

use crate::cli::history::{CheckArgs, FindArgs, HistoryCommand, ImportArgs, TrendArgs};
use crate::measure::revision;
use anyhow::{Context, Result};
use history::check::{Flagged, History};
use crate::pipeline::history::absolute;
use history::detect::Rule;
use history::store::StoredSeries;
use history::{Added, RunRecord, Store};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Runs `harness history …`.
pub fn exec(command: HistoryCommand) -> Result<ExitCode> {
    match command {
        HistoryCommand::Import(args) => import(args),
        HistoryCommand::Check(args) => check(args),
        HistoryCommand::Find(args) => find(args),
    }
}

fn open(path: &Path) -> Result<Store> {
    Ok(Store::open(path)?)
}

/// Where each input's results.json files are: a file as it is, a folder searched (every
/// `*results.json` below it), in path order.
fn results_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out)?;
            } else if path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with("results.json")) {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            walk(input, &mut files).with_context(|| format!("reading {}", input.display()))?;
        } else if input.is_file() {
            files.push(input.clone());
        } else {
            anyhow::bail!("{}: no such file or folder; give results.json files or folders that hold them", input.display());
        }
    }
    Ok(files)
}

/// `harness history import`.
fn import(args: ImportArgs) -> Result<ExitCode> {
    let files = results_files(&args.inputs)?;
    let mut store = open(&args.store.history)?;
    let (mut added, mut already, mut points) = (0usize, 0usize, 0usize);
    let mut skipped: Vec<(String, String)> = Vec::new();
    for file in &files {
        let report = match reports::read_results(file) {
            Ok(r) => r,
            Err(e) => {
                skipped.push((file.display().to_string(), e.to_string()));
                continue;
            }
        };
        let record = RunRecord::of(&report, args.branch.clone());
        let html = file.with_file_name(reports::REPORT_HTML);
        let report_html = (file.file_name().is_some_and(|n| n == reports::RESULTS_JSON) && html.is_file()).then(|| absolute(&html));
        match store.add(&record, Some(&absolute(file)), report_html.as_deref())? {
            Added::New(_) => {
                added += 1;
                points += record.points.len();
            }
            Added::Already(_) => already += 1,
        }
    }
    if args.json {
        let skipped: Vec<_> = skipped.iter().map(|(f, why)| json!({"file": f, "why": why})).collect();
        println!("{}", serde_json::to_string_pretty(&json!({"store": args.store.history, "files": files.len(), "added": added, "points": points, "already": already, "skipped": skipped}))?);
    } else {
        println!("{}: {added} run(s) added ({points} points), {already} already there, from {} file(s)", args.store.history.display(), files.len());
        for (file, why) in &skipped {
            println!("skipped {file}: {why}");
        }
    }
    Ok(match (files.is_empty(), added + already) {
        (true, _) => {
            eprintln!("no results.json found in {}", args.inputs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "));
            ExitCode::from(2)
        }
        (false, 0) => ExitCode::from(2),
        _ => ExitCode::SUCCESS,
    })
}

/// `harness history check`.
fn check(args: CheckArgs) -> Result<ExitCode> {
    let store = open(&args.store.history)?;
    let read = History::read(&store)?;
    let rule = Rule::with_window(args.window.window);
    let (flagged, checked) = read.changes(&rule, None);
    let regressed = flagged.iter().filter(|f| f.regressed()).count();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&json!({"store": args.store.history, "window": rule.window, "series": checked, "changed": flagged.iter().map(Flagged::json).collect::<Vec<_>>()}))?);
    } else {
        for f in &flagged {
            println!("{}", f.line());
        }
        println!(
            "{checked} series in {} run(s) checked (the newest run against the {} before it): {regressed} regressed, {} improved",
            read.runs.len(),
            rule.window,
            flagged.len() - regressed
        );
    }
    Ok(if regressed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// `harness history find`.
fn find(args: FindArgs) -> Result<ExitCode> {
    let store = open(&args.store.history)?;
    let read = History::read(&store)?;
    let mine: Vec<&StoredSeries> = read.series.iter().filter(|s| s.key.case == args.case).collect();
    if mine.is_empty() {
        let mut near: Vec<&str> = read.series.iter().map(|s| s.key.case.as_str()).filter(|c| c.split('/').next() == args.case.split('/').next()).collect();
        near.dedup();
        anyhow::bail!(
            "no series of case `{}` in {}{}",
            args.case,
            args.store.history.display(),
            if near.is_empty() { String::new() } else { format!("; its kernel has: {}", near.join(", ")) }
        );
    }
    let have: std::collections::HashSet<String> = read.runs.iter().filter_map(|r| r.key.commit.clone()).collect();
    let mut out = Vec::new();
    for s in mine {
        let points = &read.points[&s.id];
        let medians: Vec<f64> = points.iter().map(|p| p.median_ms).collect();
        let k = &s.key;
        let name = format!("{} on {}/{} · {} · {} · {}", k.case, k.browser, k.platform, k.hardware, k.timer, k.sampling);
        let Some(step) = history::find::step(&medians, &Rule::default()) else {
            if !args.json {
                println!("{name}: no step in its {} run(s)", points.len());
            }
            out.push(json!({"series": name, "runs": points.len(), "step": null}));
            continue;
        };
        let run = |n: usize| read.run(points[n].run).context("a point of a run the store lacks");
        let (before, after) = (run(step.last_before)?, run(step.first_after)?);
        let missing = match (&before.key.commit, &after.key.commit) {
            (Some(b), Some(a)) if b == a => Some(Vec::new()),
            (Some(b), Some(a)) => revision::git(&args.repo, &["rev-list", "--ancestry-path", &format!("{b}..{a}")])
                .map(|list| list.lines().filter(|c| !have.iter().any(|h| c.starts_with(h.as_str()))).map(|c| c[..c.len().min(12)].to_string()).collect::<Vec<_>>()),
            _ => None,
        };
        if args.json {
            out.push(json!({"series": name, "runs": points.len(), "step": {"direction": step.direction.as_str(), "pct": step.pct, "z": step.z, "beforeMs": step.before_ms, "afterMs": step.after_ms,
                "lastBefore": before.commit_label(), "firstAfter": after.commit_label(), "firstAfterTime": after.key.time, "commitsWithoutRun": missing}}));
            continue;
        }
        println!(
            "{name}: {} {:+.1}% ({:.4} → {:.4} ms), first seen in run {} at {} ({}); the last run before it is at {}",
            step.direction.as_str(),
            step.pct,
            step.before_ms,
            step.after_ms,
            after.id,
            after.commit_label(),
            after.key.time,
            before.commit_label()
        );
        match missing {
            Some(m) if m.is_empty() => println!("  no commit between them lacks a run: {} is the first commit that shows it", after.commit_label()),
            Some(m) => println!("  {} commit(s) between them have no run; run harness at them to narrow it further: {}", m.len(), m.join(" ")),
            None => println!("  the commits between them are not known to git in {} (run `harness history find` in the checkout the runs came from, or pass --repo)", args.repo.display()),
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(ExitCode::SUCCESS)
}

/// `harness trend`.
pub fn trend(args: TrendArgs) -> Result<ExitCode> {
    let store = open(&args.store.history)?;
    let t = std::time::Instant::now();
    let site = history::trend::write(&History::read(&store)?, store.path(), &args.out, &Rule::with_window(args.window.window))?;
    println!(
        "wrote {} in {:.0} ms: {} series over {} run(s), {} case page(s); {} series changed at their newest run",
        site.index.display(),
        t.elapsed().as_secs_f64() * 1e3,
        site.series,
        site.runs,
        site.cases,
        site.changed
    );
    println!("open it with: harness open {}", args.out.display());
    Ok(ExitCode::SUCCESS)
}
