//! Response writers: how a [`HealthReport`] becomes an HTTP body (ZB-3,
//! BE-HLTH-001, BE-HLTH-007).
//!
//! The built-in writer is one serialiser with four settings, a
//! [`BodyStyle`]: the [`ResponseFormat`] (ZB's `Healthy`/`Degraded`/
//! `Unhealthy` or BE-HLTH-001's `pass`/`fail`), the [`Disclosure`] level
//! (`full`, `names`, `status`), on the ready tier the entry
//! `clusterReady` is read from (AT-8), and whether the cluster addresses
//! are shown (per port). It writes straight from the report,
//! so a stricter level costs less than `full`, never more.

use std::borrow::Cow;
use std::sync::Arc;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, HttpResponseBuilder};
use serde::ser::{Serialize, SerializeMap, Serializer};
use zb_health_spec::{Disclosure, HealthStatus, ResponseFormat};

use crate::report::{HealthEntry, HealthReport, MEMBER_STATUS_KEY, MEMBER_UP};

/// Turns a report into a response. The endpoint has already set the status
/// code and `Cache-Control`; the writer adds the body and its content type.
///
/// Any `Fn(&HealthReport, HttpResponseBuilder) -> HttpResponse` is a writer,
/// so [`write_json`] itself can be passed where one is expected. A custom
/// writer on an endpoint gets the report after its tier's [`Disclosure`]
/// ([`HealthReport::disclosed`]), so it cannot show more than the level
/// allows.
pub trait ResponseWriter: Send + Sync + 'static {
    /// Writes `report` into `response`.
    fn write(&self, report: &HealthReport, response: HttpResponseBuilder) -> HttpResponse;
}

impl<F> ResponseWriter for F
where
    F: Fn(&HealthReport, HttpResponseBuilder) -> HttpResponse + Send + Sync + 'static,
{
    fn write(&self, report: &HealthReport, response: HttpResponseBuilder) -> HttpResponse {
        self(report, response)
    }
}

/// The canonical ZB-3 writer, the default of every endpoint; public so a
/// custom handler can answer with the same body:
///
/// `{"status","totalDurationMs","entries":{name:{"status","description","durationMs","data"?}}}`
pub fn write_json(report: &HealthReport, response: HttpResponseBuilder) -> HttpResponse {
    BodyStyle::CANONICAL.write(report, response)
}

/// The BE-HLTH-001 writer at `full` disclosure: the canonical shape with
/// `status` `pass` or `fail` (entries `pass`, `warn` or `fail`); see
/// [`ResponseFormat::PassFail`].
pub fn write_pass_fail(report: &HealthReport, response: HttpResponseBuilder) -> HttpResponse {
    BodyStyle::new(ResponseFormat::PassFail).write(report, response)
}

/// The canonical ZB-3 body as bytes.
pub fn canonical_json(report: &HealthReport) -> Vec<u8> {
    BodyStyle::CANONICAL.json(report)
}

/// Whether the cluster is ready according to `report` (AT-8), read from
/// the entry `name` (the membership probe's), never recomputed:
///
/// * no such entry: `true`. The membership probe is what joining a
///   cluster installs, so a registry without it belongs to a system that
///   never joined one, and nothing about a cluster holds it back;
/// * otherwise `true` exactly when the entry is `Healthy` **and**, when it
///   reports its member status ([`MEMBER_STATUS_KEY`], as
///   `ClusterMembershipProbe` does), that status is `up`: `false` until
///   the local node reaches `Up`, though the `Default` policy already calls
///   a `Joining` node Healthy. A `Degraded` membership (no cluster yet,
///   this node leaving) is `false`.
pub fn cluster_ready(report: &HealthReport, name: &str) -> bool {
    report.entry(name).is_none_or(|e| {
        e.status == HealthStatus::Healthy
            && e.data
                .as_ref()
                .and_then(|data| data.get(MEMBER_STATUS_KEY))
                .is_none_or(|status| status == MEMBER_UP)
    })
}

