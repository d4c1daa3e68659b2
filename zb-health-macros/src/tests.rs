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
    match rng.below(6) {
        0 => format!("{{ name: \"{name}\", kind: database{timeout}{failure} }}"),
        1 => format!("{{ name: \"{name}\", kind: grpc{timeout} }}"),
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
            crate::manifest::expand(quote!(yaml = #lit), None)
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
