//! Proc macros of zb-health. Depend on `zb-health-runtime` instead, which
//! re-exports them; generated code names the runtime as `::zb_health`.
