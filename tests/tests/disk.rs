//! `kind: disk` on a real filesystem: a 4 MiB tmpfs the test mounts and
//! fills across each level, Healthy → Degraded → Unhealthy and back, over
//! a real socket; a path that does not exist; and the manifest's form,
//! registered by `manifest!`. Mounting needs root (CI runs as root); where
//! it is refused, the tmpfs test says why and skips, and the level rule
//! stays covered by `zb_health::probes::disk`'s unit tests.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::{Wire, request, serve};
use zb_health::prelude::{HealthRegistry, ProbeRegistration, map_zb_health};
use zb_health::probes::disk::{DEGRADED_DESCRIPTION, DiskProbe, UNHEALTHY_DESCRIPTION};
use zb_health::spec::disk::FreeSpace;

const MIB: usize = 1 << 20;

/// A tmpfs of `size` mounted on a fresh directory, unmounted (and the
/// directory removed) on drop, even when the test fails.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    /// The mount, or why it cannot be made here.
    fn mount(size: &str) -> Result<Tmpfs, String> {
        let unique = format!(
            "zb-health-disk-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
        );
        let dir = std::env::temp_dir().join(unique.replace([' ', '{', '}', ':', ','], "_"));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Ok(Tmpfs { dir }),
            Ok(o) => {
                let _ = std::fs::remove_dir(&dir);
                Err(format!(
                    "mount -t tmpfs refused: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ))
            }
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                Err(format!("cannot run mount: {e}"))
            }
        }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazy: a file still open cannot keep the mount.
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// `GET /health/ready`, its code and the `disk` entry.
async fn ready(addr: std::net::SocketAddr) -> (u16, serde_json::Value) {
    let wire: Wire = request(addr, "GET", "/health/ready").await;
    let code = wire.status;
    (code, wire.json()["entries"]["disk"].clone())
}

fn fill(path: &Path, bytes: usize) {
    std::fs::write(path, vec![0x5a_u8; bytes]).unwrap();
}

#[actix_web::test]
async fn free_space_crosses_each_level_on_a_real_tmpfs_and_back() {
    let fs = match Tmpfs::mount("4m") {
        Ok(fs) => fs,
        Err(reason) => {
            println!(
                "skipped: {reason}; the level rule is covered by zb_health::probes::disk's unit tests"
            );
            return;
        }
    };
    let registry = HealthRegistry::new();
    registry
        .add(ProbeRegistration::new(
            "disk",
            DiskProbe::new(&fs.dir)
                .degraded_below(FreeSpace::percent(50))
                .unhealthy_below(FreeSpace::parse("1MiB").unwrap()),
        ))
        .unwrap();
    let server = serve(map_zb_health(registry));
    let addr = server.addr;

    let (code, entry) = ready(addr).await;
    assert_eq!(
        (code, &entry["status"]),
        (200, &"Healthy".into()),
        "{entry}"
    );
    assert_eq!(entry["data"]["totalBytes"], 4 * MIB as u64, "{entry}");
    let empty = entry["data"]["freeBytes"].as_u64().unwrap();
    assert!(empty > 2 * MIB as u64, "{entry}");
    assert_eq!(entry["description"], serde_json::Value::Null);

    // 2.5 MiB written: 1.5 MiB free, below 50% but above 1 MiB.
    fill(&fs.file("a"), 5 * MIB / 2);
    let (code, entry) = ready(addr).await;
    assert_eq!(
        (code, &entry["status"]),
        (200, &"Degraded".into()),
        "{entry}"
    );
    assert_eq!(entry["description"], DEGRADED_DESCRIPTION);
    let free = entry["data"]["freeBytes"].as_u64().unwrap();
    assert!(free < 2 * MIB as u64 && free >= MIB as u64, "{entry}");

    // 1 MiB more: 0.5 MiB free, below 1 MiB.
    fill(&fs.file("b"), MIB);
    let (code, entry) = ready(addr).await;
    assert_eq!(
        (code, &entry["status"]),
        (503, &"Unhealthy".into()),
        "{entry}"
    );
    assert_eq!(entry["description"], UNHEALTHY_DESCRIPTION);
    assert!(
        entry["data"]["freePercent"].as_f64().unwrap() < 25.0,
        "{entry}"
    );

    // And back.
    std::fs::remove_file(fs.file("b")).unwrap();
    let (code, entry) = ready(addr).await;
    assert_eq!(
        (code, &entry["status"]),
        (200, &"Degraded".into()),
        "{entry}"
    );
    std::fs::remove_file(fs.file("a")).unwrap();
    let (code, entry) = ready(addr).await;
    assert_eq!(
        (code, &entry["status"]),
        (200, &"Healthy".into()),
        "{entry}"
    );
    assert_eq!(entry["data"]["freeBytes"], empty, "{entry}");
}

#[actix_web::test]
async fn a_missing_path_is_unhealthy_with_a_fixed_description_and_no_path_in_the_body() {
    let registry = HealthRegistry::new();
    let missing = "/no/such/zb-health-disk-path";
    registry
        .add(ProbeRegistration::new(
            "disk",
            DiskProbe::new(missing).degraded_below(FreeSpace::percent(10)),
        ))
        .unwrap();
    let server = serve(map_zb_health(registry));
    let wire = request(server.addr, "GET", "/health/ready").await;
    assert_eq!(wire.status, 503);
    let entry = &wire.json()["entries"]["disk"];
    assert_eq!(entry["status"], "Unhealthy", "{entry}");
    assert_eq!(entry["description"], "check failed", "{entry}");
    let body = String::from_utf8_lossy(&wire.body).into_owned();
    assert!(!body.contains(missing), "{body}");
}

zb_health::prelude::manifest!(Disks = "../ui/pass/manifests/disk.yaml");

#[actix_web::test]
async fn the_manifest_form_registers_each_level_on_ready() {
    let registry = HealthRegistry::new();
    let installed = Disks::install_into(&registry, DisksDeps {}).unwrap();
    let server = serve(installed.server.endpoints().clone());
    let wire = request(server.addr, "GET", "/health/ready").await;
    assert_eq!(wire.status, 503);
    let body = wire.json();
    // The root filesystem always has less free than its whole size.
    let root = &body["entries"]["root"];
    assert_eq!(root["status"], "Degraded", "{root}");
    assert_eq!(root["description"], DEGRADED_DESCRIPTION);
    assert!(root["data"]["totalBytes"].as_u64().unwrap() > 0, "{root}");
    let gone = &body["entries"]["gone"];
    assert_eq!(gone["status"], "Unhealthy", "{gone}");
    assert_eq!(gone["description"], "check failed", "{gone}");
}
