//! `history`: the history endpoint and the health page, each
//! rule the shared function of `crate::rules` (R26, R6 on the paths).

use super::super::tree::Value;
use super::{Fields, Reader};
use crate::manifest::{HistoryDecl, Located, Location};
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
        let mut decl = HistoryDecl {
            at: field.key_loc,
            ui: false,
            application_port: false,
            path: Located::new(
                crate::manifest::DEFAULT_HISTORY_PATH.to_owned(),
                field.key_loc,
            ),
            ui_path: Located::new(
                crate::manifest::DEFAULT_HISTORY_UI_PATH.to_owned(),
                field.key_loc,
            ),
        };
        if !matches!(field.node.value, Value::Null) {
            let mut fields = self.mapping("`history`", field.node, &HISTORY_KEYS)?;
            fields.path = Some("history.".into());
            let mut flag = |key| {
                self.value(&fields, key, Self::boolean)
                    .is_some_and(|b| b.value)
            };
            decl.ui = flag("ui");
            decl.application_port = flag("application_port");
            if let Some(p) = self.value(&fields, "path", Self::string) {
                decl.path = p;
            }
            if let Some(p) = self.value(&fields, "ui_path", Self::string) {
                decl.ui_path = p;
            }
        }
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
