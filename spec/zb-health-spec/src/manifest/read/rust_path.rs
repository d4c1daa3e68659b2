//! Whether a custom probe's `type` is a Rust path, checked in the manifest
//! so that a typo is reported at its YAML line:column, not as a Rust parse
//! error at the macro call.

/// Whether `path` is a Rust path to a type: identifiers joined by `::`,
/// optionally led by `::`, `crate::`, `self::` or `super::` (repeatable), and
/// no keyword elsewhere. Raw identifiers (`r#type`) are accepted.
pub(super) fn is_rust_path(path: &str) -> bool {
    let (global, rest) = match path.strip_prefix("::") {
        Some(rest) => (true, rest),
        None => (false, path),
    };
    let segments: Vec<&str> = rest.split("::").collect();
    let mut lead = 0;
    if !global {
        if matches!(segments.first(), Some(&("crate" | "self" | "super"))) {
            lead = 1;
        }
        while lead > 0
            && matches!(segments[0], "self" | "super")
            && segments.get(lead) == Some(&"super")
        {
            lead += 1;
        }
    }
    let named = &segments[lead..];
    !named.is_empty() && named.iter().all(|s| is_identifier(s))
}

/// A non-keyword identifier, or a raw one.
fn is_identifier(segment: &str) -> bool {
    let (raw, word) = match segment.strip_prefix("r#") {
        Some(word) => (true, word),
        None => (false, segment),
    };
    let mut chars = word.chars();
    let well_formed = chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
        && word != "_";
    let keyword = if raw {
        matches!(word, "crate" | "self" | "super" | "Self")
    } else {
        RUST_KEYWORDS.contains(&word)
    };
    well_formed && !keyword
}

/// Rust's strict and reserved keywords (2024 edition), which cannot name a
/// path segment.
const RUST_KEYWORDS: [&str; 52] = [
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_paths() {
        for ok in [
            "Cache",
            "crate::probes::CacheProbe",
            "::ext::Probe",
            "self::P",
            "super::super::P",
            "r#type::P",
            "_x",
        ] {
            assert!(is_rust_path(ok), "{ok}");
        }
        for bad in [
            "",
            "crate",
            "crate::",
            "a::::b",
            "a-b",
            "a::1b",
            "a b",
            "fn::P",
            "P<T>",
            "::crate::P",
            "a::super::P",
            "_",
            "crate::crate::P",
        ] {
            assert!(!is_rust_path(bad), "{bad}");
        }
    }
}
