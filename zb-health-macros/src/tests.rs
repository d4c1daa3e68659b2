//! The macros never panic and always expand to syntactically valid Rust,
//! whatever the input: random valid manifests (names that are keywords or
//! collide as identifiers, every kind and option), and random attribute
//! arguments on random items.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::str::FromStr;

use proc_macro2::TokenStream;
use quote::quote;

/// A small deterministic generator, so the test needs no crate.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

const NAMES: [&str; 16] = [
    "database",
    "_",
    "self",
    "Self",
    "crate",
    "super",
    "match",
    "a-b",
    "a_b",
    "1abc",
    "cluster_view",
    "cluster-view",
    "x.y",
    "probe",
    "type",
    "r",
];

fn random_probe(rng: &mut XorShift) -> String {
    let name = rng.pick(&NAMES);
    let timeout = rng.pick(&["", ", timeout: 300ms", ", timeout: 2s"]);
    let failure = rng.pick(&["", ", failure_status: degraded"]);
    // Dependencies on names the list may or may not hold: R21, R22 or
    // a valid `depends_on`.
    let depends = rng.pick(&[
        "",
        "",
        ", depends_on: [\"a-b\"]",
        ", depends_on: [probe, r]",
    ]);
    match rng.below(7) {
        0 => format!("{{ name: \"{name}\", kind: database{timeout}{failure}{depends} }}"),
        1 => format!("{{ name: \"{name}\", kind: grpc{timeout}{depends} }}"),
        2 => format!(
            "{{ name: \"{name}\", kind: cluster-membership, policy: {} }}",
            rng.pick(&["default", "ot-opc-ua-compat"])
        ),
        3 => format!(
            "{{ name: \"{name}\", kind: cluster-transport, expected_size: {} }}",
            1 + rng.below(5)
        ),
        4 => format!(
            "{{ name: \"{name}\", kind: active-node{} }}",
            rng.pick(&[
                "",
                ", scope: role, roles: [admin, driver]",
                ", scope: cluster, expected_size: 3, require_majority: true"
            ])
        ),
        5 => format!(
            "{{ kind: custom, fn: {}{} }}",
            rng.pick(&["crate::ping", "self::r#match", "super::a::b", "::x::y"]),
            rng.pick(&["", ", name: probe", ", tags: [ready]", ", timeout: 2s"])
        ),
        _ => format!(
            "{{ kind: custom, type: {}{} }}",
            rng.pick(&[
                "crate::CacheProbe",
                "crate::probes::Self_",
                "self::Match",
                "super::r#type::X",
                "::a::B"
            ]),
            rng.pick(&[
                "",
                ", name: probe",
                ", tags: [ready, active]",
                ", timeout: 300ms"
            ])
        ),
    }
}

