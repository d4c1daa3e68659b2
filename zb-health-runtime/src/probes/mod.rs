//! The built-in probe batteries, each in its own module behind its own
//! feature, so a service builds only the ones it uses.

#[cfg(feature = "certificate")]
pub mod certificate;
#[cfg(feature = "disk")]
pub mod disk;
#[cfg(feature = "http-probe")]
pub mod http;
