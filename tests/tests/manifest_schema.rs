//! `spec/health-manifest.schema.json` agrees with the parser on the
//! manifests this repository ships: every manifest the compiler accepts
//! validates against the schema, shape errors the schema can express are
//! refused by both, and every closed word list of the schema is the spec
//! crate's vocabulary, compared in both directions.

use std::path::Path;

use serde_json::Value;
use zb_health_spec::manifest::parse_manifest;
use zb_health_spec::{
    Disclosure, FailureStatus, HealthStatus, MembershipPolicy, ResponseFormat, Tag,
    vocab::{Keyword, Kind, Preset, Scope},
};

fn schema() -> jsonschema::Validator {
    let text = include_str!("../../spec/health-manifest.schema.json");
    jsonschema::validator_for(&serde_json::from_str(text).unwrap()).unwrap()
}

fn as_json(yaml: &str) -> Value {
    serde_saphyr::from_str(yaml).unwrap()
}

fn shipped_valid_manifests() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // Every example's manifests (otopcua has two: both policies).
    let mut paths = Vec::new();
    for example in std::fs::read_dir(root.join("examples")).unwrap() {
        for entry in std::fs::read_dir(example.unwrap().path()).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml") {
                paths.push(path);
            }
        }
    }
    for entry in std::fs::read_dir(root.join("tests/ui/pass/manifests")).unwrap() {
        paths.push(entry.unwrap().path());
    }
    paths
}

#[test]
fn every_manifest_the_compiler_accepts_validates_against_the_schema() {
    let schema = schema();
    let paths = shipped_valid_manifests();
    assert!(paths.len() >= 4, "{paths:?}");
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            parse_manifest(&text).is_ok(),
            "{} does not parse",
            path.display()
        );
        let errors: Vec<String> = schema
            .iter_errors(&as_json(&text))
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    }
}

#[test]
fn shape_errors_are_refused_by_schema_and_parser_alike() {
    let schema = schema();
    for yaml in [
        "probes: []\n",                                                           // no service
        "service: s\nprobez: []\n",                                               // unknown key
        "service: s\nprobes:\n  - { name: db, kind: databse }\n",                 // unknown kind
        "service: s\nprobes:\n  - { name: db, kind: database, tags: [live] }\n",  // live tag
        "service: s\nprobes:\n  - { name: a, kind: active-node, scope: role }\n", // R2
        "service: s\nprobes:\n  - { name: a, kind: active-node, scope: role, roles: [] }\n",
        "service: s\nprobes:\n  - { name: db, kind: database, policy: default }\n", // option of another kind
        "service: s\nprobes:\n  - { kind: custom }\n", // custom without type
        "service: s\nprobes:\n  - { name: db, kind: database, timeout: 1.5s }\n", // malformed duration
        "service: s\nprobes:\n  - { name: t, kind: cluster-transport, expected_size: 0 }\n", // R12
        "service: s\nprobes:\n  - { name: a, kind: active-node, failure_status: degraded }\n", // R10
        "service: s\nprobes:\n  - { name: a, kind: active-node, no_active_role_status: Degraded, scope: role, roles: [x] }\n", // exact lower-case
        "service: s\nprobes:\n  - { name: db, kind: database, cache: 1s, refresh: 5s }\n", // R16
        "service: s\nprobes:\n  - { name: db, kind: database, max_staleness: 5s }\n",      // R16
        "service: s\nprobes:\n  - { name: a, kind: active-node, refresh: 1s }\n",          // R17
        "service: s\nprobes:\n  - { name: db, kind: database, tags: [active], cache: 1s }\n", // R17
        "service: s\nprobes:\n  - { name: db, kind: database, cache: 0s }\n",              // R5
        "service: s\nlifecycle: { watchdogs: [{ name: c }] }\n", // watchdog without deadline
        "service: s\nlifecycle: { watchdogs: [{ name: c, deadline: 0ms }] }\n", // R5
        "service: s\nlifecycle: { drain: 5s }\n",                // unknown lifecycle key
        "service: s\nlifecycle: { startup_gates: [init, init] }\n", // R3
        "service: s\nlifecycle: { startup_gates: [\"in it\"] }\n", // R9
        "service: s\nlifecycle: { drain_delay: 5 }\n",           // no unit
        "service: s\ngrpc: { port: 50051 }\n",                   // unknown grpc key
        "service: s\ngrpc: { period: 0ms }\n",                   // R5
        "service: s\ngrpc: { services: { \"a..b\": ready } }\n", // R9
        "service: s\ngrpc: { services: { a: writes } }\n",       // unknown tier
        "service: s\ngrpc: { services: { a: { tier: ready } } }\n", // no `probe`
        "service: s\nmanagement: { port: 0 }\n",                 // not a port
        "service: s\nmanagement: { port: 70000 }\n",             // not a port
        "service: s\nmanagement: { port: \"8081\" }\n",          // a string
        "service: s\nendpoints: { disclosure: nmaes }\n",        // unknown level
        "service: s\nendpoints: { disclosure: { raedy: names } }\n", // unknown tier
        "service: s\nendpoints: { format: ietf }\n",             // unknown format
        "service: s\nendpoints: { cluster_ready: [a] }\n",       // neither bool nor name
    ] {
        assert!(parse_manifest(yaml).is_err(), "parser accepted {yaml}");
        assert!(!schema.is_valid(&as_json(yaml)), "schema accepted {yaml}");
    }
}

