//! The built-in probe batteries, each in its own module behind its own
//! feature, so a service builds only the ones it uses.

#[cfg(feature = "certificate")]
pub mod certificate;
#[cfg(feature = "disk")]
pub mod disk;
#[cfg(feature = "http-probe")]
pub mod http;
#[cfg(feature = "redis")]
pub mod redis;

#[cfg(any(feature = "disk", feature = "certificate"))]
pub(crate) use blocking::Blocking;

/// Why a battery could not be made from its target (a URL or an address),
/// or why one of its runs failed: the text names the target, a URL's
/// password shown as `***`. One type for every battery that connects
/// somewhere, so a service handles their construction errors alike.
#[cfg(any(
    feature = "http-probe",
    feature = "redis",
    feature = "certificate-handshake"
))]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetError(pub(crate) String);

#[cfg(any(
    feature = "http-probe",
    feature = "redis",
    feature = "certificate-handshake"
))]
impl std::fmt::Display for TargetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(any(
    feature = "http-probe",
    feature = "redis",
    feature = "certificate-handshake"
))]
impl std::error::Error for TargetError {}

/// The shape of a battery whose run is blocking code over its settings.
#[cfg(any(feature = "disk", feature = "certificate"))]
mod blocking {
    use std::sync::{Arc, OnceLock};

    use crate::probe::{BoxProbeFuture, DynProbe, ProbeOutcome, from_blocking_fn};

    /// A battery's settings `T` and the call that runs `T`'s blocking
    /// check on tokio's blocking pool ([`from_blocking_fn`]), made on the
    /// first run so the builder methods stay plain setters; one per probe,
    /// so one call in flight.
    pub(crate) struct Blocking<T> {
        settings: Arc<T>,
        calls: OnceLock<Arc<dyn DynProbe>>,
    }

    impl<T: Clone + Send + Sync + 'static> Blocking<T> {
        pub(crate) fn new(settings: T) -> Self {
            Self {
                settings: Arc::new(settings),
                calls: OnceLock::new(),
            }
        }

        /// What the builder set: the certificate probe's run reads its
        /// source from it, the batteries' unit tests their settings.
        #[cfg(any(test, feature = "certificate"))]
        pub(crate) fn settings(&self) -> &Arc<T> {
            &self.settings
        }

        /// The same battery with `set` applied to its settings.
        pub(crate) fn with(self, set: impl FnOnce(&mut T)) -> Self {
            let mut settings = Arc::unwrap_or_clone(self.settings);
            set(&mut settings);
            Self::new(settings)
        }

        /// One run of `run` over the settings, on the blocking pool.
        pub(crate) fn check(&self, run: fn(&T) -> ProbeOutcome) -> BoxProbeFuture<'static> {
            let calls = self.calls.get_or_init(|| {
                let settings = Arc::clone(&self.settings);
                Arc::new(from_blocking_fn(move || run(&settings)))
            });
            Arc::clone(calls).check_owned()
        }
    }
}
