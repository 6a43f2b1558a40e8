//! The subcommands, one file each: what `harness <command>` does with its parsed arguments.
//! This module holds what several of them share: the process's stop signals, the page bundle and
//! server, writing the reports, and the exit status.

pub mod browsers;
pub mod compare;
pub mod list;
pub mod open;
pub mod report;
pub mod run;
pub mod verify;

use crate::measure::events::{Reporter, RunEvent};
use crate::measure::{bundle, driver, server};
use crate::output::summary;
use anyhow::{Context, Result};
use reports::RunReport;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use tokio::sync::watch;

/// Exit status when the run itself could not happen.
pub const EXIT_UNUSABLE: u8 = 2;

/// A watch that turns true on the first Ctrl-C (or SIGTERM/SIGHUP); a second one kills every
/// driver group and exits.
pub fn interrupt_watch() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        if let Ok(why) = stop_signal().await {
            eprintln!("\n{why}: ending the browser and writing what was measured (Ctrl-C again to quit at once)");
            let _ = tx.send(true);
            if stop_signal().await.is_ok() {
                driver::kill_all_now();
                std::process::exit(130);
            }
        }
    });
    rx
}

/// Waits for Ctrl-C or, on Unix, SIGTERM or SIGHUP (what CI runners and closing terminals send
/// when they cancel a job); says which.
async fn stop_signal() -> std::io::Result<&'static str> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate())?;
        let mut hup = signal(SignalKind::hangup())?;
        tokio::select! {
            r = tokio::signal::ctrl_c() => r.map(|_| "interrupted"),
            _ = term.recv() => Ok("terminated (SIGTERM)"),
            _ = hup.recv() => Ok("hung up (SIGHUP)"),
        }
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c().await.map(|_| "interrupted")
    }
}

/// Builds (or takes) the page bundle and starts the server for it; returns the server and the
/// milliseconds each step took.
pub async fn serve_page(
    explicit_bundle: Option<PathBuf>,
    listen: std::net::SocketAddr,
    public_url: Option<&str>,
    reporter: &mut dyn Reporter,
) -> Result<(server::Server, f64, f64)> {
    reporter.event(RunEvent::Step("building the page bundle (the first build takes a minute or two)"));
    let t = Instant::now();
    let bundle = tokio::task::spawn_blocking(move || bundle::prepare(explicit_bundle.as_deref())).await??;
    let bundle_ms = t.elapsed().as_secs_f64() * 1e3;
    tracing::info!("bundle at {} ({})", bundle.dir.display(), if bundle.rebuilt { "rebuilt" } else { "reused" });
    let t = Instant::now();
    let server = server::start(listen, public_url, &bundle.dir).await?;
    let server_ms = t.elapsed().as_secs_f64() * 1e3;
    tracing::info!("server listening on {}", server.addr);
    Ok((server, bundle_ms, server_ms))
}

/// Derives the roofline (each run's peaks, each case's fraction of them), writes the report
/// files, then prints the summary (or, with `json`, results.json) to stdout.
pub fn write_reports(report: &mut RunReport, out_dir: &std::path::Path, json: bool) -> Result<()> {
    reports::roofline::apply(report);
    let t = Instant::now();
    let written = reports::write_all(report, out_dir)
        .with_context(|| format!("writing the reports to {}", out_dir.display()))?;
    let report_ms = t.elapsed().as_secs_f64() * 1e3;
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        print!("{}", summary::table(report));
        println!("report writing {report_ms:.0} ms");
        for path in &written {
            println!("wrote {}", path.display());
        }
    }
    Ok(())
}

/// 0 when every case of every run passed without a crash; 2 when nothing at all was measured;
/// 1 otherwise (a case that passed only on a retry after its browser crashed counts: the crash
/// is news).
pub fn exit_code(report: &RunReport) -> ExitCode {
    let nothing_measured = report
        .runs
        .iter()
        .all(|r| r.cases.iter().all(|c| c.samples.is_empty()) && (r.failure.is_some() || r.status == reports::RunStatus::Unavailable));
    if nothing_measured {
        ExitCode::from(EXIT_UNUSABLE)
    } else if report.runs.iter().all(|r| r.counts().all_passed() && r.failure.is_none() && !r.cases.iter().any(|c| c.saw_a_crash())) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
