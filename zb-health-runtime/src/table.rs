//! The probe table: every registered probe, by tier, and the handles that
//! replace or remove one. Registrations are validated here, all or none:
//! each against the spec rules, their names against each other (R3),
//! their deadlines and policies against the orchestrator's timeout and
//! detection time (R5, R19, R20), their dependencies against the table
//! (R21, R22). A new probe is handed to the executor, which starts a
//! background probe's schedule at once; the table itself never runs a
//! check. It also links each probe to its dependencies by name and
//! tells which tiers keep their results, so an answer may be served
//! again.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};
use std::time::Duration;

use zb_health_spec::detection::DEFAULT_DETECTION_TIME;
use zb_health_spec::{
    Rule, Tag, Violations,
    rules::{Dependent, check_dependencies, check_timeout, check_unique_names},
};

use crate::executor::{Executor, ProbeRuntime};
use crate::registration::{ProbeRegistration, RegistryError};

/// A tier's probes, precomputed at registration so a request does no tag
/// filtering.
pub(crate) type TierTable = Arc<[Arc<ProbeRuntime>]>;

/// One row: the probe's runtime and the id its handle names it by.
struct Row {
    id: u64,
    probe: Arc<ProbeRuntime>,
}

struct State {
    all: Vec<Row>,
    ready: TierTable,
    active: TierTable,
    /// Whether every probe of the tier keeps its result (a cache or a
    /// schedule), so an answer of the tier may be served again.
    ready_kept: bool,
    active_kept: bool,
    next_id: u64,
    /// The orchestrator's probe timeout, once known. Under the same lock as
    /// the probes, so no `add` can slip in between the check of the
    /// registered deadlines and the setting (R5 at registration).
    orchestrator_timeout: Option<Duration>,
    /// The orchestrator's detection time, once known: no cached or
    /// background result may reach it (R19). Under the same lock, for the
    /// same reason.
    detection_time: Option<Duration>,
}

impl State {
    fn rebuild_tiers(&mut self) {
        let table = |tag| {
            self.all
                .iter()
                .filter(|r| r.probe.tags.contains(tag))
                .map(|r| r.probe.clone())
                .collect()
        };
        self.ready = table(Tag::Ready);
        self.active = table(Tag::Active);
        // A dependent follows probes perhaps of another tier: never kept.
        let kept = |t: &TierTable| {
            !t.is_empty()
                && t.iter()
                    .all(|p| p.keeps_results() && p.depends_on.is_empty())
        };
        self.ready_kept = kept(&self.ready);
        self.active_kept = kept(&self.active);
        // Dependencies are links by name: a replaced or removed probe
        // is found again, or no longer, at every change of the table.
        for row in &self.all {
            row.probe
                .resolve_dependencies(self.all.iter().map(|r| &r.probe));
        }
    }
}

/// The probes of one registry.
pub(crate) struct ProbeTable {
    state: RwLock<State>,
    /// Starts each background probe's schedule as it is added.
    executor: Executor,
}

impl State {
    /// The detection time R19 and R20 check against: the one set, else
    /// [`DEFAULT_DETECTION_TIME`] (the one `zb-health k8s` emits for the
    /// default drain delay), so no registry accepts an unbounded age.
    fn checked_detection(&self) -> Duration {
        self.detection_time.unwrap_or(DEFAULT_DETECTION_TIME)
    }
}

impl ProbeTable {
    /// An empty table; the registry's settings come through their setters
    /// ([`HealthRegistryBuilder::apply`](crate::registry::HealthRegistryBuilder::apply)).
    pub(crate) fn new(executor: Executor) -> Self {
        let empty: TierTable = Arc::from(Vec::new());
        Self {
            state: RwLock::new(State {
                all: Vec::new(),
                ready: empty.clone(),
                active: empty,
                ready_kept: false,
                active_kept: false,
                next_id: 0,
                orchestrator_timeout: None,
                detection_time: None,
            }),
            executor,
        }
    }

