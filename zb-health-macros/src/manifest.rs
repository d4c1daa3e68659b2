//! `manifest!`: read `health.yaml` at compile time, check it with the
//! shared spec rules, and generate typed registration.
//!
//! What the manifest alone can break is checked here, by
//! `zb_health_spec::manifest::parse_manifest`. What needs the attribute of
//! another item (a custom probe's name, tags, timeout) is checked by
//! `const` assertions in the generated code, since a macro cannot see other
//! items; their messages still name the manifest's line and column.

use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::{LitStr, Token};
use zb_health_spec::manifest::{Location, Manifest, ProbeDecl, ProbeKind, parse_manifest};
use zb_health_spec::{Rule, Tag};

use crate::attr::snake_case;
use crate::builtin;
use crate::errors::render;

/// The macro's input: a path, or `yaml = "..."` inline, then options.
struct Input {
    source: Source,
    krate: Option<syn::Path>,
}

enum Source {
    File(LitStr),
    Inline(LitStr),
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let source = if input.peek(LitStr) {
            Source::File(input.parse()?)
        } else {
            let key: syn::Ident = input.parse()?;
            if key != "yaml" {
                return Err(syn::Error::new(
                    key.span(),
                    "expected a manifest path, `manifest!(\"health.yaml\")`, or an inline manifest, `manifest!(yaml = r#\"...\"#)`",
                ));
            }
            input.parse::<Token![=]>()?;
            Source::Inline(input.parse()?)
        };
        let mut krate = None;
        while input.parse::<Option<Token![,]>>()?.is_some() && !input.is_empty() {
            let key: syn::Ident = input.call(syn::ext::IdentExt::parse_any)?;
            if key != "crate" {
                return Err(syn::Error::new(
                    key.span(),
                    "unknown option; the only option is `crate = \"path\"`",
                ));
            }
            input.parse::<Token![=]>()?;
            krate = Some(input.parse::<LitStr>()?.parse()?);
        }
        Ok(Input { source, krate })
    }
}

