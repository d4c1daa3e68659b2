// R7 for a `fn:` entry: what the manifest states must repeat the async
// fn's attribute, each contradiction at its YAML line and column.
use zb_health::prelude::*;

#[zb_health(name = "ping", tags = [ready], timeout = "200ms")]
async fn ping() -> ProbeOutcome {
    Ok(ProbeResult::healthy())
}

manifest!(Health, yaml = r#"
service: orders
probes:
  - { name: pong, kind: custom, fn: crate::ping, tags: [active], timeout: 300ms }
"#);

fn main() {}
