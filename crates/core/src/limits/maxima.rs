//! The most a hooks file may ask for, field by field. A value over its maximum is refused when
//! the file is read — a located error naming the field, the value, the maximum and the fix —
//! never clamped. These are ceilings on what can be *written*; a host's policy (the wasm
//! runtime's `WasmPolicy`, a tenant's policy) grants less, and refuses at load what it does not
//! grant. They are public so that hosts can validate their own files and flags (`tenant.toml`,
//! `serve.toml`, command-line durations) against the same numbers.
//!
//! Why each number: far above any real use, and low enough that no arithmetic a host does with
//! the value (a deadline `now + timeout`, bytes from MiB, a sum over hooks) can overflow.

/// The longest `timeout` (seconds) any hook may ask for: one day. Claude Code's own default is
/// 600 s; `Instant + Duration` panics on overflow near 10¹⁹ s, which a hooks file once reached.
pub const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// The most `fuel` (≈ wasm instructions) a wasm rule may ask for: 10¹³, hours of guest time.
pub const MAX_FUEL: u64 = 10_000_000_000_000;

/// The most `memory_mb` a wasm rule may ask for: 4,096 MiB, all a 32-bit wasm memory can
/// address.
pub const MAX_MEMORY_MB: u64 = 4_096;

/// The most `table_elements` a wasm rule may ask for: 10⁷.
pub const MAX_TABLE_ELEMENTS: u64 = 10_000_000;

/// The most core `instances` a wasm rule may ask for: 10,000 (componentize-py needs 38).
pub const MAX_INSTANCES: u64 = 10_000;

/// The most `output_bytes` (stdout, stderr each) a wasm rule may ask for: 1 GiB.
pub const MAX_OUTPUT_BYTES: u64 = 1 << 30;

/// The most `response_bytes` (a typed answer's text) a wasm rule may ask for: 1 GiB.
pub const MAX_RESPONSE_BYTES: u64 = 1 << 30;

/// The most `log_calls` per event a wasm rule may ask for: 10⁶.
pub const MAX_LOG_CALLS: u64 = 1_000_000;

/// The most `write_bytes` per event (`rw` mounts) a wasm rule may ask for: 1 TiB.
pub const MAX_WRITE_BYTES: u64 = 1 << 40;

/// The most `write_files` per event (`rw` mounts) a wasm rule may ask for: 10⁷.
pub const MAX_WRITE_FILES: u64 = 10_000_000;

/// Every whole-number field of a `wasm` rule with its maximum and what it counts, for the
/// loader's messages and for documentation.
pub const WASM_FIELD_MAXIMA: &[(&str, u64, &str)] = &[
    ("fuel", MAX_FUEL, "instructions"),
    (
        "memory_mb",
        MAX_MEMORY_MB,
        "MiB, all a 32-bit wasm memory can address",
    ),
    ("table_elements", MAX_TABLE_ELEMENTS, "table elements"),
    ("instances", MAX_INSTANCES, "core instances"),
    ("output_bytes", MAX_OUTPUT_BYTES, "bytes, 1 GiB"),
    ("log_calls", MAX_LOG_CALLS, "calls per event"),
    ("response_bytes", MAX_RESPONSE_BYTES, "bytes, 1 GiB"),
    ("write_bytes", MAX_WRITE_BYTES, "bytes per event, 1 TiB"),
    ("write_files", MAX_WRITE_FILES, "files per event"),
];

/// The maximum of a `wasm` rule's whole-number field, and what it counts.
pub fn wasm_field_maximum(key: &str) -> Option<(u64, &'static str)> {
    WASM_FIELD_MAXIMA
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|&(_, max, what)| (max, what))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wasm_whole_number_field_has_a_maximum() {
        for key in crate::config::WASM_KEYS {
            let numeric = !matches!(
                *key,
                "type"
                    | "component"
                    | "timeout"
                    | "mounts"
                    | "env"
                    | "config"
                    | "matcher"
                    | "if"
                    | "on_failure"
                    | "onFailure"
                    | "async"
                    | "statusMessage"
                    | "once"
            );
            assert_eq!(
                wasm_field_maximum(key).is_some(),
                numeric,
                "{key}: a whole-number grant needs a maximum"
            );
        }
    }

    #[test]
    fn maxima_leave_room_for_the_arithmetic_hosts_do() {
        // A deadline a day away, in nanoseconds, and memory in bytes, fit easily.
        assert!(std::time::Duration::try_from_secs_f64(MAX_TIMEOUT_SECS).is_ok());
        assert!(MAX_MEMORY_MB.checked_mul(1 << 20).is_some());
        // A million hooks at the maximum fuel still sum without overflow.
        assert!(MAX_FUEL.checked_mul(1_000_000).is_some());
    }
}