/// How the built-in writer shapes one tier's body: format, disclosure,
/// `clusterReady` and whether the cluster addresses are shown. The default
/// is ZB's canonical body.
///
/// ```
/// use zb_health::prelude::Tag;
/// use zb_health::report::HealthReport;
/// use zb_health::spec::{Disclosure, ResponseFormat};
/// use zb_health::writer::BodyStyle;
///
/// let style = BodyStyle::new(ResponseFormat::PassFail).disclosure(Disclosure::Status);
/// let body = style.json(&HealthReport::new(Tag::Ready, Vec::new(), Default::default()));
/// assert_eq!(body, br#"{"status":"pass","totalDurationMs":0,"entries":{}}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BodyStyle {
    /// The status vocabulary.
    pub format: ResponseFormat,
    /// How much of each entry is shown.
    pub disclosure: Disclosure,
    /// The entry `clusterReady` is read from ([`cluster_ready`]); `None`
    /// leaves the field out.
    pub cluster_ready: Option<Arc<str>>,
    /// Whether `data` shows the cluster addresses
    /// ([`CLUSTER_ADDRESS_KEYS`](zb_health_spec::vocab::CLUSTER_ADDRESS_KEYS)):
    /// ZB's body does; an application port's, by a manifest's default,
    /// does not.
    pub cluster_addresses: bool,
}

impl BodyStyle {
    /// ZB's canonical body: `zb` format, `full` disclosure, no
    /// `clusterReady`.
    pub const CANONICAL: BodyStyle = BodyStyle {
        format: ResponseFormat::Zb,
        disclosure: Disclosure::Full,
        cluster_ready: None,
        cluster_addresses: true,
    };

    /// `format` at `full` disclosure, without `clusterReady`.
    pub const fn new(format: ResponseFormat) -> Self {
        Self {
            format,
            disclosure: Disclosure::Full,
            cluster_ready: None,
            cluster_addresses: true,
        }
    }

    /// Shows or hides the cluster addresses in `data`.
    pub fn cluster_addresses(mut self, shown: bool) -> Self {
        self.cluster_addresses = shown;
        self
    }

    /// `report` as this style shows it to a custom writer: its disclosure
    /// level, without the cluster addresses when they are hidden.
    pub fn shown<'a>(&self, report: &'a HealthReport) -> Cow<'a, HealthReport> {
        if self.cluster_addresses {
            return report.disclosed(self.disclosure);
        }
        match report.without_cluster_addresses() {
            Cow::Borrowed(r) => r.disclosed(self.disclosure),
            Cow::Owned(r) => Cow::Owned(r.disclosed(self.disclosure).into_owned()),
        }
    }

    /// Sets the disclosure level.
    pub fn disclosure(mut self, level: Disclosure) -> Self {
        self.disclosure = level;
        self
    }

    /// Adds `clusterReady`, read from the entry `membership_entry`.
    pub fn cluster_ready(mut self, membership_entry: impl Into<Arc<str>>) -> Self {
        self.cluster_ready = Some(membership_entry.into());
        self
    }

    /// Whether this is ZB's canonical body.
    pub fn is_canonical(&self) -> bool {
        *self == Self::CANONICAL
    }

    /// The body as bytes.
    pub fn json(&self, report: &HealthReport) -> Vec<u8> {
        self.json_sized(report, 0)
    }

    /// The body as bytes, in a buffer of at least `hint` bytes (the last
    /// body's length), so a body like the last needs one allocation.
    pub(crate) fn json_sized(&self, report: &HealthReport, hint: usize) -> Vec<u8> {
        let entries = match self.disclosure {
            Disclosure::Status => 0,
            _ => report.entries.len(),
        };
        // The last body's length and a little over: the next one is the
        // same but for durations and statuses. An estimate only when
        // there is none yet, so a large body does not carry an
        // estimate's slack.
        let capacity = match hint {
            0 => 64 + entries * 96,
            last => last + last / 64 + 32,
        };
        let mut out = Vec::with_capacity(capacity);
        write_body(&mut out, report, self);
        out
    }

    /// Writes the body and `Content-Type: application/json` into `response`.
    pub fn write(&self, report: &HealthReport, mut response: HttpResponseBuilder) -> HttpResponse {
        response
            .insert_header((
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ))
            .body(self.json(report))
    }
}

