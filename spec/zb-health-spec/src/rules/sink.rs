//! Where the checks report: one [`Violation`] of a [`Rule`], the
//! [`Violations`] sink that collects every one, and [`SpecError`], what a
//! caller outside a compiler returns.

use std::fmt;

use super::rule::Rule;

/// One broken rule, at a location of the caller's choosing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation<L> {
    /// Which rule.
    pub rule: Rule,
    /// Where: a YAML span, a token span, or `()`.
    pub location: L,
    /// What is wrong, quoting the user's value.
    pub message: String,
    /// How to fix it, in words.
    pub help: String,
}

impl<L> fmt::Display for Violation<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}\n  = rule {}\n  = help: {}",
            self.message, self.rule, self.help
        )
    }
}

impl<L: fmt::Debug> std::error::Error for Violation<L> {}

/// The error sink: collects every violation so that a user sees them all at
/// once, as serde_derive's `Ctxt` does.
#[derive(Debug)]
#[must_use = "violations must be reported with `into_result`"]
pub struct Violations<L> {
    found: Vec<Violation<L>>,
}

impl<L> Default for Violations<L> {
    fn default() -> Self {
        Self { found: Vec::new() }
    }
}

impl<L> Violations<L> {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a violation.
    pub fn push(
        &mut self,
        rule: Rule,
        location: L,
        message: impl Into<String>,
        help: impl Into<String>,
    ) {
        self.found.push(Violation {
            rule,
            location,
            message: message.into(),
            help: help.into(),
        });
    }

    /// Whether nothing was found so far.
    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// `Ok` if no rule was broken, else every violation in the order found.
    pub fn into_result(self) -> Result<(), Vec<Violation<L>>> {
        if self.found.is_empty() {
            Ok(())
        } else {
            Err(self.found)
        }
    }
}

/// Rules broken outside a compiler: what the runtime builder, the endpoint
/// builder and `ClusterActiveNode::with_roles` return, every violation and
/// not only the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    violations: Vec<Violation<()>>,
}

impl SpecError {
    /// Every violation, in the order found.
    pub fn violations(&self) -> &[Violation<()>] {
        &self.violations
    }

    /// The rules broken, in the order found (convenient in tests).
    pub fn rules(&self) -> Vec<Rule> {
        self.violations.iter().map(|v| v.rule).collect()
    }
}

impl From<Vec<Violation<()>>> for SpecError {
    fn from(violations: Vec<Violation<()>>) -> Self {
        Self { violations }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let errors: Vec<String> = self
            .violations
            .iter()
            .map(|v| format!("error: {v}"))
            .collect();
        f.write_str(&errors.join("\n"))
    }
}

impl std::error::Error for SpecError {}
