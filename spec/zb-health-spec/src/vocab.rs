//! The spec's vocabulary: every closed set of words a manifest or an
//! attribute may write, each defined once as an enum with its spellings.
//!
//! The parser, the `#[zb_health]` attribute, the "did you mean" hints and
//! the schema test all go through [`Keyword`], so a word added to an enum is
//! accepted, suggested and checked against the schema everywhere at once.
//!
//! Spellings are exact and lower-case (`degraded`, not `Degraded`), as the
//! schema has them; the capitalised `HealthStatus` names belong to the JSON
//! body only.

use crate::suggest::did_you_mean;

/// A closed set of words with one spelling each.
pub trait Keyword: Copy + Eq + Sized + 'static {
    /// What the word is called in messages: `tag`, `kind`, `scope`.
    const WHAT: &'static str;
    /// Every value, in the order the docs list them.
    const ALL: &'static [Self];

    /// The manifest/attribute spelling.
    fn keyword(self) -> &'static str;

    /// The value spelt exactly `s`, if any.
    fn from_keyword(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.keyword() == s)
    }

    /// Every spelling, in [`ALL`](Keyword::ALL) order.
    fn keywords() -> impl Iterator<Item = &'static str> {
        Self::ALL.iter().map(|v| v.keyword())
    }

    /// The closest spelling to a misspelt `s`, if it looks like a typo.
    fn suggest(s: &str) -> Option<&'static str> {
        did_you_mean(s, Self::keywords())
    }
}

/// Declares the [`Keyword`] table of an enum, plus the inherent `NAMES`,
/// `ALL`, `as_str` and `parse` a caller expects, from one list of
/// `Variant => "spelling"` pairs; or, given the values (`&Tag::ALL`), only
/// the [`Keyword`] and `Display` impls over the enum's own `as_str`.
macro_rules! keyword {
    ($ty:ident, $what:literal, { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in the order the docs list them.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];
            /// Every spelling, in [`ALL`](Self::ALL) order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The manifest/attribute spelling.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $text),+
                }
            }

            /// Parses the exact (lower-case) spelling.
            pub fn parse(s: &str) -> Option<Self> {
                <Self as $crate::vocab::Keyword>::from_keyword(s)
            }
        }

        $crate::vocab::keyword!($ty, $what, $ty::ALL);
    };
    ($ty:ident, $what:literal, $all:expr) => {
        impl $crate::vocab::Keyword for $ty {
            const WHAT: &'static str = $what;
            const ALL: &'static [Self] = $all;

            fn keyword(self) -> &'static str {
                self.as_str()
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use keyword;

/// The `kind` of a manifest probe: the built-in probes of ZB-2.1–2.4 and AT-5,
/// then `custom` for the application's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `database`: that the database is usable, "can connect" (ZB-2.1).
    Database,
    /// `cluster-membership`: this node's membership status (ZB-2.2).
    ClusterMembership,
    /// `cluster-transport`: isolation from the expected peers (AT-5).
    ClusterTransport,
    /// `active-node`: is this node the oldest `Up` member in scope (ZB-2.3).
    ActiveNode,
    /// `grpc`: a gRPC dependency (ZB-2.4).
    Grpc,
    /// `http`: an upstream HTTP dependency, judged by its status code
    /// (and optionally a body substring).
    Http,
    /// `disk`: the free space of the filesystem holding a path.
    Disk,
    /// `redis`: a Redis server, answering `PING` on a connection of the
    /// probe's own.
    Redis,
    /// `certificate`: the expiry of the certificates in PEM files.
    Certificate,
    /// `custom`: the application's own `#[zb_health]` struct.
    Custom,
}

keyword!(Kind, "kind", {
    Database => "database",
    ClusterMembership => "cluster-membership",
    ClusterTransport => "cluster-transport",
    ActiveNode => "active-node",
    Grpc => "grpc",
    Http => "http",
    Disk => "disk",
    Redis => "redis",
    Certificate => "certificate",
    Custom => "custom",
});

impl Kind {
    /// The tags a probe of this kind has when the manifest gives none:
    /// `active` for the active-node check (ZB-2.3b), `ready` for every
    /// dependency (ZB-2.1, 2.2, 2.4), and `None` for `custom`, whose tags
    /// are its attribute's.
    pub const fn default_tags(self) -> Option<crate::TagSet> {
        match self {
            Kind::ActiveNode => Some(crate::TagSet::ACTIVE),
            Kind::Custom => None,
            _ => Some(crate::TagSet::READY),
        }
    }
}

/// The `scope` of an active-node probe: which members compete (ZB-2.3a).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Scope {
    /// `cluster`: every member.
    #[default]
    Cluster,
    /// `role`: the members of the listed roles, in order of preference.
    Role,
}

keyword!(Scope, "scope", {
    Cluster => "cluster",
    Role => "role",
});

