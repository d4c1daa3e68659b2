//! `zb-health maintenance` as a binary against a real zb-health service on
//! 127.0.0.1 (its management port and bearer token): on, read, off; a bad
//! reason or TTL refused before anything is sent; a wrong or missing
//! token.

mod common;

use std::net::SocketAddr;
use std::process::Output;
use std::sync::mpsc;
use std::time::Duration;

use common::{root, text};
use snapbox::cmd::cargo_bin;
use zb_health::lifecycle::Drain;
use zb_health::prelude::{HealthRegistry, ProbeRegistration, ProbeResult, from_fn, map_zb_health};
use zb_health::server::ZbHealthServer;
use zb_health::token::BearerToken;
use zb_health_testkit::http::request;

const TOKEN: &str = "cli-operator-token";

/// A service with one healthy ready probe, its management port on and the
/// token set: (registry, application, management).
fn service() -> (HealthRegistry, SocketAddr, SocketAddr) {
    service_with(|server| server)
}

/// [`service`] with the server's settings changed by `configure` (a
/// step-down, say).
fn service_with(
    configure: impl FnOnce(ZbHealthServer) -> ZbHealthServer + Send + 'static,
) -> (HealthRegistry, SocketAddr, SocketAddr) {
    let registry = HealthRegistry::new();
    registry
        .add(ProbeRegistration::new(
            "database",
            from_fn(|| async { Ok(ProbeResult::healthy()) }),
        ))
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let served = registry.clone();
    std::thread::spawn(move || {
        actix_web::rt::System::new().block_on(async move {
            let server = ZbHealthServer::new(
                served.clone(),
                map_zb_health(served),
                Drain::new(Duration::ZERO),
            )
            .bearer_token(BearerToken::new(TOKEN).unwrap());
            let bound = configure(server)
                .port(0)
                .management_port(Some(0))
                .bind()
                .unwrap();
            let a = bound.addresses().clone();
            tx.send((a.application[0], a.management[0])).unwrap();
            let _ = bound.run().await;
        });
    });
    let (app, management) = rx.recv().unwrap();
    (registry, app, management)
}

/// `zb-health maintenance ARGS` with `env` as its only token variables.
fn maintenance(args: &[&str], env: &[(&str, &str)]) -> Output {
    operator("maintenance", args, env)
}

/// `zb-health SUBCOMMAND ARGS` with `env` as its only token variables.
fn operator(subcommand: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = std::process::Command::new(cargo_bin!("zb-health"));
    command
        .arg(subcommand)
        .args(args)
        .current_dir(root())
        .env_remove("HEALTH_TOKEN")
        .env_remove("HEALTH_TOKEN_FILE");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap()
}

fn ready(app: SocketAddr) -> u16 {
    request(app, "GET", "/health/ready", "").unwrap().status
}

