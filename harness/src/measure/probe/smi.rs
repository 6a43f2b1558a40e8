//! NVIDIA clocks through `nvidia-smi`, for machines where the NVML library cannot be loaded
//! (containers that mount only the tools, for one). One `nvidia-smi -lms` process streams a CSV
//! line per interval; a reading is its latest line, so sampling costs no process start.

use super::throttle::throttle_names;
use super::{ClockReading, ClockSource, ProbeError};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::thread::JoinHandle;
use std::time::Duration;

const PROGRAM: &str = "nvidia-smi";

/// The fields asked for, in the order [`parse_line`] reads them.
const QUERY: &str = "--query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active";

/// How long `nvidia-smi` may take to print its first line: seconds where the driver is not kept
/// loaded (no persistence mode) and must initialise the GPU first.
const FIRST_LINE: Duration = Duration::from_secs(10);

/// Reads one NVIDIA GPU through a streaming `nvidia-smi`, which it ends when dropped.
pub struct SmiSource {
    child: Child,
    lines: Receiver<String>,
    reader: Option<JoinHandle<()>>,
    device: Option<String>,
    latest: ClockReading,
}

impl SmiSource {
    /// Starts `nvidia-smi` streaming GPU `index` every `interval`, and waits for its first line.
    pub fn open(index: u32, interval: Duration) -> Result<Self, ProbeError> {
        let mut command = Command::new(PROGRAM);
        let every_ms = interval.as_millis().max(1).to_string();
        command.args([QUERY, "--format=csv,noheader,nounits", "-i", &index.to_string(), "-lms", &every_ms]);
        Self::spawn(command)
    }

    /// Runs `command`, which must print [`QUERY`]'s CSV lines, and takes its first line.
    fn spawn(mut command: Command) -> Result<Self, ProbeError> {
        let program = command.get_program().to_string_lossy().into_owned();
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| ProbeError::Spawn { program: program.clone(), source })?;
        let (tx, lines) = mpsc::channel();
        let reader = child.stdout.take().map(|stdout| {
            std::thread::Builder::new().name("nvidia-smi-reader".into()).spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if !line.trim().is_empty() && tx.send(line).is_err() {
                        break;
                    }
                }
            })
        });
        let reader = match reader.transpose() {
            Ok(reader) => reader,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ProbeError::Thread(e));
            }
        };
        // From here on, dropping `source` ends the process.
        let mut source = SmiSource { child, lines, reader, device: None, latest: ClockReading::default() };
        let first = source.lines.recv_timeout(FIRST_LINE).map_err(|_| ProbeError::Stopped(format!("{program} printed no reading")))?;
        let (device, reading) = parse_line(&first)?;
        source.device = device;
        source.latest = reading;
        Ok(source)
    }
}

impl ClockSource for SmiSource {
    fn name(&self) -> String {
        PROGRAM.into()
    }

    fn device(&self) -> Option<String> {
        self.device.clone()
    }

    fn is_stand_in(&self) -> bool {
        false
    }

    /// The latest line `nvidia-smi` printed. When it has printed none since the last read (the
    /// probe samples faster than it streams), the previous reading again.
    fn read(&mut self) -> Result<ClockReading, ProbeError> {
        let mut newest = None;
        loop {
            match self.lines.try_recv() {
                Ok(line) => newest = Some(line),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) if newest.is_none() => return Err(ProbeError::Stopped(format!("{PROGRAM} exited"))),
                Err(TryRecvError::Disconnected) => break,
            }
        }
        if let Some(line) = newest {
            self.latest = parse_line(&line)?.1;
        }
        Ok(self.latest.clone())
    }
}

