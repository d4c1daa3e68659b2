//! `#[zb_health(...)]`: parse the arguments into typed settings, check
//! them with the shared spec rules, generate `ZbHealthProbe`.
//!
//! As in serde_derive, each setting remembers where it was written (its
//! key's span in [`Settings`]), and the keys written are kept, so a key
//! given twice is refused at its second occurrence; and an attribute with
//! errors still expands to the struct and an impl built from whatever
//! parsed, so the user sees only the real errors, not a cascade of "is not
//! a #[zb_health] probe" at every use of the type.

use std::time::Duration;

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, Meta, Token};
use zb_health_spec::settings::{ProbeSettings, SettingsAt};
use zb_health_spec::{
    FailureStatus, Rule, Tag, Violations,
    rules::{check_duration_text, missing_key},
    suggest::{did_you_mean, hint, one_of},
    vocab::{Keyword, PROBE_SETTING_KEYS},
};

use crate::errors::Ctxt;
use crate::limits::{Bounds, Limit};
use crate::tokens::ProbeMetaTokens;

/// The attribute's keys: the settings it shares with a manifest entry,
/// then its own.
fn keys() -> impl Iterator<Item = &'static str> {
    // `blocking` says how the type's code runs, not how a deployment uses
    // it, so it is attribute-only, like `crate`.
    PROBE_SETTING_KEYS.into_iter().chain(["blocking", "crate"])
}

/// The attribute's settings: the spec's model of them, filled from what
/// parsed, defaults for the rest (an unparsed key is reported where it is
/// written); and the keys written, each with its value's span once that
/// parsed. As in serde_derive's `Attr::set`, the first occurrence of a key
/// wins; a second is an error at its own key.
#[derive(Default)]
struct Settings {
    written: Vec<(String, Option<Span>)>,
    name: Option<String>,
    /// The known tags, each at its token.
    tags: Vec<(Tag, Span)>,
    values: ProbeSettings,
    blocking: Option<bool>,
    krate: Option<syn::Path>,
}

impl Settings {
    /// Whether `key` was written, whether or not its value parsed.
    fn written(&self, key: &str) -> bool {
        self.written.iter().any(|(k, _)| k == key)
    }

    /// Where `key`'s value is written, if it parsed.
    fn span(&self, key: &str) -> Option<Span> {
        self.written.iter().find(|(k, _)| k == key)?.1
    }

    /// `value` at `key`'s span, as the spec's checks take a setting.
    fn at<T>(&self, value: Option<T>, key: &str) -> Option<(T, Span)> {
        value.zip(self.span(key))
    }
}

/// What the attribute is on: a probe struct, or an `async fn` that is
/// one probe with no state.
enum Item {
    Struct(syn::ItemStruct),
    Fn(syn::ItemFn),
}

pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let args_tokens = args.clone();
    let errors = Ctxt::new();
    let mut sink = Violations::new();
    let item_tokens = item.clone();
    let item = match syn::parse2::<syn::Item>(item) {
        Ok(syn::Item::Struct(s)) => Some(Item::Struct(s)),
        Ok(syn::Item::Fn(f)) => Some(Item::Fn(f)),
        Ok(other) => {
            errors.help(
                item_keyword_span(&other),
                "#[zb_health] goes on a struct or an async fn",
                "declare the probe as an `async fn` with no arguments returning `ProbeOutcome`, or as a struct (unit structs are fine) implementing `zb_health::prelude::Probe`; a probe needs a path the manifest can name",
            );
            None
        }
        Err(e) => {
            errors.push(e);
            None
        }
    };
    let settings = parse_settings(args, &mut sink).unwrap_or_else(|e| {
        errors.push(e);
        Settings::default()
    });
    let Some(item) = item else {
        // Keep the user's item so that follow-on errors stay about it.
        errors.violations(sink);
        let errs = errors.check();
        return quote!(#errs #item_tokens);
    };
    // A fn whose shape is wrong still gets its probe type, so a manifest's
    // `fn:` adds nothing to the error; its registration is never reached.
    let (ident, fn_ok) = match &item {
        Item::Struct(s) => (s.ident.clone(), true),
        Item::Fn(f) => (f.sig.ident.clone(), check_fn(f, &settings, &errors)),
    };
    let name = check_settings(&settings, &ident, &mut sink);
    errors.violations(sink);

    let krate = crate::tokens::krate(settings.krate.as_ref());
    let meta_value = ProbeMetaTokens {
        krate: &krate,
        name: &name,
        settings: settings.values,
    };
    // `META` is qualified because an inherent `META` of the type would win
    // over `Self::META`.
    let meta = quote_spanned!(ident.span()=> <Self as #krate::meta::ZbHealthProbe>::META);
    let probe = match item {
        Item::Struct(strukt) => struct_probe(&strukt, &settings, &krate, &meta_value, &meta),
        Item::Fn(f) => fn_probe(&f, fn_ok, &krate, &meta_value, &meta),
    };
    let callback = limits_callback(&ident, &krate, &args_tokens);
    let errs = errors.check();
    quote! {
        #errs
        #probe
        #callback
    }
}

/// The spec rules over the attribute's settings, the same for a struct
/// and an `async fn`: the one checker of a probe's settings
/// ([`SettingsAt::check`]), each setting at its value's span, without an
/// orchestrator timeout or a detection time (limits a manifest sets,
/// `crate::limits`); the probe's name (empty when it did not parse).
fn check_settings(s: &Settings, ident: &syn::Ident, sink: &mut Violations<Span>) -> String {
    let name = s.name.clone().unwrap_or_default();
    // A name written but not as a string literal is reported where it is.
    if !s.written("name") {
        missing_key(
            "#[zb_health] needs a `name`",
            format!(
                "write #[zb_health(name = \"{}\")]; the name keys the probe's entry in the JSON body",
                crate::manifest::snake_case(&ident.unraw().to_string())
            ),
            Span::call_site(),
            sink,
        );
    }
    let (v, p, t) = (s.values, s.values.policy, s.values.policy.threshold);
    SettingsAt {
        name: s.span("name"),
        // Unknown tags were reported, and `tags` has no span when none
        // was known (`parse_settings`).
        written_tags: s.span("tags").map(|at| (s.tags.clone(), at)),
        tags: Some(v.tags),
        deadline: (
            v.resolved_timeout(None),
            s.at(v.timeout, "timeout").map(|t| t.1),
        ),
        failure_status: s.at(Some(v.failure_status), "failure_status"),
        cache: s.at(p.cache, "cache"),
        refresh: s.at(p.refresh, "refresh"),
        max_staleness: s.at(p.max_staleness, "max_staleness"),
        failures: s.at(t.failures, "failure_threshold"),
        failing_for: s.at(t.failing_for, "failing_for"),
        successes: s.at(t.successes, "success_threshold"),
        shared: s.at(Some(p.shared), "shared"),
        restart_after: s.at(p.restart_after, "restart_after"),
    }
    .check(&name, None, None, sink);
    name
}

/// The probe struct as written, and its `ZbHealthProbe` impl.
fn struct_probe(
    strukt: &syn::ItemStruct,
    settings: &Settings,
    krate: &TokenStream,
    meta_value: &ProbeMetaTokens<'_>,
    meta: &TokenStream,
) -> TokenStream {
    let ident = &strukt.ident;
    let (impl_generics, ty_generics, where_clause) = strukt.generics.split_for_impl();
    // The registration names the trait the attribute chose, so a missing
    // impl is reported as that trait's, at the struct name. A `blocking`
    // that did not parse chose neither: the body then asks nothing of the
    // type, so the R15 error stands alone.
    let registration = match settings.blocking {
        Some(true) => quote_spanned!(ident.span()=> #meta.blocking_registration(self)),
        None if settings.written("blocking") => {
            quote!(::core::unreachable!("#[zb_health] had errors"))
        }
        _ => quote_spanned!(ident.span()=> #meta.registration(self)),
    };
    // The impl is spanned at the struct name, so "does not implement
    // Probe" points at the type the user must complete. With errors it is
    // still emitted, from what parsed, so uses of the type (a manifest's
    // `type:`) do not add a misleading "is not a #[zb_health] probe".
    quote_spanned! {ident.span()=>
        #strukt
        impl #impl_generics #krate::meta::ZbHealthProbe for #ident #ty_generics #where_clause {
            const META: #krate::meta::ProbeMeta = #meta_value;

            fn registration(self) -> #krate::registry::ProbeRegistration {
                #registration
            }
        }
    }
}

/// What an `async fn` probe must be: async, with no arguments or generic
/// parameters, returning a value (the type system checks that it is a
/// `ProbeOutcome`, at the return type), and not `blocking`. Each broken
/// rule is an error at its own token; `true` if none is.
fn check_fn(f: &syn::ItemFn, settings: &Settings, errors: &Ctxt) -> bool {
    let sig = &f.sig;
    let shape = format!("`async fn {}() -> ProbeOutcome`", sig.ident);
    let state = "a probe that needs state is a struct holding it: #[zb_health] on the struct, `impl Probe` for it, and `type:` in the manifest, which adds its `HealthDeps` field";
    let blocking = "for blocking code, declare a struct with `blocking = true` that implements `BlockingProbe`";
    let generic = !sig.generics.params.is_empty() || sig.generics.where_clause.is_some();
    // Each rule: where it is broken, if it is, what is wrong and the fix.
    let rules = [
        (
            sig.asyncness.is_none().then_some(sig.fn_token.span),
            "a #[zb_health] fn must be `async`",
            format!("write {shape}; {blocking}"),
        ),
        (
            (!sig.inputs.is_empty()).then(|| sig.inputs.span()),
            "a #[zb_health] async fn takes no arguments",
            format!("write {shape}; {state}"),
        ),
        (
            generic.then(|| sig.generics.span()),
            "a #[zb_health] async fn has no generic parameters",
            format!("write {shape}; {state}"),
        ),
        (
            matches!(sig.output, syn::ReturnType::Default).then(|| sig.paren_token.span.join()),
            "a #[zb_health] async fn returns its `ProbeOutcome`",
            format!(
                "write {shape}: `Ok(ProbeResult::healthy())`, or an error the `?` operator converts"
            ),
        ),
        (
            settings
                .span("blocking")
                .filter(|_| settings.blocking == Some(true)),
            "`blocking = true` is for a probe struct, not an async fn",
            format!("remove it: an async fn runs on the async runtime; {blocking}"),
        ),
    ];
    let mut ok = true;
    for (span, message, help) in rules {
        if let Some(span) = span {
            errors.help(span, message, &help);
            ok = false;
        }
    }
    ok
}

/// The `async fn` as written, and its probe: a braced struct named like
/// the fn (types and values are separate namespaces, so both keep the
/// name, and the manifest's `fn: crate::ping` names the struct), whose
/// `ZbHealthProbe` impl runs the fn and can be made from nothing
/// (`STATELESS`).
fn fn_probe(
    f: &syn::ItemFn,
    fn_ok: bool,
    krate: &TokenStream,
    meta_value: &ProbeMetaTokens<'_>,
    meta: &TokenStream,
) -> TokenStream {
    let ident = &f.sig.ident;
    let vis = &f.vis;
    let cfgs: Vec<_> = f
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    let registration = if fn_ok {
        // Spanned at the return type, so a fn returning something else
        // than a `ProbeOutcome` is a type mismatch there.
        let at = match &f.sig.output {
            syn::ReturnType::Type(_, ty) => ty.span(),
            syn::ReturnType::Default => ident.span(),
        };
        let outcome =
            quote_spanned!(at=> let outcome: #krate::probe::ProbeOutcome = #ident().await;);
        quote! {
            #meta.registration(#krate::probe::from_fn(|| async {
                #outcome
                outcome
            }))
        }
    } else {
        quote!(::core::unreachable!("#[zb_health] had errors"))
    };
    let doc = format!(
        "The probe of the async fn `{ident}`, declared by its `#[zb_health]`: a manifest entry `fn: path::to::{ident}` registers it, and so does `registry.add({ident} {{}}.registration())`."
    );
    quote! {
        #f
        #[doc = #doc]
        #[allow(non_camel_case_types, dead_code)]
        #[derive(Clone, Copy, Debug, Default)]
        #(#cfgs)*
        #vis struct #ident {}
        #(#cfgs)*
        impl #krate::meta::ZbHealthProbe for #ident {
            const META: #krate::meta::ProbeMeta = #meta_value;
            const STATELESS: ::core::option::Option<fn() -> #krate::registry::ProbeRegistration> =
                ::core::option::Option::Some(|| <Self as #krate::meta::ZbHealthProbe>::registration(Self {}));

            fn registration(self) -> #krate::registry::ProbeRegistration {
                #registration
            }
        }
    }
}

