//! What a probe is: a check returning a status, a fixed description and
//! optional structured `data` (AT-2, ZB-3), either async ([`Probe`]) or
//! blocking code run on tokio's blocking pool ([`BlockingProbe`]).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Shared};

use serde_json::{Map, Value};

use zb_health_spec::HealthStatus;

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
/// use zb_health::prelude::{Probe, ProbeOutcome, ProbeResult};
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
    label = "this type does not implement `zb_health::prelude::Probe`",
    note = "implement it, with `use zb_health::prelude::*;`: `impl Probe for {Self} {{ async fn check(&self) -> ProbeOutcome {{ Ok(ProbeResult::healthy()) }} }}`"
)]
pub trait Probe: Send + Sync + 'static {
    /// Whether `?exclude=` may leave this check out of its tier's verdict.
    /// `false` for a check that is its tier's purpose, so that no caller
    /// can make the tier answer without it: the active-node decision
    /// ([`ActiveNodeProbe`](crate::cluster::ActiveNodeProbe)) is, since a
    /// standby whose `active` left it out would answer 200.
    const EXCLUDABLE: bool = true;

    /// Runs the check once.
    fn check(&self) -> impl Future<Output = ProbeOutcome> + Send;
}

/// A health check that calls **blocking** code (a synchronous driver, file
/// I/O, a C library): the synchronous sibling of [`Probe`].
///
/// Declare it with `#[zb_health(..., blocking = true)]`; the registration
/// then runs `check` on tokio's blocking pool, never on the actix worker,
/// through [`from_blocking_fn`]: at most one call in flight per probe,
/// bounded by the probe's deadline. A blocking call cannot be cancelled, so
/// the deadline bounds the *wait* for it, not the call; [`from_blocking_fn`]
/// says exactly what a request sees while a call hangs.
///
/// ```
/// use zb_health::prelude::{BlockingProbe, ProbeOutcome, ProbeResult, zb_health};
///
/// #[zb_health(name = "legacy-driver", timeout = "200ms", blocking = true)]
/// struct LegacyDriver;
///
/// impl BlockingProbe for LegacyDriver {
///     fn check(&self) -> ProbeOutcome {
///         // e.g. a synchronous client's ping
///         Ok(ProbeResult::healthy())
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a blocking zb-health probe",
    label = "this type does not implement `zb_health::prelude::BlockingProbe`",
    note = "implement it, with `use zb_health::prelude::*;`: `impl BlockingProbe for {Self} {{ fn check(&self) -> ProbeOutcome {{ Ok(ProbeResult::healthy()) }} }}`",
    note = "or, if its check is an `async fn` (`zb_health::prelude::Probe`), drop `blocking = true`"
)]
pub trait BlockingProbe: Send + Sync + 'static {
    /// Runs the check once, blocking the calling thread (a blocking-pool
    /// thread, never a worker).
    fn check(&self) -> ProbeOutcome;
}

/// A boxed probe future; what the executor actually polls.
pub type BoxProbeFuture<'a> = Pin<Box<dyn Future<Output = ProbeOutcome> + Send + 'a>>;

/// The object-safe face of [`Probe`], so one registry holds many probe
/// types. Implemented for every `Probe`; users never implement it.
pub trait DynProbe: Send + Sync + 'static {
    /// Runs the check once, boxed, owning the probe: the executor polls
    /// the future once where it was asked for and, if it waits, moves it
    /// to the probe thread, so it may borrow nothing from the request.
    fn check_owned(self: Arc<Self>) -> BoxProbeFuture<'static>;

    /// [`Probe::EXCLUDABLE`] of the probe behind it.
    fn excludable(&self) -> bool {
        true
    }
}

impl<P: Probe> DynProbe for P {
    fn check_owned(self: Arc<Self>) -> BoxProbeFuture<'static> {
        // The check's own future lives inside this one: one allocation.
        Box::pin(async move { self.check().await })
    }

    fn excludable(&self) -> bool {
        P::EXCLUDABLE
    }
}

/// A probe made from a closure that returns a future, for checks that need
/// no type of their own.
///
/// ```
/// use zb_health::prelude::{from_fn, ProbeResult};
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

