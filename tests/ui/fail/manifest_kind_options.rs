// Each kind takes only its own options: an option of another kind (R4), a
// role option without role scope (R7), a guard without its size (R4), and
// an expected size of zero (R5).
zb_health::prelude::manifest!(Health = "manifests/kind_options.yaml");

fn main() {}
