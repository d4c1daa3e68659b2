//! The `lifecycle` section: startup gates, watchdogs and the drain, with the
//! orchestrator's grace period for rule R18.

use std::time::Duration;

use super::super::tree::Node;
use super::{Fields, Reader};
use crate::manifest::{LifecycleDecl, Located, WatchdogDecl};
use crate::{
    NameOf,
    rules::{check_drain, check_name_of, check_unique_names_of, check_watchdog_deadline},
};

/// The keys of `lifecycle`.
const LIFECYCLE_KEYS: [&str; 5] = [
    "startup_gates",
    "watchdogs",
    "drain_delay",
    "shutdown_timeout",
    "exit_on_stall",
];
/// The keys of one watchdog.
const WATCHDOG_KEYS: [&str; 2] = ["name", "deadline"];

impl Reader {
    /// `lifecycle`, then R18 over its drain and `grace_period`.
    pub(super) fn lifecycle(
        &mut self,
        top: &Fields,
        grace_period: Option<Located<Duration>>,
    ) -> LifecycleDecl {
        let mut decl = LifecycleDecl::default();
        if let Some(section) = self.section(top, "lifecycle", &LIFECYCLE_KEYS) {
            let gates = self.value(&section, "startup_gates", Self::startup_gates);
            decl.startup_gates = gates.unwrap_or_default();
            let watchdogs = self.value(&section, "watchdogs", Self::watchdogs);
            decl.watchdogs = watchdogs.unwrap_or_default();
            decl.drain_delay = self.value(&section, "drain_delay", Self::duration);
            decl.shutdown_timeout = self.value(&section, "shutdown_timeout", Self::duration);
            decl.exit_on_stall = self.value(&section, "exit_on_stall", Self::boolean);
        }
        let [delay, stop, grace] =
            [decl.drain_delay, decl.shutdown_timeout, grace_period].map(|d| d.map(Located::pair));
        check_drain(delay, stop, grace, &mut self.sink);
        decl
    }

    /// A list of names (R15 otherwise), each a short identifier (R9), none
    /// twice (R3).
    fn startup_gates(&mut self, what: &str, node: &Node) -> Option<Vec<Located<String>>> {
        let help = "write the names of the startup work, e.g. `[migrations, warm-cache]`";
        let items = self.list(what, "a list of names", node, help)?;
        let gates: Vec<Located<String>> = items
            .iter()
            .filter_map(|item| self.string("a startup gate", item))
            .collect();
        self.names(NameOf::StartupGate, &gates);
        Some(gates)
    }

    /// A list of `{ name, deadline }` (both required, R11).
    fn watchdogs(&mut self, what: &str, node: &Node) -> Option<Vec<WatchdogDecl>> {
        let help = "write one `- { name: consumer, deadline: 30s }` item per loop";
        let items = self.list(what, "a list of watchdogs", node, help)?;
        let mut watchdogs = Vec::new();
        let mut names = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let label = format!("watchdog #{}", index + 1);
            let Some(fields) = self.mapping(&label, item, &WATCHDOG_KEYS) else {
                continue;
            };
            let missing = (
                format!("{label} has no `name`"),
                "add `name: <short-id>`; it names the loop's entry in `live`",
            );
            let name = self.required(&fields, "name", missing, Self::string);
            let shown_name = name.as_ref().map_or(label, |n| n.value.clone());
            let missing = (
                format!("watchdog `{shown_name}` has no `deadline`"),
                "add `deadline: 30s`, the longest time one iteration of the loop may take",
            );
            let deadline = self.required(&fields, "deadline", missing, |r, _, node| {
                let what = format!("`deadline` of watchdog `{shown_name}`");
                let d = r.duration(&what, node)?;
                check_watchdog_deadline(&shown_name, d.value, d.location, &mut r.sink);
                Some(d)
            });
            if let Some(n) = &name {
                names.push(n.clone());
            }
            if let (Some(name), Some(deadline)) = (name, deadline) {
                watchdogs.push(WatchdogDecl { name, deadline });
            }
        }
        self.names(NameOf::Watchdog, &names);
        Some(watchdogs)
    }

    /// R9 for each name and R3 over the list.
    fn names(&mut self, of: NameOf, names: &[Located<String>]) {
        for n in names {
            check_name_of(of, &n.value, n.location, &mut self.sink);
        }
        check_unique_names_of(of, names.iter().map(Located::text), &mut self.sink);
    }
}
