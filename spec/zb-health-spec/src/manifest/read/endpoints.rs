//! The `endpoints` keys that say what the bodies show: `format`
//! (BE-HLTH-001), `disclosure` (BE-HLTH-007), `cluster_ready` (AT-8) and
//! `cluster_addresses`, and `authorized` (the level shown to a request
//! with the bearer token); `disclosure` and `authorized` are read the same
//! way under `management`.
//! The tier paths are read in `mod.rs`.

use super::super::tree::{Node, Value, shown};
use super::{Fields, Levels, Reader};
use crate::manifest::{Located, Location, ProbeDecl, ResponsesDecl};
use crate::{
    Disclosure, ResponseFormat, Rule, Tag,
    rules::missing_key,
    suggest::{did_you_mean, hint},
    vocab::Kind,
};

/// `endpoints.cluster_ready` as written, resolved against the probes once
/// they are read.
pub(super) enum ClusterReady {
    /// Absent or `false`.
    Off,
    /// `true`: the one `cluster-membership` probe of the ready tier.
    TheMembershipProbe(Location),
    /// A probe name.
    Named(Located<String>),
}

impl Reader {
    /// `format`, `disclosure` (one level for every tier, or a mapping from
    /// tier to level) and `cluster_ready` of the `endpoints` section.
    pub(super) fn responses(&mut self, section: &Fields) -> (ResponsesDecl, ClusterReady) {
        let format = self.value(section, "format", Self::keyword::<ResponseFormat>);
        let (disclosure, authorized) = self.levels(section);
        let decl = ResponsesDecl {
            format,
            disclosure,
            authorized,
            cluster_addresses: self.value(section, "cluster_addresses", Self::boolean),
            cluster_ready: None,
        };
        let cluster_ready =
            self.value(section, "cluster_ready", |r, what, node| match node.value {
                Value::Bool(false) => None,
                Value::Bool(true) => Some(ClusterReady::TheMembershipProbe(node.loc)),
                _ => r.string(what, node).map(ClusterReady::Named),
            });
        (decl, cluster_ready.unwrap_or(ClusterReady::Off))
    }

    /// `disclosure` and `authorized` of `section` (`endpoints` or
    /// `management`), the same keys under both: each tier's level (`None`
    /// where unset: `full`), and the level a request with the bearer token
    /// sees, resolved against it ([`Reader::authorized`]).
    pub(super) fn levels(&mut self, section: &Fields) -> (Levels, Levels) {
        let disclosure = self
            .value(section, "disclosure", |r, what, node| {
                Some(r.disclosure(what, node))
            })
            .unwrap_or_default();
        let public = disclosure.map(|d| d.map(|d| d.value).unwrap_or_default());
        let authorized = self
            .value(section, "authorized", |r, what, node| {
                Some(r.authorized(what, node, public))
            })
            .unwrap_or_default();
        (disclosure, authorized)
    }

    /// `disclosure: names`, or `disclosure: { ready: names, live: status }`
    /// (a tier left out is `full`); `what` is the key, e.g.
    /// `` `endpoints.disclosure` ``.
    fn disclosure(&mut self, what: &str, node: &Node) -> Levels {
        if let Value::Map(_) = node.value {
            let Some(mut tiers) = self.mapping(what, node, &Tag::NAMES) else {
                return [None; 3];
            };
            tiers.path = Some(format!("{}.", what.trim_matches('`')));
            let level = |tag: Tag| self.value(&tiers, tag.as_str(), Self::keyword::<Disclosure>);
            return Tag::ALL.map(level);
        }
        let level = self.keyword::<Disclosure>(what, node);
        [level; 3]
    }

    /// `authorized: full` (every tier whose public level it shows more
    /// than), or `authorized: { ready: full }` (each stated tier, which
    /// must gain from it): the level a request with the bearer token sees.
    /// `public` is the port's level per tier.
    fn authorized(&mut self, what: &str, node: &Node, public: [Disclosure; 3]) -> Levels {
        let written = self.disclosure(what, node);
        let pair = |d: Option<Located<Disclosure>>| d.map(|d| (d.value, d.location));
        let (every_tier, per_tier) = match node.value {
            Value::Map(_) => (None, written.map(pair)),
            _ => (pair(written[0]), [None; 3]),
        };
        let levels = crate::rules::resolve_authorized(public, every_tier, per_tier, &mut self.sink);
        std::array::from_fn(|i| {
            levels[i]
                .zip(written[i])
                .map(|(l, w)| Located::new(l, w.location))
        })
    }

