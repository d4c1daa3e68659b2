//! The two body formats and the three disclosure levels, with the JSON
//! Schema each format's real responses are validated against
//! (`spec/health-response.schema.json`, `spec/health-response-pass-fail.schema.json`).

#![allow(dead_code)]

use std::sync::OnceLock;

use serde_json::Value;
use zb_health::spec::{Disclosure, ResponseFormat};

/// Every format.
pub const FORMATS: [ResponseFormat; 2] = [ResponseFormat::Zb, ResponseFormat::PassFail];
/// Every disclosure level.
pub const LEVELS: [Disclosure; 3] = [Disclosure::Full, Disclosure::Names, Disclosure::Status];

/// The schema of `format`, compiled once.
pub fn schema(format: ResponseFormat) -> &'static jsonschema::Validator {
    static ZB: OnceLock<jsonschema::Validator> = OnceLock::new();
    static PASS_FAIL: OnceLock<jsonschema::Validator> = OnceLock::new();
    let compile =
        |text: &str| jsonschema::validator_for(&serde_json::from_str(text).unwrap()).unwrap();
    match format {
        ResponseFormat::Zb => {
            ZB.get_or_init(|| compile(include_str!("../../../spec/health-response.schema.json")))
        }
        ResponseFormat::PassFail => PASS_FAIL.get_or_init(|| {
            compile(include_str!(
                "../../../spec/health-response-pass-fail.schema.json"
            ))
        }),
    }
}

/// Asserts `body` satisfies the schema of `format`, listing every error.
pub fn assert_valid(format: ResponseFormat, body: &Value) {
    let errors: Vec<String> = schema(format)
        .iter_errors(body)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{format} schema errors {errors:?} in {body}"
    );
}
