//! The canonical health answer (ZB-3) checked against
//! `spec/health-response.schema.json`: the body, and the status code
//! against the body.

use std::sync::OnceLock;

use serde_json::Value;

use crate::http::Response;

/// `spec/health-response.schema.json`, compiled once.
pub fn schema() -> &'static jsonschema::Validator {
    static SCHEMA: OnceLock<jsonschema::Validator> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let text = include_str!("../../spec/health-response.schema.json");
        let schema = serde_json::from_str(text).expect("the schema is JSON");
        jsonschema::validator_for(&schema).expect("the schema compiles")
    })
}

/// Asserts that `response` is a canonical health answer (ZB-3): JSON
/// content type, a body the schema accepts ([`assert_canonical_body`])
/// and a status code that agrees with the body's `status` (200 for
/// `Healthy`/`Degraded`, 503 for `Unhealthy`).
pub fn assert_canonical(response: &Response) {
    let content_type = response.header("content-type").unwrap_or_default();
    assert!(
        content_type.starts_with("application/json"),
        "content type {content_type:?}"
    );
    let body = response.json();
    assert_canonical_body(&body);
    let expected = match body["status"].as_str() {
        Some("Healthy" | "Degraded") => 200,
        _ => 503,
    };
    assert_eq!(response.status, expected, "status code vs body {body}");
}

/// Asserts that `body` satisfies the canonical schema (ZB-3,
/// `spec/health-response.schema.json`), listing every error: `status`,
/// `totalDurationMs` and `entries`, each entry with `status`,
/// `description`, `durationMs` and optional `data`, nothing else.
pub fn assert_canonical_body(body: &Value) {
    let errors: Vec<String> = schema().iter_errors(body).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "schema errors {errors:?} in {body}");
}
