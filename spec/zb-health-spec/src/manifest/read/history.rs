//! `history`: the history endpoint and the health page, each
//! rule the shared function of `crate::rules` (R26, R6 on the paths).

use super::super::tree::Value;
use super::{Fields, Reader};
use crate::manifest::{
    DEFAULT_HISTORY_PATH, DEFAULT_HISTORY_UI_PATH, HistoryDecl, Located, Location,
};
use crate::{
    EndpointPaths,
    manifest::GroupDecl,
    rules::{check_history_paths, check_history_port},
};

/// The keys of `history`.
const HISTORY_KEYS: [&str; 4] = ["ui", "application_port", "path", "ui_path"];

impl Reader {
    /// `history`, read after `management` (R26 needs its port), `endpoints`
    /// and `groups` (R6 compares the paths). Its presence turns it on, an
    /// empty mapping (or none) included.
    pub(super) fn history(
        &mut self,
        top: &Fields,
        management_port: bool,
        paths: &EndpointPaths,
        groups: &[GroupDecl],
    ) -> Option<HistoryDecl> {
        let field = top.get("history")?;
        // `history: ~` is on, with every default.
        let fields = match field.node.value {
            Value::Null => None,
            _ => Some(self.section(top, "history", &HISTORY_KEYS)?),
        };
        let flag = |r: &mut Self, key| {
            let flag = fields.as_ref().and_then(|f| r.value(f, key, Self::boolean));
            flag.is_some_and(|b| b.value)
        };
        let path = |r: &mut Self, key, default: &str| {
            let path = fields.as_ref().and_then(|f| r.value(f, key, Self::string));
            path.unwrap_or_else(|| Located::new(default.to_owned(), field.key_loc))
        };
        let decl = HistoryDecl {
            at: field.key_loc,
            ui: flag(self, "ui"),
            application_port: flag(self, "application_port"),
            path: path(self, "path", DEFAULT_HISTORY_PATH),
            ui_path: path(self, "ui_path", DEFAULT_HISTORY_UI_PATH),
        };
        check_history_port(
            management_port,
            decl.application_port,
            decl.at,
            &mut self.sink,
        );
        let mut served: Vec<(&str, &str, Location)> =
            vec![("history", decl.path.value.as_str(), decl.path.location)];
        if decl.ui {
            served.push(("ui", decl.ui_path.value.as_str(), decl.ui_path.location));
        }
        let groups: Vec<&str> = groups.iter().map(|g| g.path.value.as_str()).collect();
        check_history_paths(paths, &groups, &served, &mut self.sink);
        Some(decl)
    }
}
