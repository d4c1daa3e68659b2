// Details for the authorized only (BE-HLTH-007): R7 for an
// authorized level that shows no more than the tier's public one, per tier
// (`names` over `names`, `status` under `full`) and for one level that no
// tier of the management port gains from (`full` over `full`).
zb_health::prelude::manifest!(Health = "manifests/authorized.yaml");

fn main() {}
