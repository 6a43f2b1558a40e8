use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

fn sm(mhz: f64) -> ClockReading {
    ClockReading { sm_mhz: Some(mhz), mem_mhz: Some(2619.0), power_w: Some(mhz / 10.0), temp_c: Some(40.0), throttle: Vec::new() }
}

/// A GPU ramping from idle to boost: 345, 345, 1200, then 1980 MHz from the fourth reading on.
fn ramp() -> StandInSource {
    StandInSource::from_readings(vec![sm(345.0), sm(345.0), sm(1200.0), sm(1980.0)])
}

/// Waits (at most 10 s) until `probe` holds `n` samples, and returns them.
fn samples_once(probe: &ClockProbe, n: usize) -> Vec<(f64, ClockReading)> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let samples = probe.samples();
        if samples.len() >= n {
            return samples;
        }
        assert!(Instant::now() < deadline, "only {} of {n} samples after 10 s", samples.len());
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn probe_samples_a_ramp_in_the_background() {
    let probe = ClockProbe::start(Box::new(ramp()), Duration::from_millis(2)).unwrap();
    let samples = samples_once(&probe, 8);
    let clocks: Vec<f64> = samples.iter().filter_map(|(_, r)| r.sm_mhz).collect();
    assert_eq!(clocks[..6], [345.0, 345.0, 1200.0, 1980.0, 1980.0, 1980.0]);
    assert!(samples.windows(2).all(|w| w[0].0 < w[1].0), "samples in time order");
    assert!(samples[0].0 >= 0.0 && samples.last().unwrap().0 <= probe.now_ms());

    let t: Vec<f64> = samples.iter().map(|(t, _)| *t).collect();
    // Readings 1..=5: 345, 1200, 1980, 1980, 1980.
    let boosted = probe.window(t[1], t[5]).unwrap();
    assert_eq!(boosted.samples, 5);
    assert_eq!((boosted.sm_mhz_min, boosted.sm_mhz_median, boosted.sm_mhz_max), (Some(345.0), Some(1980.0), Some(1980.0)));
    assert_eq!(boosted.power_w_max, Some(198.0));
    assert_eq!(boosted.mem_mhz_median, Some(2619.0));
    assert!(boosted.throttle_reasons.is_empty());
    // Readings 0..=3: 345, 345, 1200, 1980; an even count's median is the middle two's mean.
    let ramping = probe.window(t[0], t[3]).unwrap();
    assert_eq!((ramping.samples, ramping.sm_mhz_median), (4, Some((345.0 + 1200.0) / 2.0)));
    // Four and five samples: too few to judge either (see the short-window test below).
    assert!(!reports::probe::enough_samples(&ramping) && !reports::probe::enough_samples(&boosted));

    assert_eq!(probe.max_sm_mhz(), Some(1980.0));
    assert_eq!(probe.latest().and_then(|r| r.sm_mhz), Some(1980.0));
    assert_eq!(probe.failures(), (0, None));
    let info = probe.info();
    assert!(info.stand_in);
    assert_eq!(info.source, StandInSource::NAME);
    assert_eq!(info.device, None);
    assert_eq!(info.interval_ms, 2.0);
}

#[test]
fn a_window_shorter_than_the_interval_takes_the_nearest_sample() {
    let interval = Duration::from_millis(20);
    let probe = ClockProbe::start(Box::new(ramp()), interval).unwrap();
    let t: Vec<f64> = samples_once(&probe, 4).iter().map(|(t, _)| *t).collect();
    // A 1 ms window just after reading 2 (1200 MHz), well before reading 3.
    let gap = t[3] - t[2];
    assert!(gap > 2.0, "samples {gap} ms apart at a 20 ms interval");
    let s = probe.window(t[2] + 0.5, t[2] + 1.5).unwrap();
    assert_eq!((s.samples, s.sm_mhz_median), (1, Some(1200.0)));
    // Just before reading 3, it is the nearer one.
    let s = probe.window(t[3] - 1.5, t[3] - 0.5).unwrap();
    assert_eq!(s.sm_mhz_median, Some(1980.0));
    // Nothing within an interval, or no window at all.
    assert_eq!(probe.window(-1000.0, -500.0), None);
    assert_eq!(probe.window(t[3], t[2]), None);
    assert_eq!(probe.window(f64::NAN, t[2]), None);
}

