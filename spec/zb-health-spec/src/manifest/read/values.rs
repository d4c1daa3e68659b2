//! Typed values: a mapping with its known keys, strings, booleans,
//! durations and keywords, each read with its location and every mistake
//! reported, never the first only.

use std::time::Duration;

use super::super::tree::{Node, Value, shown};
use super::{Field, Fields, Reader};
use crate::manifest::{Located, ProbeDecl, ProbeKind};
use crate::{
    Rule,
    rules::{check_cluster_size, check_duration_text, missing_key},
    suggest::{did_you_mean, hint, one_of},
    vocab::Keyword,
};

impl Reader {
    /// A mapping with string keys; R15 if it is something else, R4 for each
    /// key not in `known`.
    pub(super) fn mapping<'a>(
        &mut self,
        what: &str,
        node: &'a Node,
        known: &[&'static str],
    ) -> Option<Fields<'a>> {
        self.mapping_listing(what, node, known, ("the keys are", known))
    }

    /// [`mapping`](Self::mapping) whose help for an unknown key lists
    /// `listed.1` (introduced by `listed.0`) rather than every known key,
    /// and suggests among those: a probe's keys of its own kind, where the
    /// other kinds' options are known (and reported as not applying) but
    /// no help to list.
    pub(super) fn mapping_listing<'a>(
        &mut self,
        what: &str,
        node: &'a Node,
        known: &[&'static str],
        listed: (&str, &[&'static str]),
    ) -> Option<Fields<'a>> {
        let (intro, listed) = listed;
        let Value::Map(pairs) = &node.value else {
            self.wrong_type(
                what,
                "a mapping of `key: value` pairs",
                node,
                "see spec/manifest.md for the keys",
            );
            return None;
        };
        let mut entries = Vec::new();
        for (key, value) in pairs {
            let Value::Str(text) = &key.value else {
                self.wrong_type(
                    &format!("a key in {what}"),
                    "a name",
                    key,
                    format!("{intro} {}", one_of(listed)),
                );
                continue;
            };
            if !known.contains(&text.as_str()) {
                self.sink.push(
                    Rule::Unknown,
                    key.loc,
                    format!("unknown key `{}` in {what}", shown(text)),
                    format!(
                        "{intro} {}{}",
                        one_of(listed),
                        hint(did_you_mean(text, listed.iter().copied()))
                    ),
                );
            }
            entries.push(Field {
                key: text,
                key_loc: key.loc,
                node: value,
            });
        }
        Some(Fields {
            loc: node.loc,
            what: what.to_owned(),
            path: None,
            entries,
        })
    }

    /// The value of `key`, when written, read by `read` under its name in
    /// messages ([`Fields::what`]).
    pub(super) fn value<T>(
        &mut self,
        fields: &Fields,
        key: &str,
        read: impl FnOnce(&mut Self, &str, &Node) -> Option<T>,
    ) -> Option<T> {
        let f = fields.get(key)?;
        read(self, &fields.what(key), f.node)
    }

    /// [`value`](Self::value) of a required key: R11, `missing` (what
    /// lacks it and how to add it) at the mapping, when it is absent.
    pub(super) fn required<T>(
        &mut self,
        fields: &Fields,
        key: &str,
        missing: (impl Into<String>, impl Into<String>),
        read: impl FnOnce(&mut Self, &str, &Node) -> Option<T>,
    ) -> Option<T> {
        if fields.get(key).is_none() {
            missing_key(missing.0, missing.1, fields.loc, &mut self.sink);
        }
        self.value(fields, key, read)
    }

    /// An optional section: absent or `null` is `None`; otherwise a mapping.
    pub(super) fn section<'a>(
        &mut self,
        top: &Fields<'a>,
        key: &str,
        known: &[&'static str],
    ) -> Option<Fields<'a>> {
        let f = top.get(key)?;
        if matches!(f.node.value, Value::Null) {
            return None;
        }
        let mut fields = self.mapping(&format!("`{key}`"), f.node, known)?;
        fields.path = Some(format!("{key}."));
        Some(fields)
    }

    /// The value `get` finds in `node`, located; R15 (`expected`, `help`)
    /// when it finds none.
    pub(super) fn typed<T>(
        &mut self,
        what: &str,
        node: &Node,
        (expected, help): (&str, &str),
        get: impl FnOnce(&Node) -> Option<T>,
    ) -> Option<Located<T>> {
        let value = get(node).map(|v| Located::new(v, node.loc));
        if value.is_none() {
            self.wrong_type(what, expected, node, help);
        }
        value
    }

    pub(super) fn string(&mut self, what: &str, node: &Node) -> Option<Located<String>> {
        let help = "write it as text; quote it if YAML reads it as something else";
        self.typed(what, node, ("a string", help), |n| {
            n.as_str().map(str::to_owned)
        })
    }

    pub(super) fn boolean(&mut self, what: &str, node: &Node) -> Option<Located<bool>> {
        let expected = ("`true` or `false`", "write `true` or `false`");
        self.typed(what, node, expected, |n| match n.value {
            Value::Bool(b) => Some(b),
            _ => None,
        })
    }

    /// `expected_size`: a whole number of nodes (R15 otherwise), at least
    /// one (R12).
    pub(super) fn expected_size(&mut self, what: &str, node: &Node) -> Option<u32> {
        let expected = (
            "a whole number of nodes",
            "set it to the number of nodes, e.g. `3`",
        );
        let n = self.typed(what, node, expected, Node::as_int)?;
        check_cluster_size(what, n.value, n.location, &mut self.sink)
    }

    /// A count of runs in a row (`failure_threshold`,
    /// `success_threshold`); zero is read, and refused by R20.
    pub(super) fn run_count(&mut self, what: &str, node: &Node) -> Option<Located<u32>> {
        let expected = (
            "a whole number of runs",
            "set it to the runs in a row, e.g. `3`",
        );
        self.typed(what, node, expected, |n| {
            n.as_int().and_then(|n| u32::try_from(n).ok())
        })
    }

    /// A duration (R5 via [`check_duration_text`]). A bare YAML number
    /// is read as its text, so `1000` gets the "no unit" message, not a type
    /// error.
    pub(super) fn duration(&mut self, what: &str, node: &Node) -> Option<Located<Duration>> {
        let expected = (
            "a duration such as `800ms`",
            "write an integer and a unit: `ms`, `s` or `m`",
        );
        let text = self.typed(what, node, expected, |n| match &n.value {
            Value::Str(s) => Some(s.clone()),
            Value::Int(n) => Some(n.to_string()),
            Value::Float(x) => Some(x.to_string()),
            _ => None,
        })?;
        check_duration_text(&text.value, node.loc, &mut self.sink)
            .map(|d| Located::new(d, node.loc))
    }

    /// One of a closed set of words ([`Keyword`]); R4 with a "did you
    /// mean" otherwise.
    pub(super) fn keyword<K: Keyword>(&mut self, what: &str, node: &Node) -> Option<Located<K>> {
        let text = self.string(what, node)?;
        if let Some(value) = K::from_keyword(&text.value) {
            return Some(Located::new(value, text.location));
        }
        let names: Vec<&str> = K::keywords().collect();
        self.sink.push(
            Rule::Unknown,
            text.location,
            format!("unknown value `{}` for {what}", shown(&text.value)),
            format!("use {}{}", one_of(&names), hint(K::suggest(&text.value))),
        );
        None
    }

    /// A string in a syntax of its own, read by `parse`: R15 at the value
    /// for anything else, with the reason `parse` gives and `syntax`, how
    /// to write it (`expected` names it in a wrong-type message).
    pub(super) fn parsed<T>(
        &mut self,
        (what, expected, syntax): (&str, &str, &str),
        node: &Node,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<Located<T>> {
        let Value::Str(text) = &node.value else {
            self.wrong_type(what, expected, node, syntax);
            return None;
        };
        match parse(text) {
            Ok(value) => Some(Located::new(value, node.loc)),
            Err(reason) => {
                self.sink.push(
                    Rule::ValueType,
                    node.loc,
                    format!("{what}: {}", shown(&reason)),
                    syntax,
                );
                None
            }
        }
    }

    /// R15: the value has the wrong YAML type.
    pub(super) fn wrong_type(
        &mut self,
        what: &str,
        expected: &str,
        node: &Node,
        help: impl Into<String>,
    ) {
        self.sink.push(
            Rule::ValueType,
            node.loc,
            format!("{what} must be {expected}, not {}", node.value.describe()),
            help,
        );
    }

    /// A list's items; `null` is an empty list; R15 for anything else.
    pub(super) fn list<'a>(
        &mut self,
        what: &str,
        expected: &str,
        node: &'a Node,
        help: &str,
    ) -> Option<&'a [Node]> {
        match &node.value {
            Value::Seq(items) => Some(items),
            Value::Null => Some(&[]),
            _ => {
                self.wrong_type(what, expected, node, help);
                None
            }
        }
    }

    /// A list of strings (`roles`, `depends_on`), each `item`; anything
    /// but a list is a wrong type.
    pub(super) fn strings(
        &mut self,
        (what, expected, help): (&str, &str, &str),
        item: &str,
        node: &Node,
    ) -> Option<Vec<Located<String>>> {
        let Value::Seq(items) = &node.value else {
            self.wrong_type(what, expected, node, help);
            return None;
        };
        Some(items.iter().filter_map(|i| self.string(item, i)).collect())
    }

    /// The entries of `node`, a mapping keyed by names (`groups`,
    /// `grpc.services`): none when it is empty (`~`), and none after a
    /// [`wrong_type`](Self::wrong_type) error when it is no mapping.
    pub(super) fn entries<'n>(
        &mut self,
        what: &str,
        expected: &str,
        node: &'n Node,
        help: &str,
    ) -> &'n [(Node, Node)] {
        match &node.value {
            Value::Map(pairs) => pairs,
            Value::Null => &[],
            _ => {
                self.wrong_type(what, expected, node, help);
                &[]
            }
        }
    }
}

/// The manifest's probe names, to check a name that refers to one; `None`
/// when a custom probe without `name:` takes its name from its attribute,
/// which only the generated code sees (it checks the names then).
pub(super) fn known_names(probes: Option<&[ProbeDecl]>) -> Option<Vec<&str>> {
    probes?
        .iter()
        .map(|p| match (&p.name, &p.kind) {
            (Some(n), _) => Some(n.value.as_str()),
            (None, ProbeKind::Custom { .. }) => None,
            (None, _) => Some(""),
        })
        .collect()
}

/// The name a probe's messages use, read before validation: its `name`, else
/// its custom `type` or `fn`, else its position (`#1` is the first).
pub(super) fn subject_name(node: &Node, index: usize) -> String {
    ["name", "type", "fn"]
        .into_iter()
        .find_map(|key| node.get(key).and_then(Node::as_str))
        .map_or_else(|| format!("#{}", index + 1), str::to_owned)
}
