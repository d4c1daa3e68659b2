//! Just enough JSON for the dashboard, std only: a validator that checks a
//! whole body is one JSON object (and names its keys), so a kept document
//! can go into the aggregate verbatim, and a string writer. The dashboard
//! never reads a document's values: the page does.

/// Nesting deeper than this is refused: a recursive check must not be
/// driven into a stack overflow by a hostile body.
const MAX_DEPTH: usize = 64;

/// The top-level keys of `text` when it is exactly one JSON object (RFC
/// 8259, whitespace around it allowed), or why it is not.
pub fn object_keys(text: &str) -> Result<Vec<String>, String> {
    let mut p = Parser {
        bytes: text.as_bytes(),
        at: 0,
        keys: Vec::new(),
    };
    p.space();
    if p.peek() != Some(b'{') {
        return Err("not a JSON object".into());
    }
    p.value(0)?;
    p.space();
    if p.at != p.bytes.len() {
        return Err(format!("trailing bytes at offset {}", p.at));
    }
    Ok(p.keys)
}

/// Appends `value` to `out` as a JSON string.
pub fn push_string(out: &mut String, value: &str) {
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The keys of the outermost object, collected on the way.
    keys: Vec<String>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn error<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("invalid JSON at offset {}: {what}", self.at))
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            self.error(&format!("expected `{}`", byte as char))
        }
    }

    fn value(&mut self, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return self.error("nested too deeply");
        }
        self.space();
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(drop),
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => self.error("expected a value"),
        }
    }

    fn literal(&mut self, word: &str) -> Result<(), String> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(())
        } else {
            self.error("expected a value")
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), String> {
        self.expect(b'{')?;
        self.space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.space();
            let key = self.string()?;
            if depth == 0 {
                self.keys.push(key);
            }
            self.space();
            self.expect(b':')?;
            self.value(depth + 1)?;
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return self.error("expected `,` or `}`"),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), String> {
        self.expect(b'[')?;
        self.space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.value(depth + 1)?;
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return self.error("expected `,` or `]`"),
            }
        }
    }

    /// A string; its text only as far as the keys need it (escapes other
    /// than `\"` and `\\` are kept as written).
    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return self.error("unterminated string"),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(String::from_utf8_lossy(&out).into_owned());
                }
                Some(b'\\') => {
                    self.at += 1;
                    match self.peek() {
                        Some(c @ (b'"' | b'\\' | b'/')) => out.push(c),
                        Some(c @ (b'b' | b'f' | b'n' | b'r' | b't')) => out.extend([b'\\', c]),
                        Some(b'u') => {
                            let hex = self.bytes.get(self.at + 1..self.at + 5);
                            if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                                return self.error("bad \\u escape");
                            }
                            out.push(b'?');
                            self.at += 4;
                        }
                        _ => return self.error("bad escape"),
                    }
                    self.at += 1;
                }
                Some(c) if c < 0x20 => return self.error("control character in a string"),
                Some(c) => {
                    out.push(c);
                    self.at += 1;
                }
            }
        }
    }

    fn number(&mut self) -> Result<(), String> {
        let digits = |p: &mut Self| {
            let start = p.at;
            while matches!(p.peek(), Some(b'0'..=b'9')) {
                p.at += 1;
            }
            p.at > start
        };
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        if self.peek() == Some(b'0') {
            self.at += 1;
        } else if !digits(self) {
            return self.error("expected digits");
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if !digits(self) {
                return self.error("expected digits after `.`");
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !digits(self) {
                return self.error("expected exponent digits");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_gives_its_top_level_keys_only() {
        let keys = object_keys(
            " {\"nowMs\": 1.5e3, \"tiers\": {\"ready\": null}, \"probes\": [{\"a\\\"b\": [true, false, -0.25]}], \"s\": \"\\u00e9\\n\"} ",
        )
        .unwrap();
        assert_eq!(keys, ["nowMs", "tiers", "probes", "s"]);
    }

    #[test]
    fn anything_else_is_refused() {
        for bad in [
            "",
            "[]",
            "\"x\"",
            "<html></html>",
            "{",
            "{\"a\":}",
            "{\"a\":1,}",
            "{\"a\":01}",
            "{\"a\":1} {}",
            "{\"a\":\"\u{1}\"}",
            "{\"a\":\"\\x\"}",
            "{\"a\":tru}",
            "{\"a\":1.}",
        ] {
            assert!(object_keys(bad).is_err(), "{bad:?}");
        }
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(100), "]".repeat(100));
        assert!(object_keys(&deep).is_err());
    }

    #[test]
    fn strings_are_written_as_json() {
        let mut out = String::new();
        push_string(&mut out, "a\"b\\c\nd\u{1}é");
        assert_eq!(out, "\"a\\\"b\\\\c\\nd\\u0001é\"");
    }
}
