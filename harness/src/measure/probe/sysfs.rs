//! AMD and Intel clocks from the kernel driver's sysfs files, which need no vendor tools.
//! amdgpu lists each clock's DPM levels with the current one starred (`pp_dpm_sclk`,
//! `pp_dpm_mclk`) and power and temperature under hwmon; i915 gives the GT's current
//! frequency (`gt_cur_freq_mhz`, or per GT `gt/gt0/rps_cur_freq_mhz`) and nothing else that a
//! single read can turn into a number. Neither reports throttle reasons.

use super::{ClockReading, ClockSource, ProbeError};
use std::path::{Path, PathBuf};

/// Where the kernel lists GPUs.
pub const DRM: &str = "/sys/class/drm";

/// Reads an AMD or Intel GPU's clocks from sysfs under a DRM folder (the real one, or a fake one
/// in tests).
pub struct SysfsSource {
    vendor: Vendor,
    /// The card folder, e.g. `/sys/class/drm/card0`.
    card: PathBuf,
    /// Intel: the file holding the current frequency.
    freq: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Vendor {
    Amd,
    Intel,
}

impl SysfsSource {
    /// The first card under `drm` driven by amdgpu (it has `device/pp_dpm_sclk`).
    pub fn amd(drm: &Path) -> Result<Self, ProbeError> {
        let card = cards(drm)
            .into_iter()
            .find(|card| card.join("device/pp_dpm_sclk").is_file())
            .ok_or_else(|| ProbeError::NotFound(format!("no AMD GPU in {}", drm.display())))?;
        let freq = card.join("device/pp_dpm_sclk");
        Ok(SysfsSource { vendor: Vendor::Amd, card, freq })
    }

    /// The first card under `drm` driven by i915 (it has a GT frequency file).
    pub fn intel(drm: &Path) -> Result<Self, ProbeError> {
        cards(drm)
            .into_iter()
            .find_map(|card| {
                let freq = ["gt_cur_freq_mhz", "gt/gt0/rps_cur_freq_mhz"].iter().map(|f| card.join(f)).find(|f| f.is_file())?;
                Some(SysfsSource { vendor: Vendor::Intel, card, freq })
            })
            .ok_or_else(|| ProbeError::NotFound(format!("no Intel GPU in {}", drm.display())))
    }

    fn read_amd(&self) -> Result<ClockReading, ProbeError> {
        let device = self.card.join("device");
        let sclk = read_text(&self.freq)?;
        let sm_mhz = parse_dpm_current(&sclk).ok_or_else(|| unexpected(&self.freq, &sclk))?;
        let mem_mhz = read_text(&device.join("pp_dpm_mclk")).ok().and_then(|t| parse_dpm_current(&t));
        let hwmon = first_dir(&device.join("hwmon"));
        let hwmon_value = |files: &[&str], unit: f64| {
            let hwmon = hwmon.as_ref()?;
            files.iter().find_map(|f| read_text(&hwmon.join(f)).ok().and_then(|t| parse_scaled(&t, unit)))
        };
        Ok(ClockReading {
            sm_mhz: Some(sm_mhz),
            mem_mhz,
            // µW; older kernels have only the average, newer ones (and APUs) only the input.
            power_w: hwmon_value(&["power1_average", "power1_input"], 1e6),
            // m°C, the edge sensor.
            temp_c: hwmon_value(&["temp1_input"], 1e3),
            throttle: Vec::new(),
        })
    }

    fn read_intel(&self) -> Result<ClockReading, ProbeError> {
        let text = read_text(&self.freq)?;
        let sm_mhz = parse_scaled(&text, 1.0).ok_or_else(|| unexpected(&self.freq, &text))?;
        Ok(ClockReading { sm_mhz: Some(sm_mhz), ..ClockReading::default() })
    }
}

impl ClockSource for SysfsSource {
    fn name(&self) -> String {
        match self.vendor {
            Vendor::Amd => "AMD sysfs (amdgpu)".into(),
            Vendor::Intel => "Intel sysfs (i915)".into(),
        }
    }

    /// The card and its PCI device id, e.g. `card0 (PCI 0x744c)`: sysfs has no marketing name.
    fn device(&self) -> Option<String> {
        let card = self.card.file_name()?.to_string_lossy().into_owned();
        match read_text(&self.card.join("device/device")) {
            Ok(id) => Some(format!("{card} (PCI {})", id.trim())),
            Err(_) => Some(card),
        }
    }

    fn is_stand_in(&self) -> bool {
        false
    }

    fn read(&mut self) -> Result<ClockReading, ProbeError> {
        match self.vendor {
            Vendor::Amd => self.read_amd(),
            Vendor::Intel => self.read_intel(),
        }
    }
}

/// The current level's clock from a `pp_dpm_*` file: the line marked `*`, e.g. `1: 1800Mhz *`.
pub fn parse_dpm_current(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.trim_end().ends_with('*'))?;
    line.split_whitespace().find_map(|word| {
        let lower = word.to_ascii_lowercase();
        lower.strip_suffix("mhz")?.parse().ok()
    })
}

/// A sysfs number divided by `unit` to reach the reported unit (1e6 for µW to W), e.g. `1300\n`.
pub fn parse_scaled(text: &str, unit: f64) -> Option<f64> {
    text.trim().parse::<f64>().ok().map(|v| v / unit)
}

