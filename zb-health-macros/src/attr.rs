//! `#[zb_health(...)]`: parse the arguments into typed settings, check
//! them with the shared spec rules, generate `ZbHealthProbe`.

use std::time::Duration;

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, Meta, Token};
use zb_health_spec::{
    DEFAULT_PROBE_TIMEOUT, FailureStatus, Rule, Tag, Violations, check_duration_text, check_name,
    check_probe_tags, check_timeout, did_you_mean,
};

use crate::errors::Errors;

const KEYS: [&str; 5] = ["name", "tags", "timeout", "failure_status", "crate"];

/// The attribute's settings, each with the span it was written at.
struct Settings {
    name: Option<(String, Span)>,
    tags: Option<(Vec<(Tag, Span)>, Span)>,
    /// Set when a tag failed to parse, so "no tags" is not reported on top.
    tags_invalid: bool,
    timeout: Option<(Duration, Span)>,
    failure_status: Option<FailureStatus>,
    krate: Option<syn::Path>,
}

pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let item_tokens = item.clone();
    let strukt = match syn::parse2::<syn::Item>(item) {
        Ok(syn::Item::Struct(s)) => Some(s),
        Ok(other) => {
            errors.push(syn::Error::new(
                item_keyword_span(&other),
                "#[zb_health] goes on a struct\n  = help: declare the probe as a struct (unit structs are fine) and implement `zb_health::Probe` for it; a probe needs a type so the manifest can name it",
            ));
            None
        }
        Err(e) => {
            errors.push(e);
            None
        }
    };
    let settings = parse_settings(args, &mut errors);
    let Some(strukt) = strukt else {
        // Keep the user's item so that follow-on errors stay about it.
        let errs = errors.into_tokens();
        return quote!(#errs #item_tokens);
    };
    let (name, name_span) = match settings.name.clone() {
        Some(n) => n,
        None => {
            errors.push(syn::Error::new(
                Span::call_site(),
                format!(
                    "#[zb_health] needs a `name`\n  = rule {}\n  = help: write #[zb_health(name = \"{}\")]; the name keys the probe's entry in the JSON body",
                    Rule::ProbeName,
                    snake_case(&strukt.ident.to_string())
                ),
            ));
            (String::new(), Span::call_site())
        }
    };
    let mut sink = Violations::new();
    if settings.name.is_some() {
        check_name(&name, name_span, &mut sink);
    }
    let (tags, tags_span) = settings
        .tags
        .clone()
        .unwrap_or_else(|| (vec![(Tag::Ready, Span::call_site())], Span::call_site()));
    if !settings.tags_invalid {
        check_probe_tags(&name, &tags, tags_span, &mut sink);
    }
    let (timeout, timeout_span) = settings
        .timeout
        .unwrap_or((DEFAULT_PROBE_TIMEOUT, Span::call_site()));
    check_timeout(&name, timeout, None, timeout_span, &mut sink);
    errors.violations(sink);
    if !errors.is_empty() {
        let errs = errors.into_tokens();
        return quote!(#errs #strukt);
    }

    let krate = settings
        .krate
        .map(|p| p.to_token_stream())
        .unwrap_or_else(|| quote!(::zb_health));
    let ident = &strukt.ident;
    let (impl_generics, ty_generics, where_clause) = strukt.generics.split_for_impl();
    let tag_tokens = tags.iter().map(|(t, _)| crate::builtin::tag(*t, &krate));
    let millis = timeout.as_millis() as u64;
    let failure =
        crate::builtin::failure_status(settings.failure_status.unwrap_or_default(), &krate);
    // The impl is spanned at the struct name, so "does not implement
    // Probe" points at the type the user must complete.
    let probe_impl = quote_spanned! {ident.span()=>
        impl #impl_generics #krate::ZbHealthProbe for #ident #ty_generics #where_clause {
            const META: #krate::ProbeMeta = #krate::ProbeMeta {
                name: #name,
                tags: #krate::TagSet::of(&[#(#tag_tokens),*]),
                timeout: #krate::__private::Duration::from_millis(#millis),
                failure_status: #failure,
            };
        }
    };
    quote! {
        #strukt
        #probe_impl
    }
}

