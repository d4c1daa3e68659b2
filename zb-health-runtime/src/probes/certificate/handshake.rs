//! The handshake source (feature `certificate-handshake`): the chain a TLS
//! server presents, read with rustls over a tokio socket (see the
//! [module docs](super#the-handshake-source)).

use std::io;
use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, ring};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, SignatureScheme};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use zb_health_spec::certificate::{
    ADDRESS_SYNTAX, SERVER_NAME_SYNTAX, check_server_name, parse_address,
};

use super::{CertificateProbe, Origin, Validity};
use crate::probes::TargetError;

/// Where to connect and the name to send.
#[derive(Debug, Clone)]
pub(super) struct Handshake {
    /// `host:port`, as the messages show it.
    connect: String,
    server_name: ServerName<'static>,
}

impl CertificateProbe {
    /// A probe of the chain the TLS server at `address` presents,
    /// `host[:port]` (443 when it names none), warned
    /// [`DEFAULT_WARN_WITHIN`](super::DEFAULT_WARN_WITHIN) ahead. The
    /// handshake sends the host as its server name; see
    /// [`server_name`](Self::server_name).
    ///
    /// # Errors
    ///
    /// `address` is not a `host:port` (the rule of
    /// [`zb_health_spec::certificate::parse_address`], which the manifest
    /// applies at compile time).
    pub fn address(address: &str) -> Result<Self, TargetError> {
        let parsed = parse_address(address)
            .map_err(|why| TargetError(format!("{why}; {ADDRESS_SYNTAX}")))?;
        let server_name = server_name(&parsed.server_name)?;
        Ok(Self::reading(Origin::Address(Handshake {
            connect: parsed.connect,
            server_name,
        })))
    }

    /// Sends `name` as the handshake's server name (SNI) instead of the
    /// address's host: e.g. the site whose certificate to ask an ingress
    /// controller for, reached by its Service's address.
    ///
    /// # Errors
    ///
    /// `name` is neither a DNS name nor an IP address
    /// ([`zb_health_spec::certificate::check_server_name`]), or the probe
    /// reads PEM files, which send no name.
    pub fn server_name(self, name: &str) -> Result<Self, TargetError> {
        let name = server_name(name)?;
        if !matches!(self.source.settings().from, Origin::Address(_)) {
            return Err(TargetError(
                "a server name applies to a probe made with `CertificateProbe::address`, and this one reads PEM files".to_owned(),
            ));
        }
        Ok(self.with(|s| {
            if let Origin::Address(h) = &mut s.from {
                h.server_name = name;
            }
        }))
    }
}

/// `name` as the handshake sends it, checked by the spec's rule first so
/// the code and the manifest refuse the same names.
fn server_name(name: &str) -> Result<ServerName<'static>, TargetError> {
    check_server_name(name).map_err(|why| TargetError(format!("{why}; {SERVER_NAME_SYNTAX}")))?;
    ServerName::try_from(name.to_owned())
        .map_err(|e| TargetError(format!("`{name}` is not a server name: {e}")))
}

impl Handshake {
    /// Connects, hands shake, closes, and reads the chain the server
    /// presented.
    pub(super) async fn chain(&self) -> Result<Vec<Validity>, String> {
        let at = &self.connect;
        let mut tcp = TcpStream::connect(at)
            .await
            .map_err(|e| format!("cannot connect to {at}: {e}"))?;
        let mut tls = ClientConnection::new(Arc::clone(config()), self.server_name.clone())
            .map_err(|e| format!("TLS handshake with {at} failed: {e}"))?;
        let shaken = shake(&mut tls, &mut tcp).await;
        if shaken.is_ok() {
            // The client's last flight and a clean close, so the server
            // logs an orderly goodbye rather than a reset. Its failure
            // changes nothing: the chain is already read.
            tls.send_close_notify();
            let _ = flush(&mut tls, &mut tcp).await;
            let _ = tcp.shutdown().await;
        }
        // A handshake can fail after the server showed its chain: a server
        // that requires a client certificate ends TLS 1.2 there. The chain
        // is still the one to judge.
        let presented = match (tls.peer_certificates(), shaken) {
            (Some(chain), _) if !chain.is_empty() => chain,
            (_, Err(e)) => return Err(format!("TLS handshake with {at} failed: {e}")),
            (_, Ok(())) => return Err(format!("{at} presented no certificate")),
        };
        presented
            .iter()
            .enumerate()
            .map(|(index, der)| {
                x509_parser::parse_x509_certificate(der)
                    .map(|(_, cert)| Validity::of(&cert))
                    .map_err(|e| {
                        format!(
                            "certificate {} presented by {at} is not X.509: {e}",
                            index + 1
                        )
                    })
            })
            .collect()
    }
}