impl Drop for SmiSource {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The process's end closes its output, which ends the reader.
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// Why `nvidia-smi` does not apply, as one phrase for [`super::NoProbe`].
pub fn why_not(error: &ProbeError) -> String {
    match error {
        ProbeError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound => format!("no {PROGRAM} on PATH"),
        other => format!("{PROGRAM}: {other}"),
    }
}

/// The GPU's name and reading from one line of [`QUERY`] in `csv,noheader,nounits` format, e.g.
/// `NVIDIA H100 80GB HBM3, 1980, 2619, 312.45, 41, 0x0000000000000004`. A value the GPU does not
/// report (`[N/A]`, `[Not Supported]`) is `None`.
pub fn parse_line(line: &str) -> Result<(Option<String>, ClockReading), ProbeError> {
    let bad = || ProbeError::Parse { what: format!("{PROGRAM} output"), text: line.to_string() };
    // From the right, so a comma in a GPU's name cannot shift the numbers.
    let mut fields: Vec<&str> = line.rsplitn(6, ',').map(str::trim).collect();
    fields.reverse();
    let [name, sm, mem, power, temp, throttle] = fields[..] else { return Err(bad()) };
    let number = |field: &str| -> Result<Option<f64>, ProbeError> {
        if not_reported(field) {
            Ok(None)
        } else {
            field.parse().map(Some).map_err(|_| bad())
        }
    };
    let throttle = if not_reported(throttle) {
        Vec::new()
    } else {
        let hex = throttle.strip_prefix("0x").or_else(|| throttle.strip_prefix("0X")).ok_or_else(bad)?;
        throttle_names(u64::from_str_radix(hex, 16).map_err(|_| bad())?)
    };
    let reading = ClockReading { sm_mhz: number(sm)?, mem_mhz: number(mem)?, power_w: number(power)?, temp_c: number(temp)?, throttle };
    Ok(((!not_reported(name) && !name.is_empty()).then(|| name.to_string()), reading))
}

/// `[N/A]`, `[Not Supported]`, `[Unknown Error]` and the like.
fn not_reported(field: &str) -> bool {
    field.starts_with('[') || field == "N/A"
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn mhz(sm: f64, mem: f64) -> (Option<f64>, Option<f64>) {
        (Some(sm), Some(mem))
    }

    #[test]
    fn parse_line_reads_real_nvidia_smi_lines() {
        let (name, r) = parse_line("NVIDIA H100 80GB HBM3, 1980, 2619, 312.45, 41, 0x0000000000000000").unwrap();
        assert_eq!(name.as_deref(), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!((r.sm_mhz, r.mem_mhz), mhz(1980.0, 2619.0));
        assert_eq!((r.power_w, r.temp_c), (Some(312.45), Some(41.0)));
        assert!(r.throttle.is_empty());

        // As an idle H100 (driver 580) printed it.
        let (name, r) = parse_line("NVIDIA H100 80GB HBM3, 345, 2619, 81.08, 58, 0x0000000000000001").unwrap();
        assert_eq!(name.as_deref(), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!((r.sm_mhz, r.power_w, r.throttle), (Some(345.0), Some(81.08), vec!["gpu_idle".to_string()]));
        let (_, r) = parse_line("Tesla T4, 1590, 5000, 70.12, 83, 0x0000000000000064").unwrap();
        assert_eq!(r.throttle, ["sw_power_cap", "sw_thermal_slowdown", "hw_thermal_slowdown"]);
    }

    #[test]
    fn parse_line_takes_not_available_values_as_none() {
        let (name, r) = parse_line("NVIDIA A10G, 1710, 6251, [N/A], 35, 0x0000000000000000").unwrap();
        assert_eq!(name.as_deref(), Some("NVIDIA A10G"));
        assert_eq!((r.sm_mhz, r.power_w), (Some(1710.0), None));

        let (name, r) = parse_line("[N/A], [N/A], [N/A], [Not Supported], [N/A], [N/A]").unwrap();
        assert_eq!(name, None);
        assert_eq!(r, ClockReading::default());
    }

    #[test]
    fn parse_line_refuses_what_is_not_a_reading() {
        for line in [
            "No devices were found",
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
            "NVIDIA H100, fast, 2619, 312.45, 41, 0x0",
            "NVIDIA H100, 1980, 2619, 312.45, 41, 4",
            "NVIDIA H100, 1980, 2619, 312.45, 41, 0xZZ",
            "1980, 2619, 312.45, 41, 0x0",
        ] {
            let err = parse_line(line).unwrap_err();
            assert!(matches!(err, ProbeError::Parse { .. }), "{line}: {err}");
            assert!(err.to_string().contains(line), "the message quotes the line: {err}");
        }
    }

    /// A stand-in for `nvidia-smi -lms`: a shell loop printing a rising SM clock.
    fn streaming(lines: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", lines]);
        command
    }

    #[test]
    fn streams_the_latest_line_and_ends_the_process_when_dropped() {
        let mut source = SmiSource::spawn(streaming(
            r#"i=0; while :; do echo "Fake GPU, $((1000 + i)), 2619, 100.5, 50, 0x0000000000000004"; i=$((i + 1)); sleep 0.01; done"#,
        ))
        .unwrap();
        assert_eq!(source.device().as_deref(), Some("Fake GPU"));
        let first = source.read().unwrap();
        assert_eq!(first.throttle, ["sw_power_cap"]);
        let deadline = Instant::now() + Duration::from_secs(10);
        let later = loop {
            std::thread::sleep(Duration::from_millis(50));
            let r = source.read().unwrap();
            if r.sm_mhz > first.sm_mhz || Instant::now() > deadline {
                break r;
            }
        };
        assert!(later.sm_mhz > first.sm_mhz, "{later:?} is not newer than {first:?}");

        let pid = source.child.id() as libc::pid_t;
        drop(source);
        // SAFETY: signal 0 sends nothing; it only asks whether the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        assert!(!alive, "nvidia-smi (pid {pid}) outlived its source");
    }

    #[test]
    fn a_stream_that_ends_stops_the_source() {
        let mut source = SmiSource::spawn(streaming(r#"echo "Fake GPU, 1500, 2619, 100.5, 50, 0x0""#)).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let err = loop {
            match source.read() {
                Ok(r) => assert_eq!(r.sm_mhz, Some(1500.0)),
                Err(e) => break e,
            }
            assert!(Instant::now() < deadline, "the source never noticed the end");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(matches!(err, ProbeError::Stopped(_)), "{err}");
    }

    /// Where `nvidia-smi` works, it accepts the query and streams readings; elsewhere it says why not.
    #[test]
    fn real_nvidia_smi_streams_where_it_works() {
        match SmiSource::open(0, Duration::from_millis(20)) {
            Ok(mut source) => {
                assert!(source.device().is_some());
                std::thread::sleep(Duration::from_millis(100));
                let r = source.read().unwrap();
                eprintln!("nvidia-smi on {:?}: {r:?}", source.device());
                assert!(r.sm_mhz.is_some_and(|mhz| mhz > 0.0), "{r:?}");
            }
            Err(e) => eprintln!("{}", why_not(&e)),
        }
    }

    #[test]
    fn open_failures_say_why() {
        let err = SmiSource::spawn(streaming("echo 'No devices were found'")).err().unwrap();
        assert!(why_not(&err).contains("No devices were found"), "{}", why_not(&err));
        let err = SmiSource::spawn(streaming("exit 9")).err().unwrap();
        assert!(matches!(err, ProbeError::Stopped(_)), "{err}");
        let err = SmiSource::spawn(Command::new("nvidia-smi-that-is-not-installed")).err().unwrap();
        assert_eq!(why_not(&err), "no nvidia-smi on PATH");
    }
}
