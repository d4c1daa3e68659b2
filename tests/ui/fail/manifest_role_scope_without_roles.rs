// R2 (ZB-2.3d): a role-scoped active-node check with no roles, or an empty list.
zb_health::prelude::manifest!(Health = "manifests/role_scope.yaml");

fn main() {}
