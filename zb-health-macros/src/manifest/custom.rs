//! How generated code names a `kind: custom` entry's `type:`, so that a
//! type that does not exist is ONE error the macro words, at the
//! manifest's string literal, with the YAML line and column.
//!
//! rustc's own error for an unresolved path cannot carry our text, and
//! every place that named the path would add its own. So the generated
//! code names the type only through `<Manifest as Custom<N>>::Type` of the
//! hidden module `Health__types` (the deps field, through an alias there
//! named like the type), whose one impl finds the type by the lexical
//! scoping of blocks:
//!
//! ```text
//! const _: () = {
//!     struct CacheProbe {}                 // the fallback, a probe of nothing
//!     {
//!         use crate::*;                    // the type's module, as a glob
//!         impl Health__types::Custom<1> for Health__types::Manifest {
//!             type Type = CacheProbe; ..
//!         }
//!     }
//! };
//! ```
//!
//! A glob import in the inner block shadows the outer block's fallback, so
//! an existing type (visible from the call site) wins, and a missing (or
//! private) one resolves to the fallback instead of failing. `MISSING`
//! tells which, and one check item turns it into our message; every fact
//! about the type holds vacuously then, and the fallback implements
//! `ZbHealthProbe` (never recommended in rustc's help), so nothing else is
//! reported. A misspelt *module* in the path (`crate::prbes::CacheProbe`)
//! still fails the glob import: rustc's "unresolved import", also at the
//! string, comes next to ours, since a failed glob cannot be detected.
//! The deps field names the type through an alias of the same name, so
//! rustdoc still shows `cache_probe: CacheProbe`.
//!
//! That check is an `E0277` whose label rustc words itself, naming the
//! check's trait, and a struct literal of the deps then meets the
//! fallback ("expected `CahceProbe`, found `CacheProbe`"). So when the
//! source proves the type missing (`nearby::missing`), there is no lookup
//! by glob: the macro reports the error itself, and the type is the probe
//! its "did you mean" names ([`CustomType::lookup`]).

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote};
use zb_health_spec::manifest::{Location, ProbeDecl};
use zb_health_spec::settings::ProbeSettings;
use zb_health_spec::{Rule, TagSet};

use crate::site::Site;
use crate::tokens::{ProbeMetaTokens, millis};

/// The type of the custom probe at `index`, as generated code names it.
pub struct CustomType {
    /// The probe's position in the manifest, from 1: the lookup's `N`.
    n: usize,
    /// The path as written, parsed.
    pub path: syn::Path,
    /// The path as written, for messages and docs (`crate::CacheProbe`).
    pub written: String,
    /// Where `type:` (or `fn:`) was written.
    location: Location,
    /// Written as `fn:`: an async fn probe, with no deps field.
    pub function: bool,
    /// The type, through the lookup:
    /// `<Health__types::Manifest as Health__types::Custom<N>>::Type`.
    pub resolved: TokenStream,
    /// Whether the lookup found no such type, as a `const` expression.
    pub missing: TokenStream,
}

/// The hidden module of one manifest's lookups: the trait whose impls
/// carry the custom types, the type implementing it, and the aliases the
/// deps fields name. Everything in it names only its own items, so it
/// works where `super::` would not (a `manifest!` in a function body).
pub fn lookup_module(name: &syn::Ident) -> syn::Ident {
    format_ident!("{}__types", name)
}

