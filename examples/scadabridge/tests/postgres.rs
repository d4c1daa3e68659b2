//! scadabridge on PostgreSQL (ZB §7 (c)): the real binary with
//! `DATABASE_URL` pointing at a throwaway server this test starts on
//! 127.0.0.1; the server stops (ready 503, the `database` entry
//! Unhealthy, live 200) and starts again (ready 200), with no restart of
//! the service.

mod common;

use common::{DEADLINE, launch, start_warm, write_tag};
use zb_health_testkit::assert_canonical;
use zb_health_testkit::postgres::{PASSWORD, Postgres};

#[test]
fn postgres_stopping_fails_ready_not_live_and_its_return_recovers_ready() {
    let pg = Postgres::start();
    let node = start_warm(&launch().env("DATABASE_URL", pg.url()));
    assert_eq!(write_tag(&node, "boiler.temp", 71).status, 200);

    pg.stop();
    let ready = node.until_status("/health/ready", 503, DEADLINE);
    assert_canonical(&ready);
    assert_eq!(ready.entry_status("database").as_deref(), Some("Unhealthy"));
    assert_eq!(
        ready.json()["entries"]["database"]["description"],
        "check failed"
    );
    assert!(!ready.text().contains(PASSWORD), "{}", ready.text());
    let live = node.get("/healthz");
    assert_eq!(live.status, 200);
    assert_canonical(&live);

    pg.start_again();
    let ready = node.until_status("/health/ready", 200, DEADLINE);
    assert_canonical(&ready);
    assert_eq!(ready.entry_status("database").as_deref(), Some("Healthy"));
    // The row written before the outage is still there, once the
    // application's pool has replaced the connections the stop cut.
    let read = node.until_status("/api/tags/boiler.temp", 200, DEADLINE);
    assert_eq!(read.json()["value"], 71);
}