/// `caller` is the file invoking the macro (`Span::local_file`), so a
/// relative path resolves as `include_str!` does, also under trybuild.
pub fn expand(input: TokenStream, caller: Option<PathBuf>) -> TokenStream {
    let input = match syn::parse2::<Input>(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let (text, file_label, span, tracked) = match &input.source {
        Source::Inline(lit) => (
            lit.value(),
            "<inline manifest>".to_owned(),
            lit.span(),
            None,
        ),
        Source::File(lit) => match read(lit, caller.as_deref()) {
            Ok((path, text)) => (text, lit.value(), lit.span(), Some(path)),
            Err(message) => return syn::Error::new(lit.span(), message).to_compile_error(),
        },
    };
    let manifest = match parse_manifest(&text) {
        Ok(m) => m,
        Err(violations) => {
            let mut errors = violations.iter().map(|v| {
                syn::Error::new(span, format!("{file_label}:{}: {}", v.location, render(v)))
            });
            let mut all = errors
                .next()
                .unwrap_or_else(|| syn::Error::new(span, "invalid manifest"));
            all.extend(errors);
            return all.to_compile_error();
        }
    };
    let krate = input
        .krate
        .map(|p| quote!(#p))
        .unwrap_or_else(|| quote!(::zb_health));
    match generate(&manifest, &file_label, span, &krate) {
        Ok(tokens) => {
            let track = tracked.map(|p| {
                let p = p.to_string_lossy().into_owned();
                quote!(
                    const _: &[u8] = include_bytes!(#p);
                )
            });
            quote!(#track #tokens)
        }
        Err(e) => e.to_compile_error(),
    }
}

fn read(lit: &LitStr, caller: Option<&Path>) -> Result<(PathBuf, String), String> {
    let written = PathBuf::from(lit.value());
    let mut tried = Vec::new();
    if written.is_absolute() {
        tried.push(written.clone());
    } else {
        if let Some(dir) = caller.and_then(Path::parent) {
            tried.push(dir.join(&written));
        }
        if let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") {
            tried.push(Path::new(&dir).join(&written));
        }
    }
    for path in &tried {
        if let Ok(text) = std::fs::read_to_string(path) {
            return Ok((path.canonicalize().unwrap_or_else(|_| path.clone()), text));
        }
    }
    let looked: Vec<String> = tried.iter().map(|p| format!("`{}`", p.display())).collect();
    let why = tried
        .first()
        .and_then(|p| std::fs::read_to_string(p).err())
        .map(|e| e.to_string())
        .unwrap_or_else(|| "no place to look".into());
    Err(format!(
        "cannot read the health manifest `{}`: {why}\n  = rule {}\n  = note: looked for {}\n  = help: a relative path is resolved from the directory of the file that calls `manifest!` (as `include_str!` does), then from the crate root; create the file or fix the path",
        lit.value(),
        Rule::ManifestFile,
        looked.join(" and ")
    ))
}

/// One generated registration: its `HealthDeps` field (none for cluster
/// kinds, which share one view), its `ProbeRegistration` and its metadata.
struct Dep {
    field: Option<(syn::Ident, TokenStream)>,
    registration: TokenStream,
    meta: TokenStream,
}

fn generate(m: &Manifest, file: &str, span: Span, krate: &TokenStream) -> syn::Result<TokenStream> {
    let mut deps = Vec::new();
    let mut asserts = Vec::new();
    let mut features: Vec<&str> = Vec::new();
    // Field names must be distinct even where probe names are not as
    // identifiers (`a-b` and `a_b`), and must not take the cluster view's.
    let mut fields_used = vec![builtin::CLUSTER_FIELD.to_owned()];
    let mut unique = |ident: syn::Ident| -> syn::Ident {
        let mut candidate = ident.clone();
        let mut n: u32 = 2;
        while fields_used.contains(&candidate.to_string()) {
            candidate = format_ident!("{}_{}", ident, n);
            n += 1;
        }
        fields_used.push(candidate.to_string());
        candidate
    };
    for probe in &m.probes {
        if let Some(f) = builtin::feature(&probe.kind)
            && !features.contains(&f)
        {
            features.push(f);
        }
        match &probe.kind {
            ProbeKind::Custom { type_path } => {
                let ty: syn::Path = syn::parse_str(&type_path.value).map_err(|_| {
                    syn::Error::new(
                        span,
                        format!(
                            "{file}:{}: `{}` is not a Rust type path",
                            type_path.location, type_path.value
                        ),
                    )
                })?;
                let field = unique(field_ident(probe, &ty));
                asserts.extend(custom_asserts(m, probe, &ty, file, krate));
                deps.push(Dep {
                    registration: quote!(<#ty as #krate::ZbHealthProbe>::registration(deps.#field)),
                    meta: quote!(<#ty as #krate::ZbHealthProbe>::META),
                    field: Some((field, quote!(#ty))),
                });
            }
            kind => {
                let field = builtin::own_field_type(kind, krate).map(|ty| {
                    let name = probe.name.as_ref().map_or("probe", |n| n.value.as_str());
                    (unique(builtin::ident_for(name)), ty)
                });
                let meta = builtin::meta(m, probe, krate);
                let value = builtin::probe(probe, field.as_ref().map(|(f, _)| f), krate);
                deps.push(Dep {
                    registration: quote!((#meta).registration(#value)),
                    meta,
                    field,
                });
            }
        }
    }
    asserts.extend(unique_name_asserts(m, file, krate));

    let service = &m.service.value;
    let [ready, active, live] = Tag::ALL.map(|t| m.paths.get(t).to_owned());
    let orchestrator = match &m.orchestrator_timeout {
        Some(t) => {
            let ms = t.value.as_millis() as u64;
            quote!(.orchestrator_timeout(#krate::__private::Duration::from_millis(#ms)))
        }
        None => quote!(),
    };
    let mut fields: Vec<TokenStream> = deps
        .iter()
        .filter_map(|d| d.field.as_ref())
        .map(|(f, ty)| {
            let doc = format!("The `{f}` probe.");
            quote!(#[doc = #doc] pub #f: #ty,)
        })
        .collect();
    if features.contains(&"cluster") {
        let f = format_ident!("{}", builtin::CLUSTER_FIELD);
        fields.push(quote! {
            /// The cluster view every cluster probe of the manifest reads.
            pub #f: ::std::sync::Arc<dyn #krate::cluster::ClusterView>,
        });
    }
    let requires = features.iter().map(|f| {
        let mac = format_ident!("__zb_require_{}", f);
        quote!(#krate::#mac!();)
    });
    let active_rules: Vec<TokenStream> = m
        .probes
        .iter()
        .filter_map(|p| builtin::active_rule(p, krate))
        .collect();
    let gate = match active_rules.as_slice() {
        [rule] => quote! {
            /// The manifest's `ClusterActiveNode` rule: the one the active-node
            /// probe uses, for the gate and the application (ZB-2.3a).
            pub fn active_node_rule() -> #krate::cluster::ClusterActiveNode {
                #rule
            }

            /// The `ActiveNodeGate` over `view` with the same rule as the
            /// active-node probe, so a gated endpoint and `/health/active`
            /// cannot disagree (ZB-4).
            pub fn active_node_gate(
                view: ::std::sync::Arc<dyn #krate::cluster::ClusterView>,
            ) -> #krate::cluster::ClusterActiveNodeGate {
                #krate::cluster::ClusterActiveNodeGate::new(view, Self::active_node_rule())
            }
        },
        _ => quote!(),
    };
    let registrations = deps.iter().map(|d| &d.registration);
    let metas = deps.iter().map(|d| &d.meta);
    let deps_doc = format!(
        "What the health manifest `{file}` needs from the application: one field per probe it names. Leaving one out is a compile error naming it."
    );
    let manifest_doc = format!("The health of service `{service}`, as declared in `{file}`.");
    Ok(quote! {
        #(#requires)*

        #[doc = #deps_doc]
        pub struct HealthDeps {
            #(#fields)*
        }

        #[doc = #manifest_doc]
        pub struct HealthManifest;

        #[allow(dead_code)]
        impl HealthManifest {
            #gate

            /// The manifest's `service`.
            pub const SERVICE: &'static str = #service;

            /// Every probe's metadata, in manifest order.
            pub const PROBES: &'static [#krate::ProbeMeta] = &[#(#metas),*];

            /// The tier paths the manifest declares.
            pub fn paths() -> #krate::EndpointPaths {
                #krate::EndpointPaths {
                    ready: ::std::string::String::from(#ready),
                    active: ::std::string::String::from(#active),
                    live: ::std::string::String::from(#live),
                }
            }

            /// A registry with the manifest's limits (its orchestrator timeout).
            pub fn registry() -> #krate::HealthRegistry {
                #krate::HealthRegistry::builder() #orchestrator .build()
            }

            /// The registrations, in manifest order.
            pub fn registrations(deps: HealthDeps) -> ::std::vec::Vec<#krate::ProbeRegistration> {
                ::std::vec![#(#registrations),*]
            }

            /// Registers every probe on `registry` and yields the three tier
            /// endpoints. Errors only if `registry` already holds a probe of
            /// the same name (R3), which only the running process can know.
            pub fn install(
                registry: &#krate::HealthRegistry,
                deps: HealthDeps,
            ) -> ::std::result::Result<#krate::ZbHealthEndpoints, #krate::RegistryError> {
                registry.add_all(Self::registrations(deps))?;
                #krate::ZbHealth::new(registry.clone()).paths(Self::paths()).build()
            }
        }

        const _: () = { #(#asserts)* };
    })
}

/// `HealthDeps` field of a probe: its manifest name, or the type's name.
fn field_ident(probe: &ProbeDecl, ty: &syn::Path) -> syn::Ident {
    match &probe.name {
        Some(n) => builtin::ident_for(&n.value),
        None => builtin::ident_for(
            &ty.segments
                .last()
                .map(|s| snake_case(&s.ident.to_string()))
                .unwrap_or_else(|| "probe".into()),
        ),
    }
}

/// R7 and R5 for a custom probe: what the manifest states about it must
/// match its attribute, and its attribute timeout must fit the
/// orchestrator's.
fn custom_asserts(
    m: &Manifest,
    p: &ProbeDecl,
    ty: &syn::Path,
    file: &str,
    krate: &TokenStream,
) -> Vec<TokenStream> {
    let meta = quote!(<#ty as #krate::ZbHealthProbe>::META);
    let tyname = quote!(#ty).to_string().replace(' ', "");
    let mut out = Vec::new();
    let mut contradiction = |what: &str, loc: Location, cond: TokenStream| {
        let msg = format!(
            "{file}:{loc}: the manifest's `{what}` for `{tyname}` contradicts its #[zb_health] attribute\n  = rule {}\n  = help: state each fact in one place: delete `{what}` from the manifest entry, or make it equal to the attribute",
            Rule::Contradiction
        );
        out.push(quote!(if !(#cond) { ::core::panic!(#msg) }));
    };
    if let Some(n) = &p.name {
        let v = &n.value;
        contradiction(
            "name",
            n.location,
            quote!(#krate::__private::str_eq(#meta.name, #v)),
        );
    }
    if let Some(tags) = &p.tags {
        let toks = tags.iter().map(|t| builtin::tag(t.value, krate));
        let loc = tags.first().map_or(p.location, |t| t.location);
        contradiction(
            "tags",
            loc,
            quote!(#krate::__private::tags_eq(#meta.tags, #krate::TagSet::of(&[#(#toks),*]))),
        );
    }
    if let Some(t) = &p.timeout {
        let ms = t.value.as_millis() as u64;
        contradiction(
            "timeout",
            t.location,
            quote!(#meta.timeout.as_millis() == #ms as u128),
        );
    }
    if let Some(f) = &p.failure_status {
        let v = builtin::failure_status(f.value, krate);
        contradiction(
            "failure_status",
            f.location,
            quote!(#meta.failure_status as u8 == #v as u8),
        );
    }
    if let Some(o) = &m.orchestrator_timeout {
        let ms = o.value.as_millis() as u64;
        let msg = format!(
            "{file}:{}: the #[zb_health] timeout of `{tyname}` is not below the orchestrator's probe timeout of {ms} ms\n  = rule {}\n  = help: each probe's deadline must be smaller than the orchestrator's, or the orchestrator gives up before the endpoint answers; lower the attribute's `timeout`",
            p.location,
            Rule::Duration
        );
        out.push(quote!(if !(#meta.timeout.as_millis() < #ms as u128) { ::core::panic!(#msg) }));
    }
    out
}

/// R3 across the manifest and the attributes: a custom probe's attribute
/// name must not repeat another probe's name.
///
/// One `const` loop over a table of names, rather than one assertion per
/// pair, keeps expansion linear in the number of probes (100 unnamed
/// custom probes: one loop instead of 4,950 assertions).
fn unique_name_asserts(m: &Manifest, file: &str, krate: &TokenStream) -> Vec<TokenStream> {
    let dynamic = |p: &ProbeDecl| matches!(p.kind, ProbeKind::Custom { .. }) && p.name.is_none();
    if !m.probes.iter().any(dynamic) {
        // Literal names only: the parser has already compared them.
        return Vec::new();
    }
    let names = m.probes.iter().map(|p| match (&p.kind, &p.name) {
        (_, Some(n)) => {
            let v = &n.value;
            quote!(#v)
        }
        (ProbeKind::Custom { type_path }, None) => {
            match syn::parse_str::<syn::Path>(&type_path.value) {
                Ok(ty) => quote!(<#ty as #krate::ZbHealthProbe>::META.name),
                Err(_) => quote!(""),
            }
        }
        (_, None) => quote!(""),
    });
    let messages = m.probes.iter().map(|p| {
        format!(
            "{file}:{}: this probe's name is already used by an earlier probe of the manifest\n  = rule {}\n  = help: names key the JSON entries, so each must be unique; rename one of the probes in its #[zb_health] attribute",
            p.location,
            Rule::DuplicateName
        )
    });
    let n = m.probes.len();
    vec![quote! {
        const NAMES: [&str; #n] = [#(#names),*];
        const MESSAGES: [&str; #n] = [#(#messages),*];
        let mut i = 1;
        while i < #n {
            let mut j = 0;
            while j < i {
                if !NAMES[i].is_empty() && #krate::__private::str_eq(NAMES[i], NAMES[j]) {
                    ::core::panic!("{}", MESSAGES[i]);
                }
                j += 1;
            }
            i += 1;
        }
    }]
}