#[test]
fn maintenance_goes_on_reads_back_and_goes_off() {
    let (registry, app, management) = service();
    let url = format!("http://{management}");
    let token = [("HEALTH_TOKEN", TOKEN)];

    let on = maintenance(&[&url, "--reason", "kernel patch", "--for", "10m"], &token);
    assert_eq!(on.status.code(), Some(0), "{}", text(&on.stderr));
    let out = text(&on.stdout);
    assert!(
        out.starts_with("in maintenance: kernel patch (since "),
        "{out}"
    );
    assert_eq!(ready(app), 503);
    assert!(registry.lifecycle().maintenance().is_some());

    let read = maintenance(&[&url], &token);
    assert_eq!(text(&read.stdout), out);

    // The token from a file, as a mounted Secret gives it.
    let dir = std::env::temp_dir().join(format!("zb-maint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("token");
    std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
    let off = maintenance(
        &[&url, "--off", "--token-file", file.to_str().unwrap()],
        &[],
    );
    assert_eq!(off.status.code(), Some(0), "{}", text(&off.stderr));
    assert!(text(&off.stdout).starts_with("maintenance ended: kernel patch"));
    assert_eq!(ready(app), 200);
    let again = maintenance(&[&url, "--off"], &token);
    assert_eq!(text(&again.stdout), "not in maintenance (nothing to end)\n");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_input_is_refused_before_anything_is_sent() {
    let (registry, app, management) = service();
    let url = format!("http://{management}");
    let token = [("HEALTH_TOKEN", TOKEN)];
    for (args, field) in [
        (vec!["--reason", "patch", "--for", "0s"], "ttl"),
        (vec!["--reason", "patch", "--for", "1441m"], "ttl"),
        (vec!["--reason", "patch", "--for", "10"], "ttl"),
        (vec!["--reason", "   ", "--for", "10m"], "reason"),
    ] {
        let mut all = vec![url.as_str()];
        all.extend(&args);
        let out = maintenance(&all, &token);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).starts_with(&format!("error: {field}: ")),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    // One without the other, or with --off: a usage error.
    for args in [
        vec!["--reason", "patch"],
        vec!["--for", "10m"],
        vec!["--off", "--reason", "x", "--for", "1m"],
    ] {
        let mut all = vec![url.as_str()];
        all.extend(&args);
        assert_eq!(maintenance(&all, &token).status.code(), Some(2), "{args:?}");
    }
    assert!(registry.lifecycle().maintenance().is_none());
    assert_eq!(ready(app), 200);
}

#[test]
fn a_wrong_or_missing_token_changes_nothing() {
    let (registry, app, management) = service();
    let url = format!("http://{management}");
    let on = [&url, "--reason", "patch", "--for", "10m"];
    let wrong = maintenance(&on, &[("HEALTH_TOKEN", "not-the-token")]);
    assert_eq!(wrong.status.code(), Some(1));
    let stderr = text(&wrong.stderr);
    assert!(
        stderr.contains("answered 404") && !stderr.contains("not-the-token"),
        "{stderr}"
    );
    let none = maintenance(&on, &[]);
    assert_eq!(none.status.code(), Some(2));
    assert!(text(&none.stderr).contains("no bearer token"));
    // The application port has no controls, even with the token.
    let app_url = format!("http://{app}");
    let there = maintenance(
        &[&app_url, "--reason", "patch", "--for", "10m"],
        &[("HEALTH_TOKEN", TOKEN)],
    );
    assert_eq!(there.status.code(), Some(1));
    assert!(registry.lifecycle().maintenance().is_none());
    assert_eq!(ready(app), 200);
}

/// `zb-health step-down` against a node whose management port serves the
/// step-down (an in-memory cluster view of two nodes): the role moves to
/// the other node in this node's view, and comes back with `--off`; a
/// node without a cluster answers as an unknown path.
#[test]
fn step_down_hands_the_role_over_and_back() {
    use std::sync::Arc;
    use zb_health::cluster::{
        ClusterActiveNode, ClusterState, ClusterView, InMemoryClusterView, Member, MemberStatus,
        StepDown,
    };
    let view = Arc::new(InMemoryClusterView::with_state(ClusterState {
        self_address: "10.0.0.1:7000".into(),
        members: vec![
            Member::new("10.0.0.1:7000", MemberStatus::Up, 1),
            Member::new("10.0.0.2:7000", MemberStatus::Up, 2),
        ],
    }));
    let active = || {
        ClusterActiveNode::unscoped()
            .decide(&view.state().unwrap())
            .active_node()
            .map(str::to_owned)
    };
    let stepping = view.clone();
    let (_registry, _app, management) =
        service_with(move |server| server.step_down(StepDown::new(stepping)));
    let url = format!("http://{management}");
    let step_down = |args: &[&str]| operator("step-down", args, &[("HEALTH_TOKEN", TOKEN)]);
    let on = step_down(&[&url, "--reason", "kernel patch", "--for", "10m"]);
    assert_eq!(on.status.code(), Some(0), "{}", text(&on.stderr));
    assert!(
        text(&on.stdout).starts_with("stepped down: kernel patch (since "),
        "{}",
        text(&on.stdout)
    );
    assert_eq!(active().as_deref(), Some("10.0.0.2:7000"));
    let off = step_down(&[&url, "--off"]);
    assert!(text(&off.stdout).starts_with("step-down ended: kernel patch"));
    assert_eq!(active().as_deref(), Some("10.0.0.1:7000"));
    // A node whose port serves no step-down: the answer of an unknown path.
    let (_registry, _app, management) = service();
    let there = step_down(&[
        &format!("http://{management}"),
        "--reason",
        "patch",
        "--for",
        "1m",
    ]);
    assert_eq!(there.status.code(), Some(1));
    assert!(text(&there.stderr).contains("answered 404"));
}
