//! R11: a required key that is absent (ZB-5).

use super::rule::Rule;
use super::sink::Violations;

/// R11: a required key is absent. `what` names it in context
/// ("the manifest has no `service`"); `help` says what to add.
pub fn missing_key<L>(
    what: impl Into<String>,
    help: impl Into<String>,
    location: L,
    sink: &mut Violations<L>,
) {
    sink.push(Rule::MissingKey, location, what, help);
}
