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
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use tokio::runtime::{Builder, Handle, Runtime};
use tokio::task::JoinHandle;

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

/// The probe thread's runtime, started on first use. One thread: probes
/// are I/O-bound waits, and a probe that blocks its thread is bounded by
/// the waiters' own deadlines either way. `None` (logged once) if the OS
/// refuses a thread or an event loop; probes then run on their callers, as
/// a registry built with `probes_on_caller_runtime` does.
/// Runs `work` on the probe thread, detached: the library's own timers
/// (a maintenance window's end), which must not depend on any request.
/// Without a probe thread (logged once) the work does not run; its owner
/// also checks when read.
pub(crate) fn spawn_on_probe_thread(work: impl Future<Output = ()> + Send + 'static) {
    if let Some(handle) = probe_runtime() {
        handle.spawn(work);
    }
}

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

/// One execution: polled once where it was asked for, then, if still
/// pending, moved to the probe thread. Dropping it cancels the execution
/// wherever it is (the last waiter gone: nothing is left running).
pub(crate) struct Execution<T: Send + 'static> {
    state: State<T>,
}

enum State<T: Send + 'static> {
    Fresh(BoxFuture<'static, T>, &'static Handle),
    Moved(AbortOnDrop<T>),
    Done,
}

struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl<T: Send + 'static> Execution<T> {
    /// `work`, to be run under `handle`'s runtime.
    pub(crate) fn new(work: BoxFuture<'static, T>, handle: &'static Handle) -> Self {
        Self {
            state: State::Fresh(work, handle),
        }
    }
}

/// How an execution that was moved can end without its value: its task
/// panicked outside the probe's own guard (a bug of the executor, not of a
/// probe) or its runtime shut down.
#[derive(Debug)]
pub(crate) struct Lost;

impl<T: Send + 'static> Future for Execution<T> {
    type Output = Result<T, Lost>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Every field is `Unpin` (a boxed future, a handle).
        let this = self.get_mut();
        loop {
            match std::mem::replace(&mut this.state, State::Done) {
                State::Fresh(mut work, handle) => {
                    let polled = {
                        let _probe_runtime = handle.enter();
                        work.as_mut().poll(cx)
                    };
                    match polled {
                        Poll::Ready(value) => return Poll::Ready(Ok(value)),
                        // The task's own first poll re-registers every
                        // waker with the probe thread's task.
                        Poll::Pending => {
                            this.state = State::Moved(AbortOnDrop(handle.spawn(work)));
                        }
                    }
                }
                State::Moved(mut task) => {
                    return match Pin::new(&mut task.0).poll(cx) {
                        Poll::Ready(Ok(value)) => Poll::Ready(Ok(value)),
                        Poll::Ready(Err(_)) => Poll::Ready(Err(Lost)),
                        Poll::Pending => {
                            this.state = State::Moved(task);
                            Poll::Pending
                        }
                    };
                }
                State::Done => return Poll::Ready(Err(Lost)),
            }
        }
    }
}
