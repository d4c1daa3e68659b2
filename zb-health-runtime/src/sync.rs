//! The one way the runtime takes a `std::sync::Mutex` or `RwLock`.
//!
//! A poisoned lock is taken anyway: every critical section in the runtime
//! replaces its values whole or copies plain ones, and cannot panic
//! half-way, so a panic elsewhere (a probe's, a handler's) carries no
//! meaning for the guarded data and must never stop a health answer.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks `m`, taking a poisoned lock as it is.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reads `l`, taking a poisoned lock as it is.
pub(crate) fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

/// Writes `l`, taking a poisoned lock as it is.
pub(crate) fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}
