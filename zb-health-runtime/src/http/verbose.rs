//! A tier's answer to `?verbose` and `?exclude=` (kube-apiserver's
//! `/readyz` query): the plain-text form, one line per check, and the
//! header that names what a JSON answer left out.

use std::fmt::Write;

use actix_web::HttpResponse;
use actix_web::http::header::{HeaderName, HeaderValue};
use zb_health_spec::{Disclosure, HealthStatus, Tag};

use crate::registry::Exclusion;
use crate::report::HealthReport;

/// The header of a JSON answer that names the checks `?exclude=` left out
/// (at the levels that show names).
pub(super) const EXCLUDED_HEADER: HeaderName = HeaderName::from_static("health-excluded");

/// The header of a JSON answer that names the checks `?exclude=` asked
/// for and could not leave out ([`Exclusion::kept`]), at the levels that
/// show names.
pub(super) const NOT_EXCLUDED_HEADER: HeaderName = HeaderName::from_static("health-not-excluded");

/// The failure text shown where the level shows no descriptions, as
/// kube-apiserver words it.
const WITHHELD: &str = "reason withheld";

/// The plain-text answer:
///
/// ```text
/// [+]database ok
/// [-]cache failed: reason withheld
/// [+]queue excluded: ok
/// warn: some health checks cannot be excluded: "shutdown" is always counted
/// warn: some health checks cannot be excluded: no matches for "x"
/// ready check failed
/// ```
///
/// At `full` a check's description replaces `reason withheld`; at
/// `status` only the verdict line is written, since that level shows no
/// name (not even the ones excluded or unknown: that would tell which
/// names exist).
pub(super) fn verbose_body(
    tier: Tag,
    report: &HealthReport,
    level: Disclosure,
    exclusion: &Exclusion,
) -> String {
    let mut out = String::new();
    if level != Disclosure::Status {
        for entry in &report.entries {
            let description = entry
                .description
                .as_deref()
                .filter(|_| level == Disclosure::Full);
            let _ = match entry.status {
                HealthStatus::Healthy => writeln!(out, "[+]{} ok", entry.name),
                HealthStatus::Degraded => match description {
                    Some(d) => writeln!(out, "[+]{} degraded: {}", entry.name, one_line(d)),
                    None => writeln!(out, "[+]{} degraded", entry.name),
                },
                HealthStatus::Unhealthy => writeln!(
                    out,
                    "[-]{} failed: {}",
                    entry.name,
                    description.map_or(WITHHELD.into(), one_line)
                ),
            };
        }
        for name in &exclusion.excluded {
            let _ = writeln!(out, "[+]{name} excluded: ok");
        }
        if !exclusion.kept.is_empty() {
            let names: Vec<String> = exclusion.kept.iter().map(|n| format!("{n:?}")).collect();
            let _ = writeln!(
                out,
                "warn: some health checks cannot be excluded: {} {} always counted",
                names.join(", "),
                if names.len() == 1 { "is" } else { "are" }
            );
        }
        if !exclusion.unknown.is_empty() {
            let names: Vec<String> = exclusion.unknown.iter().map(|n| format!("{n:?}")).collect();
            let _ = writeln!(
                out,
                "warn: some health checks cannot be excluded: no matches for {}",
                names.join(", ")
            );
        }
    }
    // Passed exactly when the status code is 200, on every tier.
    let passed = report.status.is_serving();
    let _ = writeln!(
        out,
        "{} check {}",
        tier.as_str(),
        if passed { "passed" } else { "failed" }
    );
    out
}

/// A description on one line: the text form is line-oriented.
fn one_line(description: &str) -> String {
    description.replace(['\r', '\n'], " ")
}

/// `Health-Excluded: a, b` on a JSON answer, and `Health-Not-Excluded:
/// c` for the names that always count, at the levels that show names;
/// nothing for an empty list.
pub(super) fn mark_excluded(response: &mut HttpResponse, level: Disclosure, exclusion: &Exclusion) {
    if level == Disclosure::Status {
        return;
    }
    let lists = [
        (EXCLUDED_HEADER, exclusion.excluded.join(", ")),
        (NOT_EXCLUDED_HEADER, exclusion.kept.join(", ")),
    ];
    for (header, names) in lists {
        // No name is empty, so an empty list is an empty text.
        if !names.is_empty()
            && let Ok(value) = HeaderValue::from_str(&names)
        {
            response.headers_mut().insert(header, value);
        }
    }
}
