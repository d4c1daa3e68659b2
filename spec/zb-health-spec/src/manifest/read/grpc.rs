//! The `grpc` section: the `grpc.health.v1` service mapping (AT-7), each
//! rule the shared function of `crate::grpc`.

use super::super::tree::{Node, Value};
use super::values::known_names;
use super::{Fields, Reader};
use crate::Tag;
use crate::grpc::{
    check_grpc_period, check_grpc_probe_target, check_grpc_service_name, check_grpc_unique_services,
};
use crate::manifest::{GrpcDecl, GrpcServiceDecl, GrpcTargetDecl, ProbeDecl};

/// The keys of `grpc`.
const GRPC_KEYS: [&str; 2] = ["period", "services"];
/// The keys of a probe target.
const TARGET_KEYS: [&str; 1] = ["probe"];

impl Reader {
    /// `grpc`, read after `probes` so a probe target can be checked
    /// against the declared names (`probes` is `None` when it could not be
    /// read; the targets are then not checked again).
    pub(super) fn grpc(&mut self, top: &Fields, probes: Option<&[ProbeDecl]>) -> Option<GrpcDecl> {
        let section = self.section(top, "grpc", &GRPC_KEYS)?;
        let period = self
            .value(&section, "period", Self::duration)
            .inspect(|p| check_grpc_period(p.value, p.location, &mut self.sink));
        let services = section.get("services");
        let services = services.map_or_else(Vec::new, |f| self.grpc_services(f.node));
        // Unknown with a name on an attribute: the generated code checks
        // the targets then.
        if let Some(known) = known_names(probes) {
            for service in &services {
                if let GrpcTargetDecl::Probe(probe) = &service.target {
                    check_grpc_probe_target(
                        &service.name.value,
                        &probe.value,
                        known.iter().copied(),
                        probe.location,
                        &mut self.sink,
                    );
                }
            }
        }
        Some(GrpcDecl {
            location: section.loc,
            period,
            services,
        })
    }

    /// `services`: a mapping of service name to a tier name or
    /// `{ probe: <name> }`.
    fn grpc_services(&mut self, node: &Node) -> Vec<GrpcServiceDecl> {
        let pairs = self.entries(
            "`grpc.services`",
            "a mapping of gRPC service names to targets",
            node,
            "write e.g. `services: { \"\": ready, plant.v1.Writes: active, plant.db: { probe: database } }`",
        );
        let mut services = Vec::new();
        for (key, value) in pairs {
            let Some(name) = self.string("a gRPC service name", key) else {
                continue;
            };
            check_grpc_service_name(&name.value, name.location, &mut self.sink);
            let what = format!("the target of gRPC service `{}`", name.value);
            let target = match &value.value {
                Value::Map(_) => self
                    .mapping(&what, value, &TARGET_KEYS)
                    .and_then(|fields| {
                        let missing = (
                            format!("{what} has no `probe`"),
                            "write `{ probe: <probe name> }`, or a tier name",
                        );
                        self.required(&fields, "probe", missing, |r, _, node| {
                            r.string("`probe`", node)
                        })
                    })
                    .map(GrpcTargetDecl::Probe),
                Value::Str(_) => self.keyword::<Tag>(&what, value).map(GrpcTargetDecl::Tier),
                _ => {
                    self.wrong_type(
                        &what,
                        "a tier name or `{ probe: <name> }`",
                        value,
                        "write `ready`, `active`, `live` or `{ probe: database }`",
                    );
                    None
                }
            };
            if let Some(target) = target {
                services.push(GrpcServiceDecl { name, target });
            }
        }
        check_grpc_unique_services(
            services
                .iter()
                .map(|s| (s.name.value.as_str(), s.name.location)),
            &mut self.sink,
        );
        services
    }
}
