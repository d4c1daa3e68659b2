//! The README's tour cannot drift from code that compiles: every fenced
//! block preceded by `<!-- checked: PATH -->` (a whole file) or
//! `<!-- checked: PATH#REGION -->` (the lines between `region: REGION` and
//! `endregion` in that file) must equal that text. The tour's Rust and YAML
//! live in `examples/tour` (built, linted and run by CI), its compile error
//! is a reviewed trybuild snapshot, and its Kubernetes YAML is the CLI's
//! snapshot for the tour's manifest. The guide's pages (`docs/guide/`)
//! mark their copied blocks the same way and are held to the same check.

use std::path::Path;

const README: &str = include_str!("../../README.md");

/// The workspace root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// `(target, block)` for every checked block of `document` (the README
/// or a guide page), in order.
fn checked_blocks(document: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut lines = document.lines();
    while let Some(line) = lines.next() {
        let Some(target) = line
            .trim()
            .strip_prefix("<!-- checked: ")
            .and_then(|rest| rest.strip_suffix(" -->"))
        else {
            continue;
        };
        let fence = lines.next().unwrap_or_default();
        assert!(
            fence.starts_with("```"),
            "`{line}` must be followed by a fenced block, not `{fence}`"
        );
        let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        found.push((target.to_owned(), block.join("\n")));
    }
    found
}

/// The text a target names: a whole file, or one region of it.
fn target_text(target: &str) -> String {
    let (path, region) = match target.split_once('#') {
        Some((path, region)) => (path, Some(region)),
        None => (target, None),
    };
    let text = std::fs::read_to_string(root().join(path))
        .unwrap_or_else(|e| panic!("README names `{path}`: {e}"));
    let Some(region) = region else {
        return text.trim_end().to_owned();
    };
    let start = format!("region: {region}");
    let mut inside = None::<Vec<&str>>;
    for line in text.lines() {
        match &mut inside {
            None if line.trim_end().ends_with(&start) => inside = Some(Vec::new()),
            Some(kept) if line.trim_end().ends_with("endregion") => return kept.join("\n"),
            Some(kept) => kept.push(line),
            None => {}
        }
    }
    panic!("no region `{region}` (closed by `endregion`) in `{path}`")
}

/// The README and every page of the guide, each with its path.
fn documents() -> Vec<(String, String)> {
    let mut documents = vec![("README.md".to_owned(), README.to_owned())];
    let guide = root().join("docs/guide");
    let mut pages: Vec<_> = std::fs::read_dir(&guide)
        .unwrap_or_else(|e| panic!("{}: {e}", guide.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        documents.push((name, text));
    }
    documents
}

#[test]
fn every_checked_readme_block_equals_its_source() {
    let mut stale = Vec::new();
    let mut checked = 0;
    for (document, text) in documents() {
        for (target, block) in checked_blocks(&text) {
            checked += 1;
            let source = target_text(&target);
            if source != block {
                stale.push(format!(
                    "{document}: block for `{target}` differs from its source:\n--- {document}\n{block}\n--- {target}\n{source}\n"
                ));
            }
        }
    }
    assert!(checked >= 8, "the README's tour has its checked blocks");
    assert!(stale.is_empty(), "{}", stale.join("\n"));
}

#[test]
fn the_tour_shows_every_step_from_checked_sources() {
    let targets: Vec<String> = checked_blocks(README).into_iter().map(|(t, _)| t).collect();
    for step in [
        "examples/tour/Cargo.toml#dependency",
        "examples/tour/health.yaml#manifest",
        "examples/tour/src/main.rs#probe",
        "examples/tour/src/main.rs#manifest-macro",
        "examples/tour/src/main.rs#mount",
        "tests/ui/fail/attr_live_tag.stderr",
        "zb-health-cli/tests/snapshots/k8s/tour.yaml",
        "examples/scadabridge/health.yaml#history",
    ] {
        assert!(
            targets.iter().any(|t| t == step),
            "the README tour has no checked block for `{step}`"
        );
    }
}

#[test]
fn every_cargo_run_in_the_readme_names_a_workspace_package() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    for (document, text) in documents() {
        for (n, line) in text.lines().enumerate() {
            let Some(rest) = line.split("cargo run -p ").nth(1) else {
                continue;
            };
            let package: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            let member = format!("\"examples/{package}\"");
            let known = manifest.contains(&member)
                || std::fs::read_to_string(root().join(&package).join("Cargo.toml")).is_ok();
            assert!(
                known,
                "{document} line {}: `cargo run -p {package}` names no package",
                n + 1
            );
        }
    }
}
