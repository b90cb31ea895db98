//! The `trust` setting: what a host does with a rule that is not approved as it is now.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How a host treats rules whose approval does not cover them as they are (SPEC §11). Ordered
/// from loosest to strictest, so that "a project may make it stricter, never looser" is
/// [`TrustMode::stricter`].
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum TrustMode {
    /// Approvals are not looked at; nothing is pinned (the library's default, and what hosts
    /// without an approval store use).
    #[default]
    Off,
    /// Unapproved or changed rules run, and the host says which and why (the CLI's default).
    Warn,
    /// Unapproved or changed rules do not run: each fails with `untrusted` and its fail mode
    /// applies, so a guard that was tampered with and fails closed blocks.
    Require,
}

impl TrustMode {
    /// Every mode, loosest first.
    pub const ALL: [TrustMode; 3] = [TrustMode::Off, TrustMode::Warn, TrustMode::Require];

    /// The spelling in settings files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            TrustMode::Off => "off",
            TrustMode::Warn => "warn",
            TrustMode::Require => "require",
        }
    }

    /// The stricter of the two.
    pub fn stricter(self, other: TrustMode) -> TrustMode {
        self.max(other)
    }

    /// Whether approvals are looked at (and files pinned) at all.
    pub fn is_on(self) -> bool {
        self != TrustMode::Off
    }
}

impl fmt::Display for TrustMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `trust` value that is none of `off`, `warn`, `require`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown trust mode `{0}`; use off, warn or require")]
pub struct UnknownTrustMode(pub String);

impl FromStr for TrustMode {
    type Err = UnknownTrustMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TrustMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| UnknownTrustMode(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stricter_never_loosens() {
        for a in TrustMode::ALL {
            for b in TrustMode::ALL {
                let s = a.stricter(b);
                assert!(s >= a && s >= b, "{a} {b} -> {s}");
                assert!(s == a || s == b);
            }
        }
        assert_eq!(
            TrustMode::Off.stricter(TrustMode::Require),
            TrustMode::Require
        );
        assert_eq!(
            TrustMode::Require.stricter(TrustMode::Off),
            TrustMode::Require
        );
    }

    #[test]
    fn spellings_round_trip_and_unknown_is_named() {
        for m in TrustMode::ALL {
            assert_eq!(m.as_str().parse::<TrustMode>().unwrap(), m);
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{m}\""));
        }
        let e = "strict".parse::<TrustMode>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown trust mode `strict`; use off, warn or require"
        );
        assert!(serde_json::from_str::<TrustMode>("\"Require\"").is_err());
    }
}
