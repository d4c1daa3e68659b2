//! The health page (`spec/history.md`): one self-contained HTML
//! document, inline CSS and script only, that reads the history document
//! (`spec/health-history.schema.json`) from the sibling path `history`.
//! zb-health serves it at `/health/ui`, the CLI's dashboard at `/ui`.

/// The page, embedded at build time: no CDN, no web font, no build step.
pub const PAGE: &str = include_str!("page.html");
