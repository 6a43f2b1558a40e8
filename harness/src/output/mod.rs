//! What comes out in the terminal: live progress, the summary table at the end, and the verdict
//! of `harness verify` with its evidence. The report files come from the `reports` crate.

pub mod progress;
pub mod summary;
pub mod verdict;
