//! What comes out in the terminal: live progress, the summary table at the end, and the verdict
//! of `harness verify` with its evidence; and the run's journal, written as cases settle. The
//! report files come from the `reports` crate.

pub mod doctor;
pub mod journal;
pub mod progress;
pub mod summary;
pub mod verdict;
