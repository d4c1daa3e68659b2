//! The loose first pass: YAML text to a tree of located values.
//!
//! The manifest is not deserialized straight into typed structs: a typed
//! deserializer stops at the first unknown key or wrong type, and the spec
//! wants every violation at once. Instead every node, keys included, becomes a
//! [`Node`] carrying its line and column (serde-saphyr's `Spanned`), and
//! the reader (`read/`) walks that tree, reporting as it goes.
//!
//! This is also the only place that talks to the YAML library, so the resource
//! limits and the panic guard live here. The tree itself is public: the
//! `zb-health` CLI reads Kubernetes files into the same located nodes.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{MessageFormatter, Spanned, UserMessageFormatter};

use super::Location;
use crate::{Rule, Violation};

/// The largest manifest accepted. A health manifest is a few hundred bytes;
/// anything near this size is a wrong file, and the cap bounds parse time.
pub(super) const MAX_MANIFEST_BYTES: usize = 1 << 20;

/// One YAML node and where it was written (for an alias: where it is used).
#[derive(Debug)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// Where it was written.
    pub loc: Location,
}

/// A YAML value, untyped; the reader decides what each key must be.
#[derive(Debug)]
pub enum Value {
    /// `~`, `null` or nothing.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer.
    Int(i128),
    /// A float (or an integer beyond `i128`, approximated).
    Float(f64),
    /// A string.
    Str(String),
    /// A list.
    Seq(Vec<Node>),
    /// A mapping, in the order written.
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// The key node and value node of `key`, when this node is a mapping
    /// that has it.
    fn entry(&self, key: &str) -> Option<&(Node, Node)> {
        match &self.value {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| matches!(&k.value, Value::Str(s) if s == key)),
            _ => None,
        }
    }

    /// The value of `key`, when this node is a mapping that has it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, v)| v)
    }

    /// Where `key` itself (not its value) is written, for a message about
    /// the whole entry.
    pub fn key_loc(&self, key: &str) -> Option<Location> {
        self.entry(key).map(|(k, _)| k.loc)
    }

    /// The string, when this node is one.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, when this node is one.
    pub fn as_int(&self) -> Option<i128> {
        match &self.value {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The items, when this node is a list; nothing otherwise.
    pub fn items(&self) -> &[Node] {
        match &self.value {
            Value::Seq(items) => items,
            _ => &[],
        }
    }
}

impl Value {
    /// The value's type and, for a scalar, the value itself, as error
    /// messages quote it: "the string `ready`", "a mapping".
    pub fn describe(&self) -> String {
        match self {
            Value::Null => "nothing (null)".into(),
            Value::Bool(b) => format!("the boolean `{b}`"),
            Value::Int(i) => format!("the number `{i}`"),
            Value::Float(f) => format!("the number `{f}`"),
            Value::Str(s) => format!("the string `{}`", shown(s)),
            Value::Seq(_) => "a list".into(),
            Value::Map(_) => "a mapping".into(),
        }
    }
}

/// A user's text made safe to quote in a one-line message: control characters
/// escaped, and cut after 80 characters.
pub(super) fn shown(s: &str) -> String {
    const LIMIT: usize = 80;
    match s.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", escaped(&s[..cut])),
        None => escaped(s),
    }
}

