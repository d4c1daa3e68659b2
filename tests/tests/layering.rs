//! The runtime's modules import in one direction: registration →
//! table → executor → report → writer → handler, with the lifecycle beside
//! the executor and the registry a façade over them. This test reads the
//! `crate::…` paths of every non-test file of `zb-health-runtime/src`, builds the
//! graph of its top-level modules, and fails on any circle, naming the
//! modules and the paths that tie them. `cargo test -p zb-health-tests
//! --test layering -- --nocapture` prints the order, lowest layer first.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level module a file of `src/` belongs to (`executor/mod.rs` and
/// `executor/tests.rs` are `executor`); `None` for `lib.rs`, which only
/// declares and re-exports.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_string_lossy();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_owned();
    (name != "lib").then_some(name)
}

/// A file's code without its unit tests and comments: test files are left
/// out, an inline `mod tests` ends the text, and a doc link is no import.
fn code(file: &Path) -> Option<String> {
    if file.file_name().is_some_and(|n| n == "tests.rs") {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let code = match text.find("#[cfg(test)]\nmod tests {") {
        Some(at) => &text[..at],
        None => &text,
    };
    Some(
        code.lines()
            .map(|line| line.split_once("//").map_or(line, |(code, _)| code))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `crate::NAME` in `text` (in `use` lines and in paths), where NAME
/// is one of `modules`: the module each names.
fn imports(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        let preceded_by_path = rest[..at].ends_with(':') || rest[..at].ends_with('_');
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !preceded_by_path && modules.contains(&name) {
            out.insert(name);
        }
        // `use crate::{a::X, b::Y}`: each item of the group.
        if let Some(group) = after.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name = item.trim().split("::").next().unwrap_or("");
                if modules.contains(name) {
                    out.insert(name.to_owned());
                }
            }
        }
        rest = after;
    }
    out
}

/// The strongly connected components of more than one module (Tarjan).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found
}

#[test]
fn the_runtime_modules_import_in_one_direction() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../zb-health-runtime/src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let modules: BTreeSet<String> = all.iter().filter_map(|f| module_of(&src, f)).collect();
    assert!(
        modules.contains("registry") && modules.contains("executor"),
        "read {modules:?}"
    );
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &all {
        let (Some(module), Some(text)) = (module_of(&src, file), code(file)) else {
            continue;
        };
        let edges = graph.entry(module.clone()).or_default();
        edges.extend(
            imports(&text, &modules)
                .into_iter()
                .filter(|m| *m != module),
        );
    }
    let found = circles(&graph);
    let described: Vec<String> = found
        .iter()
        .map(|c| {
            let ties: Vec<String> = c
                .iter()
                .flat_map(|a| {
                    graph[a]
                        .iter()
                        .filter(|b| c.contains(b))
                        .map(move |b| format!("{a} → {b}"))
                })
                .collect();
            format!("{{{}}}: {}", c.join(", "), ties.join(", "))
        })
        .collect();
    assert!(
        found.is_empty(),
        "modules that import each other: {}",
        described.join("; ")
    );
    // The order, lowest layer first: each module after everything it imports.
    let mut placed: Vec<String> = Vec::new();
    while placed.len() < graph.len() {
        let next = graph
            .iter()
            .find(|(m, deps)| !placed.contains(m) && deps.iter().all(|d| placed.contains(d)))
            .map(|(m, _)| m.clone())
            .expect("no circle, so some module has all its imports placed");
        placed.push(next);
    }
    println!("layers, lowest first: {}", placed.join(" → "));
}

#[test]
fn the_reader_finds_plain_grouped_and_inline_paths() {
    let modules: BTreeSet<String> = ["a", "b", "c", "d"].map(String::from).into();
    let text =
        "use crate::a::X;\nuse crate::{b::Y, c};\nfn f() { crate::d::g(); other_crate::a::h(); }";
    assert_eq!(
        imports(text, &modules),
        ["a", "b", "c", "d"].map(String::from).into()
    );
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_owned(), ["b".to_owned()].into()),
        ("b".to_owned(), ["a".to_owned()].into()),
        ("c".to_owned(), BTreeSet::new()),
    ]
    .into();
    assert_eq!(circles(&graph).len(), 1, "a circle is found");
}
