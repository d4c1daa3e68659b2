use std::fmt;

use crate::Tag;

/// The paths of the HTTP health endpoints: the three tiers (ZB-1.1, ZB-5)
/// and the startup path (an addition to the seeds, see `spec/lifecycle.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointPaths {
    /// Path of the ready tier.
    pub ready: String,
    /// Path of the active tier.
    pub active: String,
    /// Path of the live tier.
    pub live: String,
    /// Path of the startup endpoint: 200 once every startup gate is ready
    /// and every watchdog has beaten once; it never reads a dependency, so
    /// a kubelet `startupProbe` on it cannot restart a pod over one.
    pub started: String,
}

/// One HTTP health endpoint: a tier, or the startup path. R6 checks their
/// paths together, so no two can collide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// One of the three tiers.
    Tier(Tag),
    /// The startup path ([`EndpointPaths::started`]).
    Started,
}

impl Endpoint {
    /// Every endpoint, the tiers first in [`Tag::ALL`] order.
    pub const ALL: [Endpoint; 4] = [
        Endpoint::Tier(Tag::Ready),
        Endpoint::Tier(Tag::Active),
        Endpoint::Tier(Tag::Live),
        Endpoint::Started,
    ];

    /// Its key under `endpoints` in a manifest: `ready`, `active`, `live`,
    /// `started`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Endpoint::Tier(tag) => tag.as_str(),
            Endpoint::Started => "started",
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Tag> for Endpoint {
    fn from(tag: Tag) -> Self {
        Endpoint::Tier(tag)
    }
}

impl EndpointPaths {
    /// The normative ZB paths: `/health/ready`, `/health/active`, `/healthz`,
    /// and `/health/started` beside the tiers.
    pub fn zb() -> Self {
        Self {
            ready: "/health/ready".into(),
            active: "/health/active".into(),
            live: "/healthz".into(),
            started: "/health/started".into(),
        }
    }

    /// The BE-HLTH-009 preset: `/healthz/ready` and `/healthz/live`. That
    /// document has no active tier nor startup path; `/healthz/active` and
    /// `/healthz/started` keep them beside the others.
    pub fn be_hlth_009() -> Self {
        Self {
            ready: "/healthz/ready".into(),
            active: "/healthz/active".into(),
            live: "/healthz/live".into(),
            started: "/healthz/started".into(),
        }
    }

    /// The path of `tag`'s tier.
    pub fn get(&self, tag: Tag) -> &str {
        match tag {
            Tag::Ready => &self.ready,
            Tag::Active => &self.active,
            Tag::Live => &self.live,
        }
    }

    /// Mutable access to the path of `tag`'s tier.
    pub fn get_mut(&mut self, tag: Tag) -> &mut String {
        match tag {
            Tag::Ready => &mut self.ready,
            Tag::Active => &mut self.active,
            Tag::Live => &mut self.live,
        }
    }

    /// The path of `endpoint`.
    pub fn endpoint(&self, endpoint: Endpoint) -> &str {
        match endpoint {
            Endpoint::Tier(tag) => self.get(tag),
            Endpoint::Started => &self.started,
        }
    }

    /// Mutable access to the path of `endpoint`.
    pub fn endpoint_mut(&mut self, endpoint: Endpoint) -> &mut String {
        match endpoint {
            Endpoint::Tier(tag) => self.get_mut(tag),
            Endpoint::Started => &mut self.started,
        }
    }

    /// The endpoint served on `path`, if any.
    pub fn endpoint_of(&self, path: &str) -> Option<Endpoint> {
        Endpoint::ALL
            .into_iter()
            .find(|&e| self.endpoint(e) == path)
    }
}

impl Default for EndpointPaths {
    fn default() -> Self {
        Self::zb()
    }
}
