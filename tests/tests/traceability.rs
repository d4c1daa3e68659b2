//! `spec/traceability.md` has a row for every requirement ID of the digest
//! (`spec/requirement-ids.txt`), each with a known status, and no row for
//! an ID the digest does not have; and every test, trybuild case or file
//! that a requirement row or a spec-name row names exists.

use std::collections::BTreeSet;

const IDS: &str = include_str!("../../spec/requirement-ids.txt");
const TABLE: &str = include_str!("../../spec/traceability.md");

/// The requirement rows of the table: `(id, status)`.
fn rows() -> Vec<(&'static str, &'static str)> {
    TABLE
        .lines()
        .filter_map(|line| {
            let mut cells = line.strip_prefix("| ")?.split(" | ");
            let id = cells.next()?;
            let status = cells.next()?;
            let is_id = ["ZB-", "AT-", "BE-HLTH-"].iter().any(|p| id.starts_with(p));
            is_id.then_some((id, status))
        })
        .collect()
}

#[test]
fn every_requirement_id_has_one_row_with_a_known_status() {
    let ids: BTreeSet<&str> = IDS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert!(ids.len() >= 30, "the ID list is read: {ids:?}");
    let rows = rows();
    let in_table: Vec<&str> = rows.iter().map(|(id, _)| *id).collect();
    let missing: Vec<&&str> = ids.iter().filter(|id| !in_table.contains(id)).collect();
    assert!(
        missing.is_empty(),
        "no row in spec/traceability.md for {missing:?}"
    );
    let unknown: Vec<&&str> = in_table.iter().filter(|id| !ids.contains(*id)).collect();
    assert!(
        unknown.is_empty(),
        "rows for IDs the digest lacks: {unknown:?}"
    );
    let mut seen = BTreeSet::new();
    for (id, status) in &rows {
        assert!(seen.insert(*id), "{id} has two rows");
        assert!(
            ["done", "partial", "planned", "deviation"]
                .iter()
                .any(|s| status.starts_with(s)),
            "{id}: unknown status {status:?}"
        );
    }
}

/// Every `.rs` file of the workspace's sources and tests (not `target/`).
fn sources() -> Vec<(std::path::PathBuf, String)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if name != "target" && name != "ui" && !name.to_string_lossy().starts_with('.') {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                out.push((path, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(root(), &mut out);
    out
}

fn root() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
}

/// Whether a source defines `fn name` (`name*`: a function whose name
/// starts with `name`).
fn defines(text: &str, name: &str) -> bool {
    match name.strip_suffix('*') {
        Some(prefix) => text.contains(&format!("fn {prefix}")),
        None => text.contains(&format!("fn {name}(")),
    }
}

/// The table names only tests and cases that exist: `ui/…` is a trybuild
/// case under `tests/ui/`; `file::test` a test of `tests/tests/file.rs`;
/// `module::tests::test` a function of that name somewhere in the
/// workspace; a path with `/` a file. So a renamed or deleted test makes
/// the table fail, not silently lie.
#[test]
fn every_test_and_case_the_table_names_exists() {
    let sources = sources();
    let mut missing = Vec::new();
    let mut section = "";
    for line in TABLE.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            section = title;
            continue;
        }
        let Some(rest) = line.strip_prefix("| ") else {
            continue;
        };
        let cells: Vec<&str> = rest.split(" | ").collect();
        let is_id = ["ZB-", "AT-", "BE-HLTH-"]
            .iter()
            .any(|p| cells[0].starts_with(p));
        // A requirement row's tests and cases are its last two cells; a
        // spec name's, its third (after the name and the Rust item).
        let tested: &[&str] = if is_id && cells.len() >= 5 {
            &cells[3..]
        } else if section == "Spec names"
            && cells.len() == 3
            && cells[0] != "Spec name"
            && !cells[0].starts_with("---")
        {
            &cells[2..]
        } else {
            continue;
        };
        for cell in tested {
            for token in cell.split('`').skip(1).step_by(2) {
                let ok = if let Some(case) = token.strip_prefix("ui/") {
                    paths_exist(&root().join("tests/ui"), case)
                } else if token.contains('/') && !token.contains(' ') && !token.starts_with('/') {
                    paths_exist(root(), token)
                } else if token
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_:*".contains(c))
                    && token.contains("::")
                {
                    let segments: Vec<&str> = token.split("::").collect();
                    let last = *segments.last().unwrap();
                    let file = root()
                        .join("tests/tests")
                        .join(format!("{}.rs", segments[0]));
                    if last == "*" {
                        // `file::*`, `module::tests::*`: the file or module exists.
                        file.is_file()
                            || sources.iter().any(|(p, text)| {
                                p.file_stem().is_some_and(|s| s == segments[0])
                                    || text
                                        .contains(&format!("mod {}", segments[segments.len() - 2]))
                            })
                    } else if segments.len() == 2 && file.is_file() {
                        defines(&std::fs::read_to_string(&file).unwrap(), last)
                    } else {
                        // A test function, or a module (`zb_health_testkit::dom`).
                        sources.iter().any(|(path, text)| {
                            defines(text, last)
                                || text.contains(&format!("mod {last};"))
                                || path.file_stem().is_some_and(|s| s == last)
                        })
                    }
                } else {
                    true // a Rust item or a word, not a test reference
                };
                if !ok {
                    missing.push(format!("{}: `{token}`", cells[0]));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "spec/traceability.md names tests or cases that do not exist:\n{}",
        missing.join("\n")
    );
}

/// Whether `pattern` under `dir` names at least one existing path, and
/// every alternative of a `{a,b}` group does: `*` matches within one path
/// component (`ui/pass/manifest_*.rs`, `examples/*/tests/process.rs`).
fn paths_exist(dir: &std::path::Path, pattern: &str) -> bool {
    if let (Some(open), Some(close)) = (pattern.find('{'), pattern.find('}')) {
        let (head, rest) = pattern.split_at(open);
        let (group, tail) = rest[1..].split_at(close - open - 1);
        let tail = &tail[1..];
        return group
            .split(',')
            .all(|alt| paths_exist(dir, &format!("{head}{alt}{tail}")));
    }
    fn matches(name: &str, pattern: &str) -> bool {
        match pattern.split_once('*') {
            None => name == pattern,
            Some((head, tail)) => {
                name.len() >= head.len() + tail.len()
                    && name.starts_with(head)
                    && name.ends_with(tail)
            }
        }
    }
    fn walk(dir: &std::path::Path, parts: &[&str]) -> bool {
        let Some((first, rest)) = parts.split_first() else {
            return dir.exists();
        };
        if !first.contains('*') {
            return walk(&dir.join(first), rest);
        }
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| matches(&e.file_name().to_string_lossy(), first) && walk(&e.path(), rest))
        })
    }
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    walk(dir, &parts)
}