/// The `cardN` folders under `drm` (not the connectors, `card0-DP-1`), in number order; none when
/// `drm` cannot be listed.
fn cards(drm: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(drm) else { return Vec::new() };
    let mut cards: Vec<(u32, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let number = e.file_name().to_str()?.strip_prefix("card")?.parse().ok()?;
            Some((number, e.path()))
        })
        .collect();
    cards.sort();
    cards.into_iter().map(|(_, path)| path).collect()
}

/// The first folder in `dir` by name (`hwmon/hwmon3`), if any.
fn first_dir(dir: &Path) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir).ok()?.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    dirs.into_iter().next()
}

fn read_text(path: &Path) -> Result<String, ProbeError> {
    std::fs::read_to_string(path).map_err(|source| ProbeError::Io { path: path.to_path_buf(), source })
}

fn unexpected(path: &Path, text: &str) -> ProbeError {
    ProbeError::Parse { what: path.display().to_string(), text: text.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCLK: &str = "0: 500Mhz \n1: 1800Mhz *\n2: 2500Mhz \n";

    fn write(root: &Path, file: &str, text: &str) {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn parse_dpm_current_takes_the_starred_level() {
        assert_eq!(parse_dpm_current(SCLK), Some(1800.0));
        assert_eq!(parse_dpm_current("0: 96Mhz *\n1: 456Mhz \n2: 1000Mhz \n"), Some(96.0));
        // APUs list a deep-sleep level first.
        assert_eq!(parse_dpm_current("S: 19Mhz *\n0: 400Mhz \n1: 2200Mhz \n"), Some(19.0));
        assert_eq!(parse_dpm_current("0: 500MHz\n1: 2100MHz *"), Some(2100.0));
        assert_eq!(parse_dpm_current("0: 500Mhz \n1: 1800Mhz \n"), None, "no level starred");
        assert_eq!(parse_dpm_current(""), None);
        assert_eq!(parse_dpm_current("1: fastMhz *"), None);
    }

    #[test]
    fn parse_scaled_reads_plain_numbers() {
        assert_eq!(parse_scaled("1300\n", 1.0), Some(1300.0));
        assert_eq!(parse_scaled("45000\n", 1e3), Some(45.0));
        assert_eq!(parse_scaled("212000000\n", 1e6), Some(212.0));
        assert_eq!(parse_scaled("", 1.0), None);
        assert_eq!(parse_scaled("n/a", 1.0), None);
    }

    #[test]
    fn amd_card_reads_clocks_power_and_temperature() {
        let drm = tempfile::tempdir().unwrap();
        let root = drm.path();
        // A connector and a card without amdgpu's files come first and are passed over.
        write(root, "card0-DP-1/status", "connected\n");
        write(root, "card0/device/device", "0x1234\n");
        write(root, "card1/device/pp_dpm_sclk", SCLK);
        write(root, "card1/device/pp_dpm_mclk", "0: 96Mhz \n1: 1000Mhz *\n");
        write(root, "card1/device/device", "0x744c\n");
        write(root, "card1/device/hwmon/hwmon4/power1_average", "212000000\n");
        write(root, "card1/device/hwmon/hwmon4/temp1_input", "61000\n");

        let mut source = SysfsSource::amd(root).unwrap();
        assert!(SysfsSource::intel(root).is_err());
        assert_eq!(source.device().as_deref(), Some("card1 (PCI 0x744c)"));
        assert!(!source.is_stand_in());
        let r = source.read().unwrap();
        assert_eq!(r, ClockReading { sm_mhz: Some(1800.0), mem_mhz: Some(1000.0), power_w: Some(212.0), temp_c: Some(61.0), throttle: vec![] });

        // The clock changes level between reads.
        write(root, "card1/device/pp_dpm_sclk", "0: 500Mhz *\n1: 1800Mhz \n2: 2500Mhz \n");
        assert_eq!(source.read().unwrap().sm_mhz, Some(500.0));
        // A clock file with no starred level is an error, not a made-up reading.
        write(root, "card1/device/pp_dpm_sclk", "0: 500Mhz \n");
        assert!(matches!(source.read(), Err(ProbeError::Parse { .. })));
        std::fs::remove_file(root.join("card1/device/pp_dpm_sclk")).unwrap();
        assert!(matches!(source.read(), Err(ProbeError::Io { .. })));
    }

    #[test]
    fn intel_card_reads_the_gt_frequency() {
        let drm = tempfile::tempdir().unwrap();
        write(drm.path(), "card0/gt/gt0/rps_cur_freq_mhz", "1300\n");
        let mut source = SysfsSource::intel(drm.path()).unwrap();
        assert_eq!(source.read().unwrap(), ClockReading { sm_mhz: Some(1300.0), ..ClockReading::default() });
        assert!(source.name().contains("Intel"));

        // The older single-GT file is read where it exists.
        write(drm.path(), "card2/gt_cur_freq_mhz", "350\n");
        std::fs::remove_dir_all(drm.path().join("card0")).unwrap();
        assert_eq!(SysfsSource::intel(drm.path()).unwrap().read().unwrap().sm_mhz, Some(350.0));
    }

    #[test]
    fn no_card_is_not_found() {
        let drm = tempfile::tempdir().unwrap();
        let missing = drm.path().join("no-drm-here");
        for found in [SysfsSource::amd(drm.path()), SysfsSource::intel(drm.path()), SysfsSource::amd(&missing)] {
            assert!(matches!(found, Err(ProbeError::NotFound(_))));
        }
    }
}
