//! Where a case's time went: the platform's phases (`weights`, `build`, `upload`, `pipelines`,
//! `warmup`, `samples`, `readback`, `profile`) and then harness's (`reference`, `check`, `clock`),
//! against the case's wall time as harness saw it, and what no phase accounts for, said rather
//! than hidden.

use kernels::wire::Phase;
use serde::{Deserialize, Serialize};

/// Where one case's time went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseTime {
    /// Wall ms from the case's start reaching harness to its result checked; at least the
    /// phases' sum (the platform's clock and harness's see the case begin a message apart).
    pub wall_ms: f64,
    /// The phases in order, the platform's then harness's, each ms from the end of the one before.
    pub phases: Vec<Phase>,
    /// `wall_ms` less the phases: what none accounts for (the case's announcement and its result
    /// on their way to harness, the platform's own bookkeeping).
    pub unattributed_ms: f64,
}

impl CaseTime {
    /// The time of a case that took `wall_ms` in all, `platform` phases and then `harness`'s.
    pub fn new(wall_ms: f64, platform: Vec<Phase>, harness: Vec<Phase>) -> Self {
        let phases: Vec<Phase> = platform.into_iter().chain(harness).collect();
        let attributed: f64 = phases.iter().map(|p| p.ms).sum();
        let wall_ms = wall_ms.max(attributed);
        CaseTime { wall_ms, phases, unattributed_ms: wall_ms - attributed }
    }

    /// The ms of phase `name`, 0 where the case had none.
    pub fn ms(&self, name: &str) -> f64 {
        self.phases.iter().filter(|p| p.name == name).map(|p| p.ms).sum()
    }
}

/// Several cases' time together: each phase's sum by name, in the order first met, then
/// `unattributed`; and their wall time.
pub fn totals<'a>(times: impl IntoIterator<Item = &'a CaseTime>) -> (Vec<Phase>, f64) {
    let mut phases: Vec<Phase> = Vec::new();
    let (mut unattributed, mut wall) = (0.0, 0.0);
    for t in times {
        for p in &t.phases {
            match phases.iter_mut().find(|q| q.name == p.name) {
                Some(q) => q.ms += p.ms,
                None => phases.push(p.clone()),
            }
        }
        unattributed += t.unattributed_ms;
        wall += t.wall_ms;
    }
    phases.push(Phase { name: "unattributed".into(), ms: unattributed });
    (phases, wall)
}

/// Several cases' time in words: their wall time, each phase's share of it (the largest first,
/// those under 0.5% left out), and the mean time a case took beyond its timed samples. `None`
/// where no case says.
pub fn describe<'a>(times: impl IntoIterator<Item = &'a CaseTime>) -> Option<String> {
    let times: Vec<&CaseTime> = times.into_iter().collect();
    if times.is_empty() {
        return None;
    }
    let (mut phases, wall) = totals(times.iter().copied());
    phases.sort_by(|a, b| b.ms.total_cmp(&a.ms));
    let shares: Vec<String> = phases.iter().filter(|p| wall > 0.0 && p.ms / wall >= 0.005).map(|p| format!("{} {:.0}%", p.name, 100.0 * p.ms / wall)).collect();
    let beyond = times.iter().map(|t| t.wall_ms - t.ms("samples")).sum::<f64>() / times.len() as f64;
    Some(format!(
        "{:.1} s in {} cases: {}; {} ms a case beyond its timed samples",
        wall / 1e3,
        times.len(),
        shares.join(", "),
        crate::format_ms(beyond)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(name: &str, ms: f64) -> Phase {
        Phase { name: name.into(), ms }
    }

    #[test]
    fn the_phases_and_what_none_accounts_for_add_up_to_the_wall_time() {
        let t = CaseTime::new(100.0, vec![phase("upload", 30.0), phase("samples", 50.0)], vec![phase("check", 5.0)]);
        assert_eq!((t.unattributed_ms, t.ms("samples"), t.ms("reference")), (15.0, 50.0, 0.0));
        // A platform's phases a message longer than harness saw the case: the wall is their sum.
        let t = CaseTime::new(70.0, vec![phase("samples", 80.0)], Vec::new());
        assert_eq!((t.wall_ms, t.unattributed_ms), (80.0, 0.0));
        let (phases, wall) = totals([&CaseTime::new(10.0, vec![phase("samples", 4.0)], Vec::new()), &CaseTime::new(20.0, vec![phase("upload", 5.0), phase("samples", 6.0)], Vec::new())]);
        assert_eq!(phases, [phase("samples", 10.0), phase("upload", 5.0), phase("unattributed", 15.0)]);
        assert_eq!(wall, 30.0);
        let two = [CaseTime::new(1000.0, vec![phase("upload", 200.0), phase("samples", 700.0)], vec![phase("check", 1.0)]), CaseTime::new(1000.0, vec![phase("samples", 900.0)], Vec::new())];
        assert_eq!(describe(&two).unwrap(), "2.0 s in 2 cases: samples 80%, upload 10%, unattributed 10%; 200.0 ms a case beyond its timed samples");
        assert_eq!(describe(&[]), None);
    }
}
