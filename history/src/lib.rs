//! harness's history: every run kept, across commits. Each results.json becomes a run of the
//! store ([`store`], SQLite) with one point per measured case on its like-for-like series
//! ([`record`]: one case, platform, browser and hardware, one timer and sampling mode), so a
//! software adapter never shares a series with a GPU, nor an H100 with an H200. Over it:
//! regressions found over a window of runs ([`detect`]), a step narrowed to its first commit
//! ([`find`]), and the static trend site ([`trend`]).

pub mod check;
pub mod detect;
pub mod find;
pub mod rates;
pub mod record;
pub mod store;
pub mod trend;

pub use record::{Point, RunKey, RunRecord, SeriesKey};
pub use store::{Added, Store, StoreError};
