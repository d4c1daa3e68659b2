//! The bounded queue between the probe path and the publishers, and the
//! task on the probe thread that groups and hands on what it holds.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use zb_health_spec::Tag;

use super::{DEFAULT_CAPACITY, DROPPED_TRANSITIONS, Transition, TransitionPublisher};
use crate::sync::lock;

/// Whether the service is starting or draining: nothing is published then.
pub(crate) type Quiet = Box<dyn Fn() -> bool + Send + Sync>;

/// A request to publish what is gathered now, answered once published.
type Flush = oneshot::Sender<()>;

/// One registry's transitions on their way to its publishers. Off (one
/// relaxed load per transition) until a publisher is added.
pub(crate) struct TransitionQueue {
    on: AtomicBool,
    /// Where transitions go, and where [`flush`](Self::flush) asks the
    /// feeding task; set by the first publisher.
    feeder: Mutex<Option<(mpsc::Sender<Transition>, mpsc::Sender<Flush>)>>,
    publishers: Arc<Mutex<Vec<Arc<dyn TransitionPublisher>>>>,
    dropped: AtomicU64,
    quiet: Quiet,
    window: Mutex<Duration>,
    /// Per tier: its verdict last changed while starting or draining, so
    /// its next change (out of the startup 503) is no news either.
    quiet_change: [AtomicBool; 3],
}

impl TransitionQueue {
    pub(crate) fn new(quiet: Quiet) -> Self {
        Self {
            on: AtomicBool::new(false),
            feeder: Mutex::new(None),
            publishers: Arc::default(),
            dropped: AtomicU64::new(0),
            quiet,
            window: Mutex::new(super::DEFAULT_WINDOW),
            quiet_change: Default::default(),
        }
    }

    /// Queues `transition` unless the service starts or drains; a full
    /// queue drops it and counts the drop. Never waits.
    #[inline]
    pub(crate) fn offer(&self, transition: impl FnOnce() -> Transition) {
        if !self.on.load(Ordering::Relaxed) || (self.quiet)() {
            return;
        }
        let tx = lock(&self.feeder).as_ref().map(|(tx, _)| tx.clone());
        if let Some(tx) = tx
            && tx.try_send(transition()).is_err()
        {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            metrics::counter!(DROPPED_TRANSITIONS).increment(1);
        }
    }

    /// Queues a tier's change of verdict, as [`offer`](Self::offer) does,
    /// except the first change after one made while starting or draining:
    /// leaving the startup 503 is no transition to publish.
    #[inline]
    pub(crate) fn offer_tier(&self, tier: Tag, transition: impl FnOnce() -> Transition) {
        if !self.on.load(Ordering::Relaxed) {
            return;
        }
        let slot = &self.quiet_change[tier as usize];
        if (self.quiet)() {
            slot.store(true, Ordering::Relaxed);
            return;
        }
        if slot.swap(false, Ordering::Relaxed) {
            return;
        }
        self.offer(transition);
    }

    /// Publishes what is gathered and queued now, without waiting for the
    /// window's end, and returns once every publisher had it: for the end
    /// of the drain, so the last transitions are not lost with the
    /// process. Returns at once without a publisher.
    pub(crate) async fn flush(&self) {
        let Some(flush) = lock(&self.feeder).as_ref().map(|(_, flush)| flush.clone()) else {
            return;
        };
        let (done, published) = oneshot::channel();
        if flush.send(done).await.is_ok() {
            let _ = published.await;
        }
    }

    /// How many transitions were dropped.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Sets how long transitions are gathered before they are published.
    pub(crate) fn set_window(&self, window: Duration) {
        *lock(&self.window) = window;
    }

