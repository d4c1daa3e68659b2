//! A setting of the run time that cannot be used: the one error type of
//! every environment variable the library reads (`HOST`, `PORT`, …, from
//! [`ZbHealthServer::from_env`](crate::server::ZbHealthServer::from_env);
//! `CLUSTER_EXPECTED_SIZE` at install). A leaf, so the registration's
//! error can carry it without importing the server.

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

/// Chained setters on a view over a settings type (`ZbHealth` over
/// `EndpointSettings`): each forwards to the settings' own setter, so a
/// setting's setter, its doc and its rule are written once, on the
/// settings type.
macro_rules! forward_setters {
    ($view:ty => $field:ident: $settings:ident {
        $( fn $name:ident($($arg:ident: $ty:ty),*); )*
    }) => {
        impl $view {
            $(
                #[doc = concat!("[`", stringify!($settings), "::", stringify!($name), "`], chained.")]
                pub fn $name(mut self, $($arg: $ty),*) -> Self {
                    self.$field.$name($($arg),*);
                    self
                }
            )*
        }
    };
}
pub(crate) use forward_setters;

/// Setters that each set one field, as a table: `fn name(arg: T) =>
/// field.path = value;` makes the chained `pub fn name(mut self, arg: T)
/// -> Self` (with `&mut` before the type, `pub fn name(&mut self, arg: T)
/// -> &mut Self`), its doc and attributes given above it.
macro_rules! setters {
    (&mut $owner:ty { $(
        $(#[$attr:meta])*
        fn $name:ident($($arg:ident: $ty:ty),*) => $($field:ident).+ = $value:expr;
    )* }) => {
        impl $owner {
            $(
                $(#[$attr])*
                pub fn $name(&mut self, $($arg: $ty),*) -> &mut Self {
                    self.$($field).+ = $value;
                    self
                }
            )*
        }
    };
    ($owner:ty { $(
        $(#[$attr:meta])*
        fn $name:ident($($arg:ident: $ty:ty),*) => $($field:ident).+ = $value:expr;
    )* }) => {
        impl $owner {
            $(
                $(#[$attr])*
                pub fn $name(mut self, $($arg: $ty),*) -> Self {
                    self.$($field).+ = $value;
                    self
                }
            )*
        }
    };
}
pub(crate) use setters;
