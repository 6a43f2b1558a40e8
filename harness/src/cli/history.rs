//! The options of `harness history …` and `harness trend`, and the history store every measuring
//! run adds to.

use clap::{Args, Subcommand};
use std::path::PathBuf;

/// The history store: where it is.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// The history store, an SQLite file: every `run` and `bench` adds its results to it (unless
    /// --no-history), and `history` and `trend` read it.
    #[arg(long, value_name = "PATH", env = "HARNESS_HISTORY", default_value = "runs/history.sqlite")]
    pub history: PathBuf,
}

/// The detection rule's window.
#[derive(Debug, Clone, Args)]
pub struct WindowArgs {
    /// Runs before the newest that the newest is compared with (README, "History and trends":
    /// the rule and its error rates).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(5..=1000))]
    pub window: u32,
}

/// `harness history …`.
#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// Add existing results to the history: results.json files, or folders searched for them
    /// (CI artifacts, docs/hardware's evidence). A run already there is not added twice; a JSON
    /// file that is no results.json is named and skipped.
    Import(ImportArgs),
    /// Compare the newest run of every series with the runs before it, and name each series that
    /// regressed or improved, with the commits it changed between. Exit status 1 when a series
    /// regressed.
    Check(CheckArgs),
    /// Narrow a step in a case's series to the first run that shows it, and list the commits
    /// between the last run before it and that run that have no run (where to run next).
    Find(FindArgs),
}

/// Options of `harness history import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// results.json files, or folders to search for them.
    #[arg(required = true, value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// The branch the runs were on (results.json does not say).
    #[arg(long)]
    pub branch: Option<String>,
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
    /// Print what was imported as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `harness history check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
    /// The window.
    #[command(flatten)]
    pub window: WindowArgs,
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `harness history find`.
#[derive(Debug, Args)]
pub struct FindArgs {
    /// The case id (`matmul/1024x1024x1024/seed=1`), as reports name it; every series of it is
    /// searched (each browser, platform, hardware).
    pub case: String,
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
    /// The git checkout the runs' commits are in, asked for the commits with no run.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// Print the steps as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `harness trend`.
#[derive(Debug, Args)]
pub struct TrendArgs {
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
    /// Folder for the site (index.html, a page per case and per run); `harness open DIR` serves it.
    #[arg(long, default_value = "runs/trend")]
    pub out: PathBuf,
    /// The window each series' latest change is found over.
    #[command(flatten)]
    pub window: WindowArgs,
}
