//! The README as a new user reads it: its dependency block ("Add it to
//! your service"), the tour's `health.yaml` (step 2) and the tour's Rust
//! (steps 3 to 5, in order) are assembled into a crate **outside** this
//! workspace, whose only path dependency is the library (the `version`
//! of the block becomes the checkout's path: the crate is not published
//! yet). It must build, start, and serve its tiers with the SQLite
//! database probe the tour wires, and `/metrics` with the library's series
//! (the `prometheus` feature; no metrics code of its own).
//! A custom check declared in one place (an `async fn` and one manifest
//! line) builds and answers the same way, outside the workspace.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use zb_health_testkit::Launch;

const README: &str = include_str!("../../README.md");

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A fresh folder for a crate outside the workspace, with its `src/`.
fn crate_outside(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zb-health-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    dir
}

/// The fenced blocks of `lang` in the README, in order, each with the
/// heading it is under.
fn blocks(lang: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut heading = String::new();
    let mut lines = README.lines();
    while let Some(line) = lines.next() {
        if line.starts_with('#') {
            heading = line.trim_start_matches('#').trim().to_string();
        } else if line == format!("```{lang}") {
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            found.push((heading.clone(), body.join("\n")));
        }
    }
    found
}

/// The one block of `lang` under the heading that starts with `heading`.
fn block(lang: &str, heading: &str) -> String {
    let all: Vec<String> = blocks(lang)
        .into_iter()
        .filter(|(h, _)| h.starts_with(heading))
        .map(|(_, b)| b)
        .collect();
    assert_eq!(all.len(), 1, "one ```{lang} block under `{heading}`");
    all[0].clone()
}

/// A fresh crate `name` outside the workspace (see [`crate_outside`]) with
/// the README's dependencies ([`readme_package`]) and the workspace's lock
/// file: the versions its tests ran with.
fn readme_crate(name: &str) -> PathBuf {
    let crate_dir = crate_outside(name);
    std::fs::write(crate_dir.join("Cargo.toml"), readme_package(name)).unwrap();
    std::fs::copy(root().join("Cargo.lock"), crate_dir.join("Cargo.lock")).unwrap();
    crate_dir
}

/// Cargo.toml of package `name`: a package header and the README's
/// dependency block, its zb-health `version` turned into the checkout's
/// path.
fn readme_package(name: &str) -> String {
    let dependencies = block("toml", "Add it to your service");
    let library = root().join("zb-health-runtime");
    let zb_line = dependencies
        .lines()
        .find(|l| l.starts_with("zb-health = "))
        .expect("the README's dependency block has the zb-health line");
    assert!(
        zb_line.contains("version = \""),
        "the line carries a version: {zb_line}"
    );
    let version = zb_line
        .split("version = \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap();
    let path_line = zb_line.replace(
        &format!("version = \"{version}\""),
        &format!("path = {:?}", library.display().to_string()),
    );
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n{}\n",
        dependencies.replace(zb_line, &path_line)
    )
}

/// `cargo build` of the crate in `crate_dir`, with its own target
/// directory outside the workspace's (one for every crate built from the
/// README's dependency block, so their dependencies build once); that
/// directory. `what` names the crate if it does not build.
fn build_outside(crate_dir: &Path, what: &str) -> PathBuf {
    let target = root().join("target/readme-service");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "--quiet", "--manifest-path"])
        .arg(crate_dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{what} does not build:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target
}

#[test]
fn a_service_copied_from_the_readme_builds_outside_the_workspace_and_serves_its_tiers() {
    let crate_dir = readme_crate("readme-service");
    // health.yaml beside Cargo.toml, as step 4 says.
    std::fs::write(
        crate_dir.join("health.yaml"),
        block("yaml", "2. Write `health.yaml`"),
    )
    .unwrap();
    let rust: Vec<String> = ["3. Annotate a probe", "4. `manifest!`", "5. Serve it"]
        .iter()
        .map(|h| block("rust", h))
        .collect();
    std::fs::write(crate_dir.join("src/main.rs"), rust.join("\n\n") + "\n").unwrap();

    let target = build_outside(&crate_dir, "the README's service");

    let db = crate_dir.join("orders.db");
    let mut service = Launch::new(target.join("debug/readme-service"))
        .env(
            "DATABASE_URL",
            format!("sqlite://{}?mode=rwc", db.display()),
        )
        .start();
    service.wait_listening();
    let deadline = Duration::from_secs(60);
    let ready = service.until_status("/health/ready", 200, deadline);
    let body = ready.json();
    assert_eq!(body["entries"]["database"]["status"], "Healthy", "{body}");
    assert_eq!(body["entries"]["cache"]["status"], "Healthy", "{body}");
    service.until_status("/healthz", 200, deadline);
    // `/metrics` without code (the `prometheus` feature of the block): the
    // library's series on the management port, in the format Prometheus
    // reads; the application port keeps to the application's routes.
    let scrape = service.get_management("/metrics");
    assert_eq!(scrape.status, 200, "{}", scrape.text());
    let text = scrape.text();
    for line in [
        "zb_health_tier_status{tier=\"ready\"} 2",
        "zb_health_probe_status{probe=\"database\"} 2",
        "zb_health_probe_status{probe=\"cache\"} 2",
        "# TYPE zb_health_probe_duration_seconds histogram",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "no line `{line}` in\n{text}"
        );
    }
    if let Err(said) = zb_health_testkit::promtool::check_metrics(&text) {
        panic!("promtool check metrics:\n{said}\non\n{text}");
    }
    assert_eq!(service.get("/metrics").status, 404);
    assert!(db.is_file(), "the SQLite file the tour's URL creates");
    drop(service);
    let _ = std::fs::remove_dir_all(&crate_dir);
}