/// A status in the body's vocabulary. The pass/fail aggregate is the HTTP
/// verdict: `pass` exactly when the tier answers 200 (Healthy, Degraded);
/// an entry keeps its three states as `pass`, `warn`, `fail`.
fn status_word(format: ResponseFormat, status: HealthStatus, aggregate: bool) -> &'static str {
    match (format, status) {
        (ResponseFormat::Zb, s) => s.as_str(),
        (ResponseFormat::PassFail, HealthStatus::Healthy) => "pass",
        (ResponseFormat::PassFail, HealthStatus::Degraded) if aggregate => "pass",
        (ResponseFormat::PassFail, HealthStatus::Degraded) => "warn",
        (ResponseFormat::PassFail, HealthStatus::Unhealthy) => "fail",
    }
}

/// The body, written by hand rather than through `serde`: its shape is
/// fixed, its keys are constants and its names need no escaping, so it
/// costs a copy per field (its names are R9 identifiers). Only `data` goes through
/// `serde_json`.
fn write_body(out: &mut Vec<u8>, r: &HealthReport, style: &BodyStyle) {
    let cluster = style.cluster_ready.as_deref().map(|n| cluster_ready(r, n));
    out.extend_from_slice(b"{\"status\":\"");
    out.extend_from_slice(status_word(style.format, r.status, true).as_bytes());
    out.extend_from_slice(b"\",\"totalDurationMs\":");
    write_u64(out, r.total_duration.as_millis() as u64);
    if let Some(ready) = cluster {
        out.extend_from_slice(if ready {
            b",\"clusterReady\":true"
        } else {
            b",\"clusterReady\":false"
        });
    }
    out.extend_from_slice(b",\"entries\":{");
    let shown: &[HealthEntry] = match style.disclosure {
        Disclosure::Status => &[],
        Disclosure::Full | Disclosure::Names => &r.entries,
    };
    for (i, e) in shown.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, &e.name);
        out.push(b':');
        write_entry(out, e, style);
    }
    out.extend_from_slice(b"}}");
}

/// `{"status","description","durationMs","data"?}`.
fn write_entry(out: &mut Vec<u8>, e: &HealthEntry, style: &BodyStyle) {
    let full = style.disclosure == Disclosure::Full;
    out.extend_from_slice(b"{\"status\":\"");
    out.extend_from_slice(status_word(style.format, e.status, false).as_bytes());
    out.extend_from_slice(b"\",\"description\":");
    // `names` keeps the key (null) so the body stays valid ZB-3.
    match e.description.as_deref() {
        Some(description) if full => write_str(out, description),
        _ => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"durationMs\":");
    write_duration_ms(out, e.duration);
    if full && let Some(data) = &e.data {
        // Writing a `serde_json::Value` into a Vec cannot fail.
        if style.cluster_addresses {
            out.extend_from_slice(b",\"data\":");
            let _ = serde_json::to_writer(&mut *out, data);
        } else if data
            .keys()
            .any(|k| !zb_health_spec::vocab::CLUSTER_ADDRESS_KEYS.contains(&k.as_str()))
        {
            out.extend_from_slice(b",\"data\":");
            let _ = serde_json::to_writer(&mut *out, &WithoutAddresses(data));
        }
    }
    out.push(b'}');
}

