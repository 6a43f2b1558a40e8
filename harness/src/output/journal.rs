//! The run's journal, `results.jsonl` in the out folder: the plan first, then a line per case as it
//! settles and per browser or platform as its run ends, each written through to the disk at once.
//! A harness killed mid-run (SIGKILL, out of memory, a lost CI runner) so loses at most the case in
//! flight, and `harness run --resume DIR` completes the run from it. A consumer of run events
//! like the terminal, which it passes every event on to.

use crate::measure::events::{Reporter, RunEvent};
use reports::{CaseReport, PlatformRun, RunReport};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The journal's file name in a run folder.
pub const JOURNAL: &str = "results.jsonl";

/// One line of the journal.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Entry {
    /// The first line: the report as it starts, with its settings and plan and no runs.
    Started(Box<RunReport>),
    /// A case settled in the run `run` (`browser/platform`).
    Case { run: String, case: Box<CaseReport> },
    /// A browser's or platform's run ended; its cases are the `case` lines before.
    RunFinished(Box<PlatformRun>),
}

/// Why a journal cannot be written or resumed.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The file cannot be created, opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The first line is not a journal's start.
    #[error("{path}: not a harness journal (its first line is not the run's start); resume needs the results.jsonl a `harness run` wrote")]
    NotAJournal {
        /// The file.
        path: PathBuf,
    },
}

/// The label of a run in the journal: `browser/platform`.
pub fn run_label(browser: &str, platform: &str) -> String {
    format!("{browser}/{platform}")
}

/// Writes the journal of a run and passes every event on to `inner`. The file is opened at the
/// first run's start, so a run that fails before any browser or platform starts (a taken port)
/// leaves no folder behind.
pub struct Journal<R> {
    inner: R,
    path: PathBuf,
    /// The first line of a new journal; `None` when going on with one (`--resume`).
    start: Option<Box<RunReport>>,
    file: Option<File>,
    run: String,
    broken: bool,
}

impl<R: Reporter> Journal<R> {
    /// The journal of `report` (settings and plan, no runs yet) in `dir`, replacing any.
    pub fn create(dir: &Path, report: &RunReport, inner: R) -> Self {
        let start = Some(Box::new(report.clone()));
        Journal { inner, path: dir.join(JOURNAL), start, file: None, run: String::new(), broken: false }
    }

    /// Goes on with the journal in `dir` (`--resume`), appending.
    pub fn append(dir: &Path, inner: R) -> Self {
        Journal { inner, path: dir.join(JOURNAL), start: None, file: None, run: String::new(), broken: false }
    }

    /// Creates the file with its first line, or opens it to append (after a line cut short by a
    /// kill, on a line of its own).
    fn open(&mut self) -> std::io::Result<File> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        match self.start.take() {
            Some(report) => {
                let mut file = File::create(&self.path)?;
                file.write_all(&line(&Entry::Started(report)))?;
                Ok(file)
            }
            None => {
                let torn = !std::fs::read(&self.path)?.ends_with(b"\n");
                let mut file = OpenOptions::new().append(true).open(&self.path)?;
                if torn {
                    file.write_all(b"\n")?;
                }
                Ok(file)
            }
        }
    }

    /// Appends `entry` as a line and waits until it is on the disk. A journal that cannot be
    /// written says so once and stops; the run goes on.
    fn write(&mut self, entry: &Entry) {
        if self.broken {
            return;
        }
        let written = match self.file.take() {
            Some(file) => Ok(file),
            None => self.open(),
        }
        .and_then(|mut file| file.write_all(&line(entry)).and_then(|()| file.sync_data()).map(|()| file));
        match written {
            Ok(file) => self.file = Some(file),
            Err(e) => {
                tracing::warn!("{}: the journal cannot be written ({e}); the run goes on without it", self.path.display());
                self.broken = true;
            }
        }
    }
}

/// `entry` as a line of the journal.
fn line(entry: &Entry) -> Vec<u8> {
    let mut line = serde_json::to_vec(entry).expect("journal entries serialise");
    line.push(b'\n');
    line
}

impl<R: Reporter> Reporter for Journal<R> {
    fn event(&mut self, event: RunEvent<'_>) {
        match &event {
            RunEvent::RunStarted { browser, platform } => self.run = run_label(browser, platform),
            RunEvent::CaseFinished(case) => self.write(&Entry::Case { run: self.run.clone(), case: Box::new((*case).clone()) }),
            RunEvent::RunFinished(run) => self.write(&Entry::RunFinished(Box::new(PlatformRun { cases: Vec::new(), ..(*run).clone() }))),
            _ => {}
        }
        self.inner.event(event);
    }
}

/// What a journal holds.
#[derive(Debug)]
pub struct Journaled {
    /// The report as the run started: settings and plan.
    pub started: RunReport,
    /// Settled cases by run label, in the order they settled.
    pub cases: HashMap<String, Vec<CaseReport>>,
    /// Runs that ended, with their cases.
    pub finished: Vec<PlatformRun>,
}

