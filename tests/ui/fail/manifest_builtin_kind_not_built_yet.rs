// A built-in kind whose probe is not built yet is an error, never silently ignored.
zb_health::manifest!("manifests/builtin.yaml");

fn main() {}
