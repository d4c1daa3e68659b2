//! The shutdown drain's timings (BE-HLTH-005), resolved one way for the
//! manifest, the generated code and the runtime's `Drain`.

use std::time::Duration;

/// The exit code of a process that a stalled watchdog ended, when it opted
/// in (`lifecycle.exit_on_stall`, `Lifecycle::exit_on_stall`): 75,
/// `EX_TEMPFAIL` of `sysexits.h`, "a temporary failure; retry", which is
/// what a restart cures. Distinct from a Rust panic (101), a signal
/// (128 + n) and a clean exit after the drain (0), so a restart rule
/// (KEP-5307 `exitCodes: { operator: In, values: [75] }`) matches this
/// cause alone. One value for the runtime and `zb-health k8s`.
pub const WATCHDOG_STALL_EXIT_CODE: i32 = 75;

/// The drain delay when none is stated: how long `ready` answers 503 while
/// the server keeps serving, so the orchestrator sees it and takes the pod
/// out of its endpoints. Five seconds covers Kubernetes' endpoint
/// propagation with a 1–2 s readiness period.
pub const DEFAULT_DRAIN_DELAY: Duration = Duration::from_secs(5);

/// The graceful stop when neither a shutdown timeout nor a grace period is
/// stated: actix's own default.
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// Kubernetes' `terminationGracePeriodSeconds` when the pod states none:
/// what a drain is held to at run time (rule R18) when the manifest states
/// no `orchestrator.termination_grace_period`.
pub const KUBERNETES_DEFAULT_GRACE_PERIOD: Duration = Duration::from_secs(30);

/// `d` as actix applies a shutdown timeout: whole seconds, rounded up.
pub const fn whole_seconds(d: Duration) -> Duration {
    let extra = if d.subsec_nanos() > 0 { 1 } else { 0 };
    Duration::from_secs(d.as_secs().saturating_add(extra))
}

/// How long in-flight requests may run after the drain delay, in whole
/// seconds: the stated `shutdown_timeout` (rounded up); else, with a
/// termination grace period, what remains of it after the delay (rounded
/// down, so the process exits before the orchestrator kills it; zero when
/// nothing remains, which rule R18 refuses); else
/// [`DEFAULT_SHUTDOWN_TIMEOUT`].
pub const fn graceful_stop(
    drain_delay: Duration,
    shutdown_timeout: Option<Duration>,
    grace_period: Option<Duration>,
) -> Duration {
    match (shutdown_timeout, grace_period) {
        (Some(stated), _) => whole_seconds(stated),
        (None, Some(grace)) => Duration::from_secs(grace.saturating_sub(drain_delay).as_secs()),
        (None, None) => DEFAULT_SHUTDOWN_TIMEOUT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graceful_stop_is_stated_else_the_rest_of_the_grace_period_else_actixs() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        assert_eq!(graceful_stop(s(5), Some(ms(1500)), Some(s(30))), s(2));
        assert_eq!(graceful_stop(s(5), None, Some(s(30))), s(25));
        assert_eq!(graceful_stop(ms(5500), None, Some(s(30))), s(24));
        assert_eq!(graceful_stop(s(5), None, Some(ms(5900))), s(0));
        assert_eq!(graceful_stop(s(50), None, Some(s(30))), s(0));
        assert_eq!(graceful_stop(s(5), None, None), DEFAULT_SHUTDOWN_TIMEOUT);
    }
}
