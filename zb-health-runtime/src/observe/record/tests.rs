use super::*;
use HealthStatus::{Degraded, Healthy, Unhealthy};

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn the_state_machine_logs_transitions_and_rate_limits_the_rest() {
    let t0 = Instant::now();
    let at = |s| t0 + secs(s);
    let interval = secs(60);
    let mut s = LogState::default();
    assert_eq!(s.step(Healthy, || at(0), interval), (Line::Quiet, false));
    assert_eq!(
        s.step(Unhealthy, || at(10), interval),
        (
            Line::Failing {
                previous: Some(Healthy),
                suppressed: 0
            },
            true
        )
    );
    for t in [20, 30, 69] {
        assert_eq!(s.step(Unhealthy, || at(t), interval), (Line::Quiet, false));
    }
    assert_eq!(
        s.step(Unhealthy, || at(70), interval),
        (
            Line::StillFailing {
                failing_for: secs(60),
                suppressed: 3
            },
            false
        )
    );
    assert_eq!(s.step(Unhealthy, || at(80), interval), (Line::Quiet, false));
    assert_eq!(
        s.step(Degraded, || at(90), interval),
        (
            Line::Failing {
                previous: Some(Unhealthy),
                suppressed: 1
            },
            false
        ),
        "a change of failing status is logged, not counted"
    );
    assert_eq!(s.step(Degraded, || at(95), interval), (Line::Quiet, false));
    assert_eq!(
        s.step(Healthy, || at(100), interval),
        (
            Line::Recovered {
                failing_for: secs(90),
                suppressed: 1
            },
            false
        )
    );
    assert_eq!(s.step(Healthy, || at(110), interval), (Line::Quiet, false));
}

#[test]
fn a_first_run_that_fails_is_a_transition() {
    let mut s = LogState::default();
    let (line, counted) = s.step(Degraded, Instant::now, secs(1));
    assert_eq!(
        line,
        Line::Failing {
            previous: None,
            suppressed: 0
        }
    );
    assert!(counted);
}

#[test]
fn a_zero_interval_logs_every_failing_run() {
    let now = Instant::now();
    let mut s = LogState::default();
    s.step(Unhealthy, || now, Duration::ZERO);
    assert_eq!(
        s.step(Unhealthy, || now, Duration::ZERO).0,
        Line::StillFailing {
            failing_for: Duration::ZERO,
            suppressed: 0
        }
    );
}

#[test]
fn the_status_encoding_is_higher_is_better() {
    assert_eq!(HealthStatus::ALL.map(status_value), [2.0, 1.0, 0.0]);
}
