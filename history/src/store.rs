//! The history store: one SQLite file (rusqlite, its SQLite bundled), written by every `harness
//! run` and `bench` and by `harness history import`.
//!
//! Writes are safe: a run is one `BEGIN IMMEDIATE` transaction (its row, its series, its points),
//! so a killed harness leaves the store as it was before that run; the file is in WAL mode with a
//! long busy timeout, so two harness processes writing at once both land, one after the other,
//! and readers never wait for a writer. The schema's version is SQLite's `user_version`: an older
//! store is migrated in a transaction when opened, and a store from a newer harness is refused,
//! naming both versions. (The migrations are a list of SQL scripts run in order, a few lines that
//! need no migration crate tied to one rusqlite version.)

use crate::record::{RunKey, RunRecord, SeriesKey};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The schema this harness writes.
pub const SCHEMA_VERSION: u32 = 2;

/// The migrations, in order: the one at index `i` takes a store from version `i` to `i + 1`.
pub(crate) const MIGRATIONS: [&str; 2] = [
    // 1: runs, series and points.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        fingerprint TEXT NOT NULL UNIQUE,
        commit_id TEXT,
        dirty INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        host TEXT NOT NULL,
        source TEXT,
        report TEXT
    );
    CREATE TABLE series (
        id INTEGER PRIMARY KEY,
        case_id TEXT NOT NULL,
        platform TEXT NOT NULL,
        browser TEXT NOT NULL,
        hardware TEXT NOT NULL,
        timer TEXT NOT NULL,
        sampling TEXT NOT NULL,
        UNIQUE (case_id, platform, browser, hardware, timer, sampling)
    );
    CREATE TABLE points (
        run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        series_id INTEGER NOT NULL REFERENCES series (id),
        median_ms REAL NOT NULL,
        ci_low_ms REAL,
        ci_high_ms REAL,
        samples INTEGER NOT NULL,
        status TEXT NOT NULL,
        browser_version TEXT,
        driver TEXT,
        PRIMARY KEY (run_id, series_id)
    );
    CREATE INDEX points_by_series ON points (series_id);",
    // 2: the branch a run was on, and each point's clock and throughput.
    "ALTER TABLE runs ADD COLUMN branch TEXT;
    ALTER TABLE points ADD COLUMN clock_mhz REAL;
    ALTER TABLE points ADD COLUMN throughput REAL;
    ALTER TABLE points ADD COLUMN throughput_item TEXT;",
];

/// What can go wrong with the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("history store {path}: {source}")]
    Sqlite {
        /// The store.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The store was written by a newer harness.
    #[error("history store {path} has schema version {found}; this harness reads version {SCHEMA_VERSION} and older: use the harness that wrote it, or point --history at another file")]
    Newer {
        /// The store.
        path: PathBuf,
        /// Its version.
        found: u32,
    },
    /// Its folder cannot be made.
    #[error("history store {path}: {source}")]
    Io {
        /// The store.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// A run as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    /// Its id in the store.
    pub id: i64,
    /// Its key.
    pub key: RunKey,
    /// The results.json it came from, where known.
    pub source: Option<String>,
    /// Its report.html, where known.
    pub report: Option<String>,
}

impl StoredRun {
    /// Its commit as pages and messages show it: the hash (12 characters), `+dirty` where its tree
    /// was, or `unknown`.
    pub fn commit_label(&self) -> String {
        let hash = self.key.commit.as_deref().map(|c| &c[..c.len().min(12)]).unwrap_or("unknown");
        format!("{hash}{}", if self.key.dirty { "+dirty" } else { "" })
    }
}

/// A series as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSeries {
    /// Its id in the store.
    pub id: i64,
    /// Its key.
    pub key: SeriesKey,
}

/// A point as stored: one run's median of one series.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPoint {
    /// The run's id.
    pub run: i64,
    /// The series' id.
    pub series: i64,
    /// The median, ms.
    pub median_ms: f64,
    /// Its 95% interval, ms.
    pub ci_ms: Option<(f64, f64)>,
    /// Samples.
    pub samples: i64,
    /// The check's outcome.
    pub status: String,
    /// The browser's version.
    pub browser_version: Option<String>,
    /// The GPU driver.
    pub driver: Option<String>,
    /// The median SM clock, MHz.
    pub clock_mhz: Option<f64>,
}

/// Whether a run was added, or was there already (the same time, host and commit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// Added, with its id.
    New(i64),
    /// Already in the store, with its id.
    Already(i64),
}

/// The history store, open.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// How long a writer waits for another's transaction before SQLite gives up: long enough for any
/// run's points (thousands of rows take milliseconds), so a user never sees a lock error.
const BUSY: Duration = Duration::from_secs(120);

