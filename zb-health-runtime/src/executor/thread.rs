//! The probe thread: where probe executions run, so that no request's
//! runtime has to stay free for a probe to finish (BE-HLTH-006).
//!
//! An actix worker is a single-threaded runtime. A probe's timer and I/O
//! belong to the runtime that created them, so a probe started by an
//! application worker would be woken only by that worker: if a handler
//! then blocked the worker's thread (synchronous code in an `async fn`),
//! every port waiting on the probe, the management port included, would
//! wait too. Each execution is therefore *created* inside the probe thread's
//! runtime context and, if it does not finish at its first poll, *moved*
//! there; the requests only wait for its result, which wakes them from any
//! thread.
//!
//! The first poll stays on the caller's thread (with the probe runtime
//! entered, so what it registers belongs to the probe thread): a probe that
//! answers at once, which is nearly every probe on nearly every request,
//! costs no thread hop, no task and no wake-up.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::{Builder, Handle, Runtime};

/// Where a registry's probe executions run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runs {
    /// On the library's probe thread (the default).
    ProbeThread,
    /// On the runtime of the request that starts them, for tests on tokio's
    /// paused clock, which the probe thread does not share.
    #[cfg_attr(not(any(test, feature = "test-util")), allow(dead_code))]
    Caller,
}

impl Runs {
    /// The runtime executions are moved to, or `None` to run on the caller.
    pub(crate) fn handle(self) -> Option<&'static Handle> {
        match self {
            Runs::ProbeThread => probe_runtime(),
            Runs::Caller => None,
        }
    }
}

/// Runs `work` on the probe thread, detached: the library's own timers
/// (a maintenance window's end), which must not depend on any request.
/// Without a probe thread (logged once) the work does not run; its owner
/// also checks when read.
pub(crate) fn spawn_on_probe_thread(work: impl Future<Output = ()> + Send + 'static) {
    if let Some(handle) = probe_runtime() {
        handle.spawn(work);
    }
}

/// The probe thread's runtime, started on first use. One thread: probes
/// are I/O-bound waits, and a probe that blocks its thread is bounded by
/// the waiters' own deadlines either way. `None` (logged once) if the OS
/// refuses a thread or an event loop; probes then run on their callers, as
/// a registry built with `probes_on_caller_runtime` does.
fn probe_runtime() -> Option<&'static Handle> {
    static RUNTIME: OnceLock<Option<Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("zb-health-probe")
                .enable_all()
                .build()
                .inspect_err(|error| {
                    tracing::error!(%error, "cannot start the health probe thread; probes run on the requests' runtimes");
                })
                .ok()
        })
        .as_ref()
        .map(Runtime::handle)
}
