// R17 (BE-HLTH-006, ZB-2.3b): a probe on the `active` tier answers live.
// `refresh` on an active-node probe (its default tier is `active`) and
// `cache` on any probe tagged `active` would let a node that lost the role
// keep answering "route the writes here".
zb_health::prelude::manifest!(Health = "manifests/live_answer.yaml");

fn main() {}
