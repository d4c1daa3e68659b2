//! `zb-health schema`: the JSON Schema of `health.yaml`, for a manifest
//! outside this repository.
//!
//! Editors complete and check a manifest against the schema its first
//! line names (`# yaml-language-server: $schema=…`, as VS Code's YAML
//! extension and other yaml-language-server clients read it). The schema
//! is compiled into the tool, so it is always the one of the rules this
//! tool checks; `--next-to health.yaml` writes it beside the manifest,
//! where a relative `$schema` finds it.

use std::path::Path;

use crate::args::SchemaArgs;
use crate::input::{self, Failure};

/// The schema, as `spec/health-manifest.schema.json` holds it.
const SCHEMA: &str = include_str!("../../spec/health-manifest.schema.json");

/// The file `--next-to` writes, and the comment names.
const FILE_NAME: &str = "health-manifest.schema.json";

/// The manifest's first line that points editors at the written schema.
const COMMENT: &str = "# yaml-language-server: $schema=health-manifest.schema.json";

/// Prints the schema, or writes it beside a manifest and says how to point
/// the manifest at it.
pub fn run(args: &SchemaArgs) -> Result<(), Failure> {
    let Some(manifest) = &args.next_to else {
        print!("{SCHEMA}");
        return Ok(());
    };
    // Read first: a mistyped path writes nothing.
    let source = input::read(manifest)?;
    let dir = manifest.parent().unwrap_or(Path::new(""));
    let out = dir.join(FILE_NAME);
    std::fs::write(&out, SCHEMA)
        .map_err(|e| input::unusable(format!("cannot write `{}`: {e}", out.display())))?;
    println!("wrote {}", out.display());
    if source.text.lines().any(|l| l.trim() == COMMENT) {
        println!("{}: already points editors at it", source.shown);
    } else {
        println!(
            "{}: make this its first line, so editors check it against the schema:\n{COMMENT}",
            source.shown
        );
    }
    Ok(())
}
