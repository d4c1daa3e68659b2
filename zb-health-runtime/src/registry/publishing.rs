//! The transition publishers through the registry.

use std::sync::Arc;
use std::time::Duration;

use super::inner::HealthRegistry;
use crate::executor::spawn_on_probe_thread;
use crate::publish::TransitionPublisher;

/// The transition publishers ([`crate::publish`]).
impl HealthRegistry {
    /// Sends every tier and probe transition (after hysteresis) to
    /// `publisher`, grouped per window, through a bounded queue on the
    /// library's probe thread: a slow or failing publisher never delays a
    /// probe or an answer, and what does not fit the queue is dropped and
    /// counted ([`dropped_transitions`](Self::dropped_transitions)).
    /// Nothing is published while the service starts or drains.
    pub fn add_transition_publisher(&self, publisher: impl TransitionPublisher) {
        self.inner
            .transitions
            .add(Arc::new(publisher), spawn_on_probe_thread);
    }

    /// How long transitions are gathered before they are published
    /// ([`DEFAULT_WINDOW`](crate::publish::DEFAULT_WINDOW)): the same tier
    /// or probe changing several times inside it is one message with a
    /// count. Set it before the first publisher is added.
    pub fn set_transition_window(&self, window: Duration) {
        self.inner.transitions.set_window(window);
    }

    /// Publishes the transitions gathered so far now, not at their
    /// window's end, and returns once every publisher had them: the drain
    /// does it when its servers have stopped, so the last transitions
    /// before it are not lost with the process.
    pub(crate) async fn flush_transitions(&self) {
        self.inner.transitions.flush().await;
    }

    /// How many transitions were dropped because the queue was full.
    pub fn dropped_transitions(&self) -> u64 {
        self.inner.transitions.dropped()
    }
}
