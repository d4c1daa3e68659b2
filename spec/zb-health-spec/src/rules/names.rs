//! Names: what a checked name names ([`NameOf`]), R9 (a short fixed
//! identifier, ZB-3; the lifecycle's own entry names reserved) and R3 (one
//! name once in a registry, AT-1).

use super::rule::Rule;
use super::sink::Violations;
use crate::operator::MAINTENANCE_ENTRY;

/// What a checked name names. Every name the spec checks becomes a JSON
/// key, a log field, a metric label or a generated field, so R9 and R3 are
/// the same rules for all of them; only the words of the messages differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameOf {
    /// A probe: the key of its entry in `ready` and `active`.
    Probe,
    /// The manifest's `service`.
    Service,
    /// A liveness watchdog: the key of its entry in `live` (BE-HLTH-002).
    Watchdog,
    /// A declared piece of startup work (BE-HLTH-004): a field of the
    /// generated startup handles and a log field.
    StartupGate,
    /// A health group (`groups`): a named set of probes served at a path
    /// of its own.
    Group,
}

impl NameOf {
    /// The noun messages use.
    pub const fn noun(self) -> &'static str {
        match self {
            NameOf::Probe => "probe",
            NameOf::Service => "service",
            NameOf::Watchdog => "watchdog",
            NameOf::StartupGate => "startup gate",
            NameOf::Group => "health group",
        }
    }

    /// A good name of this kind, for the help texts.
    const fn example(self) -> &'static str {
        match self {
            NameOf::Probe => "database",
            NameOf::Service => "scadabridge",
            NameOf::Watchdog => "consumer",
            NameOf::StartupGate => "migrations",
            NameOf::Group => "canary",
        }
    }
}

/// The name of the entry that fails `live` while this node asks the
/// orchestrator to restart it (a probe's `restart_after`, R27). Reserved
/// (R9), as a watchdog of that name would write its key twice.
pub const RESTART_ENTRY: &str = "restart";

/// The entries the lifecycle itself puts in a tier's answer: `startup`,
/// `shutdown`, `maintenance` (on `ready` and `active`) and `restart` (on
/// `live`). Their names are reserved (R9), and `?exclude=` cannot leave
/// them out: a drain, a maintenance window or a restart request must hold
/// whoever asks.
pub const LIFECYCLE_ENTRIES: [&str; 4] = [
    STARTUP_ENTRY,
    SHUTDOWN_ENTRY,
    MAINTENANCE_ENTRY,
    RESTART_ENTRY,
];

/// Whether `name` is one of the [`LIFECYCLE_ENTRIES`].
pub fn is_lifecycle_entry(name: &str) -> bool {
    LIFECYCLE_ENTRIES.contains(&name)
}

/// R9: a probe name is a low-cardinality identifier (it becomes a JSON key,
/// a log field and a metric label): 1 to 64 ASCII letters, digits, `-`, `_`
/// or `.`.
///
/// The names of the entries the lifecycle puts in front of the probes'
/// ([`STARTUP_ENTRY`], [`SHUTDOWN_ENTRY`], [`MAINTENANCE_ENTRY`], and on
/// `live` [`RESTART_ENTRY`]) are reserved: a probe or watchdog with one of
/// them would write the same JSON key twice while the service starts,
/// drains, is in maintenance or asks for a restart.
pub fn check_name<L>(name: &str, location: L, sink: &mut Violations<L>) {
    check_name_of(NameOf::Probe, name, location, sink);
}

/// R9 for any name the spec checks ([`NameOf`]): the rule of
/// [`check_name`], with messages that say what the name names.
pub fn check_name_of<L>(of: NameOf, name: &str, location: L, sink: &mut Violations<L>) {
    const PROBE_HELP: &str = "give the probe a short fixed name such as `database`; it is the key of its entry in the JSON body";
    const IDENTIFIER_HELP: &str = "use at most 64 ASCII letters, digits, `-`, `_` or `.`; names are JSON keys and metric labels, so keep them fixed and low-cardinality (BE-HLTH-007)";
    let (noun, example) = (of.noun(), of.example());
    let (message, help) = if name.is_empty() {
        let help = match of {
            NameOf::Probe => PROBE_HELP.to_owned(),
            _ => format!("give the {noun} a short fixed name such as `{example}`"),
        };
        (format!("{noun} name is empty"), help)
    } else if name.len() > 64
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        let message = format!("{noun} name `{name}` is not a short identifier");
        (message, IDENTIFIER_HELP.to_owned())
    } else if of != NameOf::Service && is_lifecycle_entry(name) {
        let does = match of {
            NameOf::Probe => "checks",
            NameOf::Watchdog => "watches",
            NameOf::Service | NameOf::StartupGate | NameOf::Group => "does",
        };
        (
            format!("{noun} name `{name}` is reserved"),
            format!(
                "the lifecycle's own entry has this name while the service starts, drains, is in maintenance or asks for a restart; name the {noun} after what it {does}"
            ),
        )
    } else {
        return;
    };
    sink.push(Rule::ProbeName, location, message, help);
}

/// The name of the entry that holds `ready` and `active` at 503 until the
/// service's startup work is done (BE-HLTH-004). Reserved for it (R9).
pub const STARTUP_ENTRY: &str = "startup";

/// The name of the entry that turns `ready` and `active` 503 while the
/// service drains (BE-HLTH-005). Reserved for it (R9).
pub const SHUTDOWN_ENTRY: &str = "shutdown";

/// R3: probe names are unique in one registry (AT-1): the name is the key of
/// the JSON entry, so a second probe with it would hide the first.
pub fn check_unique_names<'a, L: 'a + Clone>(
    names: impl IntoIterator<Item = (&'a str, L)>,
    sink: &mut Violations<L>,
) {
    check_unique_names_of(NameOf::Probe, names, sink);
}

/// R3 for any list of names the spec checks ([`NameOf`]): watchdogs key
/// the entries of `live`, startup gates the fields of their handles.
pub fn check_unique_names_of<'a, L: 'a + Clone>(
    of: NameOf,
    names: impl IntoIterator<Item = (&'a str, L)>,
    sink: &mut Violations<L>,
) {
    let noun = of.noun();
    for (name, loc) in repeats(names) {
        sink.push(
            Rule::DuplicateName,
            loc,
            format!("{noun} name `{name}` is used twice"),
            match of {
                NameOf::Probe | NameOf::Service => crate::facts::DUPLICATE_NAME_HELP.to_owned(),
                _ => format!("each {noun} needs a name of its own; rename one of them"),
            },
        );
    }
}

/// Each name of `names` that an earlier one equals, where it is written
/// again: what R3 reports.
pub(crate) fn repeats<'a, L>(
    names: impl IntoIterator<Item = (&'a str, L)>,
) -> impl Iterator<Item = (&'a str, L)> {
    let mut seen: Vec<&str> = Vec::new();
    names.into_iter().filter(move |(name, _)| {
        let again = seen.contains(name);
        if !again {
            seen.push(name);
        }
        again
    })
}