impl Store {
    /// Opens the store at `path`, creating it (and its folder) or migrating it as needed.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Io { path: path.into(), source })?;
        }
        let sql = |source| StoreError::Sqlite { path: path.into(), source };
        let conn = Connection::open(path).map_err(sql)?;
        conn.busy_timeout(BUSY).map_err(sql)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(sql)?;
        conn.pragma_update(None, "foreign_keys", true).map_err(sql)?;
        let mut store = Store { conn, path: path.into() };
        store.migrate()?;
        Ok(store)
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        |source| StoreError::Sqlite { path: self.path.clone(), source }
    }

    /// Its schema version.
    pub fn version(&self) -> Result<u32, StoreError> {
        self.conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(self.sql())
    }

    /// Brings the store to [`SCHEMA_VERSION`], in one transaction; another process migrating at
    /// once waits, then finds it done.
    fn migrate(&mut self) -> Result<(), StoreError> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite { path: path.clone(), source };
        let found = self.version()?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::Newer { path, found });
        }
        if found == SCHEMA_VERSION {
            return Ok(());
        }
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
        let found: u32 = tx.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(sql)?;
        for migration in MIGRATIONS.iter().skip(found as usize) {
            tx.execute_batch(migration).map_err(sql)?;
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION).map_err(sql)?;
        tx.commit().map_err(sql)
    }

    /// Adds `record` (from results.json `source`, its report at `report`) in one transaction.
    pub fn add(&mut self, record: &RunRecord, source: Option<&str>, report: Option<&str>) -> Result<Added, StoreError> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite { path: path.clone(), source };
        let k = &record.key;
        let fingerprint = format!("{}|{}|{}|{}", k.time, k.host, k.commit.as_deref().unwrap_or("-"), k.dirty);
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
        if let Some(id) = tx.query_row("SELECT id FROM runs WHERE fingerprint = ?1", [&fingerprint], |r| r.get(0)).optional().map_err(sql)? {
            return Ok(Added::Already(id));
        }
        tx.execute(
            "INSERT INTO runs (fingerprint, commit_id, dirty, branch, created_at, host, source, report) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![fingerprint, k.commit, k.dirty, k.branch, k.time, k.host, source, report],
        )
        .map_err(sql)?;
        let run = tx.last_insert_rowid();
        {
            let mut series = tx.prepare_cached("INSERT INTO series (case_id, platform, browser, hardware, timer, sampling) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO UPDATE SET case_id = excluded.case_id RETURNING id").map_err(sql)?;
            let mut point = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO points (run_id, series_id, median_ms, ci_low_ms, ci_high_ms, samples, status, browser_version, driver, clock_mhz, throughput, throughput_item)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                )
                .map_err(sql)?;
            for p in &record.points {
                let s = &p.series;
                let id: i64 = series.query_row(params![s.case, s.platform, s.browser, s.hardware, s.timer, s.sampling], |r| r.get(0)).map_err(sql)?;
                let (lo, hi) = p.ci_ms.unzip();
                let (tput, item) = p.throughput.clone().unzip();
                point.execute(params![run, id, p.median_ms, lo, hi, p.samples as i64, p.status, p.browser_version, p.driver, p.clock_mhz, tput, item]).map_err(sql)?;
            }
        }
        stall_for_tests();
        tx.commit().map_err(sql)?;
        Ok(Added::New(run))
    }

    /// Every run, oldest first (by the time it began; the id breaks ties).
    pub fn runs(&self) -> Result<Vec<StoredRun>, StoreError> {
        let mut q = self.conn.prepare("SELECT id, commit_id, dirty, branch, created_at, host, source, report FROM runs ORDER BY created_at, id").map_err(self.sql())?;
        let rows = q.query_map([], |r| {
            Ok(StoredRun {
                id: r.get(0)?,
                key: RunKey { commit: r.get(1)?, dirty: r.get(2)?, branch: r.get(3)?, time: r.get(4)?, host: r.get(5)? },
                source: r.get(6)?,
                report: r.get(7)?,
            })
        });
        rows.and_then(Iterator::collect).map_err(self.sql())
    }

    /// Every series, in key order.
    pub fn series(&self) -> Result<Vec<StoredSeries>, StoreError> {
        let mut q = self.conn.prepare("SELECT id, case_id, platform, browser, hardware, timer, sampling FROM series ORDER BY case_id, platform, browser, hardware, timer, sampling").map_err(self.sql())?;
        let rows = q.query_map([], |r| {
            Ok(StoredSeries { id: r.get(0)?, key: SeriesKey { case: r.get(1)?, platform: r.get(2)?, browser: r.get(3)?, hardware: r.get(4)?, timer: r.get(5)?, sampling: r.get(6)? } })
        });
        rows.and_then(Iterator::collect).map_err(self.sql())
    }

    /// Every point, each series' in the order of its runs (oldest first), in one read.
    pub fn points(&self) -> Result<Vec<StoredPoint>, StoreError> {
        let mut q = self
            .conn
            .prepare(
                "SELECT p.run_id, p.series_id, p.median_ms, p.ci_low_ms, p.ci_high_ms, p.samples, p.status, p.browser_version, p.driver, p.clock_mhz
                 FROM points p JOIN runs r ON r.id = p.run_id ORDER BY p.series_id, r.created_at, r.id",
            )
            .map_err(self.sql())?;
        let rows = q.query_map([], |r| {
            let (lo, hi): (Option<f64>, Option<f64>) = (r.get(3)?, r.get(4)?);
            Ok(StoredPoint {
                run: r.get(0)?,
                series: r.get(1)?,
                median_ms: r.get(2)?,
                ci_ms: lo.zip(hi),
                samples: r.get(5)?,
                status: r.get(6)?,
                browser_version: r.get(7)?,
                driver: r.get(8)?,
                clock_mhz: r.get(9)?,
            })
        });
        rows.and_then(Iterator::collect).map_err(self.sql())
    }

    /// SQLite's own check of the file (`PRAGMA integrity_check`): `ok`, or what is broken.
    pub fn integrity(&self) -> Result<String, StoreError> {
        self.conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).map_err(self.sql())
    }
}

