//! The disk probe (`kind: disk`, feature `disk`): the free space of the
//! filesystem that holds a path, against two levels.
//!
//! ```
//! use zb_health::probes::disk::DiskProbe;
//! use zb_health::prelude::*;
//! use zb_health::spec::disk::FreeSpace;
//!
//! let registration = ProbeRegistration::new(
//!     "data-disk",
//!     DiskProbe::new("/var/lib/app")
//!         .degraded_below(FreeSpace::percent(10))
//!         .unhealthy_below(FreeSpace::bytes(500 << 20)),
//! );
//! # let _ = registration;
//! ```
//!
//! The manifest writes the same probe as
//! `{ name: data-disk, kind: disk, path: /var/lib/app, degraded_below: 10%,
//! unhealthy_below: 500MiB }`; a level is a share of the filesystem or an
//! amount of bytes ([`FreeSpace`], whose docs give the one syntax).
//!
//! # What it measures
//!
//! `statvfs(2)` on the path: the free space is `f_bavail × f_frsize`, the
//! blocks **an unprivileged writer can still use**. That leaves out the
//! blocks the filesystem reserves for root (5% on ext4 by default), which a
//! service running as a plain user cannot write to; `df`'s "Avail" column
//! is the same number. A share is of the filesystem's size,
//! `f_blocks × f_frsize`.
//!
//! # What it answers
//!
//! * free space below `unhealthy_below`: `Unhealthy`, described
//!   [`UNHEALTHY_DESCRIPTION`];
//! * else below `degraded_below`: `Degraded`, described
//!   [`DEGRADED_DESCRIPTION`];
//! * else `Healthy`.
//!
//! A level not set is never crossed. The entry's `data` (shown at `full`
//! disclosure only, as every probe's `data`) holds `freeBytes`,
//! `totalBytes` and `freePercent` (two decimals). As for every probe, the
//! registration's failure status caps the verdict: with
//! `failure_status: degraded` a full disk is `Degraded`.
//!
//! A path that cannot be read (it does not exist, or is not permitted) is
//! the probe's error: the entry is its failure status (`Unhealthy` by
//! default) with the fixed description `check failed`, and the error, path
//! included, goes to the transition log only, never into a body.
//!
//! `statvfs` is a blocking call that can hang on a network filesystem, so
//! it runs on tokio's blocking pool through
//! [`from_blocking_fn`](crate::probe::from_blocking_fn): at most one call
//! in flight, and a hung one answers `timed out` at the deadline.

use std::future::Future;
use std::path::PathBuf;

use zb_health_spec::disk::FreeSpace;

use super::Blocking;
use crate::probe::{Probe, ProbeOutcome, ProbeResult};

/// The description of an entry whose free space is below `unhealthy_below`.
pub const UNHEALTHY_DESCRIPTION: &str = "free space below the unhealthy level";
/// The description of an entry whose free space is below `degraded_below`.
pub const DEGRADED_DESCRIPTION: &str = "free space below the degraded level";

/// The free space of the filesystem holding a path (see the
/// [module docs](self)).
pub struct DiskProbe {
    levels: Blocking<Levels>,
}

/// What one run checks.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Levels {
    path: PathBuf,
    degraded_below: Option<FreeSpace>,
    unhealthy_below: Option<FreeSpace>,
}

impl DiskProbe {
    /// A probe of the filesystem that holds `path` (a relative path is
    /// taken from the working directory at each run), with no level yet:
    /// set [`degraded_below`](Self::degraded_below),
    /// [`unhealthy_below`](Self::unhealthy_below) or both, or it is
    /// always `Healthy` while the path can be read.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            levels: Blocking::new(Levels {
                path: path.into(),
                degraded_below: None,
                unhealthy_below: None,
            }),
        }
    }

    /// `Degraded` while the free space is below `level`.
    pub fn degraded_below(self, level: FreeSpace) -> Self {
        self.with(|l| l.degraded_below = Some(level))
    }

    /// `Unhealthy` while the free space is below `level`. The manifest
    /// refuses one that is not below `degraded_below` (both shares or both
    /// bytes); here it simply wins, as the lower verdict.
    pub fn unhealthy_below(self, level: FreeSpace) -> Self {
        self.with(|l| l.unhealthy_below = Some(level))
    }

    fn with(self, set: impl FnOnce(&mut Levels)) -> Self {
        Self {
            levels: self.levels.with(set),
        }
    }
}

impl Probe for DiskProbe {
    fn check(&self) -> impl Future<Output = ProbeOutcome> + Send {
        self.levels.check(Levels::measure)
    }
}