/// The attribute's callback: a hidden macro named like the struct (macros
/// have their own namespace), through which `manifest!` hands the limits
/// it sets, so that a broken one is reported here, at the key the user
/// changes ([`crate::limits`]). It carries the attribute's own tokens,
/// spans and all, to [`limits`].
fn limits_callback(ident: &syn::Ident, krate: &TokenStream, args: &TokenStream) -> TokenStream {
    let callback = format_ident!("__zb_health_limits_of_{}", ident);
    quote! {
        #[doc(hidden)]
        #[allow(unused_macros)]
        macro_rules! #callback {
            ($($manifest:tt)*) => {
                #krate::__private::__attribute_limits! { [#args] $($manifest)* }
            };
        }
        #[doc(hidden)]
        #[allow(unused_imports)]
        pub(crate) use #callback as #ident;
    }
}

/// What `manifest!` hands a callback: the manifest, the entry's position
/// in it, the type as written, and the limits.
#[derive(Default)]
struct LimitsInput {
    args: TokenStream,
    file: String,
    at: String,
    ty: String,
    bounds: Bounds,
}

impl syn::parse::Parse for LimitsInput {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        let content;
        syn::bracketed!(content in input);
        let mut limits = Self {
            args: content.parse()?,
            ..Self::default()
        };
        let bad = |span| syn::Error::new(span, "zb-health internal: bad limits input");
        for nv in Punctuated::<syn::MetaNameValue, Token![,]>::parse_terminated(input)? {
            let key = key_of(&nv.path);
            let Expr::Lit(ExprLit { lit, .. }) = &nv.value else {
                return Err(bad(nv.value.span()));
            };
            let millis = |n: &syn::LitInt| n.base10_parse().map(Duration::from_millis);
            match (key.as_str(), lit) {
                ("file", Lit::Str(s)) => limits.file = s.value(),
                ("at", Lit::Str(s)) => limits.at = s.value(),
                ("ty", Lit::Str(s)) => limits.ty = s.value(),
                ("orchestrator", Lit::Int(n)) => limits.bounds.orchestrator = Some(millis(n)?),
                ("detection", Lit::Int(n)) => limits.bounds.detection = millis(n)?,
                (_, Lit::Str(_) | Lit::Int(_)) => {}
                _ => return Err(bad(lit.span())),
            }
        }
        Ok(limits)
    }
}

