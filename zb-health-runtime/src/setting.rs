//! A setting of the run time that cannot be used: the one error type of
//! every environment variable the library reads (`HOST`, `PORT`, …, from
//! [`ZbHealthServer::from_env`](crate::server::ZbHealthServer::from_env);
//! `CLUSTER_EXPECTED_SIZE` at install). A leaf, so the registration's
//! error can carry it without importing the server.
//!
//! Also [`setters!`]: the table that writes each builder's chained
//! setters once (`ProbeRegistration`, `HealthRegistryBuilder`,
//! `EndpointSettings` with `ZbHealth`'s forwards, `HealthGroup`,
//! `OperatorControls`, `ZbHealthServer`, `WebhookPublisher`).

use std::fmt;

/// A setting from the environment that cannot be used: refused at start,
/// naming the variable (and never a silent fallback to the default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingError {
    /// The variable, e.g. `HOST`.
    pub variable: &'static str,
    /// Its value, as set.
    pub value: String,
    /// Why it cannot be used, and what would do.
    pub reason: String,
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={:?}: {}", self.variable, self.value, self.reason)
    }
}

impl std::error::Error for SettingError {}

/// The process environment, as the lookup every `from_lookup` of the
/// library's settings takes (their `from_env` passes it).
pub(crate) fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The variable `name` of `lookup`, unset when blank: an empty variable
/// (`X=` in a shell or a pod spec) is no setting, for every variable the
/// library reads.
pub(crate) fn non_blank(lookup: impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name).filter(|v| !v.trim().is_empty())
}

/// Setters as a table, each written once: `fn name(arg: T) => a.b =
/// value;` sets one field, `fn name(arg: T) |s| { … }` runs a block on
/// `s`, the settings. Makes the chained `pub fn name(mut self, arg: T) ->
/// Self`, with its doc and attributes given above it; with `&mut Type =>
/// View.field`, `pub fn name(&mut self, arg: T) -> &mut Self` on the
/// settings type and, on the view over it (`ZbHealth` over
/// `EndpointSettings`), a chained setter that forwards to it.
macro_rules! setters {
    (&mut $owner:ident => $view:ident.$settings:ident { $(
        $(#[$attr:meta])*
        fn $name:ident($($arg:ident: $ty:ty),*)
            $(=> $($field:ident).+ = $value:expr;)? $(|$s:ident| $body:block;)?
    )* }) => {
        impl $owner {
            $(
                $(#[$attr])*
                pub fn $name(&mut self, $($arg: $ty),*) -> &mut Self {
                    $(self.$($field).+ = $value;)?
                    $(let $s = &mut *self; $body)?
                    self
                }
            )*
        }
        impl $view {
            $(
                #[doc = concat!("[`", stringify!($owner), "::", stringify!($name), "`], chained.")]
                pub fn $name(mut self, $($arg: $ty),*) -> Self {
                    self.$settings.$name($($arg),*);
                    self
                }
            )*
        }
    };
    ($owner:ty { $(
        $(#[$attr:meta])*
        fn $name:ident($($arg:ident: $ty:ty),*)
            $(=> $($field:ident).+ = $value:expr;)? $(|$s:ident| $body:block;)?
    )* }) => {
        impl $owner {
            $(
                $(#[$attr])*
                pub fn $name(mut self, $($arg: $ty),*) -> Self {
                    $(self.$($field).+ = $value;)?
                    $(let $s = &mut self; $body)?
                    self
                }
            )*
        }
    };
}
pub(crate) use setters;