    /// Resolves `cluster_ready` to the name of the probe whose entry
    /// `clusterReady` reads: a probe of the manifest (R4), a
    /// `cluster-membership` or `custom` one (R7) serving the ready tier
    /// (R7); `true` needs exactly one `cluster-membership` probe on the
    /// ready tier (R11 without one, R7 with several).
    pub(super) fn cluster_ready(
        &mut self,
        cluster_ready: ClusterReady,
        probes: &[ProbeDecl],
    ) -> Option<Located<String>> {
        let on_ready = |p: &&ProbeDecl| p.effective_tags().is_none_or(|t| t.contains(Tag::Ready));
        match cluster_ready {
            ClusterReady::Off => None,
            ClusterReady::TheMembershipProbe(at) => {
                let membership: Vec<&Located<String>> = probes
                    .iter()
                    .filter(|p| p.kind.kind() == Kind::ClusterMembership)
                    .filter(on_ready)
                    .filter_map(|p| p.name.as_ref())
                    .collect();
                match membership.as_slice() {
                    [one] => Some(Located::new(one.value.clone(), at)),
                    [] => {
                        missing_key(
                            "`endpoints.cluster_ready` reads a `cluster-membership` probe on the ready tier, and the manifest has none",
                            "add one, e.g. `- { name: akka-cluster, kind: cluster-membership }`, or name the probe to read: `cluster_ready: <probe name>`",
                            at,
                            &mut self.sink,
                        );
                        None
                    }
                    several => {
                        let names: Vec<String> =
                            several.iter().map(|n| format!("`{}`", n.value)).collect();
                        self.sink.push(
                            Rule::Contradiction,
                            at,
                            format!(
                                "`endpoints.cluster_ready: true` is ambiguous: {} are all `cluster-membership` probes on the ready tier",
                                names.join(", ")
                            ),
                            "name the probe whose entry `clusterReady` reads: `cluster_ready: <probe name>`",
                        );
                        None
                    }
                }
            }
            ClusterReady::Named(name) => {
                let named = |p: &&ProbeDecl| p.name.as_ref().is_some_and(|n| n.value == name.value);
                let (rule, message, help) = match probes.iter().find(named) {
                    None => {
                        let names = probes.iter().filter_map(|p| p.name.as_ref());
                        let names = names.map(|n| n.value.as_str());
                        (
                            Rule::Unknown,
                            format!(
                                "`endpoints.cluster_ready` names `{}`, which is not a probe of the manifest",
                                shown(&name.value)
                            ),
                            format!(
                                "name the cluster-membership probe whose entry `clusterReady` reads{}",
                                hint(did_you_mean(&name.value, names))
                            ),
                        )
                    }
                    Some(p) if !matches!(p.kind.kind(), Kind::ClusterMembership | Kind::Custom) => (
                        Rule::Contradiction,
                        format!(
                            "`endpoints.cluster_ready` names `{}`, a `{}` probe; `clusterReady` reads a cluster-membership probe",
                            name.value,
                            p.kind.kind()
                        ),
                        "name a `cluster-membership` probe (or a custom probe that checks membership)".into(),
                    ),
                    Some(p) if !on_ready(&p) => (
                        Rule::Contradiction,
                        format!(
                            "`endpoints.cluster_ready` names `{}`, which is not on the ready tier, so its entry is never in the ready report",
                            name.value
                        ),
                        "tag the probe `ready`, or name one that is".into(),
                    ),
                    Some(_) => return Some(name),
                };
                self.sink.push(rule, name.location, message, help);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::manifest::{Location, parse_manifest};
    use crate::{Disclosure, ResponseFormat, Rule, Tag, Violation};

    const PROBES: &str = "\
probes:
  - { name: database, kind: database }
  - { name: akka-cluster, kind: cluster-membership }
  - { name: node, kind: active-node }
";

    fn parse(endpoints: &str) -> Result<crate::manifest::Manifest, Vec<Violation<Location>>> {
        parse_manifest(&format!("service: s\nendpoints: {endpoints}\n{PROBES}"))
    }

    /// The one violation of `endpoints`, its rule and its line:column.
    fn only(endpoints: &str, extra: &str) -> (Rule, String, String) {
        let yaml = format!("service: s\nendpoints: {endpoints}\n{PROBES}{extra}");
        let v = parse_manifest(&yaml).expect_err("a violation");
        assert_eq!(v.len(), 1, "{v:#?}");
        let v = &v[0];
        (v.rule, v.location.to_string(), v.message.clone())
    }

    #[test]
    fn defaults_are_the_canonical_full_body_without_cluster_ready() {
        let m = parse("{ preset: zb }").unwrap();
        assert_eq!(m.responses.format(), ResponseFormat::Zb);
        for tag in Tag::ALL {
            assert_eq!(m.responses.disclosure(tag), Disclosure::Full);
        }
        assert_eq!(m.responses.cluster_ready, None);
    }

    #[test]
    fn one_level_for_every_tier_or_one_per_tier() {
        let m = parse("{ format: pass-fail, disclosure: names }").unwrap();
        assert_eq!(m.responses.format(), ResponseFormat::PassFail);
        for tag in Tag::ALL {
            assert_eq!(m.responses.disclosure(tag), Disclosure::Names);
        }
        let m = parse("{ disclosure: { ready: names, live: status } }").unwrap();
        assert_eq!(
            Tag::ALL.map(|t| m.responses.disclosure(t)),
            [Disclosure::Names, Disclosure::Full, Disclosure::Status]
        );
    }

    #[test]
    fn authorized_shows_more_than_the_public_level_or_is_r7() {
        let m = parse("{ disclosure: { ready: names, live: status }, authorized: full }").unwrap();
        assert_eq!(
            m.responses.authorized.map(|l| l.map(|l| l.value)),
            [Some(Disclosure::Full), None, Some(Disclosure::Full)],
            "one level: only the tiers it shows more on"
        );
        let m = parse("{ disclosure: status, authorized: { ready: names } }").unwrap();
        assert_eq!(
            m.responses.authorized.map(|l| l.map(|l| l.value)),
            [Some(Disclosure::Names), None, None]
        );
        let (rule, at, message) = only("{ authorized: full }", "");
        assert_eq!(
            (rule, at.as_str()),
            (Rule::Contradiction, "2:26"),
            "{message}"
        );
        let (rule, _, message) = only(
            "{ disclosure: { ready: names }, authorized: { active: full } }",
            "",
        );
        assert_eq!(rule, Rule::Contradiction, "{message}");
        assert!(message.contains("`active`"), "{message}");
        let (rule, _, _) = only("{ disclosure: names, authorized: everything }", "");
        assert_eq!(rule, Rule::Unknown);
        let yaml = format!(
            "service: s\nmanagement: {{ port: 8081, disclosure: status, authorized: full }}\n{PROBES}"
        );
        let m = parse_manifest(&yaml).unwrap();
        assert_eq!(
            m.management_authorized.map(|l| l.map(|l| l.value)),
            [Some(Disclosure::Full); 3]
        );
        let yaml =
            format!("service: s\nmanagement: {{ disclosure: names, authorized: full }}\n{PROBES}");
        let v = parse_manifest(&yaml).unwrap_err();
        assert_eq!(v[0].rule, Rule::MissingKey, "needs the port: {v:#?}");
    }

    #[test]
    fn cluster_ready_true_reads_the_one_membership_probe() {
        let m = parse("{ cluster_ready: true }").unwrap();
        let name = m.responses.cluster_ready.unwrap();
        assert_eq!(
            (name.value.as_str(), name.location.to_string().as_str()),
            ("akka-cluster", "2:29")
        );
        let m = parse("{ cluster_ready: akka-cluster }").unwrap();
        assert_eq!(m.responses.cluster_ready.unwrap().value, "akka-cluster");
        let m = parse("{ cluster_ready: false }").unwrap();
        assert_eq!(m.responses.cluster_ready, None);
    }

    #[test]
    fn unknown_levels_formats_and_tiers_are_r4() {
        let (rule, at, message) = only("{ disclosure: nmaes }", "");
        assert_eq!((rule, at.as_str()), (Rule::Unknown, "2:26"), "{message}");
        let (rule, _, _) = only("{ format: ietf }", "");
        assert_eq!(rule, Rule::Unknown);
        let (rule, _, message) = only("{ disclosure: { raedy: names } }", "");
        assert_eq!(rule, Rule::Unknown, "{message}");
        let (rule, _, _) = only("{ disclosure: [names] }", "");
        assert_eq!(rule, Rule::ValueType);
    }

    #[test]
    fn cluster_ready_must_name_a_ready_membership_probe() {
        let (rule, at, message) = only("{ cluster_ready: akka-clustr }", "");
        assert_eq!((rule, at.as_str()), (Rule::Unknown, "2:29"));
        assert!(message.contains("akka-clustr"), "{message}");
        let (rule, _, message) = only("{ cluster_ready: database }", "");
        assert_eq!(rule, Rule::Contradiction, "{message}");
        let (rule, _, message) = only(
            "{ cluster_ready: other }",
            "  - { name: other, kind: cluster-membership, tags: [active] }\n",
        );
        assert_eq!(rule, Rule::Contradiction, "{message}");
        assert!(message.contains("not on the ready tier"), "{message}");
        let (rule, _, message) = only(
            "{ cluster_ready: true }",
            "  - { name: second, kind: cluster-membership }\n",
        );
        assert_eq!(rule, Rule::Contradiction, "{message}");
        assert!(message.contains("ambiguous"), "{message}");
        let v = parse_manifest("service: s\nendpoints: { cluster_ready: true }\n").unwrap_err();
        assert_eq!(
            (v.len(), v[0].rule, v[0].location.to_string()),
            (1, Rule::MissingKey, "2:29".to_owned())
        );
    }
}
