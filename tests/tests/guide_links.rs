//! The README and the guide (`docs/`) cannot point at nothing: every
//! relative link names a file or folder of the repository, and a
//! `#anchor` a heading of the markdown file it names (GitHub's slugs).
//! Every page of `docs/guide/` is a page of the crate's documentation
//! (`zb_health::guide`), whose Rust examples are doctests. External links
//! are not fetched (the tests run offline); they must be well-formed. And
//! the text a newcomer reads speaks in words, not requirement IDs: those
//! live in `spec/`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The workspace root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// `README.md` and every markdown file under `docs/`, sorted.
fn documents() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut out);
    out.sort();
    out
}

/// The document's text outside fenced code blocks, each fenced line
/// blanked, so line numbers stay.
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if !fenced {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// `prose` with code spans removed (a link inside backticks is text).
/// A span closes at the next run of as many backticks, on any line.
fn without_code_spans(prose: &str) -> String {
    let mut out = String::new();
    let mut rest = prose;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let run = rest[start..].chars().take_while(|c| *c == '`').count();
        let after = &rest[start + run..];
        let fence = "`".repeat(run);
        match after.find(&fence) {
            Some(end) => {
                // Keep the newlines, so line numbers stay.
                out.extend(after[..end].chars().filter(|c| *c == '\n'));
                rest = &after[end + run..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Every link destination of a document: `[text](dest)`, `![alt](dest)`,
/// `<http…>` and `[label]: dest`, each with its line number.
fn links(text: &str) -> Vec<(usize, String)> {
    let text = without_code_spans(&prose(text));
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let dest = &rest[at + 2..];
            let end = dest.find(')').unwrap_or(dest.len());
            found.push((n + 1, dest[..end].trim().to_owned()));
            rest = &dest[end..];
        }
        let mut rest = line;
        while let Some(at) = rest.find("<http") {
            let dest = &rest[at + 1..];
            let end = dest.find('>').unwrap_or(dest.len());
            found.push((n + 1, dest[..end].to_owned()));
            rest = &dest[end..];
        }
        if let Some(definition) = line.trim_start().strip_prefix('[')
            && let Some((_, dest)) = definition.split_once("]: ")
        {
            found.push((n + 1, dest.trim().to_owned()));
        }
    }
    found
}

/// GitHub's anchor for a heading: lower case, punctuation dropped (letters,
/// digits, `-` and `_` kept), spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a markdown file's headings; a repeated slug gets `-1`,
/// `-2`, … as on GitHub.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for line in prose(text).lines() {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes..]);
        let mut anchor = base.clone();
        let mut n = 0;
        while !seen.insert(anchor.clone()) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
    }
    seen
}

fn name(path: &Path) -> String {
    path.strip_prefix(root()).unwrap().display().to_string()
}

#[test]
fn every_relative_link_names_a_file_and_every_anchor_a_heading() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for document in documents() {
        let text = std::fs::read_to_string(&document).unwrap();
        for (line, dest) in links(&text) {
            if dest.contains("://") || dest.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = match dest.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (dest.as_str(), None),
            };
            let target = if file.is_empty() {
                document.clone()
            } else {
                document.parent().unwrap().join(file)
            };
            let at = format!("{}:{line}: `{dest}`", name(&document));
            if !target.exists() {
                broken.push(format!("{at}: no such file"));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if target.extension().is_none_or(|e| e != "md") {
                continue; // e.g. a line of a source file: GitHub's, not a heading
            }
            let headings = anchors(&std::fs::read_to_string(&target).unwrap());
            if !headings.contains(anchor) {
                broken.push(format!("{at}: no heading with that anchor"));
            }
        }
    }
    assert!(checked > 50, "the links are found: {checked}");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn external_links_are_well_formed() {
    let mut bad = Vec::new();
    for document in documents() {
        let text = std::fs::read_to_string(&document).unwrap();
        for (line, dest) in links(&text) {
            let Some((scheme, rest)) = dest.split_once("://") else {
                continue;
            };
            let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
            let ok = matches!(scheme, "http" | "https")
                && !host.is_empty()
                && !dest.contains(char::is_whitespace);
            if !ok {
                bad.push(format!("{}:{line}: `{dest}`", name(&document)));
            }
        }
    }
    assert!(bad.is_empty(), "malformed links:\n{}", bad.join("\n"));
}

#[test]
fn every_guide_page_is_a_page_of_the_crate_docs() {
    let guide = root().join("docs/guide");
    // The crate reads the pages through its own folder, so `cargo package`
    // carries them; that link must lead here.
    assert_eq!(
        root()
            .join("zb-health-runtime/guide")
            .canonicalize()
            .unwrap(),
        guide.canonicalize().unwrap(),
        "zb-health-runtime/guide links to docs/guide"
    );
    let module = std::fs::read_to_string(root().join("zb-health-runtime/src/guide.rs")).unwrap();
    let lib = std::fs::read_to_string(root().join("zb-health-runtime/src/lib.rs")).unwrap();
    assert!(lib.contains("pub mod guide;"), "lib.rs mounts the guide");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&guide).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        if !module.contains(&format!("include_str!(\"../guide/{file}\")")) {
            missing.push(file);
        }
    }
    assert!(
        missing.is_empty(),
        "docs/guide pages not in zb_health::guide (zb-health-runtime/src/guide.rs): {missing:?}"
    );
}