/// The short-window rule on a synthetic series: 5 readings at boost, then an idle GPU's 345 MHz.
/// Windows cut from the idle stretch are judged by how many samples fall inside them, never by a
/// stand-in from outside.
#[test]
fn a_case_is_flagged_idle_clocked_only_from_enough_samples_inside_its_window() {
    use reports::probe::{below_clock, format_sm, MIN_FLAG_SAMPLES};
    let n = MIN_FLAG_SAMPLES as usize;
    let series: Vec<ClockReading> = [vec![sm(1980.0); 5], vec![sm(345.0); 2 * n]].concat();
    let probe = ClockProbe::start(Box::new(StandInSource::from_readings(series)), Duration::from_millis(2)).unwrap();
    let t: Vec<f64> = samples_once(&probe, 5 + 2 * n).iter().map(|(t, _)| *t).collect();
    let highest = probe.max_sm_mhz().unwrap();
    assert_eq!(highest, 1980.0);
    // The window from idle reading `first` (0 = the sixth of the series) holding `count` samples.
    let idle = |first: usize, count: usize| probe.window(t[5 + first], t[5 + first + count - 1]).unwrap();

    // A short window: 3 samples at 345 MHz inside a run whose highest is 1980. Not flagged; reads unknown.
    let short = idle(0, 3);
    assert_eq!((short.samples, short.sm_mhz_median), (3, Some(345.0)));
    assert!(!below_clock(&short, highest));
    assert_eq!(format_sm(Some(&short)), "unknown (3 samples)");
    // At the boundary: one sample short of the floor is unknown, the floor itself is flagged.
    let below_floor = idle(1, n - 1);
    assert_eq!(below_floor.samples, MIN_FLAG_SAMPLES - 1);
    assert!(!below_clock(&below_floor, highest));
    let at_floor = idle(1, n);
    assert_eq!(at_floor.samples, MIN_FLAG_SAMPLES);
    assert!(below_clock(&at_floor, highest));
    assert_eq!(format_sm(Some(&at_floor)), "345 MHz");
    // A long window, the whole idle stretch: flagged.
    let long = idle(0, 2 * n);
    assert_eq!(long.samples as usize, 2 * n);
    assert!(below_clock(&long, highest));
    // A window just after an idle reading holds none: that reading stands in, counted as 1
    // sample, and a sample from outside the window is never judged.
    let (a, b) = (t[6], t[7]);
    let between = probe.window(a + (b - a) / 100.0, a + (b - a) / 50.0).unwrap();
    assert_eq!((between.samples, between.sm_mhz_median), (1, Some(345.0)));
    assert!(!below_clock(&between, highest));
    assert_eq!(format_sm(Some(&between)), "unknown (1 sample)");
}

#[test]
fn a_window_with_one_power_capped_reading_reports_it() {
    let readings: Vec<ClockReading> = (0..6)
        .map(|i| ClockReading {
            throttle: match i {
                0 => vec!["gpu_idle".into()],
                3 => vec!["sw_power_cap".into()],
                _ => Vec::new(),
            },
            ..sm(1980.0 - if i == 3 { 300.0 } else { 0.0 })
        })
        .collect();
    let probe = ClockProbe::start(Box::new(StandInSource::from_readings(readings)), Duration::from_millis(2)).unwrap();
    let t: Vec<f64> = samples_once(&probe, 6).iter().map(|(t, _)| *t).collect();
    let capped = probe.window(t[2], t[4]).unwrap();
    assert_eq!(capped.throttle_reasons, ["sw_power_cap"]);
    assert_eq!((capped.sm_mhz_min, capped.sm_mhz_median), (Some(1680.0), Some(1980.0)));
    assert_eq!(probe.window(t[0], t[5]).unwrap().throttle_reasons, ["gpu_idle", "sw_power_cap"], "sorted union");
    assert!(probe.window(t[4], t[5]).unwrap().throttle_reasons.is_empty());
}

#[test]
fn dropping_the_probe_stops_its_thread() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let source = StandInSource::new(move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
        Ok(sm(1980.0))
    });
    // A long interval: dropping must wake the thread, not wait the interval out.
    let probe = ClockProbe::start(Box::new(source), Duration::from_secs(60)).unwrap();
    samples_once(&probe, 1);
    // Dropped on another thread, so a drop that never returns fails the test instead of hanging it.
    let (done, dropped) = mpsc::channel();
    std::thread::spawn(move || {
        drop(probe);
        let _ = done.send(());
    });
    assert!(dropped.recv_timeout(Duration::from_secs(5)).is_ok(), "dropping the probe did not end its thread within 5 s");
    // The thread owned the source; only this test's handle on the counter is left once it ended.
    assert_eq!(Arc::strong_count(&calls), 1, "the sampling thread still holds its source");
    let after = calls.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(calls.load(Ordering::SeqCst), after);
}

