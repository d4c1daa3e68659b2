//! The rules' unit tests: each check on the values it accepts and on the
//! ones it refuses, with the rule and the location it reports.

use std::time::Duration;

use super::*;
use crate::paths::Endpoint;
use crate::status::FailureStatus;
use crate::tag::{Tag, TagSet};
use crate::vocab::Disclosure;
use crate::{SHUTDOWN_ENTRY, STARTUP_ENTRY, SpecError};

fn rules<L>(sink: Violations<L>) -> Vec<Rule> {
    sink.into_result()
        .err()
        .unwrap_or_default()
        .into_iter()
        .map(|v| v.rule)
        .collect()
}

#[test]
fn live_tag_is_refused_and_points_at_the_tag() {
    let mut s = Violations::new();
    check_probe_tags("db", &[(Tag::Ready, 1), (Tag::Live, 2)], 0, &mut s);
    let v = s.into_result().unwrap_err();
    assert_eq!(v.len(), 1);
    assert_eq!((v[0].rule, v[0].location), (Rule::LiveTag, 2));
}

#[test]
fn no_tags_is_its_own_rule() {
    let mut s = Violations::new();
    check_probe_tags("db", &[], (), &mut s);
    assert_eq!(rules(s), [Rule::NoTags]);
}

#[test]
fn cluster_size_is_at_least_one_node() {
    let mut s = Violations::new();
    assert_eq!(check_cluster_size("n", 0, (), &mut s), None);
    assert_eq!(check_cluster_size("n", -3, (), &mut s), None);
    assert_eq!(check_cluster_size("n", 1 << 40, (), &mut s), None);
    assert_eq!(check_cluster_size("n", 3, (), &mut s), Some(3));
    assert_eq!(rules(s), [Rule::ClusterSize; 3]);
}

#[test]
fn execution_policy_rules() {
    let ms = |n| Some(Duration::from_millis(n));
    let mut s = Violations::new();
    check_execution_policy("a", TagSet::READY, ms(0), None, None, (), &mut s);
    check_execution_policy("b", TagSet::READY, None, None, ms(5), (), &mut s);
    check_execution_policy("c", TagSet::READY, None, ms(5), ms(5), (), &mut s);
    check_execution_policy("d", TagSet::READY, ms(1), ms(5), None, (), &mut s);
    check_execution_policy("e", TagSet::ACTIVE, ms(1), None, None, (), &mut s);
    check_execution_policy("f", TagSet::ACTIVE, None, ms(1), None, (), &mut s);
    assert_eq!(
        rules(s),
        [
            Rule::Duration,
            Rule::RefreshPolicy,
            Rule::RefreshPolicy,
            Rule::RefreshPolicy,
            Rule::LiveAnswer,
            Rule::LiveAnswer,
        ]
    );
    let mut s = Violations::new();
    check_execution_policy("g", TagSet::READY, ms(1), None, None, (), &mut s);
    check_execution_policy("h", TagSet::READY, None, ms(5), ms(6), (), &mut s);
    check_execution_policy("i", TagSet::ACTIVE, None, None, None, (), &mut s);
    assert!(s.is_empty());
}

#[test]
fn codes_are_stable_and_distinct() {
    let codes: Vec<&str> = Rule::ALL.iter().map(|r| r.code()).collect();
    let expected: Vec<String> = (1..=27).map(|i| format!("R{i}")).collect();
    assert_eq!(codes, expected);
    let mut names: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), Rule::ALL.len());
}

#[test]
fn dependencies_name_other_probes_and_form_no_cycle() {
    let probe = |name: &'static str, deps: &[&'static str]| Dependent {
        name: Some(name),
        label: name,
        depends_on: deps.iter().map(|d| (*d, *d)).collect(),
    };
    let run = |probes: &[Dependent<'_, &'static str>]| {
        let mut sink = Violations::new();
        check_dependencies(probes, &mut sink);
        sink.into_result().err().unwrap_or_default()
    };
    // A diamond and a chain are fine; so is an unnamed dependent.
    let unnamed = Dependent {
        name: None,
        label: "crate::Cache",
        depends_on: vec![("a", "a")],
    };
    assert!(
        run(&[
            probe("a", &[]),
            probe("b", &["a"]),
            probe("c", &["a"]),
            probe("d", &["b", "c"]),
            unnamed,
        ])
        .is_empty()
    );
    let v = run(&[probe("a", &["b"]), probe("b", &["c"]), probe("c", &["b"])]);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!((v[0].rule, v[0].location), (Rule::DependencyCycle, "b"));
    assert!(v[0].message.contains("b -> c -> b"), "{}", v[0].message);
    let v = run(&[probe("a", &["a", "x"])]);
    let rules: Vec<Rule> = v.iter().map(|v| v.rule).collect();
    assert_eq!(rules, [Rule::DependencyCycle, Rule::UnknownDependency]);
    assert!(v[1].help.contains("there is no other probe"), "{v:#?}");
}

