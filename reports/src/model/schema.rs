//! The version of the `results.json` layout. A reader takes files of its own version and of older
//! ones, whose fields added since read as their serde defaults (runs written before sampling modes
//! were sampled one dispatch at a time, say), and refuses newer ones
//! ([`ReportError::Version`](crate::ReportError::Version)).

/// Version of the `results.json` layout.
pub const SCHEMA_VERSION: u32 = 8;
