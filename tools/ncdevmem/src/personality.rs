//! What the NIC a run used does with small segments: its driver, and on
//! devmemnic its personality (the `personality-*` private flag set), for
//! the summary. Devmem applications fail or work by this (a short control
//! message on a bound queue: Documentation/personalities.rst).

use crate::ethtool_ioctl::EthtoolIoctl;

/// A NIC as the summary names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NicIdentity {
    pub driver: String,
    /// devmemnic's personality, from the private flag set.
    pub personality: Option<String>,
}

impl NicIdentity {
    /// The identity of `iface`, or `None` if ethtool cannot tell.
    pub fn of(iface: &str) -> Option<Self> {
        let (driver, flags) = EthtoolIoctl::open(iface)
            .ok()?
            .driver_and_priv_flags()
            .ok()?;
        Some(Self::from_flags(driver, &flags))
    }

    /// From a driver name and its private flags.
    pub fn from_flags(driver: String, flags: &[(String, bool)]) -> Self {
        let personality = flags
            .iter()
            .find(|(name, on)| *on && name.starts_with("personality-"))
            .map(|(name, _)| name["personality-".len()..].to_string());
        NicIdentity {
            driver,
            personality,
        }
    }

    /// `driver` or `driver/personality`, the summary's `nic` field.
    pub fn name(&self) -> String {
        match &self.personality {
            Some(p) => format!("{}/{p}", self.driver),
            None => self.driver.clone(),
        }
    }

    /// What the NIC (or the one devmemnic imitates) does with a small TCP
    /// segment's payload when header split is on.
    pub fn small_segments(&self) -> &'static str {
        let model = match (self.driver.as_str(), self.personality.as_deref()) {
            ("devmemnic", Some(p)) => p,
            ("devmemnic", None) => "strict",
            (d, _) => d,
        };
        match model {
            "strict" => "payload above hds-thresh (per segment) goes to the payload buffers; at 0 (as a binding needs) every byte does",
            "gve" => "every payload byte goes to the payload buffers (no hds-thresh)",
            "bnxt" | "bnxt_en" => "frames up to hds-thresh (a frame length) stay whole in the header buffer; at 0 every payload byte goes to the payload buffers",
            "mlx5" | "mlx5_core" => "every payload byte goes to the payload buffers (SHAMPO, no hds-thresh)",
            "fbnic" => "below hds-thresh 256 every payload byte goes to the payload buffers; from 256 frames up to hds-thresh stay whole",
            "fbnic-6.18" => "never split after the headers (fbnic before 6.18.14): frames up to max(hds-thresh, 128) bytes stay whole, longer ones are cut at that byte offset, so a small segment stays readable",
            _ => "not known to ncdevmem-rs",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(on: &str) -> Vec<(String, bool)> {
        ["strict", "gve", "bnxt", "mlx5", "fbnic", "fbnic-6.18"]
            .iter()
            .map(|p| (format!("personality-{p}"), *p == on))
            .collect()
    }

    #[test]
    fn devmemnic_personality_is_the_flag_set() {
        let id = NicIdentity::from_flags("devmemnic".into(), &flags("mlx5"));
        assert_eq!(id.personality.as_deref(), Some("mlx5"));
        assert_eq!(id.name(), "devmemnic/mlx5");
        assert!(id.small_segments().contains("SHAMPO"));
    }

    #[test]
    fn an_old_driver_release_is_its_own_personality() {
        let id = NicIdentity::from_flags("devmemnic".into(), &flags("fbnic-6.18"));
        assert_eq!(id.name(), "devmemnic/fbnic-6.18");
        assert!(id.small_segments().contains("stays readable"));
        let new = NicIdentity::from_flags("devmemnic".into(), &flags("fbnic"));
        assert_ne!(id.small_segments(), new.small_segments());
    }

    #[test]
    fn other_drivers_are_named_by_driver() {
        let id = NicIdentity::from_flags("bnxt_en".into(), &[("rx-copybreak".into(), true)]);
        assert_eq!(id.personality, None);
        assert_eq!(id.name(), "bnxt_en");
        assert!(id.small_segments().contains("frame length"));
        let id = NicIdentity::from_flags("e1000e".into(), &[]);
        assert_eq!(id.small_segments(), "not known to ncdevmem-rs");
    }
}
