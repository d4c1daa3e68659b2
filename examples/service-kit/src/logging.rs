//! Logging for the example services.

/// Logs to stderr: a probe's transition to failure once at warn level with
/// its real error, its recovery at info (BE-HLTH-008). `RUST_LOG`
/// overrides the default filter, which keeps chitchat's chatter out.
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,chitchat=warn"));
    // A second call (a test calling two services' setups) keeps the first.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .try_init();
}
