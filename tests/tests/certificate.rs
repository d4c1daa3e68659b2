//! `kind: certificate` on real X.509 files the test makes with the openssl
//! CLI (Debian's, which `tests/run.sh` installs where it is missing): a
//! valid one, one near expiry, an expired one, one not yet valid, and a
//! chain whose intermediate expires before its leaf, each served over a
//! real socket; the file replaced between runs; a missing file; the data at
//! `full` disclosure only; the expiry gauge; and the manifest's form.
//!
//! The handshake source (`address:`) reads the same certificates from a
//! real TLS server, `openssl s_server` on a loopback port: over TLS 1.3 and
//! 1.2, a chain, the name sent (SNI) choosing the certificate, and a
//! server that refuses, one that never answers and one that is not TLS.
//!
//! `openssl req -x509 -days N` makes the valid and near-expiry ones; the
//! fixed past and future dates go through `openssl ca -startdate/-enddate`
//! and a throwaway CA directory (OpenSSL 3.0's `req` cannot set them).

mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use support::{request, serve};
use zb_health::prelude::{HealthRegistry, Probe, ZbHealth, map_zb_health};
use zb_health::probes::certificate::{
    CertificateProbe, EXPIRED_DESCRIPTION, EXPIRING_DESCRIPTION, NOT_YET_VALID_DESCRIPTION,
};
use zb_health::spec::Disclosure;

const DAY: f64 = 86_400.0;

/// `openssl ca` validity of an expired certificate: January 2020.
const EXPIRED: [&str; 4] = [
    "-startdate",
    "20200101000000Z",
    "-enddate",
    "20200201000000Z",
];
/// `openssl ca` validity of one not valid yet: from 2099.
const NOT_YET_VALID: [&str; 4] = [
    "-startdate",
    "20990101000000Z",
    "-enddate",
    "21000101000000Z",
];

/// A fresh directory for one test's keys and certificates, removed on drop.
struct Pki {
    dir: PathBuf,
}

