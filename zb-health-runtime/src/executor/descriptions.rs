//! The fixed descriptions the executor gives entries it did not run to
//! an answer: no result yet, stale, skipped for a failing dependency.

use std::time::Duration;

/// The fixed description of a background probe's entry before its first
/// run has finished.
pub(crate) const NO_RESULT_YET_DESCRIPTION: &str = "no result yet";

/// The fixed description of a background probe's entry whose latest result
/// is older than `max_staleness`: `stale: no result for over N ms`, with
/// the probe's `max_staleness`.
pub(crate) fn stale_description(max_staleness: Duration) -> String {
    format!("stale: no result for over {} ms", max_staleness.as_millis())
}

/// The description of an entry skipped because a dependency is failing:
/// `skipped: <dependency> failing` (`depends_on`).
pub(crate) fn skipped_description(dependency: &str) -> String {
    format!("skipped: {dependency} failing")
}
