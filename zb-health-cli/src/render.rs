//! Violations as rustc-style diagnostics, rendered by annotate-snippets.

use std::io::Write;
use std::ops::Range;

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use zb_health_spec::Violation;
use zb_health_spec::manifest::Location;

use crate::input::{Failure, Source};

/// One diagnostic of any source: a broken manifest rule, or a Kubernetes
/// setting that drifted from the manifest.
pub struct Diagnostic<'a> {
    /// The code in brackets, `R1` or `K1`.
    pub id: &'a str,
    /// The title.
    pub message: &'a str,
    /// Where, in the file rendered.
    pub location: Location,
    /// The `= note:` line.
    pub note: String,
    /// The `= help:` line; none when empty.
    pub help: &'a str,
}

/// Renders every violation of one file, then a one-line summary, as rustc
/// prints them: `error[R1]: …`, `--> path:line:col`, the line with a caret,
/// `= note:` with the rule and its requirement, `= help:`; on stderr, and
/// the subcommand then exits 1.
pub fn report(source: &Source, violations: &[Violation<Location>], styled: bool) -> Failure {
    let diagnostics: Vec<Diagnostic<'_>> = violations
        .iter()
        .map(|violation| {
            let rule = violation.rule;
            Diagnostic {
                id: rule.code(),
                message: violation.message.as_str(),
                location: violation.location,
                note: match rule.cites() {
                    Some(id) => format!("rule {} ({}) enforces {id}", rule.code(), rule.name()),
                    None => format!("rule {} ({})", rule.code(), rule.name()),
                },
                help: violation.help.as_str(),
            }
        })
        .collect();
    let count = violations.len();
    let summary = format!(
        "could not accept `{}` due to {count} previous error{}",
        source.shown,
        plural(count)
    );
    render_all(source, &diagnostics, &summary, styled)
}

/// The `s` of a summary's noun, as rustc writes "1 previous error" and
/// "2 previous errors".
pub fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// Renders `diagnostics` on the source's text, then `summary` as a last
/// `error:` line, on stderr; the subcommand then exits 1.
pub fn render_all(
    source: &Source,
    diagnostics: &[Diagnostic<'_>],
    summary: &str,
    styled: bool,
) -> Failure {
    let (path, text) = (source.shown.as_str(), source.text.as_str());
    let renderer = if styled {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    for d in diagnostics {
        let mut group = Level::ERROR
            .primary_title(d.message)
            .id(d.id)
            .element(
                Snippet::source(text)
                    .path(path)
                    .annotation(AnnotationKind::Primary.span(span(text, d.location))),
            )
            .element(Level::NOTE.message(d.note.as_str()));
        if !d.help.is_empty() {
            group = group.element(Level::HELP.message(d.help));
        }
        out.push_str(&renderer.render(&[group]));
        out.push_str("\n\n");
    }
    out.push_str(&renderer.render(&[Group::with_title(Level::ERROR.primary_title(summary))]));
    out.push_str("\n\n");
    // A closed stderr leaves nothing to tell; the status still says it.
    let _ = std::io::stderr().write_all(out.as_bytes());
    Failure::Failed
}

/// The byte range that a `Location` (1-based line, 1-based column in
/// characters) points at: the token that starts there, so the caret
/// underlines the offending word as rustc does.
///
/// Characters, not bytes: a column after `é` or `名` must not land inside
/// that character. A column past the end of its line (an unterminated
/// mapping can be reported there) is clamped to the line's end, which renders
/// as a caret just after the last character; a line past the end of the text
/// is clamped to the last line.
pub fn span(text: &str, location: Location) -> Range<usize> {
    let mut line_start = 0;
    for _ in 1..location.line {
        match text[line_start..].find('\n') {
            Some(newline) => line_start += newline + 1,
            None => break,
        }
    }
    let rest = &text[line_start..];
    let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let line = line.strip_suffix('\r').unwrap_or(line);
    let start = line
        .char_indices()
        .nth(location.column.saturating_sub(1))
        .map_or(line.len(), |(byte, _)| byte);
    let token = token_len(&line[start..]);
    line_start + start..line_start + start + token
}

/// The length in bytes of the YAML token at the start of `rest`: a quoted
/// scalar up to its closing quote, or a plain word up to a flow indicator,
/// a comment, a space, or a `: ` that ends a key. One character at least,
/// when there is one.
fn token_len(rest: &str) -> usize {
    let mut chars = rest.char_indices().peekable();
    let Some((_, first)) = chars.next() else {
        return 0;
    };
    if first == '"' || first == '\'' {
        // Up to and with the closing quote; an escaped `\"` does not close.
        let mut escaped = false;
        for (byte, c) in chars {
            if c == first && !escaped {
                return byte + c.len_utf8();
            }
            escaped = first == '"' && c == '\\' && !escaped;
        }
        return rest.len();
    }
    if matches!(first, '{' | '}' | '[' | ']' | ',' | ' ' | '\t') {
        return first.len_utf8();
    }
    while let Some((byte, c)) = chars.next() {
        let ends_key = c == ':' && chars.peek().is_none_or(|&(_, next)| next == ' ');
        if ends_key || matches!(c, ',' | '[' | ']' | '{' | '}' | ' ' | '\t' | '#') {
            return byte;
        }
    }
    rest.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: usize, column: usize) -> Location {
        Location { line, column }
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        // `é` is 2 bytes, `名` 3: column 13 is the `b` of `bad` on line 2 (byte 18).
        let text = "service: x\nname: é名 名é bad\n";
        let range = span(text, at(2, 13));
        assert_eq!(range.start, 11 + 18);
        assert_eq!(&text[range], "bad");
    }

    #[test]
    fn a_token_is_a_plain_word_a_quoted_scalar_or_a_key() {
        let text = "{ kind: databse, type: crate::Cache, name: \"a \\\" b\", tags: [raedy] }";
        let find = |needle: &str| text.find(needle).unwrap() + 1;
        assert_eq!(&text[span(text, at(1, find("databse")))], "databse");
        assert_eq!(&text[span(text, at(1, find("crate")))], "crate::Cache");
        assert_eq!(&text[span(text, at(1, find("\"a")))], "\"a \\\" b\"");
        assert_eq!(&text[span(text, at(1, find("kind")))], "kind");
        assert_eq!(&text[span(text, at(1, find("raedy")))], "raedy");
        assert_eq!(&text[span(text, at(1, 1))], "{");
    }

    #[test]
    fn a_location_past_the_end_is_clamped_to_the_line_end() {
        let text = "a: b\r\nc: d";
        assert_eq!(span(text, at(1, 40)), 4..4);
        assert_eq!(span(text, at(9, 1)), 6..7);
        assert_eq!(span(text, at(2, 5)), 10..10);
    }
}
