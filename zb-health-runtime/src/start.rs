//! [`StartError`]: what a service's `main` returns, printed as words.

use std::error::Error;
use std::fmt;
use std::io;

use crate::registration::RegistryError;
use crate::setting::SettingError;

/// Why a service did not start: a setting it cannot use, an install the
/// rules refuse, a port it cannot bind, a database it cannot open; or why
/// its server failed later. What a service's `main` returns.
///
/// Rust prints the error `main` returns with `Debug`. This one's `Debug`
/// is its message, then its causes, as anyhow's is, so a service whose
/// management port is taken ends with
///
/// ```text
/// Error: MANAGEMENT_PORT=8081: 127.0.0.1:8081 is already in use
///
/// Caused by:
///     Address already in use (os error 98)
/// ```
///
/// and not with the `Os { code: 98, kind: AddrInUse, … }` an
/// [`io::Error`] prints. `?` turns the library's start-up errors
/// ([`SettingError`], [`RegistryError`]) and any [`io::Error`] into it; it
/// turns into an [`io::Error`] of the same [`kind`](Self::kind) for a
/// `main` that returns `io::Result`, and back without a second layer.
///
/// ```no_run
/// use std::time::Duration;
/// use zb_health::lifecycle::Drain;
/// use zb_health::server::ZbHealthServer;
/// use zb_health::prelude::{HealthRegistry, StartError, map_zb_health};
///
/// #[actix_web::main]
/// async fn main() -> Result<(), StartError> {
///     let registry = HealthRegistry::new();
///     let endpoints = map_zb_health(registry.clone());
///     let drain = Drain::new(Duration::from_secs(5));
///     // A bad variable, or a port that cannot be bound, ends `main` here.
///     ZbHealthServer::new(registry, endpoints, drain).from_env()?.run().await
/// }
/// ```
pub struct StartError {
    kind: io::ErrorKind,
    error: Box<dyn Error + Send + Sync + 'static>,
}

impl StartError {
    /// `error`, which converts into an [`io::Error`] of `kind`.
    pub(crate) fn new(kind: io::ErrorKind, error: impl Error + Send + Sync + 'static) -> Self {
        Self {
            kind,
            error: Box::new(error),
        }
    }

    /// The kind of [`io::Error`] it converts into: `AddrInUse` for a taken
    /// port, `InvalidInput` for a setting or a rule, the I/O error's own
    /// kind for one.
    pub fn kind(&self) -> io::ErrorKind {
        self.kind
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

/// The message, then `Caused by:` and each cause, as anyhow prints. A
/// cause whose text repeats the line above it is left out: an error that
/// shows its source's message as its own says it once.
impl fmt::Debug for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")?;
        let mut causes: Vec<String> = Vec::new();
        let mut above = self.to_string();
        let mut next = self.source();
        while let Some(cause) = next {
            let text = cause.to_string();
            if text != above {
                causes.push(text.clone());
            }
            above = text;
            next = cause.source();
        }
        match causes.as_slice() {
            [] => Ok(()),
            [one] => write!(f, "\n\nCaused by:\n    {one}"),
            many => {
                write!(f, "\n\nCaused by:")?;
                for (i, cause) in many.iter().enumerate() {
                    write!(f, "\n{i:>5}: {cause}")?;
                }
                Ok(())
            }
        }
    }
}

impl Error for StartError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.error.source()
    }
}

/// Any I/O error (a database that cannot be opened, a server that
/// failed); one made from a `StartError` is unwrapped, not wrapped again.
impl From<io::Error> for StartError {
    fn from(e: io::Error) -> Self {
        match e.downcast::<StartError>() {
            Ok(start) => start,
            Err(e) => Self::new(e.kind(), e),
        }
    }
}

/// A variable refused at start, naming it.
impl From<SettingError> for StartError {
    fn from(e: SettingError) -> Self {
        Self::new(io::ErrorKind::InvalidInput, e)
    }
}

/// An install the rules refuse, with every broken rule.
impl From<RegistryError> for StartError {
    fn from(e: RegistryError) -> Self {
        Self::new(io::ErrorKind::InvalidInput, e)
    }
}

/// For a `main` that returns `io::Result`: an I/O error comes back out as
/// it went in, anything else is the error of an `io::Error` of its kind.
impl From<StartError> for io::Error {
    fn from(e: StartError) -> Self {
        let StartError { kind, error } = e;
        match error.downcast::<io::Error>() {
            Ok(io) => *io,
            Err(error) => io::Error::new(kind, StartError { kind, error }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting() -> SettingError {
        SettingError {
            variable: "PORT",
            value: "eighty".into(),
            reason: "invalid digit found in string; expected a port number, 0 to 65535".into(),
        }
    }

    #[test]
    fn a_setting_prints_as_its_message_with_no_debug_noise() {
        let e = StartError::from(setting());
        assert_eq!(
            format!("{e:?}"),
            "PORT=\"eighty\": invalid digit found in string; expected a port number, 0 to 65535"
        );
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn a_registry_error_that_shows_its_source_says_it_once() {
        let e = StartError::from(RegistryError::Setting(setting()));
        assert_eq!(format!("{e:?}"), setting().to_string());
    }

    #[test]
    fn an_os_error_prints_its_words_not_its_fields() {
        let e = StartError::from(io::Error::from_raw_os_error(98));
        let printed = format!("{e:?}");
        assert!(printed.contains("(os error 98)"), "{printed}");
        assert!(!printed.contains("Os {"), "{printed}");
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
    }

    /// An error with a message and an optional source.
    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<dyn Error + Send + Sync>>);

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl Error for Layer {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1.as_deref().map(|e| e as &(dyn Error + 'static))
        }
    }

    #[test]
    fn causes_follow_the_message_as_anyhow_prints_them() {
        let root = || Box::new(io::Error::other("the root")) as Box<dyn Error + Send + Sync>;
        let one = StartError::new(io::ErrorKind::Other, Layer("cannot start", Some(root())));
        assert_eq!(
            format!("{one:?}"),
            "cannot start\n\nCaused by:\n    the root"
        );
        let middle = Layer("the pool failed", Some(root()));
        let two = StartError::new(
            io::ErrorKind::Other,
            Layer("cannot start", Some(Box::new(middle))),
        );
        assert_eq!(
            format!("{two:?}"),
            "cannot start\n\nCaused by:\n    0: the pool failed\n    1: the root"
        );
        // An io::Error around an error shows that error's text: said once.
        let wrapped = io::Error::other(Layer("the pool failed", Some(root())));
        let once = StartError::from(wrapped);
        assert_eq!(
            format!("{once:?}"),
            "the pool failed\n\nCaused by:\n    the root"
        );
    }

    #[test]
    fn it_goes_through_io_error_and_back_without_a_layer() {
        let e = StartError::from(setting());
        let io: io::Error = e.into();
        assert_eq!(io.kind(), io::ErrorKind::InvalidInput);
        let back = StartError::from(io);
        assert_eq!(format!("{back:?}"), setting().to_string());
        // An I/O error comes out as the one that went in.
        let os: io::Error = StartError::from(io::Error::from_raw_os_error(98)).into();
        assert_eq!(os.raw_os_error(), Some(98));
    }
}
