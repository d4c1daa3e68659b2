// Probe names that no plain identifier can spell still give `HealthDeps`
// distinct, predictable fields: keywords become raw identifiers, `self` and
// a leading digit get `p_`, and names that collide as identifiers get a
// numeric suffix.
use zb_health::database::DatabaseProbe;
use zb_health::grpc::GrpcDependencyProbe;

zb_health::manifest!("manifests/field_names.yaml");

#[allow(dead_code)]
fn deps(db: fn() -> DatabaseProbe, grpc: fn() -> GrpcDependencyProbe) -> HealthDeps {
    HealthDeps {
        p_self: db(),
        r#match: grpc(),
        a_b: db(),
        a_b_2: db(),
        cluster_view_2: grpc(),
        p_1st: grpc(),
    }
}

fn main() {
    let names: Vec<&str> = HealthManifest::PROBES.iter().map(|p| p.name).collect();
    assert_eq!(names, ["self", "match", "a-b", "a_b", "cluster_view", "1st"]);
}
