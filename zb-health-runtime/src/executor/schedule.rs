//! Background probes (`refresh`): one task per probe that runs it on its
//! period, holding only weak references between runs.

use std::pin::pin;
use std::sync::{Arc, Weak};

use futures_util::future::{Either, select};
use tokio::sync::oneshot;
use tokio::time::Instant;
use tracing::instrument::WithSubscriber;

use super::run::{Executor, RunContext, execute};
use super::runtime::ProbeRuntime;
use crate::sync::lock;

/// Starts the probe's schedule on the current runtime unless it runs.
pub(super) fn ensure_task(probe: &Arc<ProbeRuntime>, shared: &Arc<RunContext>) {
    let Some(background) = &probe.state.background else {
        return;
    };
    let mut task = lock(&background.task);
    // A closed sender means the task is gone: its runtime shut down.
    if task.as_ref().is_some_and(|stop| !stop.is_closed()) {
        return;
    }
    let runtime = match shared.runs.handle() {
        Some(probe_thread) => probe_thread.clone(),
        None => match tokio::runtime::Handle::try_current() {
            Ok(current) => current,
            Err(_) => return,
        },
    };
    let (stop_tx, stop_rx) = oneshot::channel();
    *task = Some(stop_tx);
    runtime.spawn(
        schedule(Arc::downgrade(probe), Arc::downgrade(shared), stop_rx).with_current_subscriber(),
    );
}

/// A background probe's schedule. Holds the probe and the executor only
/// during a run; stops when `stop`'s sender (owned by the
/// registration) is dropped.
pub(super) async fn schedule(
    probe: Weak<ProbeRuntime>,
    shared: Weak<RunContext>,
    mut stop: oneshot::Receiver<()>,
) {
    loop {
        let (Some(p), Some(shared)) = (probe.upgrade(), shared.upgrade()) else {
            return;
        };
        let Some(period) = p.policy().refresh else {
            return;
        };
        let next = Instant::now() + period;
        if let Some((dependency, failed)) = p.failing_dependency_known() {
            // Not run while a dependency fails: a hung parent costs its
            // dependents no deadline of their own.
            Executor { shared }.skip(&p, &dependency.name, failed);
            drop(p);
            if let Either::Right(_) = select(pin!(tokio::time::sleep_until(next)), &mut stop).await
            {
                return;
            }
            continue;
        }
        let generation = {
            let mut slot = lock(&p.state.slot);
            slot.next_generation += 1;
            slot.next_generation
        };
        let check = p.probe.clone().check_owned();
        let run = execute(shared, p, generation, Instant::now(), check, None, None);
        if let Either::Right(_) = select(pin!(run), &mut stop).await {
            return;
        }
        if let Either::Right(_) = select(pin!(tokio::time::sleep_until(next)), &mut stop).await {
            return;
        }
    }
}