impl Levels {
    /// One `statvfs` and its verdict; the error names the path, for the log.
    // `fsblkcnt_t` and `c_ulong` are `u64` on 64-bit Linux but narrower
    // elsewhere: the conversions are no-ops only here.
    #[allow(clippy::useless_conversion)]
    fn measure(&self) -> ProbeOutcome {
        let stat = nix::sys::statvfs::statvfs(&self.path)
            .map_err(|e| format!("cannot read the free space of {}: {e}", self.path.display()))?;
        let block = u64::from(stat.fragment_size());
        let free = u64::from(stat.blocks_available()).saturating_mul(block);
        let total = u64::from(stat.blocks()).saturating_mul(block);
        Ok(self.verdict(free, total))
    }

    /// The result for `free` of `total` bytes: the rule of the module docs.
    fn verdict(&self, free: u64, total: u64) -> ProbeResult {
        let below = |level: Option<FreeSpace>| level.is_some_and(|l| free < l.bytes_of(total));
        let result = if below(self.unhealthy_below) {
            ProbeResult::unhealthy(UNHEALTHY_DESCRIPTION)
        } else if below(self.degraded_below) {
            ProbeResult::degraded(DEGRADED_DESCRIPTION)
        } else {
            ProbeResult::healthy()
        };
        // Hundredths of a percent, as a level is written.
        let percent = match total {
            0 => 0.0,
            _ => (u128::from(free) * 10_000 / u128::from(total)) as f64 / 100.0,
        };
        result
            .with_data("freeBytes", free)
            .with_data("totalBytes", total)
            .with_data("freePercent", percent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zb_health_spec::HealthStatus;

    fn levels(degraded: Option<FreeSpace>, unhealthy: Option<FreeSpace>) -> Levels {
        Levels {
            path: PathBuf::from("/"),
            degraded_below: degraded,
            unhealthy_below: unhealthy,
        }
    }

    fn status(l: &Levels, free: u64, total: u64) -> HealthStatus {
        l.verdict(free, total).status
    }

    #[test]
    fn each_level_is_crossed_below_it_not_at_it() {
        let l = levels(Some(FreeSpace::percent(10)), Some(FreeSpace::bytes(50)));
        assert_eq!(status(&l, 100, 1000), HealthStatus::Healthy);
        assert_eq!(status(&l, 99, 1000), HealthStatus::Degraded);
        assert_eq!(status(&l, 50, 1000), HealthStatus::Degraded);
        assert_eq!(status(&l, 49, 1000), HealthStatus::Unhealthy);
        assert_eq!(status(&l, 1000, 1000), HealthStatus::Healthy);
    }

    #[test]
    fn an_unset_level_is_never_crossed_and_unhealthy_wins() {
        assert_eq!(status(&levels(None, None), 0, 1000), HealthStatus::Healthy);
        let only_degraded = levels(Some(FreeSpace::bytes(10)), None);
        assert_eq!(status(&only_degraded, 0, 1000), HealthStatus::Degraded);
        // Higher than degraded: the lower verdict wins.
        let inverted = levels(Some(FreeSpace::bytes(10)), Some(FreeSpace::bytes(20)));
        assert_eq!(status(&inverted, 15, 1000), HealthStatus::Unhealthy);
    }

    #[test]
    fn data_gives_free_and_total_bytes_and_the_share() {
        let l = levels(Some(FreeSpace::percent(10)), None);
        let r = l.verdict(125, 1000);
        let data = r.data.unwrap_or_default();
        assert_eq!(data["freeBytes"], 125);
        assert_eq!(data["totalBytes"], 1000);
        assert_eq!(data["freePercent"], 12.5);
        assert_eq!(r.description, None);
        let low = l.verdict(1, 1000);
        assert_eq!(low.description.as_deref(), Some(DEGRADED_DESCRIPTION));
    }

    #[test]
    fn a_missing_path_is_an_error_naming_it_for_the_log() {
        let l = Levels {
            path: PathBuf::from("/no/such/zb-health-disk"),
            ..levels(Some(FreeSpace::percent(10)), None)
        };
        let err = l.measure().expect_err("no such path");
        assert!(err.to_string().contains("/no/such/zb-health-disk"), "{err}");
        assert!(l.measure().is_err() && levels(None, None).measure().is_ok());
    }

    #[test]
    fn builder_sets_each_level() {
        let p = DiskProbe::new("/data")
            .degraded_below(FreeSpace::percent(20))
            .unhealthy_below(FreeSpace::bytes(7));
        assert_eq!(
            **p.levels.settings(),
            Levels {
                path: PathBuf::from("/data"),
                degraded_below: Some(FreeSpace::percent(20)),
                unhealthy_below: Some(FreeSpace::bytes(7)),
            }
        );
    }
}
