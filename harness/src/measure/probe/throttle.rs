//! The names of NVIDIA's clock throttle reasons. NVML and `nvidia-smi` report the same bitmask
//! (`nvmlClocksThrottleReason*`), so both sources name its bits through this one table.

/// Each throttle reason bit and the name reports give it.
pub const THROTTLE_REASONS: [(u64, &str); 9] = [
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
];

/// The names of the reasons set in `mask`, in bit order. A bit newer than this table is kept as
/// `unknown_0x…` rather than dropped, so a new kind of throttling still shows.
pub fn throttle_names(mask: u64) -> Vec<String> {
    (0..64)
        .map(|bit| 1u64 << bit)
        .filter(|b| mask & b != 0)
        .map(|b| match THROTTLE_REASONS.iter().find(|(known, _)| *known == b) {
            Some((_, name)) => (*name).to_string(),
            None => format!("unknown_{b:#x}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttle_names_name_each_set_bit() {
        assert!(throttle_names(0).is_empty());
        assert_eq!(throttle_names(0x1), ["gpu_idle"]);
        assert_eq!(throttle_names(0x4 | 0x40), ["sw_power_cap", "hw_thermal_slowdown"]);
        assert_eq!(throttle_names(0x1ff).len(), 9);
        assert_eq!(throttle_names(0x100 | 0x400), ["display_clock_setting", "unknown_0x400"]);
    }
}