/// The mistake of the first hour: `zb_health::database` used without a
/// backend feature. rustc quotes the module's `cfg`, which names the
/// backend features (`sqlite`, `postgres`), so following it gives a probe
/// with a driver; a manifest's `kind: database` names them in its own
/// error. Checked in a crate outside the workspace (the workspace always
/// builds the library with its backends), with its own target directory.
#[test]
fn a_database_probe_without_a_backend_feature_names_sqlite_and_postgres() {
    let root = root();
    let crate_dir = crate_outside("feature-hint");
    let library = root.join("zb-health-runtime");
    std::fs::write(
        crate_dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"feature-hint\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dependencies]\nzb-health = {{ path = {:?} }}\n",
            library.display().to_string()
        ),
    )
    .unwrap();
    std::fs::copy(root.join("Cargo.lock"), crate_dir.join("Cargo.lock")).unwrap();
    std::fs::write(
        crate_dir.join("health.yaml"),
        "service: orders\nprobes:\n  - { name: database, kind: database }\n",
    )
    .unwrap();
    std::fs::write(
        crate_dir.join("src/main.rs"),
        "use zb_health::database::DatabaseProbe;\n\n\
         zb_health::prelude::manifest!(pub Health = \"health.yaml\");\n\n\
         fn main() {\n    let _ = std::mem::size_of::<DatabaseProbe>();\n}\n",
    )
    .unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["check", "--quiet", "--color", "never", "--manifest-path"])
        .arg(crate_dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", root.join("target/feature-hint"))
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "it must not build:\n{stderr}");
    // rustc's note on the import quotes the cfg naming the backends.
    assert!(
        stderr.contains("could not find `database` in `zb_health`")
            && stderr.contains("feature = \"sqlite\"")
            && stderr.contains("feature = \"postgres\""),
        "{stderr}"
    );
    assert!(
        !stderr.contains("gated behind the `database` feature"),
        "{stderr}"
    );
    // The manifest's own error names a backend feature too.
    assert!(
        stderr.contains("the health manifest uses `kind: database`")
            && stderr.contains("features = [\"postgres\"] }` (or `\"sqlite\"`)"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&crate_dir);
}

/// A custom check declared in one place: an `async fn` with its
/// `#[zb_health]`, named by one manifest line (`fn:`) and no `HealthDeps`
/// field, in a crate outside the workspace with the README's dependency
/// block. It builds, starts and answers in `/health/ready`. The target
/// directory is the README service's: the same dependencies, so only this
/// crate compiles.
#[test]
fn a_custom_check_declared_in_one_place_builds_outside_the_workspace_and_answers() {
    let crate_dir = readme_crate("one-place-probe");
    std::fs::write(crate_dir.join("src/main.rs"), ONE_PLACE_PROBE).unwrap();
    let target = build_outside(&crate_dir, "the one-place probe");
    let mut service = Launch::new(target.join("debug/one-place-probe")).start();
    service.wait_listening();
    let ready = service.until_status("/health/ready", 200, Duration::from_secs(60));
    let body = ready.json();
    assert_eq!(body["entries"]["payments"]["status"], "Healthy", "{body}");
    assert_eq!(
        body["entries"]["payments"]["description"], "provider reachable",
        "{body}"
    );
    drop(service);
    let _ = std::fs::remove_dir_all(&crate_dir);
}

/// The whole service of the one-place probe: the check, its manifest
/// line, and the serving.
const ONE_PLACE_PROBE: &str = r##"use zb_health::prelude::*;

#[zb_health(name = "payments", tags = [ready], timeout = "300ms")]
async fn payments() -> ProbeOutcome {
    Ok(ProbeResult::healthy().with_description("provider reachable"))
}

manifest!(pub Health, yaml = r#"
service: orders
probes:
  - { name: payments, kind: custom, fn: crate::payments }
"#);

#[actix_web::main]
async fn main() -> Result<(), StartError> {
    let installed = Health::install(HealthDeps {})?;
    installed.server.from_env()?.run().await
}
"##;