/// A requirement ID or rule code in running text: `ZB-1.3`, `ZB §6`,
/// `BE-HLTH-005`, `AT-8`, `R18`. Fenced blocks are left out: they quote
/// tools' output, which cites them.
fn requirement_ids(text: &str) -> Vec<String> {
    let text = prose(text);
    let mut found = Vec::new();
    for token in text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '§')) {
        let rule = token
            .strip_prefix('R')
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        let id = token.starts_with("BE-HLTH")
            || ["ZB-", "AT-"].iter().any(|p| {
                token
                    .strip_prefix(p)
                    .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))
            });
        if rule || id {
            found.push(token.to_owned());
        }
    }
    if text.contains("ZB §") {
        found.push("ZB §".to_owned());
    }
    found
}

#[test]
fn the_readme_and_the_guide_speak_in_words_not_requirement_ids() {
    let mut cited = Vec::new();
    for document in documents() {
        let text = std::fs::read_to_string(&document).unwrap();
        let ids = requirement_ids(&text);
        if !ids.is_empty() {
            cited.push(format!("{}: {ids:?}", name(&document)));
        }
    }
    assert!(
        cited.is_empty(),
        "IDs belong in spec/ (the rules by name are in spec/rules.md):\n{}",
        cited.join("\n")
    );
    // The check finds what it looks for.
    assert_eq!(
        requirement_ids("rule R5 (BE-HLTH-006), ZB-1.3, AT-8 and ZB §6; not RAM"),
        ["R5", "BE-HLTH-006", "ZB-1", "AT-8", "ZB §"]
    );
}

#[test]
fn slugs_follow_github() {
    assert_eq!(
        slug("8. Deploy to Kubernetes with `zb-health k8s`"),
        "8-deploy-to-kubernetes-with-zb-health-k8s"
    );
    assert_eq!(slug("`grpc.health.v1`"), "grpchealthv1");
    assert_eq!(
        slug("Metrics (the `metrics` facade)"),
        "metrics-the-metrics-facade"
    );
    let page = "# A\n## Same\n```\n# not a heading\n```\n## Same\n";
    assert_eq!(
        anchors(page),
        BTreeSet::from(["a".into(), "same".into(), "same-1".into()])
    );
}

/// The README is a front door (issue 40): what the library does, the two
/// commands, the dependency, the tour, what the compiler enforces, links;
/// the reference is the guide's.
#[test]
fn the_readme_stays_a_front_door_of_at_most_300_lines() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; move reference text into docs/guide/"
    );
    assert!(
        readme.contains("](docs/guide/README.md)"),
        "the README links the guide"
    );
}
