//! The rules of the `grpc.health.v1` service mapping (AT-7): which gRPC
//! service names answer from which tier or probe. The runtime builder
//! (`zb_health::grpc::server::GrpcHealth`) and the manifest reader call
//! these same functions.

use std::time::Duration;

use crate::rules::{Rule, Violations};
use crate::suggest::{did_you_mean, hint};

/// The service name that stands for the whole server in `grpc.health.v1`;
/// it answers from the `ready` tier unless mapped otherwise.
pub const OVERALL_SERVICE: &str = "";

/// The schedule period when none is given: how often the one background
/// evaluation feeding every `Watch` stream runs.
pub const DEFAULT_WATCH_PERIOD: Duration = Duration::from_secs(1);

/// R9: a gRPC service name is `""` (the whole server) or dot-separated
/// segments of ASCII letters, digits, `_` and `-` (`plant.v1.Writes`), at
/// most 200 bytes: what `grpc_health_probe -service` and a load balancer's
/// health-check config can spell without escaping.
pub fn check_grpc_service_name<L>(name: &str, location: L, sink: &mut Violations<L>) {
    if name == OVERALL_SERVICE {
        return;
    }
    let segment_ok = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
    };
    if name.len() > 200 || !name.split('.').all(segment_ok) {
        sink.push(
            Rule::ProbeName,
            location,
            format!("gRPC service name `{name}` is not a dotted name"),
            "use `\"\"` for the whole server or dot-separated ASCII letters, digits, `_` and `-`, such as `plant.v1.Writes`",
        );
    }
}

/// R4: a service mapped to a single probe names a registered probe.
/// `known` are the probes there are (the manifest's, or the registry's).
pub fn check_grpc_probe_target<'a, L>(
    service: &str,
    probe: &str,
    known: impl IntoIterator<Item = &'a str> + Clone,
    location: L,
    sink: &mut Violations<L>,
) {
    if known.clone().into_iter().any(|k| k == probe) {
        return;
    }
    sink.push(
        Rule::Unknown,
        location,
        format!("gRPC service `{service}` maps to probe `{probe}`, which is not registered"),
        format!(
            "name a probe of this registry or manifest{}",
            hint(did_you_mean(probe, known))
        ),
    );
}

/// R5: the watch schedule's period is at least 1 ms; a zero period would
/// evaluate in a busy loop.
pub fn check_grpc_period<L>(period: Duration, location: L, sink: &mut Violations<L>) {
    if period.as_millis() == 0 {
        sink.push(
            Rule::Duration,
            location,
            "the gRPC watch period is under 1 ms",
            "give a period such as `1s`: one evaluation per period feeds every Watch stream",
        );
    }
}