#[test]
fn spec_error_lists_every_violation() {
    let mut s = Violations::new();
    check_name("", (), &mut s);
    check_probe_tags("x", &[], (), &mut s);
    let err = SpecError::from(s.into_result().unwrap_err());
    assert_eq!(err.rules(), [Rule::ProbeName, Rule::NoTags]);
    assert_eq!(err.to_string().matches("error: ").count(), 2);
}

#[test]
fn timeouts_zero_absurd_and_above_the_orchestrator() {
    let mut s = Violations::new();
    check_timeout("a", Duration::ZERO, None, (), &mut s);
    check_timeout("b", Duration::from_secs(3600), None, (), &mut s);
    check_timeout(
        "c",
        Duration::from_secs(1),
        Some(Duration::from_secs(1)),
        (),
        &mut s,
    );
    check_timeout(
        "d",
        Duration::from_millis(800),
        Some(Duration::from_secs(1)),
        (),
        &mut s,
    );
    assert_eq!(rules(s), [Rule::Duration; 3]);
}

#[test]
fn duplicates_are_reported_at_the_second_occurrence() {
    let mut s = Violations::new();
    check_unique_names([("db", 1), ("cache", 2), ("db", 3)], &mut s);
    let v = s.into_result().unwrap_err();
    assert_eq!((v.len(), v[0].location), (1, 3));
}

#[test]
fn paths_empty_relative_and_colliding() {
    fn tiers<'a>(ready: &'a str, active: &'a str, live: &'a str) -> [(Endpoint, &'a str, ()); 3] {
        [
            (Tag::Ready.into(), ready, ()),
            (Tag::Active.into(), active, ()),
            (Tag::Live.into(), live, ()),
        ]
    }
    let refused = |paths: &[(Endpoint, &str, ())]| {
        let mut s = Violations::new();
        check_paths(paths, &mut s);
        rules(s)
    };
    assert_eq!(
        refused(&tiers("/health", "health/", "")),
        [Rule::EndpointPath; 2]
    );
    assert_eq!(refused(&tiers("/a", "/a/", "/b")), [Rule::EndpointPath]);
    // The startup path is checked with the tiers: it cannot take one's.
    let started = (Endpoint::Started, "/health/ready/", ());
    assert_eq!(
        refused(&[(Tag::Ready.into(), "/health/ready", ()), started]),
        [Rule::EndpointPath]
    );
}

#[test]
fn role_preference_needs_roles() {
    let mut s = Violations::new();
    assert!(!check_role_preference("a", None, 0, &mut s));
    assert!(!check_role_preference("a", Some((&[], 1)), 0, &mut s));
    assert!(!check_role_preference(
        "a",
        Some((&[("admin", 2), ("", 3), ("admin", 4)], 1)),
        0,
        &mut s
    ));
    assert!(check_role_preference(
        "a",
        Some((&[("admin", 2), ("driver", 3)], 1)),
        0,
        &mut s
    ));
    let locations: Vec<i32> = s
        .into_result()
        .unwrap_err()
        .iter()
        .map(|v| v.location)
        .collect();
    assert_eq!(locations, [0, 1, 3, 4]);
}

/// The rule and location of each violation, in order.
fn located(s: Violations<i32>) -> Vec<(Rule, i32)> {
    s.into_result()
        .unwrap_err()
        .iter()
        .map(|v| (v.rule, v.location))
        .collect()
}

