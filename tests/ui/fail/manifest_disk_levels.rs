// A disk probe's free-space level must be a share up to 100% or bytes with
// a unit (R15): `120%` is refused at its value, with the syntax to write.
zb_health::prelude::manifest!(Health = "manifests/disk_levels.yaml");

fn main() {}
