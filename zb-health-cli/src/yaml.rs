//! A located YAML tree for the Kubernetes manifests that `k8s --check`
//! reads: every node keeps its line:column (serde-saphyr's `Spanned`), so a
//! drift is reported where it is written. The spec crate's own tree is for
//! `health.yaml` only (one document, manifest budgets); a Deployment file is
//! multi-document and larger, so it gets this small one.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{MessageFormatter, Spanned};
use zb_health_spec::manifest::Location;

/// One YAML node and where it was written.
#[derive(Debug)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// Where it was written (for an alias: where it is used).
    pub loc: Location,
}

/// A YAML value, untyped: the checker decides what each key must be.
#[derive(Debug)]
pub enum Value {
    /// `~`, `null` or nothing.
    Null,
    /// A boolean or a float: no probe setting the checker reads is one.
    Other,
    /// An integer.
    Int(i128),
    /// A string.
    Str(String),
    /// A list.
    Seq(Vec<Node>),
    /// A mapping, in the order written.
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// The value of `key` when this node is a mapping that has it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| matches!(&k.value, Value::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The location of `key` itself (not its value), for a drift about
    /// the whole entry.
    pub fn key_loc(&self, key: &str) -> Option<Location> {
        match &self.value {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| matches!(&k.value, Value::Str(s) if s == key))
                .map(|(k, _)| k.loc),
            _ => None,
        }
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

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = Spanned::<Value>::deserialize(d)?;
        let conv = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        Ok(Node {
            value: s.value,
            loc: Location {
                line: conv(s.referenced.line()),
                column: conv(s.referenced.column()),
            },
        })
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

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
    fn visit_bool<E>(self, _: bool) -> Result<Value, E> {
        Ok(Value::Other)
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
        // Beyond i128 only in a broken file: any huge value reads as absurd.
        Ok(Value::Int(i128::try_from(n).unwrap_or(i128::MAX)))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Value, E> {
        Ok(Value::Other)
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::Str(s.into()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::Str(s))
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

/// Every document of a multi-document YAML text, as located trees, or the
/// reader's message (with its position when it has one).
pub fn load_all(text: &str) -> Result<Vec<Node>, String> {
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_depth: 64,
            max_documents: 1_000,
            max_nodes: 1_000_000,
            max_aliases: 1_000,
        },
        // Kubernetes reads YAML 1.2-ish: `on`/`yes` are strings, not booleans.
        strict_booleans: true,
        with_snippet: false,
    };
    serde_saphyr::from_multiple_with_options::<Node>(text, options).map_err(|e| {
        let at = e
            .location()
            .map(|l| format!(" at {}:{}", l.line(), l.column()))
            .unwrap_or_default();
        let message = serde_saphyr::UserMessageFormatter.format_message(&e);
        format!("not valid YAML{at}: {message}")
    })
}
