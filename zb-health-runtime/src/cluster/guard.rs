//! The majority-guard setters of `ClusterActiveNode` and
//! `ClusterTransportProbe`, written once for both.

/// Writes `expected_size`, `allow_minority` and `with_guard` in an `impl`
/// of a type whose `guard: Option<MajorityGuard>` field they set, each
/// with the docs given before its name.
macro_rules! majority_guard_setters {
    (
        $(#[$size:meta])* expected_size;
        $(#[$minority:meta])* allow_minority;
        $(#[$whole:meta])* with_guard;
    ) => {
        $(#[$size])*
        pub fn expected_size(self, size: u32) -> Self {
            self.with_guard(::zb_health_spec::MajorityGuard::new(size))
        }

        $(#[$minority])*
        pub fn allow_minority(mut self) -> Self {
            self.guard = self
                .guard
                .map(::zb_health_spec::MajorityGuard::allow_minority);
            self
        }

        $(#[$whole])*
        pub fn with_guard(mut self, guard: ::zb_health_spec::MajorityGuard) -> Self {
            self.guard = Some(guard);
            self
        }
    };
}

pub(super) use majority_guard_setters;