    /// See `HealthRegistry::set_orchestrator_timeout`.
    pub(crate) fn set_orchestrator_timeout(&self, timeout: Duration) -> Result<(), RegistryError> {
        let mut state = self.write();
        let mut sink = Violations::new();
        match state.orchestrator_timeout {
            Some(set) if set == timeout => return Ok(()),
            Some(set) => sink.push(
                Rule::Duration,
                (),
                format!(
                    "the registry's orchestrator timeout is already {} ms; refusing {} ms",
                    set.as_millis(),
                    timeout.as_millis()
                ),
                "one process answers one orchestrator: make every manifest installed into this registry state the same `orchestrator.timeout`",
            ),
            None => {
                // A stated deadline must fit; a default one follows the
                // timeout (`retimed`), so it always does.
                for r in state.all.iter().filter(|r| r.probe.timeout_stated) {
                    check_timeout(&r.probe.name, r.probe.timeout, Some(timeout), (), &mut sink);
                }
            }
        }
        sink.into_result()?;
        state.orchestrator_timeout = Some(timeout);
        let mut retimed = false;
        for row in &mut state.all {
            if let Some(probe) = row.probe.retimed(timeout) {
                row.probe = Arc::new(probe);
                retimed = true;
            }
        }
        if retimed {
            state.rebuild_tiers();
        }
        Ok(())
    }

    /// See `HealthRegistry::set_detection_time`.
    pub(crate) fn set_detection_time(&self, detection: Duration) -> Result<(), RegistryError> {
        let mut state = self.write();
        match state.detection_time {
            // The shortest wins: the orchestrator notices within it.
            Some(set) if set <= detection => return Ok(()),
            // The first one set replaces the default; every probe fits a
            // time no shorter than the default already.
            None if DEFAULT_DETECTION_TIME <= detection => {
                state.detection_time = Some(detection);
                self.executor.set_detection_time(detection);
                return Ok(());
            }
            _ => {}
        }
        let mut sink = Violations::new();
        for r in &state.all {
            r.probe.check_detection(detection, &mut sink);
        }
        sink.into_result()?;
        state.detection_time = Some(detection);
        self.executor.set_detection_time(detection);
        Ok(())
    }

    pub(crate) fn detection_time(&self) -> Option<Duration> {
        self.read().detection_time
    }

    pub(crate) fn orchestrator_timeout(&self) -> Option<Duration> {
        self.read().orchestrator_timeout
    }

    /// The one place registrations are validated and stored, all or none.
    /// With `replacing`, the single registration takes that probe's slot.
    pub(crate) fn commit(
        self: &Arc<Self>,
        registrations: Vec<ProbeRegistration>,
        replacing: Option<u64>,
    ) -> Result<Vec<RegistrationHandle>, RegistryError> {
        let mut state = self.write();
        let slot = match replacing {
            Some(id) => Some(state.all.iter().position(|r| r.id == id).ok_or_else(|| {
                RegistryError::Gone {
                    name: registrations.first().map_or("?", |r| r.name()).to_owned(),
                }
            })?),
            None => None,
        };
        let mut sink = Violations::new();
        for r in &registrations {
            r.settings.check(
                &r.name,
                state.orchestrator_timeout,
                Some(state.checked_detection()),
                &mut sink,
            );
        }
        check_unique_names(
            state
                .all
                .iter()
                .filter(|r| Some(r.id) != replacing)
                .map(|r| (&*r.probe.name, ()))
                .chain(registrations.iter().map(|r| (r.name(), ()))),
            &mut sink,
        );
        check_new_dependencies(&state.all, replacing, &registrations, &mut sink);
        sink.into_result()?;
        let mut handles = Vec::with_capacity(registrations.len());
        for r in registrations {
            let id = state.next_id;
            state.next_id += 1;
            let probe = Arc::new(ProbeRuntime::new(r, state.orchestrator_timeout));
            self.executor.start(&probe);
            handles.push(RegistrationHandle {
                table: Arc::downgrade(self),
                id,
                name: probe.name.clone(),
            });
            let row = Row { id, probe };
            match slot {
                Some(pos) => state.all[pos] = row,
                None => state.all.push(row),
            }
        }
        state.rebuild_tiers();
        Ok(handles)
    }

    fn remove(&self, id: u64) -> bool {
        let mut state = self.write();
        let before = state.all.len();
        state.all.retain(|r| r.id != id);
        let removed = state.all.len() != before;
        if removed {
            state.rebuild_tiers();
        }
        removed
    }

    /// The registered probe names, in registration order.
    pub(crate) fn names(&self) -> Vec<Arc<str>> {
        self.read()
            .all
            .iter()
            .map(|r| r.probe.name.clone())
            .collect()
    }