/// `endpoints.preset`: a named set of tier paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Preset {
    /// `zb`: `/health/ready`, `/health/active`, `/healthz` (ZB-1.1).
    #[default]
    Zb,
    /// `be-hlth-009`: `/healthz/ready`, `/healthz/active`, `/healthz/live`.
    BeHlth009,
}

keyword!(Preset, "preset", {
    Zb => "zb",
    BeHlth009 => "be-hlth-009",
});

impl Preset {
    /// The preset's three tier paths.
    pub fn paths(self) -> crate::EndpointPaths {
        match self {
            Preset::Zb => crate::EndpointPaths::zb(),
            Preset::BeHlth009 => crate::EndpointPaths::be_hlth_009(),
        }
    }
}

/// The two body settings, public at the crate root only (one path per
/// public item): `crate::Disclosure` and `crate::ResponseFormat`.
pub(crate) mod body {
    /// How much of a tier's report its response shows (BE-HLTH-007), chosen
    /// per tier. No level ever shows raw error text: errors, panic messages
    /// and timeouts are fixed descriptions already in the report.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub enum Disclosure {
        /// `full`, the default: ZB's canonical body, every entry with the
        /// probe's fixed description and its `data` (ZB-3).
        #[default]
        Full,
        /// `names`: every entry's name, status and duration; `description` is
        /// null and `data` is left out, so the body is still valid ZB-3.
        Names,
        /// `status`: the aggregate only, with empty `entries`.
        Status,
    }

    keyword!(Disclosure, "disclosure", {
        Full => "full",
        Names => "names",
        Status => "status",
    });

    impl Disclosure {
        /// Whether this level shows more than `other`: `full` more than
        /// `names`, `names` more than `status`.
        pub const fn shows_more_than(self, other: Disclosure) -> bool {
            // The variants are declared from the most shown to the least.
            (self as u8) < (other as u8)
        }
    }

    /// The body format of every tier (BE-HLTH-001). Both are
    /// `application/json` with the same 200/503 mapping.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub enum ResponseFormat {
        /// `zb`, the default: ZB's canonical body, statuses `Healthy`,
        /// `Degraded`, `Unhealthy` (ZB-3).
        #[default]
        Zb,
        /// `pass-fail`: the same shape with the BE-HLTH-001 status field:
        /// `pass` (the tier answers 200) or `fail` (503); entries say `pass`,
        /// `warn` (Degraded) or `fail`.
        PassFail,
    }

    keyword!(ResponseFormat, "format", {
        Zb => "zb",
        PassFail => "pass-fail",
    });
}

pub(crate) use body::Disclosure;

/// The `data` keys that hold cluster addresses (ZB-2.3c's `selfAddress`
/// and `activeNode`). The application port's bodies leave them out unless
/// the manifest's `endpoints.cluster_addresses` (or
/// `ZbHealth::cluster_addresses`) says otherwise; the management port
/// shows them.
pub const CLUSTER_ADDRESS_KEYS: [&str; 2] = ["selfAddress", "activeNode"];

/// The probe settings that both the `#[zb_health]` attribute and a
/// manifest probe entry take, in the order messages list them. Written
/// once, so the two key lists cannot drift apart: the attribute adds only
/// `crate`, the manifest adds `kind` and each kind's options.
pub const PROBE_SETTING_KEYS: [&str; 12] = [
    "name",
    "tags",
    "timeout",
    "failure_status",
    "cache",
    "refresh",
    "max_staleness",
    "failure_threshold",
    "failing_for",
    "success_threshold",
    "shared",
    "restart_after",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FailureStatus, HealthStatus, MembershipPolicy, ResponseFormat, Tag};

    /// Every spelling parses back to its value, and nothing else does.
    fn round_trips<K: Keyword + std::fmt::Debug>() {
        for v in K::ALL {
            assert_eq!(K::from_keyword(v.keyword()), Some(*v));
            assert_eq!(K::from_keyword(&v.keyword().to_ascii_uppercase()), None);
        }
        let mut names: Vec<&str> = K::keywords().collect();
        names.dedup();
        assert_eq!(names.len(), K::ALL.len(), "{}", K::WHAT);
    }

    #[test]
    fn every_vocabulary_round_trips() {
        round_trips::<Tag>();
        round_trips::<Kind>();
        round_trips::<Scope>();
        round_trips::<Preset>();
        round_trips::<Disclosure>();
        round_trips::<ResponseFormat>();
        round_trips::<FailureStatus>();
        round_trips::<HealthStatus>();
        round_trips::<MembershipPolicy>();
    }

    #[test]
    fn suggestions_come_from_the_vocabulary() {
        assert_eq!(Kind::suggest("databse"), Some("database"));
        assert_eq!(FailureStatus::suggest("degarded"), Some("degraded"));
        assert_eq!(Preset::suggest("kubernetes"), None);
    }
}
