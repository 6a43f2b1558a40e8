//! How much a run measures: the suites every kernel lists its shapes for.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How much to run: `quick` for smoke tests and CI, `default` for a useful picture, `full` for
/// sizes that need a real GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Suite {
    /// Small shapes, seconds even on a software adapter.
    Quick,
    /// Medium shapes.
    Default,
    /// Large shapes.
    Full,
}

impl Suite {
    /// All suites, smallest first.
    pub const ALL: [Suite; 3] = [Suite::Quick, Suite::Default, Suite::Full];

    /// The suite's name as the CLI spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Suite::Quick => "quick",
            Suite::Default => "default",
            Suite::Full => "full",
        }
    }
}

impl fmt::Display for Suite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Suite {
    type Err = UnknownSuite;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Suite::ALL
            .into_iter()
            .find(|x| x.as_str() == s)
            .ok_or_else(|| UnknownSuite(s.to_string()))
    }
}

/// A suite name that is not one of quick, default, full.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown suite `{0}`: choose quick, default or full")]
pub struct UnknownSuite(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_parses_its_names() {
        assert_eq!("quick".parse::<Suite>().unwrap(), Suite::Quick);
        assert!("huge".parse::<Suite>().is_err());
    }
}
