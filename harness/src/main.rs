//! `harness`: measure and check WebGPU compute in real browsers.
//!
//! The modules follow the data flow: `cli` parses the command line and `commands` holds one file
//! per subcommand, turning its options into settings; `pipeline` holds the stages every measuring
//! subcommand shares (plan → bundle → serve → drive → sample → report); `plan` says what to run
//! (suites, models, user kernels, baselines, references); `measure` runs it (bundle, server,
//! WebDriver and browsers, native wgpu, the clock probe, the controller that checks each case);
//! `output` shows what came out in the terminal, beside the report files of the `reports` crate.

mod cli;
mod commands;
mod measure;
mod output;
mod pipeline;
mod plan;

use clap::Parser;
use cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    if matches!(cli.command, Command::Run(_) | Command::Bench(_) | Command::Verify(_) | Command::Doctor(_)) {
        // Before the runtime's threads: it may set the environment the browsers inherit.
        measure::gpu_stack::prepare_this_process();
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(pipeline::EXIT_UNUSABLE);
        }
    };
    match runtime.block_on(dispatch(cli.command)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(pipeline::EXIT_UNUSABLE)
        }
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
}

async fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(args) => commands::run::exec(*args).await,
        Command::Bench(args) => commands::bench::exec(*args).await,
        Command::Verify(args) => commands::verify::exec(args).await,
        Command::Doctor(args) => commands::doctor::exec(args).await,
        Command::List(args) => commands::list::exec(args),
        Command::Browsers(args) => commands::browsers::exec(args),
        Command::Compare(args) => commands::compare::exec(args),
        Command::Open(args) => commands::open::exec(args).await,
        Command::Report(command) => commands::report::exec(command),
        Command::History(command) => commands::history::exec(command),
        Command::Trend(args) => commands::history::trend(args),
    }
}