    /// Adds a publisher; the first one starts the task that feeds them,
    /// through `spawn` (the registry's probe thread).
    pub(crate) fn add(
        &self,
        publisher: Arc<dyn TransitionPublisher>,
        spawn: impl FnOnce(futures_util::future::BoxFuture<'static, ()>),
    ) {
        lock(&self.publishers).push(publisher);
        let mut feeder = lock(&self.feeder);
        if feeder.is_none() {
            let (tx, receiver) = mpsc::channel(DEFAULT_CAPACITY);
            let (flush, flushes) = mpsc::channel(1);
            *feeder = Some((tx, flush));
            let window = *lock(&self.window);
            let publishers = self.publishers.clone();
            spawn(Box::pin(feed(receiver, flushes, publishers, window)));
        }
        self.on.store(true, Ordering::Relaxed);
    }
}

/// Gathers a window's transitions after the first (at most [`DEFAULT_CAPACITY`],
/// so a flood waits in the bounded queue, not here), groups them per tier
/// or probe, and hands the batch to each publisher in turn. A flush ends
/// the window at once, takes what is queued too, and is answered once
/// published. Ends when the registry (the senders) is gone.
async fn feed(
    mut receiver: mpsc::Receiver<Transition>,
    mut flushes: mpsc::Receiver<Flush>,
    publishers: Arc<Mutex<Vec<Arc<dyn TransitionPublisher>>>>,
    window: Duration,
) {
    loop {
        let (mut gathered, mut flushed) = tokio::select! {
            first = receiver.recv() => match first {
                Some(first) => (vec![first], None),
                None => return,
            },
            flush = flushes.recv() => match flush {
                Some(flush) => (Vec::new(), Some(flush)),
                None => return,
            },
        };
        let until = tokio::time::Instant::now() + window;
        while flushed.is_none() && gathered.len() < DEFAULT_CAPACITY {
            tokio::select! {
                next = tokio::time::timeout_at(until, receiver.recv()) => match next {
                    Ok(Some(next)) => gathered.push(next),
                    _ => break,
                },
                flush = flushes.recv() => match flush {
                    Some(flush) => flushed = Some(flush),
                    None => break,
                },
            }
        }
        if flushed.is_some() {
            while gathered.len() < DEFAULT_CAPACITY
                && let Ok(next) = receiver.try_recv()
            {
                gathered.push(next);
            }
        }
        if !gathered.is_empty() {
            publish(&publishers, group(gathered)).await;
        }
        if let Some(done) = flushed {
            let _ = done.send(());
        }
    }
}

/// Hands one batch to each publisher in turn; a failure is logged.
async fn publish(publishers: &Mutex<Vec<Arc<dyn TransitionPublisher>>>, batch: Vec<Transition>) {
    let publishers = lock(publishers).clone();
    for publisher in publishers {
        if let Err(error) = publisher.publish(&batch).await {
            tracing::warn!(
                target: "zb_health::publish",
                %error,
                transitions = batch.len(),
                "a transition publisher failed; the batch is not retried"
            );
        }
    }
}

/// One transition per tier or probe: from the first's `from` to the
/// last's `to`, with the count, in the order each was first seen.
pub(super) fn group(transitions: Vec<Transition>) -> Vec<Transition> {
    let mut groups: Vec<Transition> = Vec::new();
    for t in transitions {
        match groups
            .iter_mut()
            .find(|g| g.kind == t.kind && g.name == t.name)
        {
            Some(group) => {
                group.to = t.to;
                group.at = t.at;
                group.reason = t.reason;
                group.count += t.count;
            }
            None => groups.push(t),
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use zb_health_spec::HealthStatus;

    #[test]
    fn flaps_inside_a_window_are_one_message_with_a_count() {
        let db: Arc<str> = Arc::from("db");
        let flaps = vec![
            Transition::probe(
                &db,
                Some(HealthStatus::Healthy),
                HealthStatus::Unhealthy,
                "timedOut",
            ),
            Transition::tier(
                Tag::Ready,
                Some(HealthStatus::Healthy),
                HealthStatus::Unhealthy,
            ),
            Transition::probe(
                &db,
                Some(HealthStatus::Unhealthy),
                HealthStatus::Healthy,
                "completed",
            ),
            Transition::probe(
                &db,
                Some(HealthStatus::Healthy),
                HealthStatus::Unhealthy,
                "errored",
            ),
        ];
        let batch = group(flaps);
        assert_eq!(batch.len(), 2);
        assert_eq!(
            (batch[0].from, batch[0].to, batch[0].count),
            (Some(HealthStatus::Healthy), HealthStatus::Unhealthy, 3)
        );
        assert_eq!(batch[0].reason, "errored");
        assert_eq!(
            (&*batch[1].name, batch[1].reason, batch[1].count),
            ("ready", "failing", 1)
        );
    }
}
