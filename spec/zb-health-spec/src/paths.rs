use crate::Tag;

/// The three tier paths (ZB-1.1, ZB-5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointPaths {
    /// Path of the ready tier.
    pub ready: String,
    /// Path of the active tier.
    pub active: String,
    /// Path of the live tier.
    pub live: String,
}

impl EndpointPaths {
    /// The normative ZB paths: `/health/ready`, `/health/active`, `/healthz`.
    pub fn zb() -> Self {
        Self {
            ready: "/health/ready".into(),
            active: "/health/active".into(),
            live: "/healthz".into(),
        }
    }

    /// The BE-HLTH-009 preset: `/healthz/ready` and `/healthz/live`. That
    /// document has no active tier; `/healthz/active` keeps it beside them.
    pub fn be_hlth_009() -> Self {
        Self {
            ready: "/healthz/ready".into(),
            active: "/healthz/active".into(),
            live: "/healthz/live".into(),
        }
    }

    /// The path of `tag`'s tier.
    pub fn get(&self, tag: Tag) -> &str {
        match tag {
            Tag::Ready => &self.ready,
            Tag::Active => &self.active,
            Tag::Live => &self.live,
        }
    }

    /// Mutable access to the path of `tag`'s tier.
    pub fn get_mut(&mut self, tag: Tag) -> &mut String {
        match tag {
            Tag::Ready => &mut self.ready,
            Tag::Active => &mut self.active,
            Tag::Live => &mut self.live,
        }
    }
}

impl Default for EndpointPaths {
    fn default() -> Self {
        Self::zb()
    }
}