/// The bytes a JSON string escapes: control characters, `"` and `\`. A
/// table, so checking a name costs one load per byte, not three compares.
const ESCAPED: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// A JSON string: copied as it is when nothing in it needs escaping (every
/// probe name, nearly every description), else escaped by `serde_json`.
fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    if !bytes.iter().any(|&b| ESCAPED[usize::from(b)]) {
        out.reserve(bytes.len() + 2);
        out.push(b'"');
        out.extend_from_slice(bytes);
        out.push(b'"');
    } else {
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

#[inline]
fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    // One digit, pushed: the whole milliseconds of nearly every duration
    // the body carries, which need no buffer and no copy.
    if n < 10 {
        out.push(b'0' + n as u8);
        return;
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Milliseconds with microsecond resolution, e.g. `0.125`, `12.0`: enough
/// to tell a cached answer from a round trip without printing float
/// noise. The same text as the shortest form of `µs / 1000.0` as a JSON
/// number, which is what this field has always held.
fn write_duration_ms(out: &mut Vec<u8>, d: std::time::Duration) {
    let micros = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
    write_u64(out, micros / 1000);
    out.push(b'.');
    let mut fraction = micros % 1000;
    if fraction == 0 {
        out.push(b'0');
        return;
    }
    let mut width = 3;
    while fraction % 10 == 0 {
        fraction /= 10;
        width -= 1;
    }
    let digits = [
        b'0' + (fraction / 100 % 10) as u8,
        b'0' + (fraction / 10 % 10) as u8,
        b'0' + (fraction % 10) as u8,
    ];
    out.extend_from_slice(&digits[3 - width..]);
}

/// An entry's `data` without the cluster addresses, written in place (no
/// copy of the map).
struct WithoutAddresses<'a>(&'a serde_json::Map<String, serde_json::Value>);

impl Serialize for WithoutAddresses<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let kept = self
            .0
            .iter()
            .filter(|(k, _)| !zb_health_spec::vocab::CLUSTER_ADDRESS_KEYS.contains(&k.as_str()));
        let mut map = s.serialize_map(None)?;
        for (k, v) in kept {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The hand-written number is the text `serde_json` gives the float
    /// this field always held, `µs / 1000.0`.
    #[test]
    fn a_duration_is_written_as_its_float_was() {
        let samples =
            (0..200_000u64).chain([999_999, 1_000_000, 1_234_567, 86_400_000_000, 3_600_000_001]);
        for micros in samples {
            let mut out = Vec::new();
            write_duration_ms(&mut out, Duration::from_micros(micros));
            let float = serde_json::to_vec(&(micros as f64 / 1000.0)).unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(float).unwrap(),
                "{micros} µs"
            );
        }
    }

    /// Strings that need escaping are escaped; the body stays valid JSON
    /// and says what the report says.
    #[test]
    fn the_body_is_valid_json_with_every_field() {
        use crate::report::EntryOutcome;
        use zb_health_spec::Tag;
        let entry = |name: &str, description: &str| HealthEntry {
            name: name.into(),
            status: HealthStatus::Degraded,
            description: Some(Cow::Owned(description.to_owned())),
            duration: Duration::from_micros(1500),
            data: Some(Box::new(serde_json::Map::from_iter([(
                "k".to_owned(),
                serde_json::Value::from("v\"\n"),
            )]))),
            outcome: EntryOutcome::Completed,
        };
        let report = HealthReport::new(
            Tag::Ready,
            vec![
                entry("db", "plain"),
                entry("q\"uote", "tab\there \\ \u{1} é"),
            ],
            Duration::from_millis(7),
        );
        for style in [
            BodyStyle::CANONICAL,
            BodyStyle::new(ResponseFormat::PassFail).cluster_ready("db"),
            BodyStyle::CANONICAL.disclosure(Disclosure::Names),
            BodyStyle::CANONICAL.disclosure(Disclosure::Status),
        ] {
            let body: serde_json::Value = serde_json::from_slice(&style.json(&report)).unwrap();
            assert_eq!(body["totalDurationMs"], 7);
            let entries = body["entries"].as_object().unwrap();
            if style.disclosure == Disclosure::Status {
                assert!(entries.is_empty());
                continue;
            }
            let odd = &entries["q\"uote"];
            assert_eq!(odd["durationMs"], 1.5);
            if style.disclosure == Disclosure::Full {
                assert_eq!(odd["description"], "tab\there \\ \u{1} é");
                assert_eq!(odd["data"]["k"], "v\"\n");
            } else {
                assert!(odd["description"].is_null());
                assert!(odd.get("data").is_none());
            }
            if style.cluster_ready.is_some() {
                assert_eq!(body["clusterReady"], false, "db is Degraded");
                assert_eq!(body["status"], "pass");
                assert_eq!(odd["status"], "warn");
            }
        }
    }
}
