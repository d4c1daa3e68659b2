//! Response writers: how a [`HealthReport`] becomes an HTTP body (ZB-3).

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, HttpResponseBuilder};
use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};

use crate::report::{HealthEntry, HealthReport};

/// Turns a report into a response. The endpoint has already set the status
/// code and `Cache-Control`; the writer adds the body and its content type.
///
/// Any `Fn(&HealthReport, HttpResponseBuilder) -> HttpResponse` is a writer,
/// so [`write_json`] itself can be passed where one is expected.
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
pub fn write_json(report: &HealthReport, mut response: HttpResponseBuilder) -> HttpResponse {
    response
        .insert_header((
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        ))
        .body(canonical_json(report))
}

/// The canonical ZB-3 body as bytes.
pub fn canonical_json(report: &HealthReport) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + report.entries.len() * 96);
    // Serialising plain strings, numbers and `serde_json::Value`s into a
    // Vec cannot fail.
    let _ = serde_json::to_writer(&mut out, &Canonical(report));
    out
}

struct Canonical<'a>(&'a HealthReport);
struct Entries<'a>(&'a [HealthEntry]);
struct Entry<'a>(&'a HealthEntry);

impl Serialize for Canonical<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let mut st = s.serialize_struct("HealthReport", 3)?;
        st.serialize_field("status", r.status.as_str())?;
        st.serialize_field("totalDurationMs", &(r.total_duration.as_millis() as u64))?;
        st.serialize_field("entries", &Entries(&r.entries))?;
        st.end()
    }
}

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for e in self.0 {
            map.serialize_entry(&*e.name, &Entry(e))?;
        }
        map.end()
    }
}

impl Serialize for Entry<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let e = self.0;
        let mut st = s.serialize_struct("HealthEntry", 4)?;
        st.serialize_field("status", e.status.as_str())?;
        st.serialize_field("description", &e.description.as_deref())?;
        st.serialize_field("durationMs", &duration_ms(e.duration))?;
        if let Some(data) = &e.data {
            st.serialize_field("data", data)?;
        }
        st.end()
    }
}

/// Milliseconds with microsecond resolution, e.g. `0.125`: enough to tell a
/// cached answer from a round trip without printing float noise.
fn duration_ms(d: std::time::Duration) -> f64 {
    d.as_micros() as f64 / 1000.0
}
