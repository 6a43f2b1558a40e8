//! Statistics of timing samples, shared by the page (which decides when to stop sampling) and the
//! reports (which summarise and compare runs). Pure functions of the samples and a seed, so the
//! browser, the native runner and a report rebuilt from disk all arrive at the same numbers.
//!
//! - [`order`]: quantiles of sorted samples.
//! - [`summary`]: median, quantiles, spread, and the bootstrap CI of the median.
//! - [`bootstrap`]: percentile-bootstrap confidence intervals (seeded, reproducible).
//! - [`outliers`]: Tukey's fences, mild and severe.
//! - [`warmup`]: when warm-up dispatches have stopped getting faster.
//! - [`change`]: the change between two sets of samples, classed improved, regressed or unchanged.

pub mod bootstrap;
pub mod change;
pub mod order;
pub mod outliers;
pub mod rng;
pub mod summary;
pub mod warmup;

pub use bootstrap::Interval;
pub use change::{Change, Class};
pub use order::quantile;
pub use outliers::Outliers;
pub use summary::{summarize, Summary};
pub use warmup::{WarmupPolicy, WarmupStop};
