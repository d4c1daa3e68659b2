use std::fmt;

use crate::vocab::Keyword;
use crate::vocab::keyword;

/// The health of one probe or of a whole tier (ZB-1.2).
///
/// The order is the severity: `Healthy < Degraded < Unhealthy`, so a tier's
/// status is simply the maximum of its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HealthStatus {
    /// Everything the probe checks works.
    Healthy,
    /// Still serving, but impaired. Maps to HTTP 200: orchestrators should
    /// only remove a node on hard failure (ZB-1.2).
    Degraded,
    /// Cannot serve. Maps to HTTP 503 on every tier ([`Self::http_code`]).
    Unhealthy,
}

impl HealthStatus {
    /// All statuses, mildest first.
    pub const ALL: [HealthStatus; 3] = [Self::Healthy, Self::Degraded, Self::Unhealthy];

    /// The canonical spelling used in the JSON body (ZB-3).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Healthy => "Healthy",
            Self::Degraded => "Degraded",
            Self::Unhealthy => "Unhealthy",
        }
    }

    /// The aggregate of a tier: the worst status, and `Healthy` for an empty
    /// tier (AT-2).
    ///
    /// This is the one predicate every endpoint, writer and the gRPC health
    /// service use, so "no probes" means the same thing everywhere: nothing
    /// gates the tier.
    pub fn aggregate<I: IntoIterator<Item = HealthStatus>>(statuses: I) -> HealthStatus {
        statuses.into_iter().max().unwrap_or(HealthStatus::Healthy)
    }

    /// The severity as a number, `Healthy` 0, `Degraded` 1, `Unhealthy` 2:
    /// the one encoding every compact store of a status uses (an atomic
    /// slot, the history's rings, the gauges).
    pub const fn severity(self) -> u8 {
        // The variants are declared mildest first.
        self as u8
    }

    /// The status of a [`severity`](Self::severity); `None` past 2.
    pub const fn from_severity(severity: u8) -> Option<HealthStatus> {
        match severity {
            0 => Some(Self::Healthy),
            1 => Some(Self::Degraded),
            2 => Some(Self::Unhealthy),
            _ => None,
        }
    }

    /// Whether a load balancer should keep sending traffic: `Healthy` and
    /// `Degraded` serve, `Unhealthy` does not (ZB-1.2).
    pub const fn is_serving(self) -> bool {
        !matches!(self, Self::Unhealthy)
    }

    /// The HTTP status code of an answer with this status, on every tier
    /// (ZB-1.2): 200 while serving, 503 when `Unhealthy`. `live` is
    /// `Unhealthy` only for a stalled watchdog or a restart request.
    pub const fn http_code(self) -> u16 {
        if self.is_serving() { 200 } else { 503 }
    }

    /// Parses the manifest spelling, exactly and lower-case, as
    /// [`FailureStatus::parse`] does; the capitalised [`as_str`](Self::as_str)
    /// form is the JSON body's, never the manifest's.
    pub fn parse(s: &str) -> Option<HealthStatus> {
        <Self as Keyword>::from_keyword(s)
    }
}

impl Keyword for HealthStatus {
    const WHAT: &'static str = "status";
    const ALL: &'static [Self] = &HealthStatus::ALL;

    /// The manifest spelling: `healthy`, `degraded`, `unhealthy`.
    fn keyword(self) -> &'static str {
        match self {
            Self::Healthy => "healthy",
            Self::Degraded => "degraded",
            Self::Unhealthy => "unhealthy",
        }
    }
}

impl fmt::Display for HealthStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::HealthStatus::{self, *};

    #[test]
    fn empty_tier_is_healthy() {
        assert_eq!(HealthStatus::aggregate([]), Healthy);
    }

    #[test]
    fn aggregate_is_the_worst_entry() {
        assert_eq!(HealthStatus::aggregate([Healthy, Degraded]), Degraded);
        assert_eq!(
            HealthStatus::aggregate([Degraded, Unhealthy, Healthy]),
            Unhealthy
        );
        assert_eq!(HealthStatus::aggregate([Healthy, Healthy]), Healthy);
    }

    #[test]
    fn degraded_still_serves_unhealthy_does_not() {
        assert!(Healthy.is_serving());
        assert!(Degraded.is_serving());
        assert!(!Unhealthy.is_serving());
        assert_eq!(Healthy.http_code(), 200);
        assert_eq!(Degraded.http_code(), 200);
        assert_eq!(Unhealthy.http_code(), 503);
    }

    #[test]
    fn parse_accepts_the_manifest_spelling_only() {
        assert_eq!(HealthStatus::parse("degraded"), Some(Degraded));
        assert_eq!(HealthStatus::parse("Unhealthy"), None);
        assert_eq!(HealthStatus::parse("sick"), None);
    }
}

/// The status a probe reports when it fails: it errs, panics, times out or
/// returns `Unhealthy` (AT-3, AT-4).
///
/// Only two values make sense, so only two exist: `Degraded` is how an
/// *optional* dependency is declared, so that its outage never makes the
/// instance unready (BE-HLTH-003), as ASP.NET Core's `failureStatus` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FailureStatus {
    /// A failure fails the tier (HTTP 503). The default.
    #[default]
    Unhealthy,
    /// A failure is reported but keeps the tier serving (HTTP 200).
    Degraded,
}

impl FailureStatus {
    /// The status a failed entry gets.
    pub const fn status(self) -> HealthStatus {
        match self {
            FailureStatus::Unhealthy => HealthStatus::Unhealthy,
            FailureStatus::Degraded => HealthStatus::Degraded,
        }
    }
}

keyword!(FailureStatus, "failure status", {
    Unhealthy => "unhealthy",
    Degraded => "degraded",
});
