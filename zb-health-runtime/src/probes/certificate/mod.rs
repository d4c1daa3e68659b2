//! The certificate probe (`kind: certificate`, feature `certificate`): the
//! expiry of X.509 certificates, from one of two sources:
//!
//! * **PEM files**, reread on each run, so a mounted Secret that
//!   cert-manager renews is seen at the next run;
//! * **a TLS server's handshake** (feature `certificate-handshake`): the
//!   chain the server at a `host:port` presents, read on each run, so the
//!   certificate users really get is checked, wherever it is mounted.
//!
//! ```
//! use std::time::Duration;
//! use zb_health::probes::certificate::CertificateProbe;
//!
//! let registration = CertificateProbe::new("/etc/tls/tls.crt")
//!     .warn_within(Duration::from_secs(21 * 86_400))
//!     .registration("tls-cert");
//! # let _ = registration;
//! ```
//!
//! The manifest writes the same probe as
//! `{ name: tls-cert, kind: certificate, path: /etc/tls/tls.crt,
//! warn_within: 21d }`; `path` may be a list of files, and `warn_within`
//! (default 14 days, [`DEFAULT_WARN_WITHIN`]) is a whole number of days or
//! hours ([`zb_health::spec::certificate`](crate::spec::certificate)).
//!
//! # The handshake source
//!
//! `CertificateProbe::address("shop.example.com:443")` (the manifest's
//! `address: shop.example.com:443`; the port is 443 when none is written)
//! connects to the server on each run, completes a TLS 1.3 or 1.2
//! handshake, takes the chain it presents, and closes with `close_notify`
//! without sending a byte of application data. The handshake sends the
//! host as its server name (SNI), or the name given to `server_name`
//! (`server_name:`), e.g. to ask an ingress controller, reached by its
//! Service's address, for one site's certificate. An IP address sends no
//! name, as a browser does.
//!
//! It reads the chain; it does **not** judge trust: an expired,
//! self-signed, misnamed or X.509 v1 certificate is still read, since
//! reporting the expiry of exactly those is the point. Whether clients
//! trust the chain is the clients' check, and the probe's `Healthy` says
//! nothing about it. The probe's deadline bounds the connect
//! and the handshake together; a server that accepts and never answers is
//! `timed out`. A refused connection, a failed handshake or a server that
//! is not TLS is the probe's error, named with the address in the
//! transition log, as a file's error is.
//!
//! # What it answers
//!
//! Every certificate of every file counts (a chain: the leaf and its
//! intermediates); blocks of another kind, such as a private key, are
//! skipped. The certificate that expires first decides:
//!
//! * it has expired (its `notAfter` is past): `Unhealthy`, described
//!   [`EXPIRED_DESCRIPTION`];
//! * else one certificate is not valid yet (its `notBefore` is still to
//!   come, e.g. a clock or an issuer ahead of this machine): `Unhealthy`,
//!   described [`NOT_YET_VALID_DESCRIPTION`], and that certificate is the
//!   one the data names;
//! * else it expires within the warning window: `Degraded`, described
//!   [`EXPIRING_DESCRIPTION`];
//! * else `Healthy`.
//!
//! The entry's `data` (shown at `full` disclosure only, as every probe's
//! `data`) names the deciding certificate: `subject` (as `CN=…, O=…`),
//! `notBefore` and `notAfter` (RFC 3339, UTC) and `daysLeft` (whole days to
//! its `notAfter`, rounded down; negative once expired). As for every
//! probe, the registration's failure status caps the verdict.
//!
//! A file that cannot be read, holds no certificate, or holds one that is
//! not PEM or not X.509 is the probe's error: the entry is its failure
//! status (`Unhealthy` by default) with the fixed description `check
//! failed`, and the error, which names the path and what was wrong, goes to
//! the transition log only, never into a body.
//!
//! # Its gauge
//!
//! Each run that reads the files sets [`CERTIFICATE_EXPIRES_IN`](crate::observe::CERTIFICATE_EXPIRES_IN), the seconds left
//! before the first certificate to expire reaches its `notAfter`
//! (negative once expired), labelled `probe` with the name given to
//! [`registration`] or [`named`]; the manifest names it for you. A run that cannot read the
//! files leaves the gauge as it was: the probe's own status gauge shows
//! the failure.
//!
//! [`registration`]: CertificateProbe::registration
//! [`named`]: CertificateProbe::named

