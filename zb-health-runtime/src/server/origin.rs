//! Where the host and each port came from, so that a port that cannot be
//! bound is reported by the setting that chose it: the thing to change.

use std::error::Error;
use std::fmt;
use std::io;
use std::net::SocketAddr;

use crate::start::StartError;

/// The variables of the addresses, read by
/// [`from_env`](super::ZbHealthServer::from_env) and named by its errors.
pub(super) const HOST: &str = "HOST";
pub(super) const PORT: &str = "PORT";
pub(super) const MANAGEMENT_PORT: &str = "MANAGEMENT_PORT";
pub(super) const GRPC_PORT: &str = "GRPC_PORT";

/// Where a setting of the server got its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Not set: the default, which the variable would change.
    Default(&'static str),
    /// The environment variable of that name.
    Variable(&'static str),
    /// The manifest's key; the variable overrides it.
    Manifest {
        key: &'static str,
        variable: &'static str,
    },
    /// The builder method of that name, called in code.
    Code(&'static str),
}

impl Origin {
    /// The manifest's `management.port`, which `MANAGEMENT_PORT` overrides.
    pub(crate) const MANIFEST_MANAGEMENT_PORT: Self = Self::Manifest {
        key: "management.port",
        variable: MANAGEMENT_PORT,
    };
}

/// Where the host and each port of a server came from.
#[derive(Clone, Copy, Debug)]
pub(super) struct Origins {
    pub(super) host: Origin,
    pub(super) port: Origin,
    pub(super) management_port: Origin,
    pub(super) grpc_port: Origin,
}

impl Default for Origins {
    fn default() -> Self {
        Self {
            host: Origin::Default(HOST),
            port: Origin::Default(PORT),
            management_port: Origin::Default(MANAGEMENT_PORT),
            grpc_port: Origin::Default(GRPC_PORT),
        }
    }
}

/// A setting as a message names it: `MANAGEMENT_PORT=8081`, `PORT unset
/// (the default 8080)`, the manifest's key, or the builder method.
struct Named<T>(Origin, T);

impl<T: fmt::Display> fmt::Display for Named<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let value = &self.1;
        match self.0 {
            Origin::Variable(variable) => write!(f, "{variable}={value}"),
            Origin::Default(variable) => write!(f, "{variable} unset (the default {value})"),
            Origin::Manifest { key, variable } => write!(
                f,
                "the manifest's `{key}: {value}` ({variable} overrides it)"
            ),
            Origin::Code(method) => write!(f, "`ZbHealthServer::{method}` ({value})"),
        }
    }
}

/// A port that cannot be bound, named by the setting that chose it, with
/// the cause in plain words.
#[derive(Debug)]
pub(super) struct BindError {
    port: Origin,
    host: Origin,
    address: SocketAddr,
    cause: io::Error,
}

impl BindError {
    /// `cause`, from binding `address`, whose host and port come from
    /// `host` and `port`; as the error `main` returns.
    pub(super) fn start_error(
        host: Origin,
        port: Origin,
        address: SocketAddr,
        cause: io::Error,
    ) -> StartError {
        StartError::new(
            cause.kind(),
            Self {
                port,
                host,
                address,
                cause,
            },
        )
    }

    /// Whether the message has said the cause in words of its own, so
    /// the OS's text follows as the cause; otherwise it is in the message.
    fn worded(&self) -> bool {
        matches!(
            self.cause.kind(),
            io::ErrorKind::AddrInUse
                | io::ErrorKind::PermissionDenied
                | io::ErrorKind::AddrNotAvailable
        )
    }
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let address = self.address;
        let port = Named(self.port, address.port());
        match self.cause.kind() {
            io::ErrorKind::AddrInUse => write!(f, "{port}: {address} is already in use"),
            io::ErrorKind::PermissionDenied if (1..1024).contains(&address.port()) => write!(
                f,
                "{port}: {address} is a privileged port: binding a port below 1024 needs root or the CAP_NET_BIND_SERVICE capability; choose a port from 1024 up"
            ),
            io::ErrorKind::PermissionDenied => {
                write!(f, "{port}: binding {address} is not permitted")
            }
            io::ErrorKind::AddrNotAvailable => write!(
                f,
                "{}: {} is not an address of this machine, so {address} ({port}) cannot be bound; 127.0.0.1 (this machine only) and 0.0.0.0 (every interface) always can",
                Named(self.host, address.ip()),
                address.ip(),
            ),
            _ => write!(f, "{port}: cannot bind {address}: {}", self.cause),
        }
    }
}

