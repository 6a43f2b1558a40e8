//! The process's stop signals: the first Ctrl-C (or SIGTERM, SIGHUP) ends the run gracefully,
//! writing what was measured; a second one ends everything at once.

use crate::measure::driver;
use tokio::sync::watch;

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