fn parse_settings(args: TokenStream, errors: &mut Errors) -> Settings {
    let mut s = Settings {
        name: None,
        tags: None,
        tags_invalid: false,
        timeout: None,
        failure_status: None,
        krate: None,
    };
    let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(args) {
        Ok(m) => m,
        Err(e) => {
            errors.push(e);
            return s;
        }
    };
    for meta in metas {
        let Meta::NameValue(nv) = &meta else {
            errors.push(syn::Error::new(
                meta.span(),
                "expected `key = value`, e.g. `name = \"cache\"`, `tags = [ready]`, `timeout = \"750ms\"`, `failure_status = degraded`",
            ));
            continue;
        };
        let key = nv
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        match key.as_str() {
            "name" => {
                if let Some(lit) = string_lit(&nv.value, "name = \"cache\"", errors) {
                    s.name = Some((lit.value(), lit.span()));
                }
            }
            "tags" => {
                let before = errors.is_empty();
                s.tags = parse_tags(&nv.value, errors);
                s.tags_invalid = before != errors.is_empty() || s.tags.is_none();
            }
            "timeout" => {
                if let Some(lit) = string_lit(&nv.value, "timeout = \"750ms\"", errors) {
                    let mut sink = Violations::new();
                    s.timeout = check_duration_text(&lit.value(), lit.span(), &mut sink)
                        .map(|d| (d, lit.span()));
                    errors.violations(sink);
                }
            }
            "failure_status" => {
                let word = path_word(&nv.value);
                match word.as_deref().and_then(FailureStatus::parse) {
                    Some(f) => s.failure_status = Some(f),
                    None => errors.push(syn::Error::new(
                        nv.value.span(),
                        format!(
                            "unknown failure_status `{}`\n  = rule {}\n  = help: write `failure_status = unhealthy` (the default) or `failure_status = degraded` for an optional dependency",
                            nv.value.to_token_stream(),
                            Rule::Unknown
                        ),
                    )),
                }
            }
            "crate" => {
                if let Some(lit) = string_lit(&nv.value, "crate = \"zb_health\"", errors) {
                    match lit.parse::<syn::Path>() {
                        Ok(p) => s.krate = Some(p),
                        Err(e) => errors.push(e),
                    }
                }
            }
            _ => {
                let hint = did_you_mean(&key, KEYS)
                    .map(|k| format!(" (did you mean `{k}`?)"))
                    .unwrap_or_default();
                errors.push(syn::Error::new(
                    nv.path.span(),
                    format!(
                        "unknown key `{}` in #[zb_health]{hint}\n  = rule {}\n  = help: the keys are `name`, `tags`, `timeout`, `failure_status` and `crate`",
                        nv.path.to_token_stream(),
                        Rule::Unknown
                    ),
                ));
            }
        }
    }
    s
}

fn parse_tags(value: &Expr, errors: &mut Errors) -> Option<(Vec<(Tag, Span)>, Span)> {
    let Expr::Array(array) = value else {
        errors.push(syn::Error::new(
            value.span(),
            "`tags` takes a list: `tags = [ready]` or `tags = [ready, active]`",
        ));
        return None;
    };
    let mut tags = Vec::new();
    for elem in &array.elems {
        let word = path_word(elem).unwrap_or_else(|| elem.to_token_stream().to_string());
        match Tag::parse(&word) {
            Ok(t) => tags.push((t, elem.span())),
            Err(e) => errors.push(syn::Error::new(
                elem.span(),
                format!("{e}\n  = rule {}\n  = help: a probe serves `ready` or `active`; `live` carries no probes", Rule::Unknown),
            )),
        }
    }
    Some((tags, array.span()))
}

fn string_lit<'a>(value: &'a Expr, example: &str, errors: &mut Errors) -> Option<&'a syn::LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s),
        other => {
            errors.push(syn::Error::new(
                other.span(),
                format!("expected a string literal, e.g. `{example}`"),
            ));
            None
        }
    }
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

/// `CacheProbe` → `cache_probe`; used in hints and generated field names.
pub fn snake_case(ident: &str) -> String {
    let mut out = String::new();
    for (i, c) in ident.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
