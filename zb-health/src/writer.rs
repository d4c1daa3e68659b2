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
use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};
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
/// use zb_health::Tag;
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
    /// ([`CLUSTER_ADDRESS_KEYS`](zb_health_spec::CLUSTER_ADDRESS_KEYS)):
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
        let mut out = Vec::with_capacity((hint + 32).max(64 + entries * 96));
        // Serialising plain strings, numbers and `serde_json::Value`s into a
        // Vec cannot fail.
        let _ = serde_json::to_writer(
            &mut out,
            &Body {
                report,
                style: self,
            },
        );
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

struct Body<'a> {
    report: &'a HealthReport,
    style: &'a BodyStyle,
}
struct Entries<'a>(&'a [HealthEntry], &'a BodyStyle);
struct Entry<'a>(&'a HealthEntry, &'a BodyStyle);

impl Serialize for Body<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (r, style) = (self.report, self.style);
        let cluster = style.cluster_ready.as_deref().map(|n| cluster_ready(r, n));
        let mut st = s.serialize_struct("HealthReport", 3 + usize::from(cluster.is_some()))?;
        st.serialize_field("status", status_word(style.format, r.status, true))?;
        st.serialize_field("totalDurationMs", &(r.total_duration.as_millis() as u64))?;
        if let Some(ready) = cluster {
            st.serialize_field("clusterReady", &ready)?;
        }
        let shown: &[HealthEntry] = match style.disclosure {
            Disclosure::Status => &[],
            Disclosure::Full | Disclosure::Names => &r.entries,
        };
        st.serialize_field("entries", &Entries(shown, style))?;
        st.end()
    }
}

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for e in self.0 {
            map.serialize_entry(&*e.name, &Entry(e, self.1))?;
        }
        map.end()
    }
}

impl Serialize for Entry<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (e, style) = (self.0, self.1);
        let full = style.disclosure == Disclosure::Full;
        let mut st = s.serialize_struct("HealthEntry", 4)?;
        st.serialize_field("status", status_word(style.format, e.status, false))?;
        // `names` keeps the key (null) so the body stays valid ZB-3.
        let description = if full { e.description.as_deref() } else { None };
        st.serialize_field("description", &description)?;
        st.serialize_field("durationMs", &duration_ms(e.duration))?;
        if full && let Some(data) = &e.data {
            if style.cluster_addresses {
                st.serialize_field("data", data)?;
            } else if data
                .keys()
                .any(|k| !zb_health_spec::CLUSTER_ADDRESS_KEYS.contains(&k.as_str()))
            {
                st.serialize_field("data", &WithoutAddresses(data))?;
            }
        }
        st.end()
    }
}

/// An entry's `data` without the cluster addresses, written in place (no
/// copy of the map).
struct WithoutAddresses<'a>(&'a serde_json::Map<String, serde_json::Value>);

impl Serialize for WithoutAddresses<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let kept = self
            .0
            .iter()
            .filter(|(k, _)| !zb_health_spec::CLUSTER_ADDRESS_KEYS.contains(&k.as_str()));
        let mut map = s.serialize_map(None)?;
        for (k, v) in kept {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Milliseconds with microsecond resolution, e.g. `0.125`: enough to tell a
/// cached answer from a round trip without printing float noise.
fn duration_ms(d: std::time::Duration) -> f64 {
    d.as_micros() as f64 / 1000.0
}