#[cfg(feature = "certificate-handshake")]
mod handshake;

use std::future::Future;
use std::path::{Path, PathBuf};
#[cfg(feature = "certificate-handshake")]
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use metrics::{Key, Label, with_recorder};
use x509_parser::certificate::X509Certificate;
use x509_parser::pem::Pem;
pub use zb_health_spec::certificate::DEFAULT_WARN_WITHIN;

use super::Blocking;
use crate::probe::{BoxProbeFuture, Probe, ProbeOutcome, ProbeResult};
use crate::registration::ProbeRegistration;
use crate::wallclock::{rfc3339, unix_ms};

/// The description of an entry whose first-expiring certificate has expired.
pub const EXPIRED_DESCRIPTION: &str = "certificate expired";
/// The description of an entry with a certificate whose `notBefore` is
/// still to come.
pub const NOT_YET_VALID_DESCRIPTION: &str = "certificate not yet valid";
/// The description of an entry whose first-expiring certificate expires
/// within the warning window.
pub const EXPIRING_DESCRIPTION: &str = "certificate expires within the warning window";

const DAY: i64 = 86_400;

/// The expiry of the certificates in PEM files or of a TLS server (see
/// the [module docs](self)).
pub struct CertificateProbe {
    /// Run on the blocking pool for files; the handshake is async.
    source: Blocking<Source>,
}

/// What one run reads and how it judges it.
#[derive(Debug, Clone)]
struct Source {
    from: Origin,
    warn_within: Duration,
    /// The gauge's key, once the probe has a name.
    gauge: Option<Key>,
}

/// Where a run reads the certificates.
#[derive(Debug, Clone)]
enum Origin {
    Files(Vec<PathBuf>),
    #[cfg(feature = "certificate-handshake")]
    Address(handshake::Handshake),
}

/// The validity of one certificate, as the verdict needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Validity {
    subject: String,
    /// Unix seconds.
    not_before: i64,
    /// Unix seconds.
    not_after: i64,
}

impl CertificateProbe {
    /// A probe of the certificates in the PEM file at `path` (a relative
    /// path is taken from the working directory at each run), warned
    /// [`DEFAULT_WARN_WITHIN`] ahead.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self::with_paths([path])
    }

    /// A probe of the certificates in all of `paths` (say, the leaf's file
    /// and the intermediates' file): the first to expire decides. With no
    /// path at all every run is an error.
    pub fn with_paths<P: Into<PathBuf>>(paths: impl IntoIterator<Item = P>) -> Self {
        Self::reading(Origin::Files(paths.into_iter().map(Into::into).collect()))
    }

    fn reading(from: Origin) -> Self {
        Self {
            source: Blocking::new(Source {
                from,
                warn_within: DEFAULT_WARN_WITHIN,
                gauge: None,
            }),
        }
    }

    /// `Degraded` once the first certificate to expire has less than
    /// `window` left.
    pub fn warn_within(self, window: Duration) -> Self {
        self.with(|s| s.warn_within = window)
    }

    /// Labels the [`CERTIFICATE_EXPIRES_IN`](crate::observe::CERTIFICATE_EXPIRES_IN) gauge with the probe's `name`, which must
    /// be the name it is registered under; [`registration`](Self::registration)
    /// does both at once. Unnamed, the probe sets no gauge.
    pub fn named(self, name: impl Into<String>) -> Self {
        let label = Label::new("probe", name.into());
        self.with(|s| {
            s.gauge = Some(Key::from_parts(
                crate::observe::CERTIFICATE_EXPIRES_IN,
                vec![label],
            ))
        })
    }

    /// The probe registered as `name`, its gauge labelled with the same
    /// name.
    pub fn registration(self, name: &str) -> ProbeRegistration {
        ProbeRegistration::new(name, self.named(name))
    }

    fn with(self, set: impl FnOnce(&mut Source)) -> Self {
        Self {
            source: self.source.with(set),
        }
    }
}

