//! `manifest!`: read `health.yaml` at compile time, check it with the
//! shared spec rules, and generate typed registration under names the
//! caller chooses.
//!
//! What the manifest alone can break is checked here, by
//! `zb_health_spec::manifest::parse_manifest`. What needs the attribute of
//! another item (a custom probe's name, tags, timeout) is checked in the
//! generated code, since a macro cannot see other items: one `const` item
//! per fact, each calling a `const fn` of `zb_health_spec::facts`, so rustc
//! reports every broken fact at once (axum's `debug_handler` does the
//! same). Their messages still name the manifest's line and column.

use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::{LitStr, Token};
use zb_health_spec::manifest::{Location, Manifest, ProbeDecl, ProbeKind, parse_manifest};
use zb_health_spec::{Rule, Tag, Violation, facts};

use crate::builtin;
use crate::errors::render;

const USAGE: &str = "write `manifest!(pub Health = \"health.yaml\")` (a path) or `manifest!(pub Health, yaml = r#\"...\"#)` (inline); it generates the type `Health` and its dependencies struct `HealthDeps`";

/// The macro's input: the generated type's visibility and name, then a
/// path (`= "health.yaml"`) or an inline manifest (`, yaml = "..."`), then
/// options.
struct Input {
    vis: syn::Visibility,
    name: syn::Ident,
    source: Source,
    krate: Option<syn::Path>,
}