/// `s` with control characters (newlines, escapes) written as `\n`, `\u{1b}`.
fn escaped(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

impl From<serde_saphyr::Location> for Location {
    fn from(l: serde_saphyr::Location) -> Self {
        let conv = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        Location {
            line: conv(l.line()),
            column: conv(l.column()),
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = Spanned::<Value>::deserialize(d)?;
        Ok(Node {
            value: s.value,
            loc: s.referenced.into(),
        })
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

/// Every YAML value as a [`Value`]; serde's defaults bring the other
/// scalars here (an owned string or a `char` to `visit_str`, an `f32` to
/// `visit_f64`).
struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Int(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Int(n.into()))
    }
    fn visit_i128<E>(self, n: i128) -> Result<Value, E> {
        Ok(Value::Int(n))
    }
    fn visit_u128<E>(self, n: u128) -> Result<Value, E> {
        // Out of i128 range: only ever quoted in an error, so an approximate
        // float is enough, and it never wraps to a small number.
        #[allow(clippy::cast_precision_loss)]
        let approx = n as f64;
        Ok(i128::try_from(n).map_or(Value::Float(approx), Value::Int))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(Value::Float(f))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::Str(s.into()))
    }
    fn visit_bytes<E>(self, b: &[u8]) -> Result<Value, E> {
        Ok(Value::Str(String::from_utf8_lossy(b).into_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(Value::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry::<Node, Node>()? {
            entries.push(entry);
        }
        Ok(Value::Map(entries))
    }
}

/// The YAML reader's settings. The budget is far above any real manifest and
/// far below what would hurt a compiler: it stops billion-laughs alias
/// expansion, deep nesting (which would also recurse in this crate) and
/// multi-document or huge inputs before they cost time or memory.
fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_depth: 16,
            flow_nesting_limit: 16,
            max_documents: 1,
            max_nodes: 20_000,
            max_events: 50_000,
            max_anchors: 1_000,
            max_aliases: 1_000,
            max_merge_keys: 100,
            max_total_scalar_bytes: MAX_MANIFEST_BYTES,
            max_recorded_anchor_events: 20_000,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: 5_000,
            max_replay_stack_depth: 16,
            max_alias_expansions_per_anchor: 200,
        },
        // `yes`, `on`, `no`, `off` stay strings: `name: on` is a name.
        strict_booleans: true,
        // The snippet is the caller's business (the macro prints its own).
        with_snippet: false,
    }
}

/// Parses `yaml` into a located tree, or the one R8 violation that stopped the
/// YAML reader, at the reader's own line:column and with its own message.
pub(super) fn load(yaml: &str) -> Result<Node, Violation<Location>> {
    if yaml.len() > MAX_MANIFEST_BYTES {
        return Err(unreadable(
            Location { line: 1, column: 1 },
            format!(
                "the manifest is {} bytes, more than the {MAX_MANIFEST_BYTES} a manifest may have",
                yaml.len()
            ),
            "a health manifest lists a few probes; check that the right file is named",
        ));
    }
    // serde-saphyr is written to be panic-free; the guard makes sure a bug in
    // it surfaces as an R8 error, not as a crashed compiler.
    let parsed = catch_unwind(AssertUnwindSafe(|| {
        serde_saphyr::from_str_with_options::<Node>(yaml, options())
    }));
    match parsed {
        Ok(Ok(node)) => Ok(node),
        Ok(Err(e)) => {
            let location = e
                .location()
                .map_or(Location { line: 1, column: 1 }, Location::from);
            let message = escaped(&UserMessageFormatter.format_message(&e));
            // A key written twice is its own rule (R14), as in the
            // attribute; every other reader error is an unreadable file.
            if matches!(e, serde_saphyr::Error::DuplicateMappingKey { .. }) {
                return Err(Violation {
                    rule: Rule::DuplicateKey,
                    location,
                    message: format!("a key is written twice: {message}"),
                    help: "each key is written once; remove one of the two".into(),
                });
            }
            Err(unreadable(
                location,
                format!("the manifest is not valid YAML: {message}"),
                "fix the YAML at this position; the manifest is one YAML mapping (see spec/manifest.md)",
            ))
        }
        Err(_) => Err(unreadable(
            Location { line: 1, column: 1 },
            "the YAML reader failed on this manifest",
            "simplify the file to the shape in spec/manifest.md; please report the input as a bug",
        )),
    }
}

fn unreadable(location: Location, message: impl Into<String>, help: &str) -> Violation<Location> {
    Violation {
        rule: Rule::ManifestFile,
        location,
        message: message.into(),
        help: help.into(),
    }
}
