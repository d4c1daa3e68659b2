// A `fn:` that names a fn without #[zb_health], or a misspelt one, is one
// error at the YAML line and column, with a "did you mean".
use zb_health::prelude::*;

#[zb_health(name = "ping")]
async fn ping() -> ProbeOutcome {
    Ok(ProbeResult::healthy())
}

async fn plain() -> ProbeOutcome {
    Ok(ProbeResult::healthy())
}

manifest!(Health, yaml = r#"
service: orders
probes:
  - { kind: custom, fn: crate::plain }
  - { kind: custom, fn: crate::pnig }
"#);

fn main() {
    let _ = (ping(), plain());
}