impl CustomType {
    /// The lookup of `path`, written at `location`, for probe `index`;
    /// `function` for a `fn:` entry.
    pub fn new(
        site: &Site<'_>,
        index: usize,
        path: syn::Path,
        location: Location,
        function: bool,
    ) -> Self {
        let written = path.to_token_stream().to_string().replace(' ', "");
        let module = lookup_module(site.name);
        let n = index + 1;
        Self {
            n,
            path,
            written,
            location,
            function,
            resolved: quote!(<#module::Manifest as #module::Custom<#n>>::Type),
            missing: quote!(<#module::Manifest as #module::Custom<#n>>::MISSING),
        }
    }

    /// The type's own name (`CacheProbe`), for its checks' names.
    pub fn ident(&self) -> String {
        self.path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default()
    }

    /// The type as the lookup module's own items name it, for its alias.
    pub fn in_module(&self) -> TokenStream {
        let n = self.n;
        quote!(<Manifest as Custom<#n>>::Type)
    }

    /// The type's `ProbeMeta` (the fallback's, when it is missing).
    pub fn meta(&self, krate: &TokenStream) -> TokenStream {
        let ty = &self.resolved;
        quote!(<#ty as #krate::meta::ZbHealthProbe>::META)
    }

    /// What is wrong when the type does not exist, with `hint` ("did you
    /// mean") at the end of the help.
    fn missing_message(&self, site: &Site<'_>, hint: Option<&str>) -> String {
        let (key, what, help) = if self.function {
            (
                "fn",
                "a #[zb_health] async fn that can be named",
                "name a #[zb_health] async fn by its path from the module that calls `manifest!` (`crate::probes::ping`, `self::ping`), as a `use` there would; check the spelling, that it carries #[zb_health], and that it is visible there",
            )
        } else {
            (
                "type",
                "a type that can be named",
                "name a #[zb_health] probe struct by its path from the module that calls `manifest!` (`crate::probes::CacheProbe`, `self::CacheProbe`), as a `use` there would; check the spelling, and that it is visible there",
            )
        };
        site.message(
            Rule::Unknown,
            self.location,
            format!(
                "`{}`, the `{key}` of a `kind: custom` entry, is not {what} where `manifest!` is called",
                self.written
            ),
            &format!("{help}{}", zb_health_spec::suggest::hint(hint)),
        )
    }

    /// The check that the entry's form is the probe's: a `fn:` names an
    /// async fn probe (made from nothing), a `type:` a struct (made by the
    /// application, in its deps field).
    pub fn form_fact(&self, site: &Site<'_>) -> TokenStream {
        let krate = site.krate;
        let (ty, missing, function) = (&self.resolved, &self.missing, self.function);
        let (text, help) = if function {
            (
                format!(
                    "`{}`, the `fn` of a `kind: custom` entry, is a #[zb_health] struct, not an async fn",
                    self.written
                ),
                "write `type:` for a probe struct (the application makes it, in its deps field), or point `fn:` at an `async fn` that carries #[zb_health]",
            )
        } else {
            (
                format!(
                    "`{}`, the `type` of a `kind: custom` entry, is a #[zb_health] async fn, not a struct",
                    self.written
                ),
                "write `fn:` for an async fn probe: it needs no state, so it gets no deps field",
            )
        };
        let message = site.message(Rule::Unknown, self.location, text, help);
        let ok = quote!(#missing || <#ty as #krate::meta::ZbHealthProbe>::STATELESS.is_some() == #function);
        site.fact(&self.ident(), "form_agrees", ok, &message)
    }

    /// The fallback probe of nothing, named like the type, for a type that
    /// is missing.
    fn fallback(&self, site: &Site<'_>, ident: &TokenStream) -> TokenStream {
        let krate = site.krate;
        let meta = ProbeMetaTokens {
            krate,
            name: "",
            settings: ProbeSettings {
                tags: TagSet::default(),
                timeout: Some(std::time::Duration::from_millis(1)),
                ..ProbeSettings::DEFAULT
            },
        };
        quote! {
            #[allow(non_camel_case_types, dead_code)]
            struct #ident {}
            // Never offered as "the trait is implemented for" when a
            // type that exists is not a probe.
            #[diagnostic::do_not_recommend]
            impl #krate::meta::ZbHealthProbe for #ident {
                const META: #krate::meta::ProbeMeta = #meta;
                fn registration(self) -> #krate::registry::ProbeRegistration {
                    ::core::unreachable!()
                }
            }
        }
    }

    /// The lookup's impl, and the check that the type exists, whose help
    /// ends in `hint` ("did you mean").
    ///
    /// For a type the source scan proved `missing` (`nearby::missing`),
    /// the error instead is the macro's own, at the manifest's string,
    /// with no name of the generated code; and the lookup's type is
    /// `instead` (the probe the hint names, so the caller's
    /// `HealthDeps { … }` still type-checks and nothing follows the
    /// error), else the fallback. `MISSING` is then true, so every fact
    /// about the type holds vacuously.
    pub fn lookup(
        &self,
        site: &Site<'_>,
        hint: Option<&str>,
        missing: bool,
        instead: Option<&syn::Path>,
    ) -> TokenStream {
        // The path's tokens point at the manifest's string: an error about
        // its module is reported there, never at the whole macro call.
        let here = Span::call_site().located_at(site.span);
        let Some(last) = self.path.segments.last() else {
            return quote!();
        };
        // Named as written: a follow-on error (no probe to use instead)
        // then reads "expected `CahceProbe`".
        let ident = respan(last.ident.to_token_stream(), here);
        let module = lookup_module(site.name);
        let n = self.n;
        let message = self.missing_message(site, hint);
        if missing {
            let (ty, fallback) = match instead {
                Some(path) => (respan(path.to_token_stream(), here), None),
                None => (ident.clone(), Some(self.fallback(site, &ident))),
            };
            let error = syn::Error::new(site.span, message).to_compile_error();
            return quote! {
                #error
                const _: () = {
                    #fallback
                    impl #module::Custom<#n> for #module::Manifest {
                        type Type = #ty;
                        const MISSING: bool = true;
                    }
                };
            };
        }
        let args = respan(last.arguments.to_token_stream(), here);
        let parent = respan(self.parent(), here);
        let fallback = self.fallback(site, &ident);
        let missing = &self.missing;
        let check = site.fact(&self.ident(), "type_exists", quote!(!#missing), &message);
        quote! {
            const _: () = {
                // Named before the fallback exists, which could shadow them.
                use #module::{Custom as __ZbHealthCustom, Manifest as __ZbHealthManifest};
                {
                    #fallback
                    #[allow(dead_code)]
                    impl #ident {
                        const __ZB_HEALTH_MISSING: bool = true;
                    }
                    trait __ZbHealthFound {
                        const __ZB_HEALTH_MISSING: bool = false;
                    }
                    impl<T: ?Sized> __ZbHealthFound for T {}
                    {
                        #[allow(unused_imports)]
                        use #parent::*;
                        impl __ZbHealthCustom<#n> for __ZbHealthManifest {
                            type Type = #ident #args;
                            const MISSING: bool = <#ident #args>::__ZB_HEALTH_MISSING;
                        }
                    }
                }
            };
            #check
        }
    }

    /// The call of the type's attribute callback (see `crate::limits`),
    /// with the limits `bounds` and where `probe` is written. The path is
    /// the type's as written, without generic arguments, spanned at the
    /// manifest's string.
    pub fn limits_callback(
        &self,
        site: &Site<'_>,
        probe: &ProbeDecl,
        bounds: crate::limits::Bounds,
    ) -> TokenStream {
        let here = Span::call_site().located_at(site.span);
        let path = respan(self.prefix(self.path.segments.len()), here);
        let file = site.file;
        let at = probe.location.to_string();
        let ty = &self.written;
        let detection = millis(bounds.detection);
        let orchestrator = bounds.orchestrator.map(|o| {
            let o = millis(o);
            quote!(orchestrator = #o,)
        });
        quote! {
            #path! { file = #file, at = #at, ty = #ty, #orchestrator detection = #detection }
        }
    }

    /// The module the type is in, as a `use` path from the call site's
    /// module: `crate::probes` for `crate::probes::CacheProbe`, `self` for
    /// `CacheProbe`.
    fn parent(&self) -> TokenStream {
        match self.path.segments.len() {
            0 | 1 => quote!(self),
            n => self.prefix(n - 1),
        }
    }

    /// The path's first `n` segments, without generic arguments.
    fn prefix(&self, n: usize) -> TokenStream {
        let colon = self.path.leading_colon;
        let idents = self.path.segments.iter().take(n).map(|s| &s.ident);
        quote!(#colon #(#idents)::*)
    }
}

/// `tokens` with every span set to `span`, into groups.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut t| {
            if let TokenTree::Group(g) = &t {
                let mut inner = Group::new(g.delimiter(), respan(g.stream(), span));
                inner.set_span(span);
                t = TokenTree::Group(inner);
            } else {
                t.set_span(span);
            }
            t
        })
        .collect()
}