impl Probe for CertificateProbe {
    fn check(&self) -> impl Future<Output = ProbeOutcome> + Send {
        let run: BoxProbeFuture<'static> = match &self.source.settings().from {
            Origin::Files(_) => self.source.check(Source::read_files),
            #[cfg(feature = "certificate-handshake")]
            Origin::Address(handshake) => {
                // A clone per run: two short strings, beside a TLS handshake.
                let (handshake, source) = (handshake.clone(), Arc::clone(self.source.settings()));
                Box::pin(async move { source.judge(&handshake.chain().await?) })
            }
        };
        run
    }
}

impl Source {
    /// One read of every file, then [`judge`](Self::judge).
    fn read_files(&self) -> ProbeOutcome {
        let paths: &[PathBuf] = match &self.from {
            Origin::Files(paths) => paths,
            #[cfg(feature = "certificate-handshake")]
            Origin::Address(_) => &[],
        };
        let mut all = Vec::new();
        for path in paths {
            all.extend(read_pem_file(path)?);
        }
        self.judge(&all)
    }

    /// The verdict on what a run read, and the gauge.
    fn judge(&self, all: &[Validity]) -> ProbeOutcome {
        let now = i64::try_from(unix_ms(SystemTime::now()) / 1000).unwrap_or(i64::MAX);
        let (result, expires_in) = self.verdict(all, now).ok_or("no PEM file to read")?;
        if let Some(key) = &self.gauge {
            with_recorder(|r| {
                r.register_gauge(key, &crate::observe::METADATA)
                    .set(expires_in as f64);
            });
        }
        Ok(result)
    }

    /// The result for `certificates` at `now` (Unix seconds), and the
    /// seconds left to the first `notAfter`: the rule of the module docs.
    /// `None` for no certificate.
    fn verdict(&self, certificates: &[Validity], now: i64) -> Option<(ProbeResult, i64)> {
        let first = certificates.iter().min_by_key(|c| c.not_after)?;
        let early = certificates.iter().find(|c| c.not_before > now);
        let expires_in = first.not_after.saturating_sub(now);
        let window = i64::try_from(self.warn_within.as_secs()).unwrap_or(i64::MAX);
        let (result, named) = match early {
            _ if expires_in < 0 => (ProbeResult::unhealthy(EXPIRED_DESCRIPTION), first),
            Some(early) => (ProbeResult::unhealthy(NOT_YET_VALID_DESCRIPTION), early),
            None if expires_in < window => (ProbeResult::degraded(EXPIRING_DESCRIPTION), first),
            None => (ProbeResult::healthy(), first),
        };
        let result = result
            .with_data("subject", named.subject.as_str())
            .with_data("notBefore", time_text(named.not_before))
            .with_data("notAfter", time_text(named.not_after))
            .with_data(
                "daysLeft",
                named.not_after.saturating_sub(now).div_euclid(DAY),
            );
        Some((result, expires_in))
    }
}

impl Validity {
    fn of(cert: &X509Certificate<'_>) -> Validity {
        let validity = cert.validity();
        Validity {
            subject: cert.subject().to_string(),
            not_before: validity.not_before.timestamp(),
            not_after: validity.not_after.timestamp(),
        }
    }
}

/// Unix seconds as RFC 3339 in UTC (a time before 1970, which no real
/// certificate has, reads as the epoch).
fn time_text(secs: i64) -> String {
    rfc3339(u64::try_from(secs).unwrap_or(0).saturating_mul(1000))
}

