// The guide's pages, from `docs/guide/` (through the `guide` link in
// this crate's folder, so the packaged crate carries them): no items, only
// docs, whose Rust examples are this crate's doctests.
#![doc = include_str!("../guide/README.md")]

#[doc = include_str!("../guide/getting-started.md")]
pub mod getting_started {}
#[doc = include_str!("../guide/manifest.md")]
pub mod manifest {}
#[doc = include_str!("../guide/probes.md")]
pub mod probes {}
#[doc = include_str!("../guide/built-in-probes.md")]
pub mod built_in_probes {}
#[doc = include_str!("../guide/tiers.md")]
pub mod tiers {}
#[doc = include_str!("../guide/lifecycle.md")]
pub mod lifecycle {}
#[doc = include_str!("../guide/operating.md")]
pub mod operating {}
#[doc = include_str!("../guide/kubernetes.md")]
pub mod kubernetes {}
#[doc = include_str!("../guide/settings.md")]
pub mod settings {}
#[doc = include_str!("../guide/compiler.md")]
pub mod compiler {}
