//! Reading the Kubernetes manifests that `k8s --check` compares: every
//! node keeps its line:column, so a drift is reported where it is written.
//! The tree is the spec crate's own (`zb_health_spec::manifest::tree`, the
//! one that reads `health.yaml`); only the reader's settings differ, since
//! a Deployment file is multi-document and larger than a health manifest.

use serde_saphyr::MessageFormatter;
pub use zb_health_spec::manifest::tree::{Node, Value};

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

/// The items of `node`'s sequence `key`; none when it has no such
/// sequence.
pub fn items<'a>(node: &'a Node, key: &str) -> &'a [Node] {
    node.get(key).map(Node::items).unwrap_or_default()
}
