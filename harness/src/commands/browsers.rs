//! `harness browsers`: which browsers and WebDriver servers are installed, their versions, and
//! what to install for the missing ones.

use crate::cli::browsers::BrowsersArgs;
use crate::measure::discovery;
use anyhow::Result;
use std::process::ExitCode;

/// Prints the table (or, with `--json`, the list) of browsers found.
pub fn exec(args: BrowsersArgs) -> Result<ExitCode> {
    let found = discovery::discover();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&found)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    table.set_header(["browser", "executable", "version", "driver", "driver version", "WebNN"]);
    let mut hints = Vec::new();
    for f in &found {
        let cell = |l: &discovery::Located, v: bool| match (v, &l.path, &l.version) {
            (false, Some(p), _) => p.clone(),
            (true, Some(_), Some(ver)) => ver.clone(),
            _ => "missing".into(),
        };
        table.add_row(vec![
            f.browser.to_string(),
            cell(&f.executable, false),
            cell(&f.executable, true),
            cell(&f.driver, false),
            cell(&f.driver, true),
            f.webnn.to_string(),
        ]);
        hints.extend(f.executable.missing.iter().chain(&f.driver.missing).cloned());
    }
    println!("{table}");
    for h in hints {
        println!("- {h}");
    }
    let usable: Vec<&str> = found.iter().filter(|f| f.usable()).map(|f| f.browser).collect();
    println!("usable with --browser: {}", if usable.is_empty() { "none".into() } else { usable.join(", ") });
    println!("WebNN: `harness verify --browser B` tries it in that browser");
    Ok(ExitCode::SUCCESS)
}