impl Journaled {
    /// The cases of `label` settled so far (none for a run not begun).
    pub fn settled(&self, label: &str) -> &[CaseReport] {
        self.cases.get(label).map_or(&[], Vec::as_slice)
    }

    /// The run `label` if it ended.
    pub fn finished_run(&self, label: &str) -> Option<&PlatformRun> {
        self.finished.iter().find(|r| run_label(&r.browser, &r.platform) == label)
    }
}

/// Reads the journal in `dir`. A last line cut short (harness killed while writing it) is left
/// out with a warning; so is any other line that cannot be read.
pub fn read(dir: &Path) -> Result<Journaled, JournalError> {
    let path = dir.join(JOURNAL);
    let text = std::fs::read_to_string(&path).map_err(|source| JournalError::Io { path: path.clone(), source })?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let started = match lines.next().map(|(_, l)| serde_json::from_str::<Entry>(l)) {
        Some(Ok(Entry::Started(report))) => *report,
        _ => return Err(JournalError::NotAJournal { path }),
    };
    let mut journaled = Journaled { started, cases: HashMap::new(), finished: Vec::new() };
    for (n, line) in lines {
        match serde_json::from_str::<Entry>(line) {
            Ok(Entry::Case { run, case }) => journaled.cases.entry(run).or_default().push(*case),
            Ok(Entry::RunFinished(run)) => {
                let mut run = *run;
                run.cases = journaled.settled(&run_label(&run.browser, &run.platform)).to_vec();
                journaled.finished.push(run);
            }
            Ok(Entry::Started(_)) => tracing::warn!("{}:{}: a second start; left out", path.display(), n + 1),
            Err(e) => eprintln!("warning: {}:{}: a line that cannot be read is left out ({e}); a harness killed while writing it leaves one", path.display(), n + 1),
        }
    }
    Ok(journaled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reports::{CaseStatus, RunStatus};

    /// A reporter that keeps nothing.
    struct Quiet;
    impl Reporter for Quiet {
        fn event(&mut self, _: RunEvent<'_>) {}
    }

    /// A real report (committed evidence) as a run starts: no runs yet.
    fn report() -> RunReport {
        let mut report: RunReport = serde_json::from_str(include_str!("../../../docs/hardware/h100-kernels/roofline-results.json")).unwrap();
        report.runs.clear();
        report
    }

    #[test]
    fn cases_and_runs_read_back_and_a_torn_last_line_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let started = report();
        let mut journal = Journal::create(dir.path(), &started, Quiet);
        let case = |id: &str| {
            let spec = kernels::plan::build_cases(kernels::Suite::Quick, &["add".to_string()], 1).unwrap().remove(0);
            let mut c = CaseReport::unmeasured(&spec, &spec.info().unwrap(), CaseStatus::Passed, None);
            c.id = id.to_string();
            c
        };
        journal.event(RunEvent::RunStarted { browser: "chrome", platform: "webgpu" });
        journal.event(RunEvent::CaseFinished(&case("a")));
        journal.event(RunEvent::CaseFinished(&case("b")));
        let mut run = crate::measure::controller::new_run("chrome", kernels::Platform::Webgpu);
        run.status = RunStatus::Completed;
        journal.event(RunEvent::RunFinished(&run));
        journal.event(RunEvent::RunStarted { browser: "firefox", platform: "webgpu" });
        journal.event(RunEvent::CaseFinished(&case("a")));
        drop(journal);
        // A kill while a line was being written.
        let mut file = OpenOptions::new().append(true).open(dir.path().join(JOURNAL)).unwrap();
        file.write_all(b"{\"case\":{\"run\":\"firefox/webgpu\",\"ca").unwrap();

        let read = read(dir.path()).unwrap();
        assert_eq!(read.started, started);
        assert_eq!(read.settled("chrome/webgpu").iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(read.settled("firefox/webgpu").len(), 1);
        assert_eq!(read.finished_run("chrome/webgpu").unwrap().cases.len(), 2);
        assert!(read.finished_run("firefox/webgpu").is_none(), "firefox had not finished");
        // Resuming appends after what is there.
        let mut journal = Journal::append(dir.path(), Quiet);
        journal.event(RunEvent::RunStarted { browser: "firefox", platform: "webgpu" });
        journal.event(RunEvent::CaseFinished(&case("b")));
        drop(journal);
        assert_eq!(super::read(dir.path()).unwrap().settled("firefox/webgpu").len(), 2);
    }

    #[test]
    fn nothing_is_written_before_a_run_starts() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let mut journal = Journal::create(&out, &report(), Quiet);
        journal.event(RunEvent::Step("building the page bundle"));
        drop(journal);
        assert!(!out.exists(), "a run that failed before any browser started leaves no folder");
    }

    #[test]
    fn a_file_that_is_no_journal_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(JOURNAL), "{\"schemaVersion\": 6}\n").unwrap();
        let err = read(dir.path()).unwrap_err().to_string();
        assert!(err.contains("results.jsonl") && err.contains("not a harness journal"), "{err}");
        let err = read(&dir.path().join("nowhere")).unwrap_err().to_string();
        assert!(err.contains("nowhere"), "{err}");
    }
}