impl Pki {
    fn new(test: &str) -> Pki {
        let dir =
            std::env::temp_dir().join(format!("zb-health-cert-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // `openssl ca`'s database: an index and a serial.
        std::fs::write(dir.join("index.txt"), "").unwrap();
        std::fs::write(dir.join("serial"), "1000\n").unwrap();
        std::fs::write(
            dir.join("ca.cnf"),
            format!(
                "[ca]\ndefault_ca = ca_default\n\
                 [ca_default]\ndir = {dir}\ndatabase = $dir/index.txt\nnew_certs_dir = $dir\n\
                 serial = $dir/serial\ndefault_md = sha256\npolicy = any\nunique_subject = no\n\
                 [any]\ncommonName = supplied\n\
                 [intermediate]\nbasicConstraints = critical,CA:true\n",
                dir = dir.display()
            ),
        )
        .unwrap();
        Pki { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// `openssl` with `args`, panicking with its stderr on failure.
    fn openssl(&self, args: &[&str]) {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(&self.dir)
            .output()
            .expect("the openssl CLI (tests/run.sh installs it)");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `openssl req` with `what` (`-x509 …` or `-new`): a fresh P-256 key
    /// in `key`, the certificate or request for `subject` in `out`.
    fn request(&self, what: &[&str], key: &str, out: &str, subject: &str) {
        let mut args = vec!["req"];
        args.extend(what);
        args.extend([
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ]);
        args.extend(["-keyout", key, "-out", out, "-subj", subject]);
        self.openssl(&args);
    }

    /// A self-signed certificate `name.pem` (key `name.key`) for `CN=name`,
    /// valid from now for `days`.
    fn self_signed(&self, name: &str, days: u32) -> PathBuf {
        let (key, pem, days) = (
            format!("{name}.key"),
            format!("{name}.pem"),
            days.to_string(),
        );
        let subject = format!("/CN={name}");
        self.request(&["-x509", "-days", &days], &key, &pem, &subject);
        self.path(&pem)
    }

    /// `name.pem` for `CN=name`, signed by `issuer` (whose key is
    /// `issuer.key`), valid over `validity`: the `openssl ca` options, e.g.
    /// `["-days", "5"]` or `["-startdate", …, "-enddate", …]`.
    fn signed(&self, name: &str, issuer: &str, validity: &[&str], ca: bool) -> PathBuf {
        let (key, csr, pem) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.pem"),
        );
        let subject = format!("/CN={name}");
        self.request(&["-new"], &key, &csr, &subject);
        let (issuer_pem, issuer_key) = (format!("{issuer}.pem"), format!("{issuer}.key"));
        let mut args = vec![
            "ca",
            "-batch",
            "-notext",
            "-config",
            "ca.cnf",
            "-cert",
            &issuer_pem,
            "-keyfile",
            &issuer_key,
            "-in",
            &csr,
            "-out",
            &pem,
        ];
        if ca {
            args.extend(["-extensions", "intermediate"]);
        }
        args.extend(validity);
        self.openssl(&args);
        self.path(&pem)
    }

    /// `name.pem`, signed by a root `root.pem` made on first use, valid
    /// over `dates` ([`EXPIRED`], [`NOT_YET_VALID`]).
    fn dated(&self, name: &str, dates: [&str; 4]) -> PathBuf {
        if !self.path("root.pem").exists() {
            self.self_signed("root", 3650);
        }
        self.signed(name, "root", &dates, false)
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `openssl s_server` on a loopback port, serving `cert` (key beside it,
/// `name.key` for `name.pem`) and `extra` options; killed on drop.
struct TlsServer {
    child: Child,
    addr: SocketAddr,
}

impl TlsServer {
    /// Starts on `accept` (`127.0.0.1:0` for any free port) and waits,
    /// within a deadline, for the `ACCEPT host:port` line that says it
    /// listens.
    fn start(pki: &Pki, accept: &str, cert: &Path, extra: &[&str]) -> TlsServer {
        let key = cert.with_extension("key");
        let mut child = Command::new("openssl")
            .args(["s_server", "-www", "-accept", accept, "-cert"])
            .arg(cert)
            .arg("-key")
            .arg(&key)
            .args(extra)
            .current_dir(&pki.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the openssl CLI (tests/run.sh installs it)");
        let (tx, rx) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().expect("piped");
        // `ACCEPT 127.0.0.1:PORT` for port 0; a fixed port prints `ACCEPT`.
        let asked = accept.to_owned();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if let Some(at) = line.strip_prefix("ACCEPT") {
                    let at = match at.trim() {
                        "" => asked.as_str(),
                        at => at,
                    };
                    let _ = tx.send(at.parse::<SocketAddr>());
                }
            }
        });
        let listening = rx.recv_timeout(Duration::from_secs(20));
        // Built before the checks, so a failed start still kills it.
        let mut server = TlsServer {
            child,
            addr: ([127, 0, 0, 1], 0).into(),
        };
        server.addr = listening
            .expect("openssl s_server listens within 20 s")
            .expect("an ACCEPT address");
        server
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A handshake probe of `server`, by its IP address (so no SNI is sent).
fn probe_of(server: &TlsServer) -> CertificateProbe {
    CertificateProbe::address(&server.addr.to_string()).expect("a host:port")
}

/// `GET /health/ready` of a registry holding `probe` as `tls`: the code
/// and the `tls` entry.
async fn ready(probe: CertificateProbe) -> (u16, Value) {
    let registry = HealthRegistry::new();
    registry.add(probe.registration("tls")).unwrap();
    let server = serve(map_zb_health(registry));
    let wire = request(server.addr, "GET", "/health/ready").await;
    (wire.status, wire.json()["entries"]["tls"].clone())
}

/// Asserts the entry's `daysLeft` for a certificate made `days` days
/// ahead: `days` in the second it was made, `days - 1` after it.
fn assert_days_left(entry: &Value, days: i64) {
    let left = entry["data"]["daysLeft"].as_i64().unwrap();
    assert!(left == days || left == days - 1, "{entry}");
}

/// Asserts the entry's status, description and subject.
fn assert_entry(entry: &Value, status: &str, description: Option<&str>, subject: &str) {
    assert_eq!(entry["status"], status, "{entry}");
    assert_eq!(entry["description"].as_str(), description, "{entry}");
    assert_eq!(entry["data"]["subject"], format!("CN={subject}"), "{entry}");
}

#[actix_web::test]
async fn a_valid_certificate_is_healthy_with_its_subject_expiry_and_days_left() {
    let pki = Pki::new("valid");
    let pem = pki.self_signed("valid", 90);
    let (code, entry) = ready(CertificateProbe::new(&pem)).await;
    assert_eq!(code, 200);
    assert_entry(&entry, "Healthy", None, "valid");
    assert_days_left(&entry, 90);
    let not_after = entry["data"]["notAfter"].as_str().unwrap();
    assert!(not_after.len() == 20 && not_after.ends_with('Z'), "{entry}");
}

#[actix_web::test]
async fn near_expiry_inside_the_window_is_degraded() {
    let pki = Pki::new("near");
    let pem = pki.self_signed("near", 3);
    let (code, entry) = ready(CertificateProbe::new(&pem)).await;
    assert_eq!(code, 200);
    assert_entry(&entry, "Degraded", Some(EXPIRING_DESCRIPTION), "near");
    assert_days_left(&entry, 3);
    // A window shorter than what is left: healthy again.
    let (_, entry) =
        ready(CertificateProbe::new(&pem).warn_within(Duration::from_secs(86_400))).await;
    assert_eq!(entry["status"], "Healthy", "{entry}");
}

#[actix_web::test]
async fn an_expired_and_a_not_yet_valid_certificate_are_unhealthy() {
    let pki = Pki::new("dates");
    let expired = pki.dated("expired", EXPIRED);
    let (code, entry) = ready(CertificateProbe::new(&expired)).await;
    assert_eq!(code, 503);
    assert_entry(&entry, "Unhealthy", Some(EXPIRED_DESCRIPTION), "expired");
    assert_eq!(entry["data"]["notAfter"], "2020-02-01T00:00:00Z", "{entry}");
    assert!(
        entry["data"]["daysLeft"].as_i64().unwrap() < -365,
        "{entry}"
    );

    let early = pki.dated("early", NOT_YET_VALID);
    let (code, entry) = ready(CertificateProbe::new(&early)).await;
    assert_eq!(code, 503);
    assert_entry(
        &entry,
        "Unhealthy",
        Some(NOT_YET_VALID_DESCRIPTION),
        "early",
    );
    assert_eq!(
        entry["data"]["notBefore"], "2099-01-01T00:00:00Z",
        "{entry}"
    );
}

#[actix_web::test]
async fn a_chain_is_decided_by_its_intermediate_when_it_expires_before_the_leaf() {
    let pki = Pki::new("chain");
    pki.self_signed("root", 3650);
    let intermediate = pki.signed("intermediate", "root", &["-days", "5"], true);
    let leaf = pki.signed("leaf", "intermediate", &["-days", "300"], false);
    // One file, leaf first, as a server's `tls.crt` holds it.
    let chain = pki.path("chain.pem");
    let mut text = std::fs::read_to_string(&leaf).unwrap();
    text.push_str(&std::fs::read_to_string(&intermediate).unwrap());
    std::fs::write(&chain, text).unwrap();
    let (code, entry) = ready(CertificateProbe::new(&chain)).await;
    assert_eq!(code, 200);
    assert_entry(
        &entry,
        "Degraded",
        Some(EXPIRING_DESCRIPTION),
        "intermediate",
    );
    assert_days_left(&entry, 5);
    // The same two certificates as two files.
    let (_, entry) = ready(CertificateProbe::with_paths([&leaf, &intermediate])).await;
    assert_entry(
        &entry,
        "Degraded",
        Some(EXPIRING_DESCRIPTION),
        "intermediate",
    );
    // The leaf alone has 300 days.
    let (_, entry) = ready(CertificateProbe::new(&leaf)).await;
    assert_entry(&entry, "Healthy", None, "leaf");
}

#[actix_web::test]
async fn the_file_is_reread_on_each_run_so_a_renewal_is_seen() {
    let pki = Pki::new("renewal");
    let old = pki.self_signed("old", 3);
    let new = pki.self_signed("renewed", 90);
    let mounted = pki.path("tls.crt");
    std::fs::copy(&old, &mounted).unwrap();
    let registry = HealthRegistry::new();
    registry
        .add(CertificateProbe::new(&mounted).registration("tls"))
        .unwrap();
    let server = serve(map_zb_health(registry));
    let entry = |wire: support::Wire| wire.json()["entries"]["tls"].clone();
    let before = entry(request(server.addr, "GET", "/health/ready").await);
    assert_entry(&before, "Degraded", Some(EXPIRING_DESCRIPTION), "old");
    // As a Secret's volume renews: a new file renamed over the old one.
    std::fs::copy(&new, pki.path("tls.crt.new")).unwrap();
    std::fs::rename(pki.path("tls.crt.new"), &mounted).unwrap();
    let after = entry(request(server.addr, "GET", "/health/ready").await);
    assert_entry(&after, "Healthy", None, "renewed");
}

#[actix_web::test]
async fn a_missing_or_unparseable_file_is_the_failure_status_and_the_body_has_no_path() {
    let pki = Pki::new("missing");
    let missing = pki.path("no-such.crt");
    let registry = HealthRegistry::new();
    registry
        .add(CertificateProbe::new(&missing).registration("tls"))
        .unwrap();
    let junk = pki.path("junk.pem");
    std::fs::write(&junk, "not a certificate\n").unwrap();
    registry
        .add(
            CertificateProbe::new(&junk)
                .registration("junk")
                .failure_status(zb_health::prelude::FailureStatus::Degraded),
        )
        .unwrap();
    let server = serve(map_zb_health(registry));
    let wire = request(server.addr, "GET", "/health/ready").await;
    assert_eq!(wire.status, 503);
    let body = wire.json();
    let tls = &body["entries"]["tls"];
    assert_eq!(
        (&tls["status"], &tls["description"]),
        (&"Unhealthy".into(), &"check failed".into()),
        "{tls}"
    );
    let junk_entry = &body["entries"]["junk"];
    assert_eq!(junk_entry["status"], "Degraded", "{junk_entry}");
    let text = String::from_utf8_lossy(&wire.body).into_owned();
    assert!(
        !text.contains("no-such.crt") && !text.contains("junk.pem"),
        "{text}"
    );
    // The error, for the log, names the path and what was wrong.
    let err = CertificateProbe::new(&missing)
        .check()
        .await
        .expect_err("missing");
    let err = err.to_string();
    assert!(
        err.starts_with(&format!("cannot read {}", missing.display())),
        "{err}"
    );
    let err = CertificateProbe::new(&junk)
        .check()
        .await
        .expect_err("no certificate");
    assert_eq!(
        err.to_string(),
        format!("{} holds no PEM certificate", junk.display())
    );
}

#[actix_web::test]
async fn the_data_is_shown_at_full_disclosure_only() {
    let pki = Pki::new("disclosure");
    let pem = pki.self_signed("shown", 3);
    for (level, data) in [(Disclosure::Full, true), (Disclosure::Names, false)] {
        let registry = HealthRegistry::new();
        registry
            .add(CertificateProbe::new(&pem).registration("tls"))
            .unwrap();
        let endpoints = ZbHealth::new(registry).disclosure(level).build().unwrap();
        let server = serve(endpoints);
        let wire = request(server.addr, "GET", "/health/ready").await;
        let entry = &wire.json()["entries"]["tls"];
        assert_eq!(entry["status"], "Degraded", "{level}: {entry}");
        assert_eq!(entry.get("data").is_some(), data, "{level}: {entry}");
        let text = String::from_utf8_lossy(&wire.body).into_owned();
        assert_eq!(text.contains("CN=shown"), data, "{level}: {text}");
    }
}

/// The gauge through the debugging recorder, this binary's only recorder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gauge_gives_the_seconds_to_expiry_labelled_by_probe() {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder
        .install()
        .expect("the only recorder of this test binary");
    let pki = Pki::new("gauge");
    let expired = pki.dated("expired", EXPIRED);
    let soon = pki.self_signed("soon", 5);
    let registry = HealthRegistry::new();
    registry
        .add_all([
            CertificateProbe::new(&soon).registration("soon"),
            CertificateProbe::new(&expired).registration("old"),
        ])
        .unwrap();
    registry.answer(zb_health::prelude::Tag::Ready).await;
    let gauges: Vec<(String, f64)> = snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .filter(|(key, ..)| key.key().name() == zb_health::observe::CERTIFICATE_EXPIRES_IN)
        .filter_map(|(key, _, _, value)| match value {
            DebugValue::Gauge(v) => {
                let label = key.key().labels().map(|l| l.value().to_owned()).collect();
                Some((label, v.into_inner()))
            }
            _ => None,
        })
        .collect();
    let value = |probe: &str| {
        gauges
            .iter()
            .find(|(label, _)| label == probe)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("no gauge for {probe}: {gauges:?}"))
    };
    let soon = value("soon");
    assert!(soon > 4.0 * DAY && soon <= 5.0 * DAY, "{soon}");
    // Expired in February 2020: years in the past.
    assert!(value("old") < -365.0 * DAY, "{gauges:?}");
}

zb_health::prelude::manifest!(Certificates = "../ui/pass/manifests/certificate.yaml");

/// Where `certificate.yaml`'s `tls` entry looks: a fixed path, since the
/// manifest is read at compile time.
const MANIFEST_CERT: &str = "/tmp/zb-health-certificate-manifest/tls.crt";

#[actix_web::test]
async fn the_manifest_form_registers_its_paths_and_window_on_ready() {
    let pki = Pki::new("manifest");
    let pem = pki.self_signed("from-manifest", 20);
    std::fs::create_dir_all(Path::new(MANIFEST_CERT).parent().unwrap()).unwrap();
    std::fs::copy(&pem, MANIFEST_CERT).unwrap();
    // `site`: a server on the manifest's fixed port whose certificate for
    // `shop.example`, the name the manifest sends, has 5 days left.
    let default = pki.self_signed("default", 90);
    let shop = pki.self_signed("shop.example", 5);
    let (shop, key) = (shop.to_str().unwrap(), pki.path("shop.example.key"));
    let _site = TlsServer::start(
        &pki,
        "127.0.0.1:24443",
        &default,
        &[
            "-servername",
            "shop.example",
            "-cert2",
            shop,
            "-key2",
            key.to_str().unwrap(),
        ],
    );
    let registry = HealthRegistry::new();
    let installed = Certificates::install_into(&registry, CertificatesDeps {}).unwrap();
    let server = serve(installed.server.endpoints().clone());
    let wire = request(server.addr, "GET", "/health/ready").await;
    assert_eq!(wire.status, 503);
    let body = wire.json();
    // 20 days left, inside the manifest's `warn_within: 30d`.
    let tls = &body["entries"]["tls"];
    assert_entry(tls, "Degraded", Some(EXPIRING_DESCRIPTION), "from-manifest");
    let gone = &body["entries"]["gone"];
    assert_eq!(gone["status"], "Unhealthy", "{gone}");
    assert_eq!(gone["description"], "check failed", "{gone}");
    let site = &body["entries"]["site"];
    assert_entry(site, "Degraded", Some(EXPIRING_DESCRIPTION), "shop.example");
}

#[actix_web::test]
async fn the_handshake_reads_the_certificate_a_server_presents_over_tls_1_3_and_1_2() {
    let pki = Pki::new("handshake");
    let pem = pki.self_signed("served", 90);
    for version in ["-tls1_3", "-tls1_2"] {
        let server = TlsServer::start(&pki, "127.0.0.1:0", &pem, &[version]);
        let (code, entry) = ready(probe_of(&server)).await;
        assert_eq!(code, 200, "{version}: {entry}");
        assert_entry(&entry, "Healthy", None, "served");
        assert_days_left(&entry, 90);
    }
}

#[actix_web::test]
async fn a_served_certificate_near_expiry_expired_or_chained_is_judged_as_a_file_is() {
    let pki = Pki::new("handshake-verdicts");
    let soon = pki.self_signed("soon", 5);
    let server = TlsServer::start(&pki, "127.0.0.1:0", &soon, &[]);
    let (code, entry) = ready(probe_of(&server)).await;
    assert_eq!(code, 200, "Degraded serves traffic: {entry}");
    assert_entry(&entry, "Degraded", Some(EXPIRING_DESCRIPTION), "soon");

    // `openssl ca` without extensions makes an X.509 v1 certificate, which
    // a TLS client that checks trust refuses; the probe still reads it.
    let expired = pki.dated("expired", EXPIRED);
    let server = TlsServer::start(&pki, "127.0.0.1:0", &expired, &[]);
    let (_, entry) = ready(probe_of(&server)).await;
    assert_entry(&entry, "Unhealthy", Some(EXPIRED_DESCRIPTION), "expired");

    // The leaf has 90 days, the intermediate it is signed by 5: the server
    // presents both, and the intermediate decides.
    pki.self_signed("root", 3650);
    pki.signed("intermediate", "root", &["-days", "5"], true);
    let leaf = pki.signed("leaf", "intermediate", &["-days", "90"], false);
    let chain = pki.path("intermediate.pem");
    let chain = chain.to_str().unwrap();
    let server = TlsServer::start(&pki, "127.0.0.1:0", &leaf, &["-cert_chain", chain]);
    let (_, entry) = ready(probe_of(&server)).await;
    assert_entry(
        &entry,
        "Degraded",
        Some(EXPIRING_DESCRIPTION),
        "intermediate",
    );
}

#[actix_web::test]
async fn the_server_name_sent_chooses_the_certificate_of_a_server_with_several() {
    let pki = Pki::new("handshake-sni");
    let default = pki.self_signed("default", 90);
    let shop = pki.self_signed("shop.example", 3);
    let (shop_pem, shop_key) = (shop.to_str().unwrap(), pki.path("shop.example.key"));
    let shop_key = shop_key.to_str().unwrap();
    let server = TlsServer::start(
        &pki,
        "127.0.0.1:0",
        &default,
        &[
            "-servername",
            "shop.example",
            "-cert2",
            shop_pem,
            "-key2",
            shop_key,
        ],
    );
    let (_, entry) = ready(probe_of(&server).server_name("shop.example").unwrap()).await;
    assert_entry(
        &entry,
        "Degraded",
        Some(EXPIRING_DESCRIPTION),
        "shop.example",
    );
    // By IP address no name is sent, and the server's default answers.
    let (_, entry) = ready(probe_of(&server)).await;
    assert_entry(&entry, "Healthy", None, "default");
}

#[actix_web::test]
async fn a_server_that_requires_a_client_certificate_still_shows_its_chain() {
    let pki = Pki::new("handshake-mtls");
    let pem = pki.self_signed("mutual", 5);
    let ca = pem.to_str().unwrap().to_owned();
    // `-Verify 1`: a client without a certificate is refused, which TLS 1.2
    // does before the client's side of the handshake ends.
    for version in ["-tls1_3", "-tls1_2"] {
        let server = TlsServer::start(
            &pki,
            "127.0.0.1:0",
            &pem,
            &[version, "-Verify", "1", "-CAfile", &ca],
        );
        let (_, entry) = ready(probe_of(&server)).await;
        assert_entry(&entry, "Degraded", Some(EXPIRING_DESCRIPTION), "mutual");
    }
}

/// A loopback listener that accepts, and does `then` with each connection
/// on a thread of its own, until the test ends.
fn listener(then: fn(std::net::TcpStream)) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || then(stream));
        }
    });
    addr
}