#[test]
fn manifest_expansion_never_panics_and_is_valid_rust() {
    let mut rng = XorShift(0x00c0_ffee_1234_5678);
    let mut expanded = 0;
    for case in 0..1_500 {
        let mut yaml = String::from("service: s\n");
        if rng.below(2) == 0 {
            yaml.push_str("orchestrator: { timeout: 3s }\n");
        }
        yaml.push_str("probes:\n");
        for _ in 0..rng.below(6) {
            yaml.push_str(&format!("  - {}\n", random_probe(&mut rng)));
        }
        let lit = syn::LitStr::new(&yaml, proc_macro2::Span::call_site());
        let out = catch_unwind(AssertUnwindSafe(|| {
            crate::manifest::expand(quote!(pub Health, yaml = #lit), None)
        }));
        let out = out.unwrap_or_else(|_| panic!("case {case}: manifest! panicked on\n{yaml}"));
        if let Err(e) = syn::parse2::<syn::File>(out.clone()) {
            panic!("case {case}: invalid expansion ({e}) of\n{yaml}\n{out}");
        }
        if !out.to_string().contains("compile_error") {
            expanded += 1;
        }
    }
    assert!(
        expanded > 500,
        "too few valid manifests generated: {expanded}"
    );
}

#[test]
fn attribute_expansion_never_panics_and_is_valid_rust() {
    let args = [
        "name = \"cache\"",
        "name = \"\"",
        "name = 7",
        "tags = [ready]",
        "tags = [live]",
        "tags = []",
        "tags = ready",
        "tags = [raedy, active]",
        "timeout = \"750ms\"",
        "timeout = \"0s\"",
        "timeout = \"1.5s\"",
        "timeout = 5",
        "failure_status = degraded",
        "failure_status = \"x\"",
        "blocking = true",
        "blocking = false",
        "blocking = \"yes\"",
        "crate = \"zb\"",
        "crate = \"::\"",
        "timout = \"1s\"",
        "name",
        "= =",
        "#",
        "name = \"a\" = 1",
    ];
    let items = [
        "struct A;",
        "pub struct B<T: Send>(T);",
        "struct C { x: u8 }",
        "enum D { X }",
        "fn e() {}",
        "async fn f() -> ProbeOutcome { Ok(ProbeResult::healthy()) }",
        "pub(crate) async fn g(x: u8, y: u8) {}",
        "async fn h<T>() -> bool where T: Send { true }",
        "#[cfg(test)] async fn r#match() -> X { X::default() }",
        "impl A {}",
        "union U { a: u8 }",
        "",
        "struct",
        "mod m {}",
    ];
    let mut rng = XorShift(0x0bad_5eed_0000_0001);
    for case in 0..3_000 {
        let n = rng.below(5);
        let arg_text: Vec<&str> = (0..n).map(|_| rng.pick(&args)).collect();
        let arg_text = arg_text.join(rng.pick(&[", ", " ", ",,"]));
        let item_text = rng.pick(&items);
        let (Ok(a), Ok(i)) = (
            TokenStream::from_str(&arg_text),
            TokenStream::from_str(item_text),
        ) else {
            continue;
        };
        let out = catch_unwind(AssertUnwindSafe(|| crate::attr::expand(a, i)));
        let out = out.unwrap_or_else(|_| {
            panic!("case {case}: #[zb_health({arg_text})] {item_text} panicked")
        });
        // An item that is not Rust is handed back as it came, for rustc to
        // report; only a valid item must expand to valid Rust.
        let item_is_rust = syn::parse_str::<syn::Item>(item_text).is_ok();
        if let (true, Err(e)) = (item_is_rust, syn::parse2::<syn::File>(out.clone())) {
            panic!(
                "case {case}: invalid expansion ({e}) of #[zb_health({arg_text})] {item_text}:\n{out}"
            );
        }
    }
}

#[test]
fn type_names_become_snake_case_fields_with_acronyms_as_words() {
    let cases = [
        ("CacheProbe", "cache_probe"),
        ("HTTPProbe", "http_probe"),
        ("Http2Probe", "http2_probe"),
        ("MyDB", "my_db"),
        ("GRPC", "grpc"),
        ("Self_", "self_"),
        ("probe", "probe"),
    ];
    for (ty, field) in cases {
        assert_eq!(crate::manifest::snake_case(ty), field, "{ty}");
    }
}

fn expand_inline(yaml: &str) -> String {
    let lit = syn::LitStr::new(yaml, proc_macro2::Span::call_site());
    crate::manifest::expand(quote!(pub Health, yaml = #lit), None).to_string()
}

#[test]
fn field_names_do_not_depend_on_position() {
    let a = expand_inline(
        "service: s\nprobes:\n  - { name: db, kind: database }\n  - { kind: custom, type: crate::HTTPProbe }\n",
    );
    let b = expand_inline(
        "service: s\nprobes:\n  - { kind: custom, type: crate::HTTPProbe }\n  - { name: db, kind: database }\n",
    );
    for out in [&a, &b] {
        assert!(out.contains("pub struct HealthDeps"), "{out}");
        assert!(
            out.contains("pub http_probe : Health__types :: HTTPProbe"),
            "{out}"
        );
        assert!(out.contains("pub db :"), "{out}");
        assert!(!out.contains("compile_error"), "{out}");
    }
}

#[test]
fn a_field_clash_is_an_error_naming_both_probes() {
    let out = expand_inline(
        "service: s\nprobes:\n  - { name: a-b, kind: database }\n  - { name: a_b, kind: grpc }\n",
    );
    assert!(out.contains("compile_error"), "{out}");
    assert!(
        out.contains("probes `a-b` (at <inline manifest>:3:5) and `a_b` would both get the `HealthDeps` field `a_b`"),
        "{out}"
    );
    assert!(out.contains("name:"), "the help names the fix: {out}");
    let out = expand_inline(
        "service: s\nprobes:\n  - { kind: custom, type: crate::CacheProbe }\n  - { kind: custom, type: other::CacheProbe }\n",
    );
    assert!(
        out.contains(
            "probes `crate::CacheProbe` (at <inline manifest>:3:5) and `other::CacheProbe`"
        ),
        "{out}"
    );
    let out = expand_inline("service: s\nprobes:\n  - { name: cluster-view, kind: grpc }\n");
    assert!(out.contains("holds the cluster view"), "{out}");
}

#[test]
fn the_unnamed_form_says_how_to_name_the_items() {
    let out = crate::manifest::expand(quote!("health.yaml"), None).to_string();
    assert!(
        out.contains("manifest!(pub Health = \\\"health.yaml\\\")"),
        "{out}"
    );
}

#[test]
fn every_fact_is_its_own_item() {
    let out = expand_inline(
        "service: s\norchestrator: { timeout: 1s }\nprobes:\n  - { name: cache, kind: custom, type: crate::CacheProbe, tags: [active], timeout: 500ms }\n",
    );
    for fact in [
        "name_agrees",
        "tags_agree",
        "timeout_agrees",
        "fits_orchestrator",
        "fits_detection",
    ] {
        let item = format!("trait CacheProbe{} {{", camel(fact));
        assert_eq!(out.matches(&item).count(), 1, "{item}");
    }
    let out = expand_inline(
        "service: s\nprobes:\n  - { kind: custom, type: crate::P, cache: 1s, refresh: 2s, max_staleness: 5s }\n",
    );
    for fact in ["cache_agrees", "refresh_agrees", "max_staleness_agrees"] {
        let item = format!("trait P{} {{", camel(fact));
        assert_eq!(out.matches(&item).count(), 1, "{item}");
    }
}

/// `name_agrees` → `NameAgrees`, as a fact's trait is named.
fn camel(fact: &str) -> String {
    fact.split('_')
        .map(|w| w[..1].to_uppercase() + &w[1..])
        .collect()
}

#[test]
fn a_built_in_probe_meta_carries_its_execution_policy() {
    let out = expand_inline(
        "service: s\nlifecycle: { drain_delay: 30s }\nprobes:\n  - { name: db, kind: database, refresh: 5s, max_staleness: 12s }\n",
    );
    let some = |ms: u64| {
        format!("Option :: Some (:: zb_health :: __private :: Duration :: from_millis ({ms}u64))")
    };
    assert!(
        out.contains(&format!("refresh : :: core :: option :: {}", some(5000))),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "max_staleness : :: core :: option :: {}",
            some(12000)
        )),
        "{out}"
    );
    assert!(
        out.contains("cache : :: core :: option :: Option :: None"),
        "{out}"
    );
}

#[test]
fn an_error_in_one_stage_does_not_hide_one_in_another() {
    let out = expand_inline(
        "service: s\nlifecycle:\n  startup_gates: [warm-cache, warm_cache]\n  watchdogs:\n    - { name: a-b, deadline: 5s }\n    - { name: a_b, deadline: 5s }\nprobes:\n  - { name: x-y, kind: database }\n  - { name: x_y, kind: grpc }\n",
    );
    for clash in [
        "probes `x-y`",
        "startup gates `warm-cache`",
        "watchdogs `a-b`",
    ] {
        assert_eq!(out.matches(clash).count(), 1, "{clash} in {out}");
    }
    assert!(
        !out.contains("struct HealthDeps"),
        "no items after errors: {out}"
    );
}

#[test]
fn a_custom_type_is_named_through_one_lookup_with_one_existence_check() {
    let out = expand_inline(
        "service: s\nprobes:\n  - { kind: custom, type: crate::probes::CacheProbe }\n",
    );
    assert_eq!(
        out.matches("trait CacheProbeTypeExists {").count(),
        1,
        "{out}"
    );
    assert!(out.contains("use crate :: probes :: * ;"), "{out}");
    assert!(
        out.contains("pub type CacheProbe = < Manifest as Custom < 1usize >> :: Type ;"),
        "{out}"
    );
    assert!(
        out.contains("pub cache_probe : Health__types :: CacheProbe"),
        "{out}"
    );
    // Nothing else names the path as written.
    assert_eq!(
        out.matches("crate :: probes :: CacheProbe").count(),
        0,
        "{out}"
    );
}

#[test]
fn a_redis_probe_is_built_from_its_manifest_line_behind_its_feature_guard() {
    let out = expand_inline(
        "service: s\nprobes:\n  - { name: sessions, kind: redis, url: \"redis://:pw@h:6379/1\" }\n",
    );
    assert!(!out.contains("compile_error"), "{out}");
    assert!(out.contains("__zb_require_redis ! ()"), "{out}");
    assert!(
        out.contains("__private :: redis_probe (\"redis://:pw@h:6379/1\")"),
        "{out}"
    );
    assert!(!out.contains("pub sessions :"), "no deps field: {out}");
    // A bad url is a located compile error that hides the password.
    let out = expand_inline(
        "service: s\nprobes:\n  - { name: sessions, kind: redis, url: \"rediss://:pw@h\" }\n",
    );
    assert!(out.contains("compile_error"), "{out}");
    assert!(out.contains("<inline manifest>:3:"), "{out}");
    assert!(out.contains("rediss://:***@h"), "{out}");
}

#[test]
fn an_http_probe_is_built_from_its_manifest_line_with_no_deps_field() {
    let out = expand_inline(
        "service: s\nprobes:\n  - { name: inventory, kind: http, url: \"http://u:pw@h:8080/x?y\", status: 200-399, body_contains: UP }\n",
    );
    assert!(!out.contains("compile_error"), "{out}");
    assert!(out.contains("__zb_require_http_probe ! ()"), "{out}");
    assert!(
        out.contains(
            "__private :: http_probe (\"http://u:pw@h:8080/x?y\" , 200u16 , 399u16 , :: core :: option :: Option :: Some (\"UP\"))"
        ),
        "{out}"
    );
    assert!(!out.contains("pub inventory :"), "no deps field: {out}");
    // A bad value is a located compile error, never a panic.
    for bad in [
        "url: not a url",
        "url: \"https://h/\"",
        "url: http://h/, status: 2xx",
    ] {
        let out = expand_inline(&format!(
            "service: s\nprobes:\n  - {{ name: up, kind: http, {bad} }}\n"
        ));
        assert!(out.contains("compile_error"), "{bad}: {out}");
        assert!(out.contains("<inline manifest>:3:"), "{bad}: {out}");
    }
}

#[test]
fn a_fn_entry_registers_its_stateless_probe_with_no_deps_field() {
    let out = expand_inline(
        "service: s\nprobes:\n  - { name: ping, kind: custom, fn: crate::probes::ping }\n",
    );
    assert!(!out.contains("compile_error"), "{out}");
    assert!(out.contains("__private :: stateless ("), "{out}");
    assert!(!out.contains("pub ping :"), "no deps field: {out}");
    // Its form is checked, and its name against the attribute's.
    assert_eq!(out.matches("trait PingFormAgrees {").count(), 1, "{out}");
    assert_eq!(out.matches("trait PingNameAgrees {").count(), 1, "{out}");
}

#[test]
fn an_async_fn_keeps_its_fn_and_gets_a_probe_type_of_its_name() {
    let out = crate::attr::expand(
        quote!(name = "ping", timeout = "200ms"),
        quote!(
            pub async fn ping() -> ProbeOutcome {
                Ok(ProbeResult::healthy())
            }
        ),
    )
    .to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert!(out.contains("pub async fn ping ()"), "{out}");
    assert!(out.contains("pub struct ping { }"), "{out}");
    assert!(out.contains("const STATELESS"), "{out}");
    assert!(out.contains("__zb_health_limits_of_ping as ping"), "{out}");
}

#[test]
fn a_certificate_address_is_built_behind_the_handshake_feature_and_files_are_not() {
    let out = expand_inline(
        "service: s\nprobes:\n  - { name: site, kind: certificate, address: \"shop:8443\", server_name: shop.example }\n",
    );
    assert!(!out.contains("compile_error"), "{out}");
    assert!(
        out.contains("__zb_require_certificate_handshake ! ()"),
        "{out}"
    );
    assert!(
        out.contains(
            "__private :: certificate_address (\"shop:8443\" , :: core :: option :: Option :: Some (\"shop.example\"))"
        ),
        "{out}"
    );
    assert!(!out.contains("pub site :"), "no deps field: {out}");
    // PEM files need the `certificate` feature alone.
    let out = expand_inline(
        "service: s\nprobes:\n  - { name: tls, kind: certificate, path: /tls.crt }\n",
    );
    assert!(out.contains("__zb_require_certificate ! ()"), "{out}");
    assert!(!out.contains("certificate_handshake"), "{out}");
    assert!(out.contains("CertificateProbe :: with_paths"), "{out}");
}

/// A custom entry that states a setting gets its "contradicts" check
/// against the attribute for every key the spec lists, so a key added to
/// `PROBE_SETTING_KEYS` without its arm in `custom_facts` fails here.
#[test]
fn every_probe_setting_key_a_custom_entry_states_is_checked_against_its_attribute() {
    let outs = [
        expand_inline(
            "service: s\norchestrator: { timeout: 1s }\nprobes:\n  - { name: p, kind: custom, type: crate::P, tags: [ready], timeout: 500ms, failure_status: degraded, cache: 1s, failure_threshold: 3, failing_for: 2s, success_threshold: 2, shared: true, restart_after: 60s }\n",
        ),
        expand_inline(
            "service: s\nprobes:\n  - { kind: custom, type: crate::P, refresh: 2s, max_staleness: 5s }\n",
        ),
    ];
    for key in zb_health_spec::vocab::PROBE_SETTING_KEYS {
        let verb = if key == "tags" { "agree" } else { "agrees" };
        let item = format!("trait P{} {{", camel(&format!("{key}_{verb}")));
        assert!(
            outs.iter().any(|out| out.contains(&item)),
            "`{key}` has no check {item}: {outs:?}"
        );
    }
}
