//! `harness list`: the catalogue's kernels, or a suite's cases, by name.

use crate::cli::list::ListArgs;
use anyhow::Result;
use std::process::ExitCode;

/// Prints the kernels (or with `--suite`, the cases) that match `args.filter`.
pub fn exec(args: ListArgs) -> Result<ExitCode> {
    match args.suite {
        Some(suite) => {
            let cases = kernels::plan::build_cases(suite.into(), &args.filter, 1)?;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&cases)?);
            } else {
                for c in cases {
                    println!("{}", c.id);
                }
            }
        }
        None => {
            let kernels: Vec<_> = kernels::catalog::all()
                .into_iter()
                .filter(|k| args.filter.is_empty() || args.filter.iter().any(|p| kernels::plan::glob_match(p, k.name())))
                .collect();
            if args.json {
                let rows: Vec<_> = kernels
                    .iter()
                    .map(|k| serde_json::json!({"name": k.name(), "summary": k.summary(), "dims": k.dims(), "selftest": k.is_selftest()}))
                    .collect();
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else {
                for k in kernels {
                    println!("{:<16} [{}] {}", k.name(), k.dims().join("×"), k.summary());
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
