// The inline form reports like the file form, at line:column of the string.
zb_health::prelude::manifest!(Health, yaml = r#"
service: mxgateway
probes:
  - { name: watchdog, kind: custom, type: crate::Watchdog, tags: [live] }
"#);

fn main() {}
