//! The drain's timings (BE-HLTH-005): a plain value, checked by rule R18.

use std::time::Duration;

use zb_health_spec::drain::KUBERNETES_DEFAULT_GRACE_PERIOD;
use zb_health_spec::{SpecError, Violations, drain, rules::check_drain};

/// The drain's timings, for [`serve`](fn@crate::server::serve).
///
/// ```
/// # use std::time::Duration;
/// # use zb_health::lifecycle::Drain;
/// // Kubernetes' default grace period: the graceful stop gets the 25 s that
/// // remain after the 5 s delay.
/// let drain = Drain::new(Duration::from_secs(5))
///     .within_grace_period(Duration::from_secs(30))
///     .unwrap();
/// assert_eq!(drain.graceful_timeout(), Duration::from_secs(25));
/// ```
///
/// A manifest's `lifecycle` section generates one, checked at compile
/// time: `Health::DRAIN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drain {
    delay: Duration,
    /// As stated; `None` for the default.
    shutdown_timeout: Option<Duration>,
    /// Stated with [`within_grace_period`](Self::within_grace_period).
    grace_period: Option<Duration>,
}

impl Drain {
    /// Keeps serving, new requests included, for `delay` after the signal
    /// while `ready` answers 503: the time the orchestrator needs to see
    /// the 503 and take the pod out of its endpoints (Kubernetes' preStop /
    /// endpoint propagation). In-flight requests then get actix's default
    /// 30 s to finish, or what the grace period leaves
    /// ([`within_grace_period`](Self::within_grace_period)).
    pub const fn new(delay: Duration) -> Self {
        Self {
            delay,
            shutdown_timeout: None,
            grace_period: None,
        }
    }

    /// How long in-flight requests may run after the delay before workers
    /// are dropped (actix's `shutdown_timeout`, whole seconds, rounded up).
    pub const fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = Some(timeout);
        self
    }

    /// Fits the drain into the orchestrator's termination grace period
    /// (Kubernetes' `terminationGracePeriodSeconds`), the rule R18 that a
    /// manifest's drain is held to at compile time: the delay plus the
    /// stated shutdown timeout must end within it; without a stated
    /// timeout the graceful stop gets what remains of it, at least 1 s.
    ///
    /// # Errors
    ///
    /// The R18 (or R5, for a zero grace period) violations.
    pub fn within_grace_period(mut self, grace_period: Duration) -> Result<Self, SpecError> {
        let mut sink = Violations::new();
        check_drain(
            Some((self.delay, ())),
            self.shutdown_timeout.map(|t| (t, ())),
            Some((grace_period, ())),
            &mut sink,
        );
        sink.into_result()?;
        self.grace_period = Some(grace_period);
        Ok(self)
    }

    /// Records `grace_period` as the one this drain was fitted into, without
    /// checking: for the generated `DRAIN`, whose fit rule R18 proved at
    /// compile time (through `__private::fitted_drain`). Use
    /// [`within_grace_period`](Self::within_grace_period).
    pub(crate) const fn fitted_at_compile_time(mut self, grace_period: Duration) -> Self {
        self.grace_period = Some(grace_period);
        self
    }

    /// This drain with another `delay` (an operator's `DRAIN_DELAY_MS`),
    /// held by rule R18 to the grace period it was fitted into, else to
    /// Kubernetes' default ([`KUBERNETES_DEFAULT_GRACE_PERIOD`], 30 s),
    /// which is what the pod gets when it states none. A stated shutdown
    /// timeout is kept; without one the graceful stop gets what the grace
    /// period leaves after the new delay.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use zb_health::lifecycle::Drain;
    /// let drain = Drain::new(Duration::from_secs(5));
    /// let longer = drain.with_delay(Duration::from_secs(20)).unwrap();
    /// assert_eq!(longer.graceful_timeout(), Duration::from_secs(10));
    /// // 30 s leave no second for in-flight requests: refused, not changed.
    /// assert!(drain.with_delay(Duration::from_secs(30)).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// The R18 violation: the new delay does not fit.
    pub fn with_delay(self, delay: Duration) -> Result<Self, SpecError> {
        let grace = self.grace_period_or_default();
        Self {
            delay,
            shutdown_timeout: self.shutdown_timeout,
            grace_period: None,
        }
        .within_grace_period(grace)
    }

    /// The grace period this drain was fitted into, if any.
    pub const fn grace_period(&self) -> Option<Duration> {
        self.grace_period
    }

    /// The grace period a change to this drain is held to: its own, else
    /// Kubernetes' default.
    pub const fn grace_period_or_default(&self) -> Duration {
        match self.grace_period {
            Some(grace) => grace,
            None => KUBERNETES_DEFAULT_GRACE_PERIOD,
        }
    }

    /// The drain delay.
    pub const fn delay(&self) -> Duration {
        self.delay
    }

    /// The graceful-stop timeout as actix applies it, in whole seconds: the
    /// stated one, else what the grace period leaves, else 30 s
    /// ([`spec::drain::graceful_stop`](crate::spec::drain::graceful_stop)).
    pub const fn graceful_timeout(&self) -> Duration {
        drain::graceful_stop(self.delay, self.shutdown_timeout, self.grace_period)
    }
}