enum Source {
    File(LitStr),
    Inline(LitStr),
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(LitStr) {
            // The unnamed form of earlier versions: say what replaced it.
            return Err(input.error(format!(
                "name the generated items: {USAGE}, so two manifests in one module cannot collide"
            )));
        }
        let vis: syn::Visibility = input.parse()?;
        let name: syn::Ident = input
            .parse()
            .map_err(|e| syn::Error::new(e.span(), USAGE))?;
        let source = if input.parse::<Option<Token![=]>>()?.is_some() {
            Source::File(
                input
                    .parse()
                    .map_err(|e| syn::Error::new(e.span(), USAGE))?,
            )
        } else {
            input
                .parse::<Token![,]>()
                .map_err(|e| syn::Error::new(e.span(), USAGE))?;
            let key: syn::Ident = input.parse()?;
            if key != "yaml" {
                return Err(syn::Error::new(key.span(), USAGE));
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
        Ok(Input {
            vis,
            name,
            source,
            krate,
        })
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
        .clone()
        .map(|p| quote!(#p))
        .unwrap_or_else(|| quote!(::zb_health));
    let names = Names {
        vis: &input.vis,
        ty: &input.name,
        deps: format_ident!("{}Deps", input.name),
    };
    match generate(&manifest, &file_label, span, &krate, &names) {
        Ok(tokens) => {
            let track = tracked.map(|p| {
                let p = p.to_string_lossy().into_owned();
                quote!(
                    const _: &[u8] = ::core::include_bytes!(#p);
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
    // Rendered like every other violation (R8), by the one renderer.
    Err(render(&Violation {
        rule: Rule::ManifestFile,
        location: (),
        message: format!(
            "cannot read the health manifest `{}` (looked for {}): {why}",
            lit.value(),
            looked.join(" and ")
        ),
        help: "a relative path is resolved from the directory of the file that calls `manifest!` (as `include_str!` does), then from the crate root; create the file or fix the path".into(),
    }))
}

/// The names the caller chose: `VIS NAME` generates `NAME` and `NAMEDeps`.
struct Names<'a> {
    vis: &'a syn::Visibility,
    ty: &'a syn::Ident,
    deps: syn::Ident,
}

/// One generated registration: its deps field (none for cluster kinds,
/// which share one view), its `ProbeRegistration` and its metadata.
struct Dep {
    field: Option<Field>,
    registration: TokenStream,
    meta: TokenStream,
}

/// A field of the deps struct, with the doc that says where its name
/// comes from.
struct Field {
    ident: syn::Ident,
    ty: TokenStream,
    doc: String,
}

/// Who claimed a deps field name first, to name both probes on a clash.
struct Claim {
    field: String,
    probe: String,
    location: Location,
}

fn generate(
    m: &Manifest,
    file: &str,
    span: Span,
    krate: &TokenStream,
    names: &Names<'_>,
) -> syn::Result<TokenStream> {
    let Names {
        vis,
        ty: name,
        deps: deps_name,
    } = names;
    let mut deps = Vec::new();
    let mut checks = Vec::new();
    let mut features: Vec<&str> = Vec::new();
    let mut errors: Option<syn::Error> = None;
    let mut push_error = |e: syn::Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    // Field names are a stable function of what the user wrote: two
    // probes that would share one are an error, never a silent suffix.
    let mut claims = vec![Claim {
        field: builtin::CLUSTER_FIELD.to_owned(),
        probe: String::new(),
        location: Location::default(),
    }];
    let mut claim = |ident: &syn::Ident, probe: &ProbeDecl, label: &str| -> Option<syn::Error> {
        let field = ident.to_string();
        let error = claims.iter().find(|c| c.field == field).map(|first| {
            let message = if first.probe.is_empty() {
                format!(
                    "probe {label} would get the `{deps_name}` field `{field}`, which holds the cluster view shared by the cluster kinds"
                )
            } else {
                format!(
                    "probes {} (at {file}:{}) and {label} would both get the `{deps_name}` field `{field}`",
                    first.probe, first.location
                )
            };
            let v = Violation {
                rule: Rule::DuplicateName,
                location: probe.location,
                message,
                help: "a field is named after the probe's `name` (`-` and `.` become `_`), or, for a `kind: custom` entry without `name:`, after its type in snake case; give one of the entries a `name:` that differs as an identifier".into(),
            };
            syn::Error::new(span, format!("{file}:{}: {}", v.location, render(&v)))
        });
        claims.push(Claim {
            field,
            probe: label.to_owned(),
            location: probe.location,
        });
        error
    };
    for (index, probe) in m.probes.iter().enumerate() {
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
                let tyname = quote!(#ty).to_string().replace(' ', "");
                let (ident, doc) = custom_field(probe, &ty, &tyname);
                let label = match &probe.name {
                    Some(n) => format!("`{}`", n.value),
                    None => format!("`{tyname}`"),
                };
                if let Some(e) = claim(&ident, probe, &label) {
                    push_error(e);
                }
                checks.extend(custom_facts(
                    m, probe, index, &ty, &tyname, file, span, krate, name,
                ));
                deps.push(Dep {
                    registration: quote!(<#ty as #krate::ZbHealthProbe>::registration(deps.#ident)),
                    meta: quote!(<#ty as #krate::ZbHealthProbe>::META),
                    field: Some(Field {
                        ident,
                        ty: quote!(#ty),
                        doc,
                    }),
                });
            }
            kind => {
                let field = builtin::own_field_type(kind, krate).map(|ty| {
                    let probe_name = probe.name.as_ref().map_or("probe", |n| n.value.as_str());
                    let ident = builtin::ident_for(probe_name);
                    if let Some(e) = claim(&ident, probe, &format!("`{probe_name}`")) {
                        push_error(e);
                    }
                    Field {
                        doc: format!(
                            "The `{probe_name}` probe (`kind: {}`); the field is named after its `name`.",
                            kind.as_str()
                        ),
                        ident,
                        ty,
                    }
                });
                let meta = builtin::meta(m, probe, krate);
                let value = builtin::probe(probe, field.as_ref().map(|f| &f.ident), krate);
                deps.push(Dep {
                    registration: quote!((#meta).registration(#value)),
                    meta,
                    field,
                });
            }
        }
    }
    if let Some(e) = errors {
        return Err(e);
    }
    let life = crate::lifecycle::generate(
        m,
        file,
        span,
        krate,
        &crate::lifecycle::Names::new(vis, name),
    )?;
    let installed = format_ident!("{}Installed", name);
    let crate::lifecycle::Generated {
        items: life_items,
        consts: life_consts,
        watchdogs: watchdogs_init,
        startup: startup_init,
    } = life;
    let (names_table, unique) = unique_name_facts(m, file, span, krate, name);
    checks.extend(unique);
    let crate::grpc::Generated {
        items: grpc_items,
        checks: grpc_checks,
    } = crate::grpc::generate(m, file, span, krate, name);
    checks.push(grpc_checks);

    // With a `grpc` section, the server serves `grpc.health.v1` too.
    let grpc_server = m
        .grpc
        .as_ref()
        .map(|_| quote!(.grpc(Self::grpc(registry)?)));
    let service = &m.service.value;
    let [ready, active, live] = Tag::ALL.map(|t| m.paths.get(t).to_owned());
    let body_style = body_style(m, krate);
    let (orchestrator, set_orchestrator) = match &m.orchestrator_timeout {
        Some(t) => {
            let ms = t.value.as_millis() as u64;
            (
                quote!(::core::option::Option::Some(#krate::__private::Duration::from_millis(#ms))),
                quote!(registry.set_orchestrator_timeout(#krate::__private::Duration::from_millis(#ms))?;),
            )
        }
        None => (quote!(::core::option::Option::None), quote!()),
    };
    // `observability.failure_log_interval` (BE-HLTH-008): a registry-wide
    // setting, like the orchestrator timeout.
    let set_log_interval = m.failure_log_interval.map(|t| {
        let ms = t.value.as_millis() as u64;
        quote!(registry.set_failure_log_interval(#krate::__private::Duration::from_millis(#ms));)
    });
    let mut fields: Vec<TokenStream> = deps
        .iter()
        .filter_map(|d| d.field.as_ref())
        .map(|Field { ident, ty, doc }| quote!(#[doc = #doc] pub #ident: #ty,))
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
        "What the health manifest `{file}` needs from the application, for [`{name}`]: one field per probe it names (leaving one out is a compile error naming it), plus `cluster_view` if it has cluster kinds.\n\n\
         A field is named after the probe's `name` in the manifest, with `-` and `.` turned into `_` (`disk-space` → `disk_space`). A `kind: custom` entry without `name:` takes its name from its `#[zb_health]` attribute, which the macro cannot read, so its field is named after its type in snake case (`CacheProbe` → `cache_probe`); write `name:` in the entry to name the field after the probe."
    );
    let manifest_doc = format!(
        "The health of service `{service}`, as declared in `{file}`. Its dependencies are [`{deps_name}`]; `install` registers them in the process registry and returns the tier endpoints with the lifecycle handles, [`{installed}`]."
    );
    Ok(quote! {
        #(#requires)*

        #[doc = #deps_doc]
        #vis struct #deps_name {
            #(#fields)*
        }

        #life_items

        #[doc = #manifest_doc]
        #vis struct #name;

        #[allow(dead_code)]
        impl #name {
            #gate

            /// The manifest's `service`.
            pub const SERVICE: &'static str = #service;

            /// The manifest's `orchestrator.timeout`, if it states one: every
            /// probe of the registry it is installed into must answer within it.
            pub const ORCHESTRATOR_TIMEOUT: ::core::option::Option<#krate::__private::Duration> = #orchestrator;

            #life_consts

            /// Every probe's metadata, in manifest order.
            pub const PROBES: &'static [#krate::meta::ProbeMeta] = &[#(#metas),*];

            #names_table

            #grpc_items

            /// The tier paths the manifest declares.
            pub fn paths() -> #krate::spec::EndpointPaths {
                #krate::spec::EndpointPaths {
                    ready: ::std::string::String::from(#ready),
                    active: ::std::string::String::from(#active),
                    live: ::std::string::String::from(#live),
                }
            }

            /// The registrations, in manifest order.
            pub fn registrations(deps: #deps_name) -> ::std::vec::Vec<#krate::ProbeRegistration> {
                ::std::vec![#(#registrations),*]
            }

            /// Installs the manifest into the process registry,
            /// `HealthRegistry::process()` (AT-1: one per process), and
            /// returns its `server` (the tiers, the management port,
            /// `grpc.health.v1` and the drain, serving that registry), with
            /// the handles of the declared startup gates and watchdogs.
            ///
            /// Sets the registry's orchestrator timeout (if the manifest
            /// states one), so probes registered later in code are held to it
            /// too, and its failure log interval (if stated), registers the
            /// watchdogs, adds every probe, then declares the startup gates:
            /// all or none. Errors if the process registry already holds a
            /// probe or watchdog of the same name (R3), a probe whose
            /// deadline does not fit the timeout, or another orchestrator
            /// timeout (R5): facts only the running process knows.
            pub fn install(
                deps: #deps_name,
            ) -> ::core::result::Result<#installed, #krate::RegistryError> {
                Self::install_into(#krate::HealthRegistry::process(), deps)
            }

            /// [`install`](Self::install) into `registry` instead of the
            /// process registry: for tests, each with its own
            /// `HealthRegistry::new()` (AT-9). A failed install may leave the
            /// orchestrator timeout set, but adds no probe, watchdog or gate.
            pub fn install_into(
                registry: &#krate::HealthRegistry,
                deps: #deps_name,
            ) -> ::core::result::Result<#installed, #krate::RegistryError> {
                #set_orchestrator
                #set_log_interval
                // Fallible steps first; a dropped heartbeat removes itself.
                let watchdogs = #watchdogs_init;
                registry.add_all(Self::registrations(deps))?;
                let endpoints = #krate::ZbHealth::new(::core::clone::Clone::clone(registry))
                    .paths(Self::paths())
                    #body_style
                    .build()?;
                let drain = match Self::TERMINATION_GRACE_PERIOD {
                    ::core::option::Option::Some(grace) => Self::DRAIN.within_grace_period(grace)?,
                    ::core::option::Option::None => Self::DRAIN,
                };
                let server = #krate::server::ZbHealthServer::new(
                    ::core::clone::Clone::clone(registry),
                    endpoints,
                    drain,
                )
                .management_port(Self::MANAGEMENT_PORT)
                #grpc_server;
                let startup = #startup_init;
                ::core::result::Result::Ok(#installed {
                    server,
                    startup,
                    watchdogs,
                })
            }
        }

        #(#checks)*
    })
}

/// The `ZbHealth` builder calls for `endpoints.format`, `disclosure` and
/// `cluster_ready`; nothing for what the manifest leaves at its default.
fn body_style(m: &Manifest, krate: &TokenStream) -> TokenStream {
    let mut calls = TokenStream::new();
    if let Some(format) = m.responses.format {
        let variant = match format.value {
            zb_health_spec::ResponseFormat::Zb => quote!(Zb),
            zb_health_spec::ResponseFormat::PassFail => quote!(PassFail),
        };
        calls.extend(quote!(.format(#krate::spec::ResponseFormat::#variant)));
    }
    for tag in Tag::ALL {
        let Some(level) = m.responses.disclosure[tag as usize] else {
            continue;
        };
        let tier = match tag {
            Tag::Ready => quote!(Ready),
            Tag::Active => quote!(Active),
            Tag::Live => quote!(Live),
        };
        let level = match level.value {
            zb_health_spec::Disclosure::Full => quote!(Full),
            zb_health_spec::Disclosure::Names => quote!(Names),
            zb_health_spec::Disclosure::Status => quote!(Status),
        };
        calls
            .extend(quote!(.tier_disclosure(#krate::Tag::#tier, #krate::spec::Disclosure::#level)));
    }
    if let Some(name) = &m.responses.cluster_ready {
        let name = &name.value;
        calls.extend(quote!(.cluster_ready(#name)));
    }
    calls
}

/// `CacheProbe` → `cache_probe`, `HTTPProbe` → `http_probe`,
/// `Http2Probe` → `http2_probe`: a word starts at an upper-case letter
/// after a lower-case letter or digit, or at the last capital of an
/// acronym that a lower-case letter follows.
pub fn snake_case(ident: &str) -> String {
    let chars: Vec<char> = ident.chars().collect();
    let mut out = String::with_capacity(ident.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1);
            let boundary = match prev {
                Some(p) if p.is_ascii_lowercase() || p.is_ascii_digit() => true,
                Some(p) if p.is_ascii_uppercase() => next.is_some_and(char::is_ascii_lowercase),
                _ => false,
            };
            if boundary {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The deps field of a custom probe and its doc: the manifest's `name`,
/// else the type's name in snake case.
fn custom_field(probe: &ProbeDecl, ty: &syn::Path, tyname: &str) -> (syn::Ident, String) {
    match &probe.name {
        Some(n) => (
            builtin::ident_for(&n.value),
            format!(
                "The `{}` probe, `{tyname}`; the field is named after the manifest entry's `name`.",
                n.value
            ),
        ),
        None => {
            let last = ty
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            let last = last.strip_prefix("r#").unwrap_or(&last);
            (
                builtin::ident_for(&snake_case(last)),
                format!(
                    "The `{tyname}` probe. The field is named after the type: the probe's name is on its #[zb_health] attribute, which `manifest!` cannot read. Write `name:` in the manifest entry to name the field after the probe."
                ),
            )
        }
    }
}

/// One `const` item checking one fact: `ok` must hold, else compilation
/// fails with `message`. The item is named after the manifest type, the
/// probe's position and the fact, so rustc's "evaluation of `…` failed"
/// line says which fact broke.
fn fact_item(
    name: &syn::Ident,
    index: usize,
    fact: &str,
    span: Span,
    ok: TokenStream,
    message: &str,
) -> TokenStream {
    let item = format_ident!("{}__probe{}__{}", name, index + 1, fact);
    quote_spanned! {span=>
        #[doc(hidden)]
        #[allow(non_upper_case_globals, dead_code)]
        const #item: () = if !(#ok) {
            ::core::panic!("{}", #message)
        };
    }
}

/// A violation rendered as the generated code's panic message: the one
/// wording of every compile error, prefixed with the YAML position.
fn message(file: &str, rule: Rule, location: Location, text: String, help: &str) -> String {
    let v = Violation {
        rule,
        location,
        message: text,
        help: help.to_owned(),
    };
    format!("{file}:{}: {}", v.location, render(&v))
}

/// R7 and R5 for a custom probe: what the manifest states about it must
/// match its attribute, one item per key it states, and its attribute
/// timeout must fit the orchestrator's.
#[allow(clippy::too_many_arguments)]
fn custom_facts(
    m: &Manifest,
    p: &ProbeDecl,
    index: usize,
    ty: &syn::Path,
    tyname: &str,
    file: &str,
    span: Span,
    krate: &TokenStream,
    name: &syn::Ident,
) -> Vec<TokenStream> {
    let meta = quote!(<#ty as #krate::ZbHealthProbe>::META);
    let f = quote!(#krate::__private::facts);
    let mut out = Vec::new();
    let mut contradiction = |key: &str, fact: &str, loc: Location, ok: TokenStream| {
        let text =
            format!("the manifest's `{key}` for `{tyname}` contradicts its #[zb_health] attribute");
        let msg = message(
            file,
            Rule::Contradiction,
            loc,
            text,
            facts::CONTRADICTION_HELP,
        );
        out.push(fact_item(name, index, fact, span, ok, &msg));
    };
    if let Some(n) = &p.name {
        let v = &n.value;
        contradiction(
            "name",
            "name_agrees",
            n.location,
            quote!(#f::same_name(#meta.name, #v)),
        );
    }
    if let Some(tags) = &p.tags {
        let toks = tags.iter().map(|t| builtin::tag(t.value, krate));
        let loc = tags.first().map_or(p.location, |t| t.location);
        contradiction(
            "tags",
            "tags_agree",
            loc,
            quote!(#f::same_tags(#meta.tags, #krate::TagSet::of(&[#(#toks),*]))),
        );
    }
    if let Some(t) = &p.timeout {
        let ms = t.value.as_millis() as u64;
        contradiction(
            "timeout",
            "timeout_agrees",
            t.location,
            quote!(#f::same_timeout(#meta.timeout, #krate::__private::Duration::from_millis(#ms))),
        );
    }
    if let Some(fs) = &p.failure_status {
        let v = builtin::failure_status(fs.value, krate);
        contradiction(
            "failure_status",
            "failure_status_agrees",
            fs.location,
            quote!(#f::same_failure_status(#meta.failure_status, #v)),
        );
    }
    for (key, fact, value, field) in [
        ("cache", "cache_agrees", &p.cache, quote!(cache)),
        ("refresh", "refresh_agrees", &p.refresh, quote!(refresh)),
        (
            "max_staleness",
            "max_staleness_agrees",
            &p.max_staleness,
            quote!(max_staleness),
        ),
    ] {
        if let Some(d) = value {
            let ms = d.value.as_millis() as u64;
            contradiction(
                key,
                fact,
                d.location,
                quote!(#f::states_duration(#meta.#field, #krate::__private::Duration::from_millis(#ms))),
            );
        }
    }
    if let Some(o) = &m.orchestrator_timeout {
        let ms = o.value.as_millis() as u64;
        let text = format!(
            "the #[zb_health] timeout of `{tyname}` is not below the orchestrator's probe timeout of {ms} ms"
        );
        let msg = message(
            file,
            Rule::Duration,
            p.location,
            text,
            facts::ORCHESTRATOR_HELP,
        );
        out.push(fact_item(
            name,
            index,
            "fits_orchestrator",
            span,
            quote!(#f::fits_orchestrator(#meta.timeout, #krate::__private::Duration::from_millis(#ms))),
            &msg,
        ));
    }
    out
}

/// R3 across the manifest and the attributes: a probe's name must not
/// repeat an earlier probe's, where one of the two comes from an attribute
/// (literal names the parser has already compared).
///
/// One item per probe over one table of names (a hidden associated
/// `const` of the generated type), so expansion stays linear in the number
/// of probes; returns the table and the items.
fn unique_name_facts(
    m: &Manifest,
    file: &str,
    span: Span,
    krate: &TokenStream,
    name: &syn::Ident,
) -> (TokenStream, Vec<TokenStream>) {
    let dynamic = |p: &ProbeDecl| matches!(p.kind, ProbeKind::Custom { .. }) && p.name.is_none();
    let Some(first_dynamic) = m.probes.iter().position(dynamic) else {
        return (quote!(), Vec::new());
    };
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
    let n = m.probes.len();
    let table = quote! {
        /// Every probe's name, for the generated uniqueness checks (R3).
        #[doc(hidden)]
        const __PROBE_NAMES: [&'static str; #n] = [#(#names),*];
    };
    let items = m
        .probes
        .iter()
        .enumerate()
        .skip(first_dynamic.max(1))
        .map(|(i, p)| {
            let msg = message(
                file,
                Rule::DuplicateName,
                p.location,
                "this probe's name is already used by an earlier probe of the manifest".into(),
                facts::DUPLICATE_NAME_HELP,
            );
            fact_item(
                name,
                i,
                "name_unique",
                span,
                quote!(#krate::__private::facts::name_unique_at(&#name::__PROBE_NAMES, #i)),
                &msg,
            )
        })
        .collect();
    (table, items)
}
