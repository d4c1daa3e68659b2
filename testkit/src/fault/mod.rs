//! The fault harness for the active tier's "exactly one active node"
//! under partitions, one-way loss and pauses (ZB-2.3a, ZB-4;
//! `spec/conflicts.md`): real service processes in a network
//! namespace the test creates, faults on that namespace's own loopback
//! with packet filters, processes paused and resumed with real signals,
//! and a checker that reads every node's `/health/active` history.
//!
//! * [`NetNs`]: `ip netns add`, its loopback up, and the calling thread
//!   moved into it ([`NetNs::enter`]), so every child the test starts from
//!   that thread, every port it picks and every request it sends are inside
//!   the namespace. Nothing leaves it: the faults cannot touch the
//!   machine's own loopback, and no address but 127.0.0.1 is used.
//! * Faults are `iptables` rules in one chain of the namespace's `INPUT`
//!   ([`FAULT_CHAIN`]): [`NetNs::cut`] drops the gossip between two groups
//!   of nodes in both directions, silently, as a real partition does;
//!   [`NetNs::cut_one_way`] drops one direction only; [`NetNs::loss`] drops
//!   a share of every gossip packet at random (`-m statistic`);
//!   [`NetNs::hang_tcp`] and [`NetNs::refuse_tcp`] make a dependency's port
//!   hang (dropped, so connects and queries run into their deadline) or
//!   refuse at once (a TCP reset); [`NetNs::heal`] removes them all;
//!   [`Flapping`] cuts and heals every period until dropped. `tc netem`
//!   is not used: some kernels here lack it, `iptables` works on all.
//! * [`ActivePoller`] records every node's `/health/active` answer with
//!   the instants its request was sent and answered, one thread per node so
//!   a paused node delays no other; [`ActiveHistory`] asserts the active
//!   tier's properties over the whole history and prints the offending
//!   window when one breaks. [`TierPoller`] records one path of every node
//!   with the bodies ([`Answer`]) at a kubelet's steady rate, for
//!   [`longest_run`].
//!
//! Clean-up is by drop, also when a test panics: the namespace (and with
//! it every rule) is deleted after the processes, which the test declares
//! after it and so drops first. A namespace left by a killed test run
//! (its process gone) is deleted by the next [`NetNs::new`].
//!
//! Needs root, `ip` (iproute2) and `iptables`, which `tests/run.sh`
//! installs; CI runs as root.

mod history;
mod netns;
mod poll;
mod process;

pub use history::{ActiveHistory, Answer, Sample, longest_run};
pub use netns::{COUNT_CHAIN, FAULT_CHAIN, Flapping, NetNs};
pub use poll::{ActivePoller, TierPoller};
pub use process::signal;