/// R3: one service name is mapped once.
pub fn check_grpc_unique_services<'a, L: 'a>(
    names: impl IntoIterator<Item = (&'a str, L)>,
    sink: &mut Violations<L>,
) {
    for (name, loc) in crate::rules::names::repeats(names) {
        sink.push(
            Rule::DuplicateName,
            loc,
            format!("gRPC service `{name}` is mapped twice"),
            "map each service name once",
        );
    }
}

/// Whether `name` is one of `names`; an empty entry (a name not known
/// where the table was built) never matches. For the checks `manifest!`
/// generates when a probe's name is on its attribute (R4).
pub const fn names_contain(names: &[&str], name: &str) -> bool {
    let mut i = 0;
    while i < names.len() {
        if !names[i].is_empty() && crate::facts::same_name(names[i], name) {
            return true;
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(f: impl FnOnce(&mut Violations<()>)) -> Vec<Rule> {
        let mut sink = Violations::new();
        f(&mut sink);
        sink.into_result()
            .err()
            .unwrap_or_default()
            .iter()
            .map(|v| v.rule)
            .collect()
    }

    #[test]
    fn service_names_are_empty_or_dotted() {
        for ok in ["", "plant.v1.Writes", "plant.db", "a_b-c"] {
            assert_eq!(rules(|s| check_grpc_service_name(ok, (), s)), [], "{ok}");
        }
        for bad in [".", "a..b", "a.", "a b", "plant/Writes", &"x".repeat(201)] {
            assert_eq!(
                rules(|s| check_grpc_service_name(bad, (), s)),
                [Rule::ProbeName],
                "{bad}"
            );
        }
    }

    #[test]
    fn a_probe_target_must_be_registered_with_a_hint() {
        let known = ["database", "disk-space"];
        assert_eq!(
            rules(|s| check_grpc_probe_target("db", "database", known, (), s)),
            []
        );
        let mut sink = Violations::new();
        check_grpc_probe_target("db", "databse", known, (), &mut sink);
        let v = sink.into_result().unwrap_err();
        assert_eq!(v[0].rule, Rule::Unknown);
        assert!(
            v[0].help.contains("did you mean `database`"),
            "{}",
            v[0].help
        );
    }

    #[test]
    fn period_and_duplicates() {
        assert_eq!(
            rules(|s| check_grpc_period(Duration::ZERO, (), s)),
            [Rule::Duration]
        );
        assert_eq!(
            rules(|s| check_grpc_period(Duration::from_millis(1), (), s)),
            []
        );
        assert_eq!(
            rules(|s| check_grpc_unique_services([("a", ()), ("", ()), ("a", ())], s)),
            [Rule::DuplicateName]
        );
    }
}

#[cfg(all(test, feature = "manifest"))]
mod manifest_tests {
    use crate::manifest::{GrpcTargetDecl, parse_manifest};
    use crate::{Rule, Tag};

    const PROBES: &str = "service: plant\nprobes:\n  - { name: database, kind: database }\n";

    fn violations(grpc: &str) -> Vec<(Rule, String)> {
        let yaml = format!("{PROBES}{grpc}");
        parse_manifest(&yaml)
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|v| (v.rule, v.location.to_string()))
            .collect()
    }

    #[test]
    fn the_section_maps_services_to_tiers_and_probes() {
        let yaml = format!(
            "{PROBES}grpc:\n  period: 250ms\n  services:\n    \"\": active\n    plant.v1.Writes: active\n    plant.db: {{ probe: database }}\n"
        );
        let m = parse_manifest(&yaml).unwrap();
        let grpc = m.grpc.unwrap();
        assert_eq!(grpc.period(), std::time::Duration::from_millis(250));
        let got: Vec<(&str, String)> = grpc
            .services
            .iter()
            .map(|s| {
                let target = match &s.target {
                    GrpcTargetDecl::Tier(t) => t.value.as_str().to_owned(),
                    GrpcTargetDecl::Probe(p) => format!("probe {}", p.value),
                };
                (s.name.value.as_str(), target)
            })
            .collect();
        assert_eq!(
            got,
            [
                ("", "active".to_owned()),
                ("plant.v1.Writes", "active".to_owned()),
                ("plant.db", "probe database".to_owned()),
            ]
        );
        assert!(matches!(
            grpc.services[0].target,
            GrpcTargetDecl::Tier(t) if t.value == Tag::Active
        ));
        let bare = parse_manifest(&format!("{PROBES}grpc: {{}}\n")).unwrap();
        assert_eq!(
            bare.grpc.unwrap().period(),
            super::DEFAULT_WATCH_PERIOD,
            "default period"
        );
        assert!(parse_manifest(PROBES).unwrap().grpc.is_none());
    }

    #[test]
    fn every_mistake_is_reported_at_its_value() {
        let found = violations(
            "grpc:\n  period: 0ms\n  port: 50051\n  services:\n    plant..db: { probe: databse }\n    w: writes\n    x: { tier: ready }\n    y: 3\n",
        );
        assert_eq!(
            found,
            [
                (Rule::Duration, "5:11".to_owned()),
                (Rule::Unknown, "6:3".to_owned()),
                (Rule::ProbeName, "8:5".to_owned()),
                (Rule::Unknown, "8:25".to_owned()),
                (Rule::Unknown, "9:8".to_owned()),
                (Rule::MissingKey, "10:8".to_owned()),
                (Rule::Unknown, "10:10".to_owned()),
                (Rule::ValueType, "11:8".to_owned()),
            ]
        );
    }

    #[test]
    fn a_service_written_twice_is_a_duplicate_key() {
        let found = violations("grpc:\n  services: { a: ready, a: active }\n");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, Rule::DuplicateKey);
    }

    #[test]
    fn an_unnamed_custom_probe_leaves_the_target_to_the_generated_check() {
        let yaml = "service: plant\nprobes:\n  - { kind: custom, type: crate::Db }\ngrpc:\n  services: { db: { probe: database } }\n";
        assert!(parse_manifest(yaml).is_ok());
    }

    #[test]
    fn names_contain_skips_unknown_entries() {
        assert!(super::names_contain(&["", "database"], "database"));
        assert!(!super::names_contain(&["", "database"], ""));
        assert!(!super::names_contain(&["disk"], "database"));
    }
}
