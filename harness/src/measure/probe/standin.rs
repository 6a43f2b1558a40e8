//! A scripted clock source for tests: it reads no GPU, and says so, so its numbers can never
//! pass for a measurement.

use super::{ClockReading, ClockSource, ProbeError};

/// Environment variable that replaces the run's probe by a stand-in with scripted SM clocks
/// (see [`StandInSource::from_script`]), so end-to-end tests can drive the clock checks without a
/// GPU. Reports say the probe was a stand-in.
pub const STANDIN_ENV: &str = "HARNESS_PROBE_STANDIN";

/// The script: the reading for each call, by call index from 0.
type Script = Box<dyn FnMut(usize) -> Result<ClockReading, ProbeError> + Send>;

/// Readings from a script instead of a GPU.
pub struct StandInSource {
    script: Script,
    calls: usize,
}

impl StandInSource {
    /// The name every stand-in reports.
    pub const NAME: &'static str = "stand-in (scripted clocks, no GPU read)";

    /// Answers call `i` (from 0) with `script(i)`.
    pub fn new(script: impl FnMut(usize) -> Result<ClockReading, ProbeError> + Send + 'static) -> Self {
        StandInSource { script: Box::new(script), calls: 0 }
    }

    /// SM clocks from a script such as `1980*20,345*20`: 20 readings of 1980 MHz, 20 of 345 MHz,
    /// and again from the start. What [`STANDIN_ENV`] holds.
    pub fn from_script(script: &str) -> Result<Self, ProbeError> {
        let bad = || ProbeError::Parse { what: format!("{STANDIN_ENV} (MHZ[*COUNT],…)"), text: script.to_string() };
        let mut readings = Vec::new();
        for part in script.split(',') {
            let (mhz, count) = part.trim().split_once('*').unwrap_or((part.trim(), "1"));
            let mhz: f64 = mhz.trim().parse().map_err(|_| bad())?;
            let count: usize = count.trim().parse().map_err(|_| bad())?;
            readings.extend(std::iter::repeat_n(ClockReading { sm_mhz: Some(mhz), ..Default::default() }, count));
        }
        match readings.is_empty() {
            true => Err(bad()),
            false => Ok(Self::new(move |i| Ok(readings[i % readings.len()].clone()))),
        }
    }

    /// Answers call `i` with `readings[i]`, and with the last reading once they run out; with
    /// an error when there are none.
    #[cfg(test)]
    pub fn from_readings(readings: Vec<ClockReading>) -> Self {
        Self::new(move |i| {
            let last = readings.len().checked_sub(1).ok_or_else(|| ProbeError::Stopped("the stand-in has no readings".into()))?;
            Ok(readings[i.min(last)].clone())
        })
    }
}

impl ClockSource for StandInSource {
    fn name(&self) -> String {
        Self::NAME.into()
    }

    fn device(&self) -> Option<String> {
        None
    }

    fn is_stand_in(&self) -> bool {
        true
    }

    fn read(&mut self) -> Result<ClockReading, ProbeError> {
        let call = self.calls;
        self.calls += 1;
        (self.script)(call)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_cycles_and_says_it_is_a_stand_in() {
        let mut s = StandInSource::from_script("1980*2, 345").unwrap();
        let mhz: Vec<Option<f64>> = (0..5).map(|_| s.read().unwrap().sm_mhz).collect();
        assert_eq!(mhz, [Some(1980.0), Some(1980.0), Some(345.0), Some(1980.0), Some(1980.0)]);
        assert!(s.is_stand_in() && s.name().contains("stand-in"));
        for bad in ["", "fast", "1980*x", "1980*2,,345"] {
            assert!(StandInSource::from_script(bad).is_err(), "{bad:?}");
        }
    }
}