/// Drives the handshake to its end on the client's side.
async fn shake(tls: &mut ClientConnection, tcp: &mut TcpStream) -> io::Result<()> {
    let mut buf = vec![0u8; 16 * 1024];
    while tls.is_handshaking() {
        flush(tls, tcp).await?;
        let n = tcp.read(&mut buf).await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        let mut read = &buf[..n];
        while !read.is_empty() {
            tls.read_tls(&mut read)?;
            tls.process_new_packets().map_err(io::Error::other)?;
        }
    }
    Ok(())
}

/// Writes all the TLS records rustls has queued.
async fn flush(tls: &mut ClientConnection, tcp: &mut TcpStream) -> io::Result<()> {
    let mut out = Vec::new();
    while tls.wants_write() {
        tls.write_tls(&mut out)?;
    }
    tcp.write_all(&out).await
}

/// The one client configuration of every probe: ring's algorithms, TLS
/// 1.3 and 1.2, any chain accepted (see [`ReadAnyChain`]).
fn config() -> &'static Arc<ClientConfig> {
    static CONFIG: OnceLock<Arc<ClientConfig>> = OnceLock::new();
    CONFIG.get_or_init(|| {
        // rustls 0.23.48 deprecates ring's provider for lacking
        // post-quantum key exchange, which guards a session's traffic for
        // years to come; this handshake carries none, and every server
        // offers the classical groups beside the hybrid ones. ring builds
        // with a C compiler alone, aws-lc with much more.
        #[allow(deprecated)]
        let provider = Arc::new(ring::default_provider());
        let config = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_protocol_versions(rustls::ALL_VERSIONS)
            .expect("ring supports TLS 1.2 and 1.3")
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(ReadAnyChain(provider)))
            .with_no_client_auth();
        Arc::new(config)
    })
}

/// Accepts whatever the server presents: the probe reports expiry, and an
/// expired, untrusted or legacy (X.509 v1) chain is exactly what it must
/// be able to read. The handshake's signatures are accepted unchecked too:
/// they would prove the server holds the key of a chain nobody vouches
/// for, which a man in the middle can do with a key of its own, and
/// checking them refuses the v1 certificates the chain check lets through.
#[derive(Debug)]
struct ReadAnyChain(Arc<CryptoProvider>);

impl ServerCertVerifier for ReadAnyChain {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn verify_tls13_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    /// The schemes offered to the server: every one ring knows, so any
    /// server finds one to sign with.
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec's rule, which the manifest applies at compile time, never
    /// lets through a name the TLS client refuses (the generated code
    /// relies on it).
    #[test]
    fn the_spec_rule_is_at_least_as_strict_as_the_tls_client() {
        let long = format!("{}.com", "a".repeat(63));
        let too_long = format!("{}.com", "a".repeat(64));
        for name in [
            "shop",
            "shop.example.com",
            "x_y.z",
            "_srv.example",
            "1.2.3.4.com",
            "a-b.c",
            "127.0.0.1",
            "::1",
            "10.0.0.7",
            "shop.",
            "shop.1",
            "h.0x7f",
            "h.0X1F",
            "h.0xz",
            "0",
            "1.2.3",
            "-a.com",
            "a-.com",
            "a..b",
            "",
            "sh op",
            "ex*mple.com",
            &long,
            &too_long,
            "xn--bcher-kva.example",
            "é.example",
        ] {
            if check_server_name(name).is_ok() {
                assert!(
                    ServerName::try_from(name.to_owned()).is_ok(),
                    "the spec lets `{name}` through, the TLS client refuses it"
                );
            }
        }
    }

    #[test]
    fn an_address_and_a_server_name_are_checked_by_the_spec_rule() {
        let probe = CertificateProbe::address("shop.example.com").expect("valid");
        let Origin::Address(h) = &probe.source.settings().from else {
            panic!("address")
        };
        assert_eq!(h.connect, "shop.example.com:443");
        assert_eq!(h.server_name.to_str(), "shop.example.com");
        let named = probe.server_name("other.example.com").expect("valid");
        let Origin::Address(h) = &named.source.settings().from else {
            panic!("address")
        };
        assert_eq!(h.server_name.to_str(), "other.example.com");
        let err = CertificateProbe::address("https://shop")
            .err()
            .expect("a URL");
        assert!(err.to_string().contains("is a URL"), "{err}");
        let err = CertificateProbe::address("shop:443")
            .and_then(|p| p.server_name("-bad"))
            .err()
            .expect("a bad name");
        assert!(err.to_string().contains("DNS name"), "{err}");
        let err = CertificateProbe::new("tls.crt")
            .server_name("shop")
            .err()
            .expect("files send no name");
        assert!(err.to_string().contains("reads PEM files"), "{err}");
    }
}
