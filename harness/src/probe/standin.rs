//! A scripted clock source for tests: it reads no GPU, and says so, so its numbers can never
//! pass for a measurement.

use super::{ClockReading, ClockSource, ProbeError};

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

    /// Answers call `i` with `readings[i]`, and with the last reading once they run out; with
    /// an error when there are none.
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