/// For the test of a writer killed mid-transaction: where `HARNESS_HISTORY_STALL` names a file,
/// the writer creates it once its run is written but not committed, then waits to be killed.
fn stall_for_tests() {
    if let Some(file) = std::env::var_os("HARNESS_HISTORY_STALL") {
        let _ = std::fs::write(&file, b"in a transaction");
        std::thread::sleep(Duration::from_secs(600));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Point;

    pub(crate) fn record(time: &str, commit: &str, medians: &[(&str, f64)]) -> RunRecord {
        let key = RunKey { commit: Some(commit.into()), dirty: false, branch: Some("main".into()), time: time.into(), host: "Linux x86_64, test CPU".into() };
        let points = medians
            .iter()
            .map(|&(case, median_ms)| Point {
                series: SeriesKey { case: case.into(), platform: "webgpu".into(), browser: "chrome".into(), hardware: "NVIDIA H200".into(), timer: "gpu".into(), sampling: "steady".into() },
                median_ms,
                ci_ms: Some((median_ms * 0.99, median_ms * 1.01)),
                samples: 10,
                status: "passed".into(),
                browser_version: Some("156".into()),
                driver: None,
                clock_mhz: Some(1980.0),
                throughput: None,
            })
            .collect();
        RunRecord { key, points }
    }

    #[test]
    fn a_run_is_added_once_and_read_back_in_time_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs/history.sqlite");
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.version().unwrap(), SCHEMA_VERSION);
        let later = record("2026-12-03T10:00:00Z", "bbb", &[("add", 2.0), ("mul", 3.0)]);
        let earlier = record("2026-12-02T10:00:00Z", "aaa", &[("add", 1.0)]);
        let Added::New(_) = store.add(&later, Some("b/results.json"), None).unwrap() else { panic!() };
        store.add(&earlier, None, None).unwrap();
        assert!(matches!(store.add(&later, None, None).unwrap(), Added::Already(_)), "the same run twice is one run");
        let runs = store.runs().unwrap();
        assert_eq!(runs.iter().map(|r| r.key.commit.as_deref().unwrap()).collect::<Vec<_>>(), ["aaa", "bbb"]);
        assert_eq!(runs[1].source.as_deref(), Some("b/results.json"));
        let series = store.series().unwrap();
        assert_eq!(series.iter().map(|s| s.key.case.as_str()).collect::<Vec<_>>(), ["add", "mul"]);
        let add: Vec<f64> = store.points().unwrap().iter().filter(|p| p.series == series[0].id).map(|p| p.median_ms).collect();
        assert_eq!(add, [1.0, 2.0], "oldest run first");
        // Reopened, nothing moves.
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!((store.runs().unwrap().len(), store.points().unwrap().len(), store.integrity().unwrap().as_str()), (2, 3, "ok"));
    }

    #[test]
    fn an_older_store_is_migrated_keeping_its_runs_and_a_newer_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.sqlite");
        {
            // A version-1 store, as the first schema wrote it, with one run.
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(MIGRATIONS[0]).unwrap();
            conn.pragma_update(None, "user_version", 1).unwrap();
            conn.execute("INSERT INTO runs (fingerprint, commit_id, dirty, created_at, host) VALUES ('f', 'aaa', 0, '2026-12-01T00:00:00Z', 'h')", []).unwrap();
            conn.execute("INSERT INTO series (case_id, platform, browser, hardware, timer, sampling) VALUES ('add', 'webgpu', 'chrome', 'NVIDIA H200', 'gpu', 'steady')", []).unwrap();
            conn.execute("INSERT INTO points (run_id, series_id, median_ms, samples, status) VALUES (1, 1, 1.5, 10, 'passed')", []).unwrap();
        }
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.version().unwrap(), SCHEMA_VERSION);
        let points = store.points().unwrap();
        assert_eq!((points.len(), points[0].median_ms, points[0].clock_mhz), (1, 1.5, None));
        assert_eq!(store.runs().unwrap()[0].key.branch, None);
        store.add(&record("2026-12-02T00:00:00Z", "bbb", &[("add", 1.6)]), None, None).unwrap();
        assert_eq!(store.points().unwrap().len(), 2, "the new run lands on the old series");
        drop(store);
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
        drop(conn);
        let err = Store::open(&path).err().unwrap().to_string();
        assert!(err.contains(&format!("schema version {}", SCHEMA_VERSION + 1)) && err.contains("use the harness that wrote it"), "{err}");
    }
}