#[test]
fn an_active_probe_is_never_optional() {
    let mut s = Violations::new();
    check_active_not_optional("a", TagSet::ACTIVE, FailureStatus::Degraded, 1, &mut s);
    check_active_not_optional("b", TagSet::READY, FailureStatus::Degraded, 2, &mut s);
    check_active_not_optional("c", TagSet::ACTIVE, FailureStatus::Unhealthy, 3, &mut s);
    let both = TagSet::READY.with(Tag::Active);
    check_active_not_optional("d", both, FailureStatus::Degraded, 4, &mut s);
    assert_eq!(located(s), [1, 4].map(|at| (Rule::ActiveNotOptional, at)));
}

#[test]
fn an_authorized_level_must_show_more_than_the_public_one() {
    let mut s = Violations::new();
    check_authorized_disclosure(Tag::Ready, Disclosure::Names, Disclosure::Full, 1, &mut s);
    check_authorized_disclosure(Tag::Ready, Disclosure::Status, Disclosure::Names, 2, &mut s);
    check_authorized_disclosure(Tag::Ready, Disclosure::Full, Disclosure::Full, 3, &mut s);
    check_authorized_disclosure(Tag::Live, Disclosure::Names, Disclosure::Status, 4, &mut s);
    assert_eq!(located(s), [3, 4].map(|at| (Rule::Contradiction, at)));
}

#[test]
fn one_authorized_level_applies_where_it_shows_more() {
    use Disclosure::{Full, Names, Status};
    let mut s = Violations::new();
    let levels = resolve_authorized([Names, Full, Status], Some((Full, 1)), [None; 3], &mut s);
    assert_eq!(levels, [Some(Full), None, Some(Full)]);
    let per_tier = [None, None, Some((Names, 2))];
    let levels = resolve_authorized([Names, Full, Status], Some((Full, 1)), per_tier, &mut s);
    assert_eq!(levels, [Some(Full), None, Some(Names)]);
    assert!(s.into_result().is_ok());
    let mut s = Violations::new();
    resolve_authorized([Full; 3], Some((Full, 3)), [None; 3], &mut s);
    resolve_authorized([Full; 3], None, [Some((Full, 4)), None, None], &mut s);
    assert_eq!(located(s), [3, 4].map(|at| (Rule::Contradiction, at)));
}

#[test]
fn names_must_be_short_identifiers() {
    let mut s = Violations::new();
    check_name("", (), &mut s);
    check_name("has space", (), &mut s);
    check_name("akka-cluster", (), &mut s);
    check_name(STARTUP_ENTRY, (), &mut s);
    check_name(SHUTDOWN_ENTRY, (), &mut s);
    check_name(crate::operator::MAINTENANCE_ENTRY, (), &mut s);
    assert_eq!(rules(s), [Rule::ProbeName; 5]);
}

#[test]
fn a_restart_needs_ready_alone_shared_and_more_than_the_detection_time() {
    const S: fn(u64) -> Duration = Duration::from_secs;
    let check = |tags, shared, after, detection| {
        let mut s = Violations::new();
        check_restart_after("db", (after, 7), tags, shared, detection, &mut s);
        match s.into_result() {
            Ok(()) => Vec::new(),
            Err(v) => v.iter().map(|v| (v.rule, v.location)).collect(),
        }
    };
    let ready = Some(TagSet::READY);
    assert_eq!(check(ready, Some(true), S(120), Some(S(4))), []);
    assert_eq!(check(ready, Some(true), S(5), Some(S(4))), []);
    let r27 = (Rule::RestartAfter, 7);
    assert_eq!(
        check(ready, Some(true), S(4), Some(S(4))),
        [r27],
        "not longer"
    );
    assert_eq!(check(ready, Some(false), S(120), Some(S(4))), [r27]);
    let both = Some(TagSet::of(&[Tag::Ready, Tag::Active]));
    assert_eq!(check(both, Some(true), S(120), None), [r27]);
    assert_eq!(
        check(
            Some(TagSet::of(&[Tag::Active])),
            Some(false),
            S(1),
            Some(S(4))
        ),
        [r27, r27, r27],
        "every violation at once"
    );
    // What the caller cannot know is not checked.
    assert_eq!(check(None, None, S(1), None), []);
    assert!(crate::facts::restart_after_fits_detection(None, S(4)));
    assert!(!crate::facts::restart_after_fits_detection(
        Some(S(4)),
        S(4)
    ));
}
