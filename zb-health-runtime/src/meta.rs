//! Static probe metadata, written by `#[zb_health]` and read by the
//! generated manifest registration.

use std::time::Duration;

use zb_health_spec::{FailureStatus, TagSet};

use crate::probe::Probe;
use crate::registry::ProbeRegistration;

/// What `#[zb_health(...)]` declares about a probe type: the facts the
/// manifest must not contradict (rule R7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeMeta {
    /// The registered name.
    pub name: &'static str,
    /// The tiers that run it.
    pub tags: TagSet,
    /// Its deadline.
    pub timeout: Duration,
    /// What a failure reports.
    pub failure_status: FailureStatus,
}

/// A probe type annotated with `#[zb_health(...)]`. Implemented by the
/// attribute; a manifest's `kind: custom` entries require it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a #[zb_health] probe",
    label = "named by a `kind: custom` entry of the health manifest",
    note = "annotate the struct: `#[zb_health::zb_health(name = \"...\", tags = [ready])]`, and implement `zb_health::Probe` for it"
)]
pub trait ZbHealthProbe: Probe + Sized {
    /// The attribute's metadata.
    const META: ProbeMeta;

    /// A registration carrying the attribute's metadata.
    fn registration(self) -> ProbeRegistration {
        ProbeRegistration::new(Self::META.name, self)
            .tags(Self::META.tags)
            .timeout(Self::META.timeout)
            .failure_status(Self::META.failure_status)
    }
}

/// Support for generated code; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use std::time::Duration;

    /// `const` string equality, for compile-time comparisons of names.
    pub const fn str_eq(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    /// `const` equality of tag sets.
    pub const fn tags_eq(a: zb_health_spec::TagSet, b: zb_health_spec::TagSet) -> bool {
        a.bits() == b.bits()
    }
}
