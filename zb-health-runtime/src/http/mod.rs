//! The health endpoints on actix-web (ZB-1.1, ZB-5): one call maps them
//! all, each answering `GET` and `HEAD` and `405` otherwise.
//!
//! * the three tiers, and under `ready` and `active` one path per probe
//!   (`<tier path>/{probe}`);
//! * the startup path (`/health/started`), which runs no probe;
//! * each health group at its own path (R23–R25);
//! * when turned on, the history (`/health/history`) and the health page
//!   (`/health/ui`).
//!
//! Apart from them, [`OperatorControls`]: what an operator may change
//! (maintenance mode at [`MAINTENANCE_PATH`], a step-down from the active
//! role at [`STEP_DOWN_PATH`]), for the management port only, with the
//! bearer token.
//!
//! [`EndpointSettings`] holds the paths, the body (format, disclosure
//! levels, the level a bearer token unlocks) and the groups; [`ZbHealth`]
//! sets them over a registry and checks them;
//! [`ZbHealthEndpoints`] is what it builds, ready to mount.

mod builder;
mod endpoints;
mod group;
mod history;
mod operator;
mod respond;
mod settings;
mod started;
#[cfg(test)]
mod tests;
mod verbose;

pub use builder::{ZbHealth, map_zb_health};
pub use endpoints::ZbHealthEndpoints;
pub use group::HealthGroup;
pub use history::{DEFAULT_HISTORY_PATH, DEFAULT_HISTORY_UI_PATH};
pub use operator::{MAINTENANCE_PATH, OperatorControls, STEP_DOWN_PATH};
pub use respond::{ZbHealthTier, status_code};
pub use settings::EndpointSettings;
