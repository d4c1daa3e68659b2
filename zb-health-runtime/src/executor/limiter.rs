//! The registry's in-flight bound (BE-HLTH-006): how many probe
//! executions may run at once across every request.

use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The registry-wide in-flight bound (BE-HLTH-006, `max_in_flight`). A
/// free slot costs one compare-and-swap to take and one subtraction to
/// give back (tokio's semaphore locks a mutex on every release); only a
/// run that finds none free waits, on `freed`.
pub(super) struct Limiter {
    pub(super) max: usize,
    pub(super) taken: AtomicUsize,
    /// Runs waiting for a slot: a release notifies only while there are.
    pub(super) waiting: AtomicUsize,
    pub(super) freed: tokio::sync::Notify,
}

/// A slot taken by a first poll, given back when dropped (a panic
/// included) unless it is forgotten into a [`HeldSlot`].
pub(super) struct SlotGuard<'a>(&'a Limiter);

impl Drop for SlotGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.give();
    }
}

impl Limiter {
    pub(super) fn new(max: usize) -> Self {
        Self {
            max,
            taken: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            freed: tokio::sync::Notify::new(),
        }
    }

    /// A slot if one is free now.
    #[inline]
    pub(super) fn try_take(&self) -> Option<SlotGuard<'_>> {
        // Sequentially consistent, with `waiting`, so a release that sees
        // no waiter is seen by the waiter's own next try (see `take`).
        self.taken
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()
            .map(|_| SlotGuard(self))
    }

    /// Waits until a slot is free and takes it; the caller gives it back.
    pub(super) async fn take(&self) {
        if let Some(taken) = self.try_take() {
            std::mem::forget(taken);
            return;
        }
        self.waiting.fetch_add(1, Ordering::SeqCst);
        // Counted off however the wait ends: taken, or dropped at the
        // deadline.
        struct Waiter<'a>(&'a AtomicUsize);
        impl Drop for Waiter<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let _waiter = Waiter(&self.waiting);
        loop {
            let mut freed = pin!(self.freed.notified());
            // Registered before the try, so a release between the two
            // still wakes this waiter.
            freed.as_mut().enable();
            if let Some(taken) = self.try_take() {
                std::mem::forget(taken);
                return;
            }
            freed.await;
        }
    }

    #[inline]
    pub(super) fn give(&self) {
        self.taken.fetch_sub(1, Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.freed.notify_one();
        }
    }
}