/// The callback's work: each limit the attribute breaks, as an error at
/// the key that breaks it, the manifest's line as a note. An attribute
/// with errors of its own was reported by its expansion; here it counts
/// only for what parsed.
pub fn limits(input: TokenStream) -> TokenStream {
    let input = match syn::parse2::<LimitsInput>(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let settings = parse_settings(input.args.clone(), &mut Violations::new()).unwrap_or_default();
    let whole = input
        .args
        .clone()
        .into_iter()
        .next()
        .map_or_else(Span::call_site, |t| t.span());
    Limit::ALL
        .into_iter()
        .filter(|l| l.applies(input.bounds) && !l.holds(&settings.values, input.bounds))
        .map(|l| {
            let span = l
                .keys()
                .iter()
                .find_map(|k| settings.span(k))
                .unwrap_or(whole);
            let note = format!(
                "{}:{}: the manifest entry of `{}`, which sets this limit",
                input.file, input.at, input.ty
            );
            let (rule, text, help) = l.violation(&input.ty, input.bounds);
            let message = crate::errors::render(rule, &text, help, Some(&note));
            syn::Error::new(span, message).to_compile_error()
        })
        .collect()
}

/// The attribute's settings, each broken one reported into `sink`; `Err`
/// if the arguments are not a list of settings at all.
fn parse_settings(args: TokenStream, sink: &mut Violations<Span>) -> syn::Result<Settings> {
    let mut s = Settings::default();
    let metas = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(args)?;
    for meta in metas {
        let Meta::NameValue(nv) = &meta else {
            sink.push(
                Rule::ValueType,
                meta.span(),
                format!(
                    "`{}` is not a `key = value` setting",
                    meta.to_token_stream()
                ),
                "write `key = value`, e.g. `name = \"cache\"`, `tags = [ready]`, `timeout = \"750ms\"`, `failure_status = degraded`",
            );
            continue;
        };
        let key = key_of(&nv.path);
        let key_span = nv.path.span();
        let known = keys().any(|k| k == key);
        if known && s.written(&key) {
            sink.push(
                Rule::DuplicateKey,
                key_span,
                format!("`{key}` is set twice in #[zb_health]"),
                format!("each key is written once; remove this `{key}` or the earlier one"),
            );
            continue;
        }
        let value = &nv.value;
        let written = value.to_token_stream();
        // The span of the value, once it parsed into `s`.
        let parsed = match key.as_str() {
            "name" => string_lit(value, "name", "name = \"cache\"", sink).map(|lit| {
                s.name = Some(lit.value());
                lit.span()
            }),
            "tags" => parse_tags(value, sink).and_then(|(known, complete)| {
                s.values.tags = known.iter().map(|(t, _)| *t).collect();
                s.tags = known;
                // Unknown tags were reported; an all-unknown list is not
                // also "no tags" (R13), and nothing else is guessed.
                (complete || !s.tags.is_empty()).then(|| value.span())
            }),
            "failure_threshold" | "success_threshold" => {
                let t = &mut s.values.policy.threshold;
                let slot = match key.as_str() {
                    "failure_threshold" => &mut t.failures,
                    _ => &mut t.successes,
                };
                let help = format!("write a whole number of runs in a row, e.g. `{key} = 3`");
                let count = literal(value, &key, "a count of runs", help, sink, |lit| match lit {
                    Lit::Int(n) => Some((n.base10_parse().ok()?, n.span())),
                    _ => None,
                });
                let span;
                (*slot, span) = count.unzip();
                span
            }
            "timeout" | "cache" | "refresh" | "max_staleness" | "failing_for" | "restart_after" => {
                let (v, p) = (&mut s.values.timeout, &mut s.values.policy);
                let (slot, example) = match key.as_str() {
                    "timeout" => (v, "timeout = \"750ms\""),
                    "cache" => (&mut p.cache, "cache = \"1s\""),
                    "restart_after" => (&mut p.restart_after, "restart_after = \"2m\""),
                    "refresh" => (&mut p.refresh, "refresh = \"5s\""),
                    "failing_for" => (&mut p.threshold.failing_for, "failing_for = \"3s\""),
                    _ => (&mut p.max_staleness, "max_staleness = \"12s\""),
                };
                let lit = string_lit(value, &key, example, sink);
                let d = lit.and_then(|lit| check_duration_text(&lit.value(), lit.span(), sink));
                *slot = d;
                d.and(lit.map(syn::LitStr::span))
            }
            "failure_status" => {
                let word = path_word(value);
                let status = word.as_deref().and_then(FailureStatus::parse);
                match status {
                    Some(f) => s.values.failure_status = f,
                    None => sink.push(
                        Rule::Unknown,
                        value.span(),
                        format!("unknown failure_status `{written}`"),
                        format!(
                            "write {}: `unhealthy` (the default) fails the tier, `degraded` declares an optional dependency{}",
                            one_of(FailureStatus::NAMES),
                            hint(word.as_deref().and_then(FailureStatus::suggest))
                        ),
                    ),
                }
                status.map(|_| value.span())
            }
            "shared" | "blocking" => {
                let help = if key == "shared" {
                    "write `shared = true` for a dependency every node of the cluster uses (it fails open when most of them share its failure), or leave it out"
                } else {
                    "write `blocking = true` for a probe that implements `zb_health::prelude::BlockingProbe` (run on the blocking pool), or leave it out for a `zb_health::prelude::Probe`"
                };
                let b = literal(value, &key, "a bool", help.into(), sink, |lit| match lit {
                    Lit::Bool(b) => Some(b),
                    _ => None,
                });
                match (key.as_str(), b) {
                    ("shared", Some(b)) => s.values.policy.shared = b.value,
                    (_, Some(b)) => s.blocking = Some(b.value),
                    (_, None) => {}
                }
                b.map(|b| b.span)
            }
            "crate" => string_lit(value, "crate", "crate = \"zb_health\"", sink).and_then(|lit| {
                s.krate = lit.parse().ok();
                if s.krate.is_none() {
                    sink.push(
                        Rule::ValueType,
                        lit.span(),
                        format!("`crate = {:?}` is not a path", lit.value()),
                        "name the zb-health runtime as a path, e.g. `crate = \"zb_health\"` or `crate = \"::my_reexport::zb_health\"`",
                    );
                }
                s.krate.as_ref().map(|_| lit.span())
            }),
            _ => {
                sink.push(
                    Rule::Unknown,
                    key_span,
                    format!(
                        "unknown key `{}` in #[zb_health]",
                        nv.path.to_token_stream()
                    ),
                    format!(
                        "the keys are {}{}",
                        one_of(&keys().collect::<Vec<_>>()),
                        hint(did_you_mean(&key, keys()))
                    ),
                );
                None
            }
        };
        if known {
            s.written.push((key, parsed));
        }
    }
    Ok(s)
}

/// The known tags, each at its token, and whether every element was one.
fn parse_tags(value: &Expr, sink: &mut Violations<Span>) -> Option<(Vec<(Tag, Span)>, bool)> {
    let Expr::Array(array) = value else {
        sink.push(
            Rule::ValueType,
            value.span(),
            format!("`tags = {}` is not a list", value.to_token_stream()),
            "write a list: `tags = [ready]` or `tags = [ready, active]`",
        );
        return None;
    };
    let (mut known, mut complete) = (Vec::new(), true);
    for elem in &array.elems {
        let word = path_word(elem).unwrap_or_else(|| elem.to_token_stream().to_string());
        match Tag::parse(&word) {
            Ok(t) => known.push((t, elem.span())),
            Err(unknown) => {
                complete = false;
                sink.push(
                    Rule::Unknown,
                    elem.span(),
                    format!("unknown tag `{}`", unknown.given),
                    format!(
                        "a probe serves `ready` or `active`; `live` carries no probes{}",
                        hint(unknown.suggestion)
                    ),
                );
            }
        }
    }
    Some((known, complete))
}

/// The literal `pick` takes from `value`, or R15 at the value, saying it
/// is not `what`.
fn literal<'a, T>(
    value: &'a Expr,
    key: &str,
    what: &str,
    help: String,
    sink: &mut Violations<Span>,
    pick: impl FnOnce(&'a Lit) -> Option<T>,
) -> Option<T> {
    let picked = match value {
        Expr::Lit(ExprLit { lit, .. }) => pick(lit),
        _ => None,
    };
    if picked.is_none() {
        let written = value.to_token_stream();
        let message = format!("`{key} = {written}` is not {what}");
        sink.push(Rule::ValueType, value.span(), message, help);
    }
    picked
}

/// A string literal; `example` words the help.
fn string_lit<'a>(
    value: &'a Expr,
    key: &str,
    example: &str,
    sink: &mut Violations<Span>,
) -> Option<&'a syn::LitStr> {
    let help = format!("write it as a string literal, e.g. `{example}`");
    literal(value, key, "a string", help, sink, |lit| match lit {
        Lit::Str(s) => Some(s),
        _ => None,
    })
}

/// A setting's key: its one identifier, else nothing a key matches.
fn key_of(path: &syn::Path) -> String {
    path.get_ident()
        .map(ToString::to_string)
        .unwrap_or_default()
}

fn path_word(e: &Expr) -> Option<String> {
    match e {
        Expr::Path(p) => p.path.get_ident().map(ToString::to_string),
        _ => None,
    }
}

fn item_keyword_span(item: &syn::Item) -> Span {
    match item {
        syn::Item::Enum(e) => e.enum_token.span,
        syn::Item::Fn(f) => f.sig.fn_token.span,
        syn::Item::Union(u) => u.union_token.span,
        syn::Item::Trait(t) => t.trait_token.span,
        syn::Item::Impl(i) => i.impl_token.span,
        other => other.span(),
    }
}
