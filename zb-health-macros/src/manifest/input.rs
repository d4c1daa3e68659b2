//! The first stage of `manifest!`: the macro's input, then the manifest's
//! text (read from the file, or the inline string).

use std::path::{Path, PathBuf};

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::{LitStr, Token};
use zb_health_spec::Rule;

use crate::errors::render;

const USAGE: &str = "write `manifest!(pub Health = \"health.yaml\")` (a path) or `manifest!(pub Health, yaml = r#\"...\"#)` (inline); it generates the type `Health` and its dependencies struct `HealthDeps`";

/// The macro's input: the generated type's visibility and name, then a
/// path (`= "health.yaml"`) or an inline manifest (`, yaml = "..."`), then
/// options.
pub struct Input {
    /// The generated items' visibility.
    pub vis: syn::Visibility,
    /// The generated type's name.
    pub name: syn::Ident,
    /// Where the manifest is.
    pub source: Source,
    /// `crate = "path"`, for a renamed runtime dependency.
    pub krate: Option<syn::Path>,
    /// Errors in the options, which do not stop the manifest from being
    /// read and checked.
    pub option_errors: Vec<syn::Error>,
}

/// Where the manifest's text comes from.
pub enum Source {
    /// A path, relative to the calling file.
    File(LitStr),
    /// The manifest itself.
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
        let usage = |e: syn::Error| syn::Error::new(e.span(), USAGE);
        let vis: syn::Visibility = input.parse()?;
        let name: syn::Ident = input.parse().map_err(usage)?;
        let source = if input.parse::<Option<Token![=]>>()?.is_some() {
            Source::File(input.parse().map_err(usage)?)
        } else {
            input.parse::<Token![,]>().map_err(usage)?;
            let key: syn::Ident = input.parse()?;
            if key != "yaml" {
                return Err(syn::Error::new(key.span(), USAGE));
            }
            input.parse::<Token![=]>()?;
            Source::Inline(input.parse()?)
        };
        let mut krate = None;
        let mut option_errors = Vec::new();
        while input.parse::<Option<Token![,]>>()?.is_some() && !input.is_empty() {
            let key: syn::Ident = input.call(syn::ext::IdentExt::parse_any)?;
            if key != "crate" {
                option_errors.push(syn::Error::new(
                    key.span(),
                    "unknown option; the only option is `crate = \"path\"`",
                ));
                // Skip its value: the manifest is still read and checked.
                while !input.is_empty() && !input.peek(Token![,]) {
                    input.parse::<proc_macro2::TokenTree>()?;
                }
                continue;
            }
            input.parse::<Token![=]>()?;
            match input.parse::<LitStr>()?.parse() {
                Ok(path) => krate = Some(path),
                Err(e) => option_errors.push(e),
            }
        }
        Ok(Input {
            vis,
            name,
            source,
            krate,
            option_errors,
        })
    }
}

/// The manifest's text and how to report against it.
pub struct Loaded {
    /// The YAML.
    pub text: String,
    /// The file as the user wrote it (or `<inline manifest>`), the prefix
    /// of every message's `file:line:column`.
    pub file_label: String,
    /// The string literal, where every manifest error is reported.
    pub span: Span,
    /// The file read, to rebuild when it changes.
    pub tracked: Option<PathBuf>,
}

impl Source {
    /// Reads the manifest; an unreadable file is an R8 error at the path.
    pub fn load(&self, caller: Option<&Path>) -> syn::Result<Loaded> {
        let (text, file_label, tracked, lit) = match self {
            Source::Inline(lit) => (lit.value(), "<inline manifest>".to_owned(), None, lit),
            Source::File(lit) => {
                let (path, text) = read(lit, caller).map_err(|m| syn::Error::new(lit.span(), m))?;
                (text, lit.value(), Some(path), lit)
            }
        };
        let span = lit.span();
        Ok(Loaded {
            text,
            file_label,
            span,
            tracked,
        })
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
    Err(render(
        Rule::ManifestFile,
        &format!(
            "cannot read the health manifest `{}` (looked for {}): {why}",
            lit.value(),
            looked.join(" and ")
        ),
        "a relative path is resolved from the directory of the file that calls `manifest!` (as `include_str!` does), then from the crate root; create the file or fix the path",
        None,
    ))
}