#[actix_web::test]
async fn a_refused_silent_or_plain_server_fails_its_own_entry_and_the_error_names_the_address() {
    // Refused: a port bound, then let go.
    let refused = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    // Silent: accepts and holds the connection, never answering.
    let silent = listener(|stream| {
        std::thread::sleep(Duration::from_secs(30));
        drop(stream);
    })
    .to_string();
    // Plain: answers HTTP, not TLS.
    let plain = listener(|mut stream| {
        let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    })
    .to_string();
    let registry = HealthRegistry::new();
    for (name, address) in [
        ("refused", &refused),
        ("silent", &silent),
        ("plain", &plain),
    ] {
        let registration = CertificateProbe::address(address)
            .unwrap()
            .registration(name)
            .timeout(Duration::from_millis(500));
        registry.add(registration).unwrap();
    }
    let server = serve(map_zb_health(registry));
    let wire = request(server.addr, "GET", "/health/ready").await;
    assert_eq!(wire.status, 503);
    let body = wire.json();
    for name in ["refused", "plain"] {
        let entry = &body["entries"][name];
        assert_eq!(entry["status"], "Unhealthy", "{name}: {entry}");
        assert_eq!(entry["description"], "check failed", "{name}: {entry}");
    }
    let silent_entry = &body["entries"]["silent"];
    assert_eq!(silent_entry["status"], "Unhealthy", "{silent_entry}");
    assert_eq!(
        silent_entry["description"], "timed out after 500 ms",
        "{silent_entry}"
    );
    let text = String::from_utf8_lossy(&wire.body).into_owned();
    assert!(!text.contains("127.0.0.1"), "{text}");
    // The errors, for the log, name the address and what went wrong.
    for (address, says) in [
        (&refused, "cannot connect to"),
        (&plain, "TLS handshake with"),
    ] {
        let err = CertificateProbe::address(address)
            .unwrap()
            .check()
            .await
            .expect_err(address)
            .to_string();
        assert!(
            err.contains(says) && err.contains(address.as_str()),
            "{err}"
        );
    }
}
