//! Why a rule's wasm settings (or a policy) are refused: each variant names the field, the
//! value asked and what the policy allows.

/// A rule (or a policy) asks for something the policy does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// A limit above the policy's maximum.
    #[error(
        "`{field}` asks for {asked}, but the host policy allows at most {maximum}; lower it or raise the policy's maximum"
    )]
    AboveMaximum {
        /// The rule's key (`memory_mb`, `timeout`, …).
        field: &'static str,
        /// The value asked, with its unit.
        asked: String,
        /// The policy's maximum, with its unit.
        maximum: String,
    },
    /// A value that cannot be a limit at all (zero, negative, not finite).
    #[error("`{field}` is {value}: {reason}")]
    Invalid {
        /// The rule's key.
        field: &'static str,
        /// The value found.
        value: String,
        /// What it must be.
        reason: &'static str,
    },
    /// Fuel asked for where the policy does not allow it.
    #[error(
        "`fuel` is {asked}, but fuel metering is not allowed by the host policy; remove `fuel` (the `timeout` still bounds the hook)"
    )]
    FuelNotAllowed {
        /// The budget asked.
        asked: u64,
    },
    /// A read-write mount where the policy allows read-only mounts only.
    #[error(
        "mount `{host}` -> `{guest}` asks for `rw`, but the host policy allows read-only mounts only; use `\"access\": \"ro\"`"
    )]
    RwMountNotAllowed {
        /// The host folder.
        host: String,
        /// The guest path.
        guest: String,
    },
    /// More mounts than allowed.
    #[error("the rule declares {count} mounts, but the host policy allows at most {maximum}")]
    TooManyMounts {
        /// Mounts declared.
        count: usize,
        /// The policy's maximum.
        maximum: usize,
    },
    /// A guest mount path that is not a clean absolute path.
    #[error("mount guest path `{guest}` {reason}")]
    BadGuestPath {
        /// The guest path as written.
        guest: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An environment variable the policy does not allow.
    #[error("env variable `{name}` is not in the host policy's allowed list")]
    EnvNotAllowed {
        /// The variable's name.
        name: String,
    },
    /// An environment variable name that cannot exist.
    #[error(
        "env variable name `{name}` is invalid: it must be non-empty and contain no `=` or NUL"
    )]
    BadEnvName {
        /// The name as written.
        name: String,
    },
    /// The policy itself is inconsistent (a default above its maximum, default fuel without
    /// fuel allowed).
    #[error("host policy: default `{field}` ({default}) is above its maximum ({maximum})")]
    DefaultAboveMaximum {
        /// The field.
        field: &'static str,
        /// The default.
        default: String,
        /// The maximum.
        maximum: String,
    },
    /// The policy asks for something this runtime was not built to enforce.
    #[error("host policy: {what}")]
    RuntimeCannotEnforce {
        /// What, in words.
        what: String,
    },
}
