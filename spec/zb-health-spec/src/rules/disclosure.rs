//! R7 for authorized details (BE-HLTH-007): the level a tier shows to the
//! bearer token shows more than its public one.

use super::rule::Rule;
use super::sink::Violations;
use crate::tag::Tag;
use crate::vocab::Disclosure;

/// R7 for authorized details (BE-HLTH-007): the level a tier shows to a
/// request with the configured bearer token must show more than the level
/// it shows everyone else. An authorized level at or below the public one
/// would offer a token that changes nothing, which is a mistake in the
/// manifest or the builder, not a choice.
pub fn check_authorized_disclosure<L>(
    tier: Tag,
    public: Disclosure,
    authorized: Disclosure,
    location: L,
    sink: &mut Violations<L>,
) {
    if !authorized.shows_more_than(public) {
        sink.push(
            Rule::Contradiction,
            location,
            format!(
                "the `{tier}` tier's authorized level `{authorized}` shows no more than its public level `{public}`"
            ),
            if public == Disclosure::Full {
                "nothing shows more than `full`: remove the authorized level, or show everyone less with `disclosure: names` or `status`".to_owned()
            } else {
                format!(
                    "the bearer token is for seeing more: set the authorized level above `{public}` (`full`), or show everyone less with a stricter `disclosure`"
                )
            },
        );
    }
}

/// The authorized levels of the three tiers (indexed by `Tag as usize`)
/// from what was written: `every_tier`, one level for all three, applies
/// to the tiers whose public level it shows more than (R7 when that is
/// none); `per_tier` overrides it, and each level there must show more
/// than its tier's public one ([`check_authorized_disclosure`]). Used by
/// the manifest reader and `ZbHealth::build` alike.
pub fn resolve_authorized<L: Clone>(
    public: [Disclosure; 3],
    every_tier: Option<(Disclosure, L)>,
    per_tier: [Option<(Disclosure, L)>; 3],
    sink: &mut Violations<L>,
) -> [Option<Disclosure>; 3] {
    let mut levels = [None; 3];
    if let Some((level, at)) = every_tier {
        for tag in Tag::ALL {
            levels[tag as usize] = level.shows_more_than(public[tag as usize]).then_some(level);
        }
        if levels.iter().all(Option::is_none) {
            // No tier gains anything: report it against the ready tier,
            // the one authorized details are usually for.
            check_authorized_disclosure(Tag::Ready, public[Tag::Ready as usize], level, at, sink);
        }
    }
    for (tag, written) in Tag::ALL.into_iter().zip(per_tier) {
        if let Some((level, at)) = written {
            check_authorized_disclosure(tag, public[tag as usize], level, at, sink);
            levels[tag as usize] = Some(level);
        }
    }
    levels
}
