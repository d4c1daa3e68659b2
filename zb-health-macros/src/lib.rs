//! Proc macros of zb-health. Depend on `zb-health-runtime` instead, which
//! re-exports them (as tokio does with tokio-macros); generated code names
//! the runtime by the absolute path `::zb_health`, or by `crate = "..."`.
//!
//! Stages, after serde_derive: [`attr`] parses the attribute into typed
//! settings, the shared `zb-health-spec` crate checks every spec rule, and
//! [`errors`] collects all violations into compile errors. The macros never
//! panic: every failure is a `compile_error!` at the offending token.

#![warn(missing_docs)]

mod attr;
mod builtin;
mod errors;
mod manifest;

#[cfg(test)]
mod tests;

use proc_macro::TokenStream;

/// Declares a probe struct's metadata and checks it against the spec:
///
/// ```text
/// #[zb_health(name = "cache", tags = [ready], timeout = "750ms", failure_status = degraded)]
/// struct CacheProbe { /* ... */ }
/// impl zb_health::Probe for CacheProbe { /* ... */ }
/// ```
///
/// Keys: `name` (required), `tags` (default `[ready]`), `timeout` (default
/// `1s`), `failure_status` (`unhealthy` by default, or `degraded`), and
/// `crate = "path"` for a renamed runtime dependency. A `live` tag, an
/// empty name, a malformed duration or an unknown key is a compile error.
#[proc_macro_attribute]
pub fn zb_health(args: TokenStream, item: TokenStream) -> TokenStream {
    attr::expand(args.into(), item.into()).into()
}

/// Reads a `health.yaml` manifest at compile time and generates the
/// service's typed health registration:
///
/// ```text
/// zb_health::manifest!("health.yaml");          // relative to this file
/// zb_health::manifest!(yaml = r#"service: x"#);  // inline
/// ```
///
/// It expands to `HealthDeps`, a struct with one field per probe the
/// manifest names, and `HealthManifest`, whose `install(&registry, deps)`
/// registers them and yields the endpoints. Every spec violation in the
/// file is a compile error naming its line and column; editing the file
/// rebuilds the crate.
#[proc_macro]
pub fn manifest(input: TokenStream) -> TokenStream {
    let caller = proc_macro::Span::call_site().local_file();
    manifest::expand(input.into(), caller).into()
}