impl Error for BindError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.worded()
            .then_some(&self.cause as &(dyn Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message and the printed error of a bind that failed with `kind`.
    fn refused(host: Origin, port: Origin, address: &str, cause: io::Error) -> (String, String) {
        let e = BindError::start_error(host, port, address.parse().unwrap(), cause);
        (e.to_string(), format!("{e:?}"))
    }

    #[test]
    fn a_taken_port_is_named_by_its_variable_with_the_address() {
        let (message, printed) = refused(
            Origin::Default(HOST),
            Origin::Variable(MANAGEMENT_PORT),
            "127.0.0.1:8081",
            io::Error::from(io::ErrorKind::AddrInUse),
        );
        assert_eq!(
            message,
            "MANAGEMENT_PORT=8081: 127.0.0.1:8081 is already in use"
        );
        assert!(
            printed.starts_with(&format!("{message}\n\nCaused by:\n    ")),
            "{printed}"
        );
    }

    #[test]
    fn a_port_not_from_the_environment_is_named_where_it_was_set() {
        let in_use = || io::Error::from(io::ErrorKind::AddrInUse);
        let host = Origin::Default(HOST);
        let cases = [
            (Origin::Default(PORT), "PORT unset (the default 8080)"),
            (Origin::Code("port"), "`ZbHealthServer::port` (8080)"),
            (
                Origin::Manifest {
                    key: "management.port",
                    variable: MANAGEMENT_PORT,
                },
                "the manifest's `management.port: 8080` (MANAGEMENT_PORT overrides it)",
            ),
        ];
        for (origin, named) in cases {
            let (message, _) = refused(host, origin, "127.0.0.1:8080", in_use());
            assert_eq!(
                message,
                format!("{named}: 127.0.0.1:8080 is already in use")
            );
        }
    }

    #[test]
    fn a_low_port_without_privileges_says_what_it_needs() {
        let denied = || io::Error::from(io::ErrorKind::PermissionDenied);
        let (message, _) = refused(
            Origin::Variable(HOST),
            Origin::Variable(PORT),
            "0.0.0.0:80",
            denied(),
        );
        assert_eq!(
            message,
            "PORT=80: 0.0.0.0:80 is a privileged port: binding a port below 1024 needs root or the CAP_NET_BIND_SERVICE capability; choose a port from 1024 up"
        );
        let (message, _) = refused(
            Origin::Variable(HOST),
            Origin::Variable(GRPC_PORT),
            "0.0.0.0:50051",
            denied(),
        );
        assert_eq!(
            message,
            "GRPC_PORT=50051: binding 0.0.0.0:50051 is not permitted"
        );
    }

    #[test]
    fn an_address_not_of_this_machine_is_named_by_the_host_setting() {
        let (message, _) = refused(
            Origin::Variable(HOST),
            Origin::Variable(PORT),
            "192.0.2.1:9000",
            io::Error::from(io::ErrorKind::AddrNotAvailable),
        );
        assert_eq!(
            message,
            "HOST=192.0.2.1: 192.0.2.1 is not an address of this machine, so 192.0.2.1:9000 (PORT=9000) cannot be bound; 127.0.0.1 (this machine only) and 0.0.0.0 (every interface) always can"
        );
    }

    #[test]
    fn another_cause_is_in_the_message_once() {
        let (message, printed) = refused(
            Origin::Default(HOST),
            Origin::Code("port"),
            "127.0.0.1:9000",
            io::Error::other("too many open files"),
        );
        assert_eq!(
            message,
            "`ZbHealthServer::port` (9000): cannot bind 127.0.0.1:9000: too many open files"
        );
        assert_eq!(printed, message);
    }
}
