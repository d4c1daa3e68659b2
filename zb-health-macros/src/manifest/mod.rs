//! `manifest!`: read `health.yaml` at compile time, check it with the
//! shared spec rules, and generate typed registration under names the
//! caller chooses.
//!
//! Stages, each reporting into one [`Ctxt`], checked once at the end:
//! [`input`] parses the macro's input and reads the file;
//! `zb_health_spec::manifest::parse_manifest` checks what the manifest
//! alone can break; [`codegen`] generates the items (the probes, the
//! lifecycle handles, the gRPC mapping); [`facts`] generates the checks of
//! what needs the attribute of another item (a custom probe's name, tags,
//! timeout), since a macro cannot see other items, and [`custom`] names a
//! custom probe's type so that a missing one is one error, with a hint from
//! the probes [`nearby`] in the source (the macro's own error when the
//! source proves it missing, from what each module has [`declared`]). Their messages all name the
//! manifest's line and column.

mod codegen;
mod custom;
mod declared;
mod facts;
mod input;
mod nearby;
mod wiring;

use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use zb_health_spec::manifest::parse_manifest;

pub use codegen::snake_case;

use crate::errors::{Ctxt, located};
use crate::site::Site;
use crate::tokens::krate;

/// `caller` is the file invoking the macro (`Span::local_file`), so a
/// relative path resolves as `include_str!` does, also under trybuild.
pub fn expand(input: TokenStream, caller: Option<PathBuf>) -> TokenStream {
    let cx = Ctxt::new();
    let out = stages(&cx, input, caller).unwrap_or_else(|e| {
        cx.push(e);
        quote!()
    });
    let errors = cx.check();
    quote!(#errors #out)
}

/// Every stage that can run; the generated items only if none reported an
/// error, so a mistake is never followed by errors about the items it
/// spoiled (a duplicate field, a missing one). An error that stops every
/// later stage is the `Err`.
fn stages(cx: &Ctxt, input: TokenStream, caller: Option<PathBuf>) -> syn::Result<TokenStream> {
    let input = syn::parse2::<input::Input>(input)?;
    for e in input.option_errors.iter().cloned() {
        cx.push(e);
    }
    let loaded = input.source.load(caller.as_deref())?;
    let manifest = match parse_manifest(&loaded.text) {
        Ok(m) => m,
        Err(violations) => {
            for v in &violations {
                cx.push(syn::Error::new(
                    loaded.span,
                    located(&loaded.file_label, v.location, v.rule, &v.message, &v.help),
                ));
            }
            if violations.is_empty() {
                cx.push(syn::Error::new(loaded.span, "invalid manifest"));
            }
            return Ok(quote!());
        }
    };
    let krate = krate(input.krate.as_ref());
    let site = Site {
        file: &loaded.file_label,
        span: loaded.span,
        krate: &krate,
        vis: &input.vis,
        name: &input.name,
        caller: caller.as_deref(),
        deps: format_ident!("{}Deps", input.name),
        installed: format_ident!("{}Installed", input.name),
        startup: format_ident!("{}Startup", input.name),
        watchdogs: format_ident!("{}Watchdogs", input.name),
    };
    let items = codegen::generate(cx, &manifest, &site);
    if cx.has_errors() {
        return Ok(quote!());
    }
    let track = loaded.tracked.map(|p| {
        let p = p.to_string_lossy().into_owned();
        quote!(
            const _: &[u8] = ::core::include_bytes!(#p);
        )
    });
    Ok(quote!(#track #items))
}