/// A probe made from a closure that calls **blocking** code (a synchronous
/// driver, file I/O, a C library), run on tokio's blocking pool
/// (`spawn_blocking`) so it never stalls the actix worker that serves the
/// request.
///
/// It is bounded like every probe: the executor's deadline and in-flight
/// bound apply to the wait for it. But a blocking call cannot be
/// cancelled, so the deadline means: the entry reports `timed out` at the
/// deadline and the request is answered, while the call's thread runs on
/// until the closure returns. Meanwhile no second call starts: a run that
/// finds the previous call still running waits for *that* call (under its
/// own deadline) instead of starting another, so a hung blocking
/// dependency holds at most one blocking-pool thread per probe, and a
/// request during it sees `timed out` at its deadline, or the old call's
/// result if it returns in time. Needs a tokio runtime with the blocking
/// pool (every actix worker has one).
///
/// The returned probe has no type of its own to name (it is a [`FnProbe`]
/// inside), so the probe types listed in compiler messages stay the ones
/// users implement or name.
///
/// ```
/// use zb_health::prelude::ProbeResult;
/// use zb_health::probe::from_blocking_fn;
/// let probe = from_blocking_fn(|| {
///     // e.g. a synchronous client's ping
///     Ok(ProbeResult::healthy())
/// });
/// # let _ = probe;
/// ```
pub fn from_blocking_fn<F>(f: F) -> impl Probe
where
    F: Fn() -> ProbeOutcome + Send + Sync + 'static,
{
    let calls = Arc::new(BlockingCalls {
        f: Arc::new(f),
        running: Mutex::new(None),
    });
    from_fn(move || calls.check())
}

/// The state of a [`from_blocking_fn`] probe.
struct BlockingCalls<F> {
    f: Arc<F>,
    /// The latest call: joined while it runs, replaced once it is done.
    running: Mutex<Option<BlockingCall>>,
}

struct BlockingCall {
    done: Arc<AtomicBool>,
    result: Shared<BoxFuture<'static, BlockingResult>>,
}

/// A blocking call's outcome in a shareable form: an error is shared, a
/// panic is kept as its message only.
#[derive(Clone)]
enum BlockingResult {
    Done(Result<ProbeResult, Arc<ProbeError>>),
    Panicked(Arc<str>),
    Cancelled,
}

/// The error of a blocking call that several runs waited on.
#[derive(Debug)]
struct SharedError(Arc<ProbeError>);

impl std::fmt::Display for SharedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for SharedError {}

/// Marks a blocking call done when its closure returns or unwinds.
struct MarkDone(Arc<AtomicBool>);

impl Drop for MarkDone {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl<F> BlockingCalls<F>
where
    F: Fn() -> ProbeOutcome + Send + Sync + 'static,
{
    /// The running call, or a new one if none runs.
    fn call(&self) -> Shared<BoxFuture<'static, BlockingResult>> {
        let mut running = crate::sync::lock(&self.running);
        if let Some(call) = &*running
            && !call.done.load(Ordering::SeqCst)
        {
            return call.result.clone();
        }
        let done = Arc::new(AtomicBool::new(false));
        let (f, mark) = (self.f.clone(), MarkDone(done.clone()));
        let handle = tokio::task::spawn_blocking(move || {
            let _mark = mark;
            f()
        });
        let result = async move {
            match handle.await {
                Ok(outcome) => BlockingResult::Done(outcome.map_err(Arc::new)),
                Err(e) if e.is_panic() => {
                    let panic = e.into_panic();
                    let message = panic
                        .downcast_ref::<&'static str>()
                        .copied()
                        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
                        .unwrap_or("non-string panic payload");
                    BlockingResult::Panicked(Arc::from(message))
                }
                Err(_) => BlockingResult::Cancelled,
            }
        }
        .boxed()
        .shared();
        *running = Some(BlockingCall {
            done,
            result: result.clone(),
        });
        result
    }
}

impl<F> BlockingCalls<F>
where
    F: Fn() -> ProbeOutcome + Send + Sync + 'static,
{
    /// One run: joins the running call or starts one, then waits for it.
    fn check(&self) -> impl Future<Output = ProbeOutcome> + Send + use<F> {
        let call = self.call();
        async move {
            match call.await {
                BlockingResult::Done(Ok(result)) => Ok(result),
                BlockingResult::Done(Err(error)) => Err(Box::new(SharedError(error)) as ProbeError),
                // Re-raised so the executor's guard reports it as a panic.
                BlockingResult::Panicked(message) => {
                    std::panic::resume_unwind(Box::new(message.to_string()))
                }
                BlockingResult::Cancelled => {
                    Err("blocking check cancelled: runtime shut down".into())
                }
            }
        }
    }
}
