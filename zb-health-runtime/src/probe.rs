//! What a probe is: an async check returning a status, a fixed description
//! and optional structured `data` (AT-2, ZB-3).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value};

use crate::HealthStatus;

/// The error a probe may return. Any error type converts into it with `?`.
///
/// Its text goes to the logs only; the HTTP body shows a fixed description
/// (BE-HLTH-007), because error text routinely carries connection strings
/// and internal addresses.
pub type ProbeError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What one run of a probe produced.
pub type ProbeOutcome = Result<ProbeResult, ProbeError>;

/// A health check (AT-2).
///
/// Implement it with an `async fn`; a synchronous check is an `async fn`
/// with no `.await`. The future must be `Send` so the same registry can be
/// served from actix workers, a management port and a gRPC server alike.
///
/// The executor gives every run a deadline and drops the future when it
/// passes, so a probe needs no timeout of its own, but it must be
/// cancel-safe: whatever it holds is released by `Drop`.
///
/// ```
/// use zb_health::{Probe, ProbeOutcome, ProbeResult};
///
/// struct Cache;
///
/// impl Probe for Cache {
///     async fn check(&self) -> ProbeOutcome {
///         Ok(ProbeResult::healthy().with_description("cache reachable"))
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a zb-health probe",
    label = "this type does not implement `zb_health::Probe`",
    note = "implement it: `impl zb_health::Probe for {Self} {{ async fn check(&self) -> zb_health::ProbeOutcome {{ Ok(zb_health::ProbeResult::healthy()) }} }}`"
)]
pub trait Probe: Send + Sync + 'static {
    /// Runs the check once.
    fn check(&self) -> impl Future<Output = ProbeOutcome> + Send;
}

/// A boxed probe future; what the executor actually polls.
pub type BoxProbeFuture<'a> = Pin<Box<dyn Future<Output = ProbeOutcome> + Send + 'a>>;

/// The object-safe face of [`Probe`], so one registry holds many probe
/// types. Implemented for every `Probe`; users never implement it.
pub trait DynProbe: Send + Sync + 'static {
    /// Runs the check once, boxed.
    fn check_boxed(&self) -> BoxProbeFuture<'_>;
}

impl<P: Probe> DynProbe for P {
    fn check_boxed(&self) -> BoxProbeFuture<'_> {
        Box::pin(self.check())
    }
}

/// A probe made from a closure that returns a future, for checks that need
/// no type of their own.
///
/// ```
/// use zb_health::{from_fn, ProbeResult};
/// let probe = from_fn(|| async { Ok(ProbeResult::healthy()) });
/// # let _ = probe;
/// ```
pub fn from_fn<F, Fut>(f: F) -> FnProbe<F>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ProbeOutcome> + Send + 'static,
{
    FnProbe(f)
}

/// A probe built by [`from_fn`].
pub struct FnProbe<F>(F);

impl<F, Fut> Probe for FnProbe<F>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ProbeOutcome> + Send + 'static,
{
    fn check(&self) -> impl Future<Output = ProbeOutcome> + Send {
        (self.0)()
    }
}

/// The result of a probe that ran to completion.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeResult {
    /// The probe's verdict.
    pub status: HealthStatus,
    /// A short, fixed, human-readable note. Keep it free of error text and
    /// addresses: it is served to anyone who can reach the endpoint.
    pub description: Option<Cow<'static, str>>,
    /// Structured detail, e.g. the active node's address (ZB-2.3c).
    pub data: Option<Map<String, Value>>,
}

impl ProbeResult {
    /// A result with `status` and nothing else.
    pub const fn new(status: HealthStatus) -> Self {
        Self {
            status,
            description: None,
            data: None,
        }
    }

    /// `Healthy`.
    pub const fn healthy() -> Self {
        Self::new(HealthStatus::Healthy)
    }

    /// `Degraded`, with a fixed description.
    pub fn degraded(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(HealthStatus::Degraded).with_description(description)
    }

    /// `Unhealthy`, with a fixed description.
    pub fn unhealthy(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(HealthStatus::Unhealthy).with_description(description)
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Adds one `data` field.
    pub fn with_data(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.data
            .get_or_insert_with(Map::new)
            .insert(key.into(), value.into());
        self
    }
}