/// The certificates of one PEM file; the error names the path and what
/// was wrong with it.
fn read_pem_file(path: &Path) -> Result<Vec<Validity>, String> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let mut found = Vec::new();
    for (index, block) in Pem::iter_from_buffer(&bytes).enumerate() {
        let block = block.map_err(|e| format!("{shown} is not valid PEM: {e}"))?;
        if block.label != "CERTIFICATE" {
            continue;
        }
        let cert = block.parse_x509().map_err(|e| {
            format!(
                "PEM block {} of {shown} is not an X.509 certificate: {e}",
                index + 1
            )
        })?;
        found.push(Validity::of(&cert));
    }
    if found.is_empty() {
        return Err(format!("{shown} holds no PEM certificate"));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zb_health_spec::HealthStatus;

    const NOW: i64 = 1_800_000_000;

    fn cert(subject: &str, not_before: i64, not_after: i64) -> Validity {
        Validity {
            subject: subject.into(),
            not_before,
            not_after,
        }
    }

    fn source() -> Source {
        Source {
            from: Origin::Files(Vec::new()),
            warn_within: Duration::from_secs(14 * 86_400),
            gauge: None,
        }
    }

    fn judged(certs: &[Validity]) -> (ProbeResult, i64) {
        source().verdict(certs, NOW).expect("a certificate")
    }

    #[test]
    fn the_window_is_crossed_inside_it_not_at_it() {
        let at_edge = judged(&[cert("CN=a", 0, NOW + 14 * DAY)]);
        assert_eq!(at_edge.0.status, HealthStatus::Healthy);
        let inside = judged(&[cert("CN=a", 0, NOW + 14 * DAY - 1)]);
        assert_eq!(inside.0.status, HealthStatus::Degraded);
        assert_eq!(inside.0.description.as_deref(), Some(EXPIRING_DESCRIPTION));
        assert_eq!(inside.1, 14 * DAY - 1);
        let data = inside.0.data.unwrap_or_default();
        assert_eq!(data["daysLeft"], 13);
    }

    #[test]
    fn expired_and_not_yet_valid_are_unhealthy() {
        let (expired, left) = judged(&[cert("CN=old", 0, NOW - DAY - 1)]);
        assert_eq!(expired.description.as_deref(), Some(EXPIRED_DESCRIPTION));
        assert_eq!(left, -DAY - 1);
        assert_eq!(expired.data.unwrap_or_default()["daysLeft"], -2);
        let (early, _) = judged(&[
            cert("CN=leaf", NOW + 60, NOW + 400 * DAY),
            cert("CN=ca", 0, NOW + 300 * DAY),
        ]);
        assert_eq!(early.status, HealthStatus::Unhealthy);
        assert_eq!(
            early.description.as_deref(),
            Some(NOT_YET_VALID_DESCRIPTION)
        );
        assert_eq!(early.data.unwrap_or_default()["subject"], "CN=leaf");
    }

    #[test]
    fn the_first_to_expire_decides_and_is_named() {
        let (r, left) = judged(&[
            cert("CN=leaf", 0, NOW + 90 * DAY),
            cert("CN=intermediate", 0, NOW + 3 * DAY),
        ]);
        assert_eq!(r.status, HealthStatus::Degraded);
        assert_eq!(left, 3 * DAY);
        let data = r.data.unwrap_or_default();
        assert_eq!(data["subject"], "CN=intermediate");
        assert_eq!(data["notAfter"], time_text(NOW + 3 * DAY));
        assert_eq!(time_text(0), "1970-01-01T00:00:00Z");
        assert!(source().verdict(&[], NOW).is_none());
    }

    #[test]
    fn unreadable_and_empty_files_are_errors_naming_the_path() {
        let missing = read_pem_file(Path::new("/no/such/zb-health.crt")).expect_err("missing");
        assert!(
            missing.starts_with("cannot read /no/such/zb-health.crt"),
            "{missing}"
        );
        let dir = std::env::temp_dir().join(format!("zb-health-cert-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "").expect("write");
        let err = read_pem_file(&empty).expect_err("empty");
        assert!(err.ends_with("empty.pem holds no PEM certificate"), "{err}");
        let junk = dir.join("junk.pem");
        std::fs::write(
            &junk,
            "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n",
        )
        .expect("write");
        let err = read_pem_file(&junk).expect_err("not X.509");
        assert!(
            err.contains("PEM block 1 of") && err.contains("junk.pem is not an X.509"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).ok();
        let none = CertificateProbe::with_paths(Vec::<PathBuf>::new());
        assert!(none.source.settings().read_files().is_err());
    }

    #[test]
    fn builder_sets_the_paths_window_and_gauge() {
        let p = CertificateProbe::with_paths(["a.pem", "b.pem"])
            .warn_within(Duration::from_secs(3600))
            .named("tls");
        let Origin::Files(paths) = &p.source.settings().from else {
            panic!("files")
        };
        assert_eq!(paths, &[PathBuf::from("a.pem"), PathBuf::from("b.pem")]);
        assert_eq!(p.source.settings().warn_within, Duration::from_secs(3600));
        let key = p.source.settings().gauge.as_ref().expect("named");
        assert_eq!(key.name(), crate::observe::CERTIFICATE_EXPIRES_IN);
        assert_eq!(
            CertificateProbe::new("a").source.settings().warn_within,
            DEFAULT_WARN_WITHIN
        );
    }
}