fn schema_json() -> Value {
    serde_json::from_str(include_str!("../../spec/health-manifest.schema.json")).unwrap()
}

/// The schema's `enum` at `pointer`, as strings.
fn schema_enum(schema: &Value, pointer: &str) -> Vec<String> {
    let values = schema
        .pointer(pointer)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no enum at {pointer}"));
    values
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

/// Both directions: every schema value parses as `K`, and every `K` the
/// manifest may write (all but `except`) is in the schema's enum.
fn agrees<K: Keyword>(schema: &Value, pointer: &str, except: &[K]) {
    let listed = schema_enum(schema, pointer);
    for value in &listed {
        assert!(
            K::from_keyword(value).is_some(),
            "{pointer}: schema value `{value}` is not a {}",
            K::WHAT
        );
    }
    for value in K::ALL.iter().filter(|v| !except.contains(v)) {
        assert!(
            listed.iter().any(|l| l == value.keyword()),
            "{pointer}: {} `{}` is missing from the schema",
            K::WHAT,
            value.keyword()
        );
    }
    assert_eq!(listed.len(), K::ALL.len() - except.len(), "{pointer}");
}

#[test]
fn every_word_list_of_the_schema_is_the_vocabulary() {
    let schema = schema_json();
    agrees::<Kind>(&schema, "/$defs/probe/properties/kind/enum", &[]);
    agrees::<Scope>(&schema, "/$defs/probe/properties/scope/enum", &[]);
    agrees::<MembershipPolicy>(&schema, "/$defs/probe/properties/policy/enum", &[]);
    agrees::<Preset>(&schema, "/properties/endpoints/properties/preset/enum", &[]);
    agrees::<ResponseFormat>(&schema, "/properties/endpoints/properties/format/enum", &[]);
    agrees::<Disclosure>(&schema, "/$defs/disclosure/enum", &[]);
    agrees::<FailureStatus>(&schema, "/$defs/failureStatus/enum", &[]);
    agrees::<HealthStatus>(&schema, "/$defs/healthStatus/enum", &[]);
    // `live` is a tag, but no probe may carry it (R1): the schema leaves it
    // out so that an editor never offers it.
    agrees::<Tag>(&schema, "/$defs/tag/enum", &[Tag::Live]);
    // A gRPC service may answer from any tier, `live` included.
    agrees::<Tag>(
        &schema,
        "/properties/grpc/properties/services/additionalProperties/oneOf/0/enum",
        &[],
    );
}

#[test]
fn disk_levels_and_keys_are_refused_by_schema_and_parser_alike() {
    let schema = schema();
    let probe = |p: &str| format!("service: s\nprobes:\n  - {{ name: d, kind: disk, {p} }}\n");
    for yaml in [
        probe("path: /, degraded_below: 120%"),  // R15: above 100%
        probe("path: /, unhealthy_below: 5mb"),  // R15: unknown unit
        probe("path: /, unhealthy_below: 500"),  // R15: no unit
        probe("path: /"),                        // R11: no level
        probe("degraded_below: 10%"),            // R11: no path
        probe("path: /, degraded_below: 1.5GB"), // R15: bytes are whole
    ] {
        assert!(parse_manifest(&yaml).is_err(), "parser accepted {yaml}");
        assert!(!schema.is_valid(&as_json(&yaml)), "schema accepted {yaml}");
    }
    let good = probe("path: /, degraded_below: 2.5%, unhealthy_below: 500 MiB");
    assert!(parse_manifest(&good).is_ok(), "parser refused {good}");
    assert!(schema.is_valid(&as_json(&good)), "schema refused {good}");
    // A list of paths is a certificate probe's, not a disk probe's.
    let list = probe("path: [/], degraded_below: 10%");
    assert!(parse_manifest(&list).is_err(), "parser accepted {list}");
    assert!(!schema.is_valid(&as_json(&list)), "schema accepted {list}");
}

#[test]
fn certificate_sources_windows_and_names_are_refused_by_schema_and_parser_alike() {
    let schema = schema();
    let probe =
        |p: &str| format!("service: s\nprobes:\n  - {{ name: c, kind: certificate, {p} }}\n");
    for yaml in [
        probe("path: /tls.crt, warn_within: 2w"), // R15: unknown unit
        probe("path: /tls.crt, warn_within: 14"), // R15: no unit
        probe("path: /tls.crt, warn_within: 1.5d"), // R15: days are whole
        probe("path: []"),                        // R15: no file
        probe("path: ''"),                        // R15: empty
        probe("warn_within: 14d"),                // R11: no path
        probe("path: /tls.crt, address: example.org:443"), // R7: two sources
        probe("path: /tls.crt, server_name: shop"), // R4: a name for a file
        probe("address: \"https://shop:443\""),   // R15: a URL
        probe("address: \"shop:443/x\""),         // R15: a path
        probe("address: \"user@shop:443\""),      // R15: user info
        probe("address: shop:https"),             // R15: a port by name
        probe("address: shop:443, server_name: \"a b\""), // R15: not a DNS name
        probe("path: /tls.crt, degraded_below: 10%"), // R4: a disk option
    ] {
        assert!(parse_manifest(&yaml).is_err(), "parser accepted {yaml}");
        assert!(!schema.is_valid(&as_json(&yaml)), "schema accepted {yaml}");
    }
    for good in [
        probe("path: /etc/tls/tls.crt"),
        probe("path: [leaf.pem, ca.pem], warn_within: 36h"),
        probe("address: shop.example.com:443"),
        probe("address: shop.example.com"),
        probe("address: \"[::1]:8443\", server_name: shop.example.com, warn_within: 7d"),
        probe("address: 10.0.0.7:443, server_name: 10.0.0.7"),
    ] {
        assert!(parse_manifest(&good).is_ok(), "parser refused {good}");
        assert!(schema.is_valid(&as_json(&good)), "schema refused {good}");
    }
}

#[test]
fn exit_on_stall_is_a_boolean_to_schema_and_parser_alike() {
    let schema = schema();
    let lifecycle = |v: &str| format!("service: s\nlifecycle: {{ exit_on_stall: {v} }}\n");
    for yaml in [lifecycle("yes-please"), lifecycle("1"), lifecycle("[true]")] {
        assert!(parse_manifest(&yaml).is_err(), "parser accepted {yaml}");
        assert!(!schema.is_valid(&as_json(&yaml)), "schema accepted {yaml}");
    }
    for good in [lifecycle("true"), lifecycle("false")] {
        let manifest = parse_manifest(&good).unwrap_or_else(|e| panic!("{good}: {e:?}"));
        assert_eq!(manifest.lifecycle.exits_on_stall(), good.contains("true"));
        assert!(schema.is_valid(&as_json(&good)), "schema refused {good}");
    }
}

#[test]
fn redis_urls_and_keys_are_refused_by_schema_and_parser_alike() {
    let schema = schema();
    let probe = |p: &str| format!("service: s\nprobes:\n  - {{ name: r, kind: redis, {p} }}\n");
    for yaml in [
        probe("url: \"rediss://:pw@cache:6380\""),    // R15: TLS
        probe("url: \"http://cache:6379\""),          // R15: not redis://
        probe("url: \"redis://cache:port\""),         // R15: port not a number
        probe("url: \"redis://cache:6379/jobs\""),    // R15: db not a number
        probe("url: \"redis://cache/0?timeout=1\""),  // R15: a query
        probe("url: \"redis://:pw@\""),               // R15: no host
        probe("timeout: 1s"),                         // R11: no url
        probe("url: \"redis://cache\", status: 200"), // R4: http's option
    ] {
        assert!(parse_manifest(&yaml).is_err(), "parser accepted {yaml}");
        assert!(!schema.is_valid(&as_json(&yaml)), "schema accepted {yaml}");
    }
    for good in [
        "url: redis://cache",
        "url: \"redis://app:p%40ss@cache:6379/2\"",
        "url: \"redis://:pw@[::1]:7000/\"",
    ] {
        let good = probe(good);
        assert!(parse_manifest(&good).is_ok(), "parser refused {good}");
        assert!(schema.is_valid(&as_json(&good)), "schema refused {good}");
    }
    // The `url` of `kind: http` keeps its own form.
    let http = "service: s\nprobes:\n  - { name: h, kind: http, url: \"redis://cache\" }\n";
    assert!(parse_manifest(http).is_err() && !schema.is_valid(&as_json(http)));
}
