//! The executor: runs a tier's probes, every one concurrently, each under
//! its deadline and a panic guard, within the registry's in-flight bound
//! (AT-2, AT-3, AT-4), and obtains each probe's result under its execution
//! policy (BE-HLTH-006): single-flight, the result cache, background probes.
//!
//! It owns each running probe's state (its flight, its last result, its
//! schedule, its log state) in a `ProbeRuntime` that the probe table
//! holds; observation ([`crate::observe`]) is a leaf it hands each run's
//! result to.
//!
//! # Single-flight (always on)
//!
//! Every run of a probe is claimed by the request that starts it, in the
//! probe's state (`Slot::run`, one `Run`), so every other request for the
//! probe waits for that run's result instead of starting one. The
//! requests that wait share the run's `Crew`: their count, the run's
//! flight once it has one, the run's entry once it ended, and one
//! `Notify` that wakes them at each of those changes. A run that nobody
//! waits on (nearly every run) makes no crew.
//!
//! * **The first poll is the fast path.** The request that
//!   claims a run polls the check once, at once, with the probe thread's
//!   runtime entered and under the panic guard, after taking an in-flight
//!   slot without waiting (one atomic). A check that answers then (nearly
//!   every probe on nearly every request) costs no deadline timer, no
//!   shared future, no task and no thread hop; a request that arrives
//!   during that poll (the check blocks its thread) gets the entry from
//!   the crew at its end, or ends the run at the deadline as a flight's
//!   waiter does (below), and the poll's late result counts for nothing.
//! * **A run that waits becomes a *flight*:** a `futures_util`
//!   [`Shared`](futures_util::future::Shared) future holding the in-flight
//!   slot, the deadline and the panic guard around the rest of the check.
//!   The crew keeps only a *weak* reference to it; every request that
//!   wants the run's result upgrades it and awaits a strong clone. The
//!   flight's work is spawned at once on the probe thread, where the first
//!   poll registered its timers and I/O (an actix worker is a
//!   single-threaded runtime: a probe woken only by a worker whose handler
//!   blocks its thread would stall every port), so it finishes on its own
//!   time whichever runtime asked, and however blocked that runtime is
//!   (BE-HLTH-006: a handler that blocks an application worker cannot
//!   stall the management port's answer). Every waiter, on any runtime,
//!   only waits for the result. Two workers asking at once share one run,
//!   because the state lives in the registry they share, not in a runtime.
//!   A registry built with
//!   [`probes_on_caller_runtime`](crate::registry::HealthRegistryBuilder::probes_on_caller_runtime)
//!   keeps the whole flight on the runtime of the request that started it,
//!   for tests on tokio's paused clock.
//! * **Nothing abandoned.** When the last waiter drops, the last strong
//!   reference goes, the flight (and the probe's future in it, or its task
//!   on the probe thread, which is aborted) is dropped, which cancels it.
//!   The run is retired only when the execution's future is really gone
//!   (`Retire`): an abort takes effect later, on the probe thread, so a
//!   request that finds the flight abandoned but not yet dropped waits for
//!   that (within its deadline) before it starts afresh. So a hung
//!   dependency has at most **one** execution alive, whatever the request
//!   rate, and none once nobody is waiting.
//! * **Deadline.** The flight runs under the probe's deadline, counted from
//!   its start. A late joiner therefore waits at most the *remaining* time
//!   of the flight it joins, never longer than its own deadline would
//!   allow, and gets that flight's answer (possibly `timed out` after a
//!   short wait). Starting a second execution for the late joiner instead
//!   would break "at most one in flight" exactly when a dependency hangs.
//! * **Bound and panics inside.** The in-flight slot (`max_in_flight`) is
//!   taken before the first poll, which may already open a connection, and
//!   kept by the flight, so one run holds one slot however many requests
//!   wait on it, given back only after the check's future is dropped
//!   (`Then`); with no slot free, the run is a flight that waits for one
//!   (within its deadline) before its first poll. The `catch_unwind` guard
//!   is around every poll, so a panicking probe never poisons the shared
//!   future; a first poll that unwinds outside it (`ClaimGuard`) ends its
//!   run with the probe's failure, so the next request runs it again.
//!
//! Every waiter also keeps the flight's deadline on its *own* runtime and
//! answers `timed out` at it whatever the flight does: a probe that blocks
//! the probe thread itself (synchronous code in an `async` check) cannot
//! stretch any answer past its deadline either. A waiter whose timer
//! notices the deadline before the flight's own (on another runtime, its
//! timer may fire first) ends the run there as a timeout, **once for
//! all** (`Crew::ended`): the hysteresis, the shared comparison and the
//! log see that run exactly once, whoever noticed, and every waiter
//! answers with its entry. Otherwise a waiter would answer a raw
//! `timed out` and, as the flight's last waiter, cancel the run before it
//! was recorded: a hung shared dependency would never be published as
//! failing, and would not fail open (BE-HLTH-003).
//!
//! # Transitions before the start
//!
//! While a startup gate is pending, the ready tier answers 503 `starting`
//! whatever the probes say, and a dependency that is not there yet (a table
//! the migrations create, a cluster still forming) is part of a normal
//! start. Such runs are measured (status gauge, duration) but are not
//! transitions: nothing is logged or counted as a failure until the gates
//! open (BE-HLTH-008, see [`crate::observe`]).
//!
//! # Result cache (`cache`)
//!
//! A healthy result younger than `cache` is served without running the
//! probe; the entry is the original one, `durationMs` included. A result
//! that is not healthy (a failure, a timeout, a degraded answer) is never
//! served from the cache and clears it: the next request runs the probe
//! again, so a two-second blip costs two seconds, not `cache`. A failing or
//! hung dependency is still not hit by every request: single flight joins
//! every concurrent request to one run, so it sees at most one execution
//! at a time (see `spec/probes.md` and `spec/conflicts.md`). `cache` is
//! below the orchestrator's detection time (R19), so a cached healthy
//! answer hides an outage no longer than the orchestrator would miss it.
//!
//! # Hysteresis (`failure_threshold`, `failing_for`, `success_threshold`)
//!
//! Each run's raw result passes through the probe's hysteresis state
//! (`hysteresis`) before it becomes the entry, the cached or background
//! result and the input of the transition log, so a held-back failure is
//! no transition (BE-HLTH-008). The hold is bounded by R20, and counted in
//! the probe's run periods, not runs: `refresh`, else the
//! readiness period behind the registry's detection time, which the table
//! gives the executor (`Executor::set_detection_time`).
//!
//! # Background probes (`refresh`)
//!
//! The probe runs on its own schedule (one run every `refresh`, counted
//! from each run's start; a run longer than that delays the next) and a
//! request only reads the latest result: it never waits and never starts
//! a run. Every outcome is recorded, a timeout included. A result older
//! than `max_staleness` (default: twice `refresh` plus the deadline,
//! [`background_max_age`](zb_health_spec::detection::background_max_age); below the detection time, R19) is
//! reported with the probe's failure status and the fixed description
//! `stale: no result for over N ms`. Before the first result, a request
//! gets the failure status and the description `no result yet`: the honest
//! answer, and a readiness probe simply retries. Both entries have the
//! outcome [`EntryOutcome::TimedOut`](crate::report::EntryOutcome::TimedOut) (no result within the bound) and a
//! zero duration (nothing ran for this request).
//!
//! The schedule is a tokio task on the probe thread, started when the
//! probe is added (at `install`, for a manifest), so the first answer
//! after the startup gates open is already a measured one. With
//! `probes_on_caller_runtime` it starts on the runtime of the first
//! request that reads the probe instead (a runtime always exists there;
//! `add` may run before any), and if that runtime shuts down, the next
//! request starts it again on its own. The task holds only weak references between runs and
//! a stop signal owned by the registration, so it ends as soon as the
//! registration is removed or replaced or the registry is dropped (a run
//! under way finishes first, within its deadline); it never keeps either
//! alive.
//!
//! # Parts
//!
//! From the bottom up: `descriptions` (fixed entry texts) and
//! `hysteresis` (a probe's threshold state); `runtime` (a registered probe
//! as it runs: its facts, its run under way and kept result, the entries it
//! gives without a run); `run` (what every run shares, the `Executor`
//! handle and the in-flight bound; the probe thread; a request's turn at a
//! probe: the claim, the first poll, the flight and its waiters, the run's
//! end, recorded once); `schedule` (background probes); `tier` (a tier's
//! report, each probe's entry under its policy, and the executor's
//! settings). A request for an uncached tier whose probes answer at their
//! first poll, with no threshold, runs code of `tier`, `run` and `runtime`
//! only (the hysteresis is entered only with a threshold set).

mod descriptions;
mod hysteresis;
mod run;
mod runtime;
mod schedule;
mod tier;

#[cfg(test)]
mod tests;

pub(crate) use run::{Executor, Runs, spawn_on_probe_thread};
pub(crate) use runtime::ProbeRuntime;
pub(crate) use tier::versions;