    /// Every registered probe, in registration order.
    pub(crate) fn all(&self) -> Vec<Arc<ProbeRuntime>> {
        self.read().all.iter().map(|r| r.probe.clone()).collect()
    }

    /// The probe registered as `name`.
    pub(crate) fn find(&self, name: &str) -> Option<Arc<ProbeRuntime>> {
        self.read()
            .all
            .iter()
            .find(|r| &*r.probe.name == name)
            .map(|r| r.probe.clone())
    }

    /// The probes of `tier`, as the executor will run them; `None` for
    /// `live`, which carries none (ZB-1.3).
    pub(crate) fn tier(&self, tier: Tag) -> Option<TierTable> {
        let state = self.read();
        match tier {
            Tag::Ready => Some(state.ready.clone()),
            Tag::Active => Some(state.active.clone()),
            Tag::Live => None,
        }
    }

    /// [`tier`](Self::tier), only when every probe of it keeps its result.
    pub(crate) fn tier_if_kept(&self, tier: Tag) -> Option<TierTable> {
        let state = self.read();
        match tier {
            Tag::Ready if state.ready_kept => Some(state.ready.clone()),
            Tag::Active if state.active_kept => Some(state.active.clone()),
            _ => None,
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        // A panic while holding the lock cannot leave `State` half-written
        // (every mutation is a push or a swap), so poisoning is ignored.
        crate::sync::read(&self.state)
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        crate::sync::write(&self.state)
    }
}

/// R21 and R22 for a commit: the new registrations' dependencies name
/// probes registered before or with them, and the table after the commit
/// has no cycle. A kept probe's dependency that was removed since is left
/// out (it no longer gates anything) rather than refusing the commit.
fn check_new_dependencies(
    all: &[Row],
    replacing: Option<u64>,
    registrations: &[ProbeRegistration],
    sink: &mut Violations<()>,
) {
    if registrations.iter().all(|r| r.depends_on.is_empty())
        && all.iter().all(|r| r.probe.depends_on.is_empty())
    {
        return;
    }
    let kept: Vec<&Row> = all.iter().filter(|r| Some(r.id) != replacing).collect();
    let names: Vec<&str> = kept
        .iter()
        .map(|r| &*r.probe.name)
        .chain(registrations.iter().map(|r| r.name()))
        .collect();
    let dependents: Vec<Dependent<'_, ()>> = kept
        .iter()
        .map(|r| {
            let name = &*r.probe.name;
            let depends_on = r
                .probe
                .depends_on
                .iter()
                .map(|d| (&**d, ()))
                .filter(|(d, _)| names.contains(d))
                .collect();
            Dependent {
                name: Some(name),
                label: name,
                depends_on,
            }
        })
        .chain(registrations.iter().map(|r| Dependent {
            name: Some(r.name()),
            label: r.name(),
            depends_on: r.depends_on.iter().map(|d| (&**d, ())).collect(),
        }))
        .collect();
    check_dependencies(&dependents, sink);
}

/// The undo handle of one registration (AT-1).
///
/// Use it to **replace** a probe (e.g. after a cluster re-join) or to remove
/// it when the thing it watches is torn down, never to signal "out of
/// service": an empty tier is healthy, so removing a failing probe would
/// turn "failing" into "all clear". Dropping the handle keeps the probe.
#[derive(Debug)]
pub struct RegistrationHandle {
    table: Weak<ProbeTable>,
    id: u64,
    name: Arc<str>,
}

impl RegistrationHandle {
    /// The name the probe was registered under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Replaces the probe in place, keeping its position in the report.
    /// On error the old probe stays and the handle is given back.
    pub fn replace(
        self,
        registration: ProbeRegistration,
    ) -> Result<RegistrationHandle, (RegistryError, RegistrationHandle)> {
        let Some(table) = self.table.upgrade() else {
            let name = self.name.to_string();
            return Err((RegistryError::Gone { name }, self));
        };
        match table.commit(vec![registration], Some(self.id)) {
            Ok(mut handles) => Ok(handles.remove(0)),
            Err(e) => Err((e, self)),
        }
    }

    /// Removes the probe, for teardown of what it watches. Returns whether
    /// it was still registered.
    pub fn remove(self) -> bool {
        self.table.upgrade().is_some_and(|t| t.remove(self.id))
    }
}

impl std::fmt::Debug for ProbeTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}
