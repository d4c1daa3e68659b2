//! `zb-health maintenance URL` and `zb-health step-down URL`: the operator
//! controls of a pod's management port (`/health/maintenance`,
//! `spec/lifecycle.md`; `/health/step-down`, `spec/gate.md`).
//!
//! The reason and the TTL are checked here with the rules the server
//! applies (`zb_health_spec::operator`), so a typo is refused before
//! anything is sent. The token comes from `HEALTH_TOKEN`,
//! `HEALTH_TOKEN_FILE` or `--token-file`, never from an argument, where it
//! would show in the shell's history and the process list.

use serde_json::{Value, json};
use zb_health_spec::operator::{check_reason, check_ttl};

use crate::args::OperatorArgs;
use crate::input::{Failure, unusable};
use crate::probe::{self, Request};

/// One of the operator controls: where it is served, the key of its window
/// in the answers, and how a window reads.
pub struct Control {
    path: &'static str,
    key: &'static str,
    on: &'static str,
    off: &'static str,
    ended: &'static str,
}

/// Maintenance mode.
pub const MAINTENANCE: Control = Control {
    path: "/health/maintenance",
    key: "maintenance",
    on: "in maintenance",
    off: "not in maintenance",
    ended: "maintenance ended",
};

/// The step-down of the active role.
pub const STEP_DOWN: Control = Control {
    path: "/health/step-down",
    key: "stepDown",
    on: "stepped down",
    off: "not stepped down",
    ended: "step-down ended",
};

/// Runs `zb-health maintenance` or `zb-health step-down`.
pub fn run(args: &OperatorArgs, control: &Control) -> Result<(), Failure> {
    let mut url = probe::parse_url(&args.url).map_err(unusable)?;
    if url.target == "/" {
        url.target = control.path.to_owned();
    }
    let token = token(args, &|name| std::env::var(name).ok()).map_err(unusable)?;
    let (method, body) = match (&args.reason, &args.ttl, args.off) {
        (_, _, true) => ("DELETE", String::new()),
        (Some(reason), Some(ttl), false) => {
            let reason = check_reason(Some(reason)).map_err(unusable)?;
            check_ttl(Some(ttl)).map_err(unusable)?;
            ("POST", json!({"reason": reason, "ttl": ttl}).to_string())
        }
        _ => ("GET", String::new()),
    };
    let request = Request {
        method,
        accept: "application/json",
        headers: vec![("Authorization", format!("Bearer {token}"))],
        body,
    };
    let answer = probe::send(&url, &request, args.timeout, args.timeout).map_err(|f| {
        eprintln!("{}: {}", args.url, f.describe());
        Failure::Failed
    })?;
    let document: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
    let refused = match answer.code {
        200 => {
            println!("{}", summary(&document, control));
            return Ok(());
        }
        400 => format!(
            "the server refused {}: {}",
            document["error"]["field"].as_str().unwrap_or("the request"),
            document["error"]["message"]
                .as_str()
                .unwrap_or("bad request")
        ),
        404 => format!(
            "{} answered 404: not a management port with this operator control, or a wrong token (a wrong token gets the answer of an unknown path)",
            args.url
        ),
        code => format!("{} answered HTTP {code} {}", args.url, answer.reason),
    };
    eprintln!("error: {refused}");
    Err(Failure::Failed)
}

/// The token: `--token-file`, else `HEALTH_TOKEN`, else the file
/// `HEALTH_TOKEN_FILE` names; trimmed, as the server trims it.
fn token(args: &OperatorArgs, var: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let from_file = |path: &std::path::Path| {
        std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the token file `{}`: {e}", path.display()))
    };
    let token = match (
        &args.token_file,
        var("HEALTH_TOKEN"),
        var("HEALTH_TOKEN_FILE"),
    ) {
        (Some(path), _, _) => from_file(path)?,
        (None, Some(token), _) => token,
        (None, None, Some(path)) => from_file(path.as_ref())?,
        (None, None, None) => {
            return Err(
                "no bearer token: set HEALTH_TOKEN or HEALTH_TOKEN_FILE, or pass --token-file (never the token itself as an argument)".into(),
            );
        }
    };
    let token = token.trim().to_owned();
    if token.is_empty() || token.bytes().any(|b| !b.is_ascii_graphic()) {
        return Err("the bearer token is empty or not one word of visible ASCII".into());
    }
    Ok(token)
}

/// One line: the open window, the one that ended, or none.
fn summary(document: &Value, control: &Control) -> String {
    let window = |w: &Value| {
        format!(
            "{} (since {}, until {})",
            w["reason"].as_str().unwrap_or("?"),
            w["since"].as_str().unwrap_or("?"),
            w["until"].as_str().unwrap_or("?")
        )
    };
    match (&document[control.key], &document["ended"]) {
        (Value::Object(_), _) => format!("{}: {}", control.on, window(&document[control.key])),
        (_, Value::Object(_)) => format!("{}: {}", control.ended, window(&document["ended"])),
        (_, Value::Null) if document.get("ended").is_some() => {
            format!("{} (nothing to end)", control.off)
        }
        _ => control.off.into(),
    }
}
