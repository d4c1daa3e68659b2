use std::borrow::Cow;
use std::time::Duration;

use zb_health_spec::HealthStatus;

use super::*;
use crate::report::{EntryOutcome, HealthEntry};

fn entry(status: HealthStatus, description: Option<&'static str>) -> HealthEntry {
    HealthEntry {
        name: "db".into(),
        status,
        description: description.map(Cow::Borrowed),
        duration: Duration::from_micros(410),
        data: None,
        outcome: EntryOutcome::Completed,
    }
}

#[test]
fn the_first_result_is_no_transition_and_a_change_is_one() {
    let h = ProbeHistory::boxed();
    h.record(&entry(HealthStatus::Healthy, None), 1_000, false);
    let v = h.view(1_000);
    assert_eq!((v.runs, v.flaps, v.transitions.len()), (1, 0, 0));
    assert_eq!(v.since_ms, Some(1_000));
    h.record(
        &entry(HealthStatus::Unhealthy, Some("check failed")),
        2_000,
        false,
    );
    h.record(
        &entry(HealthStatus::Unhealthy, Some("check failed")),
        3_000,
        false,
    );
    let v = h.view(3_000);
    assert_eq!(v.flaps, 1);
    assert_eq!(v.since_ms, Some(2_000));
    assert_eq!(v.transitions.len(), 1);
    let (at, from, to, _, d) = &v.transitions[0];
    assert_eq!(
        (*at, *from, *to),
        (2_000, HealthStatus::Healthy, HealthStatus::Unhealthy)
    );
    assert_eq!(d.as_deref(), Some("check failed"));
}

#[test]
fn the_rings_keep_the_newest_and_never_exceed_their_capacity() {
    let h = ProbeHistory::boxed();
    for i in 0..10_000u64 {
        let status = if i % 2 == 0 {
            HealthStatus::Healthy
        } else {
            HealthStatus::Degraded
        };
        h.record(&entry(status, None), i, false);
    }
    let v = h.view(10_000);
    assert_eq!(v.runs, 10_000);
    assert_eq!(v.samples.len(), SAMPLES);
    assert_eq!(v.transitions.len(), TRANSITIONS);
    // Oldest first, ending at the newest.
    assert_eq!(v.samples.last().map(|s| s.0), Some(9_999));
    assert_eq!(
        v.samples.first().map(|s| s.0),
        Some(10_000 - SAMPLES as u64)
    );
    assert_eq!(v.transitions.last().map(|t| t.0), Some(9_999));
    // 9,999 transitions, all within the first minute.
    assert_eq!(v.flaps, 9_999);
}

#[test]
fn flaps_leave_the_count_after_the_window() {
    let h = ProbeHistory::boxed();
    h.record(&entry(HealthStatus::Healthy, None), 0, false);
    h.record(&entry(HealthStatus::Unhealthy, None), 10, false);
    assert_eq!(h.view(10).flaps, 1);
    assert_eq!(h.view(FLAP_WINDOW.as_millis() as u64 - 1).flaps, 1);
    assert_eq!(h.view(FLAP_WINDOW.as_millis() as u64 + 60_000).flaps, 0);
    // A new transition in a reused bucket starts it afresh.
    h.record(
        &entry(HealthStatus::Healthy, None),
        FLAP_WINDOW.as_millis() as u64 + 10,
        false,
    );
    assert_eq!(h.view(FLAP_WINDOW.as_millis() as u64 + 10).flaps, 1);
}

#[test]
fn a_long_description_is_cut_at_a_character_boundary() {
    let h = ProbeHistory::boxed();
    let long: &'static str = "é".repeat(100).leak();
    h.record(&entry(HealthStatus::Healthy, Some(long)), 0, false);
    let d = h.view(0).description.expect("a description");
    assert!(
        d.len() <= DESCRIPTION_BYTES && d.chars().all(|c| c == 'é'),
        "{d}"
    );
}

#[test]
fn the_memory_per_probe_is_fixed_and_stated() {
    // The figure `spec/history.md` states; a change to the layout must
    // update it there.
    assert_eq!(PROBE_HISTORY_BYTES, 4_808, "update spec/history.md");
}

#[test]
fn events_keep_the_last_twenty_oldest_first() {
    let events = Events::default();
    for i in 0..25 {
        events.push(EventKind::GateReady, format!("g{i}").into());
    }
    let all = events.snapshot();
    assert_eq!(all.len(), EVENTS);
    assert_eq!(&*all[0].name, "g5");
    assert_eq!(&*all[EVENTS - 1].name, "g24");
}

#[test]
fn tier_answers_pack_status_code_and_time() {
    let t = TierAnswers::default();
    assert!(t.last(Tag::Ready).is_none());
    t.answered(Tag::Ready, HealthStatus::Unhealthy, 503);
    let (status, code, at) = t.last(Tag::Ready).expect("an answer");
    assert_eq!((status, code), (HealthStatus::Unhealthy, 503));
    assert!(at > 1_700_000_000_000);
}

/// While the service is starting (its gates pending), a change of status
/// is recorded as a sample but is no transition and no flap, nor is the
/// first result after: a dependency that is not there yet is a normal start.
#[test]
fn a_change_while_starting_is_a_sample_not_a_transition() {
    let h = ProbeHistory::boxed();
    h.record(
        &entry(HealthStatus::Unhealthy, Some("check failed")),
        1_000,
        true,
    );
    h.record(&entry(HealthStatus::Healthy, None), 2_000, true);
    let v = h.view(2_000);
    assert_eq!((v.runs, v.flaps, v.transitions.len()), (2, 0, 0));
    assert_eq!(v.since_ms, Some(2_000));
    h.record(
        &entry(HealthStatus::Unhealthy, Some("check failed")),
        3_000,
        false,
    );
    // The first result after the start is compared with nothing.
    let v = h.view(3_000);
    assert_eq!((v.flaps, v.transitions.len()), (0, 0));
    assert_eq!(v.since_ms, Some(3_000));
    h.record(&entry(HealthStatus::Healthy, None), 4_000, false);
    let v = h.view(4_000);
    assert_eq!((v.flaps, v.transitions.len()), (1, 1));
}
