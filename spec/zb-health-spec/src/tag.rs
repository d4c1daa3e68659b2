use std::fmt;

use crate::vocab::Keyword;

/// The canonical tag names as constants (ZB-1.1), named after the spec's
/// `ZbHealthTags` so that code searching for the spec name finds them.
pub struct ZbHealthTags;

impl ZbHealthTags {
    /// Tag of the readiness tier, `/health/ready`.
    pub const READY: &'static str = "ready";
    /// Tag of the active-node tier, `/health/active`.
    pub const ACTIVE: &'static str = "active";
    /// Tag of the liveness tier, `/healthz`. No probe may carry it (ZB-1.3).
    pub const LIVE: &'static str = "live";
}

/// One of the three tiers' tags (ZB-1.1).
///
/// The set is closed on purpose: a tag that no tier serves would be a probe
/// that never runs, which is a mistake worth a compile error, not a silent
/// no-op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tag {
    /// `ready`: can this node serve its dependencies?
    Ready,
    /// `active`: is this the active node?
    Active,
    /// `live`: is the process alive? Carries no probes.
    Live,
}

impl Tag {
    /// All tags, in the order ZB-1.1 lists the tiers.
    pub const ALL: [Tag; 3] = [Tag::Ready, Tag::Active, Tag::Live];
    /// Their spellings, in [`ALL`](Self::ALL) order.
    pub const NAMES: [&'static str; 3] = [
        ZbHealthTags::READY,
        ZbHealthTags::ACTIVE,
        ZbHealthTags::LIVE,
    ];

    /// The tag's canonical name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Tag::Ready => ZbHealthTags::READY,
            Tag::Active => ZbHealthTags::ACTIVE,
            Tag::Live => ZbHealthTags::LIVE,
        }
    }

    /// Parses a tag name; the error carries a "did you mean" hint.
    pub fn parse(s: &str) -> Result<Tag, UnknownTag> {
        Tag::from_keyword(s).ok_or_else(|| UnknownTag {
            given: s.to_owned(),
            suggestion: Tag::suggest(s),
        })
    }

    const fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

crate::vocab::keyword!(Tag, "tag", &Tag::ALL);

/// A tag name that is not one of `ready`, `active`, `live`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTag {
    /// What the user wrote.
    pub given: String,
    /// The closest legal tag, if the input looks like a typo of one.
    pub suggestion: Option<&'static str>,
}

impl fmt::Display for UnknownTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown tag `{}`; the tags are `ready` and `active`",
            self.given
        )?;
        if let Some(s) = self.suggestion {
            write!(f, " (did you mean `{s}`?)")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownTag {}

/// A small set of tags, copyable and `const`-constructible so generated code
/// can put it in static tables.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TagSet(u8);

impl TagSet {
    /// No tags.
    pub const EMPTY: TagSet = TagSet(0);
    /// Only `ready`, the tag of every dependency probe.
    pub const READY: TagSet = TagSet(Tag::Ready.bit());
    /// Only `active`.
    pub const ACTIVE: TagSet = TagSet(Tag::Active.bit());

    /// A set holding `tags`.
    pub const fn of(tags: &[Tag]) -> TagSet {
        let mut bits = 0;
        let mut i = 0;
        while i < tags.len() {
            bits |= tags[i].bit();
            i += 1;
        }
        TagSet(bits)
    }

    /// This set plus `tag`.
    pub const fn with(self, tag: Tag) -> TagSet {
        TagSet(self.0 | tag.bit())
    }

    /// Whether `tag` is in the set.
    pub const fn contains(self, tag: Tag) -> bool {
        self.0 & tag.bit() != 0
    }

    /// The raw bits, for `const` comparisons in generated code.
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The tags in tier order.
    pub fn iter(self) -> impl Iterator<Item = Tag> {
        Tag::ALL.into_iter().filter(move |t| self.contains(*t))
    }
}

impl FromIterator<Tag> for TagSet {
    fn from_iter<I: IntoIterator<Item = Tag>>(iter: I) -> Self {
        iter.into_iter().fold(TagSet::EMPTY, TagSet::with)
    }
}

impl fmt::Debug for TagSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter().map(Tag::as_str)).finish()
    }
}

impl fmt::Display for TagSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Tag::as_str).collect();
        write!(f, "[{}]", names.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_names_are_the_spec_constants() {
        assert_eq!(Tag::Ready.as_str(), "ready");
        assert_eq!(Tag::Active.as_str(), "active");
        assert_eq!(Tag::Live.as_str(), "live");
    }

    #[test]
    fn unknown_tag_suggests_the_near_miss() {
        let err = Tag::parse("reday").unwrap_err();
        assert_eq!(err.suggestion, Some("ready"));
        assert!(err.to_string().contains("did you mean `ready`"));
    }

    #[test]
    fn tagset_membership() {
        let s = TagSet::of(&[Tag::Ready, Tag::Active]);
        assert!(s.contains(Tag::Ready) && s.contains(Tag::Active) && !s.contains(Tag::Live));
        assert_eq!(s.to_string(), "[ready, active]");
        assert!(TagSet::EMPTY.is_empty());
    }
}