#[test]
fn failed_reads_leave_no_sample_and_are_counted() {
    let source = StandInSource::new(|i| match i % 2 {
        0 => Ok(sm(1500.0 + i as f64)),
        _ => Err(ProbeError::Stopped(format!("read {i} failed"))),
    });
    let probe = ClockProbe::start(Box::new(source), Duration::from_millis(2)).unwrap();
    let samples = samples_once(&probe, 3);
    let clocks: Vec<f64> = samples.iter().filter_map(|(_, r)| r.sm_mhz).collect();
    assert_eq!(clocks[..3], [1500.0, 1502.0, 1504.0]);
    let (failures, last) = probe.failures();
    assert!(failures >= 2, "{failures}");
    assert!(last.is_some_and(|m| m.starts_with("read ") && m.ends_with(" failed")));
}

#[test]
fn stats_leave_out_what_the_source_does_not_report() {
    let only_sm = ClockReading { sm_mhz: Some(1410.0), ..ClockReading::default() };
    let nothing = ClockReading::default();
    let s = clock_stats(&[&only_sm, &nothing, &only_sm]);
    assert_eq!(s.samples, 3);
    assert_eq!((s.sm_mhz_min, s.sm_mhz_median, s.sm_mhz_max), (Some(1410.0), Some(1410.0), Some(1410.0)));
    assert_eq!((s.mem_mhz_median, s.power_w_median, s.power_w_max, s.temp_c_max), (None, None, None, None));
    assert!(s.throttle_reasons.is_empty());
}

#[test]
fn an_empty_stand_in_fails_its_reads() {
    let mut source = StandInSource::from_readings(Vec::new());
    assert!(source.is_stand_in());
    assert!(matches!(source.read(), Err(ProbeError::Stopped(_))));
}

/// On a machine without a GPU the probe says what it tried; on one with a GPU it reads it.
#[test]
fn detect_names_what_it_tried() {
    match ClockProbe::detect() {
        Ok(probe) => {
            let info = probe.info();
            assert!(!info.stand_in && info.device.is_some(), "{info:?}");
            let samples = samples_once(&probe, 3);
            eprintln!("detected {} on {:?}: {:?}", info.source, info.device, samples.last());
            let stats = probe.window(0.0, probe.now_ms()).unwrap();
            assert!(stats.samples >= 3 && stats.sm_mhz_median.is_some_and(|mhz| mhz > 0.0), "{stats:?}");
        }
        Err(none) => {
            let message = none.to_string();
            eprintln!("{message}");
            assert!(!none.tried.is_empty() && !message.is_empty());
            assert!(message.contains("NVML"), "{message}");
            assert!(message.contains("nvidia-smi"), "{message}");
            assert!(message.contains(sysfs::DRM), "{message}");
        }
    }
}

#[test]
fn the_page_clock_is_lined_up_by_its_quickest_message_not_by_a_slow_upload() {
    let mut clock = PageClock::default();
    let mut m: kernels::wire::CaseMeasurement = serde_json::from_value(serde_json::json!({
        "caseId": "x", "pipelineMs": 0.0, "firstDispatchMs": 0.0, "warmup": [], "warmupStop": "fixed", "samples": [],
        "stoppedBy": "sampleCount", "output": "", "timedSpanMs": [1_000.0, 1_500.0], "sentMs": 1_600.0,
    }))
    .unwrap();
    // Before any start message: the result's own send time (3 s of upload slides it).
    assert_eq!(clock.timed_span(&m, 5_100.0), Some((4_500.0, 5_000.0)));
    // Start messages arrive 500 + a few ms later on the probe's clock; the quickest counts.
    clock.observe(900.0, 1_410.0);
    clock.observe(950.0, 1_450.0);
    clock.observe(0.0, 9_999.0);
    assert_eq!(clock.timed_span(&m, 5_100.0), Some((1_500.0, 2_000.0)));
    m.timed_span_ms = (0.0, 0.0);
    assert_eq!(clock.timed_span(&m, 5_100.0), None, "no span from a platform that did not say");
}
