//! Tenant ids: `[A-Za-z0-9_-]{1,64}`, checked once when a tenant is named, so no path, file
//! name or metric label ever comes from an unchecked id.

use std::fmt;

/// Longest tenant id.
pub const MAX_TENANT_ID_CHARS: usize = 64;

/// A checked tenant id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct TenantId(String);

/// Why a string is not a tenant id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid tenant id `{id}`: {reason}; a tenant id is 1 to 64 ASCII letters, digits, `_` or `-`"
)]
pub struct TenantIdError {
    /// The id as given (escaped for display).
    pub id: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl TenantId {
    /// Checks `id`.
    pub fn new(id: &str) -> Result<TenantId, TenantIdError> {
        let err = |reason| TenantIdError {
            id: id.escape_default().to_string(),
            reason,
        };
        if id.is_empty() {
            return Err(err("it is empty"));
        }
        if id.chars().count() > MAX_TENANT_ID_CHARS {
            return Err(err("it is longer than 64 characters"));
        }
        if !id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(err(
                "it contains a character other than letters, digits, `_` and `-`",
            ));
        }
        Ok(TenantId(id.to_owned()))
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TenantId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for TenantId {
    type Err = TenantIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TenantId::new(s)
    }
}

impl<'de> serde::Deserialize<'de> for TenantId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        TenantId::new(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_could_become_paths_are_refused() {
        let long = "a".repeat(65);
        for bad in [
            "../x",
            "a/b",
            "",
            long.as_str(),
            "é",
            "a b",
            ".",
            "..",
            "a\0b",
            "a.b",
        ] {
            assert!(TenantId::new(bad).is_err(), "{bad:?}");
        }
        for good in ["acme", "ACME_corp-2", "a", &"z".repeat(64)] {
            assert_eq!(TenantId::new(good).unwrap().as_str(), good);
        }
        let e = TenantId::new("../x").unwrap_err().to_string();
        assert!(e.contains("`../x`") && e.contains("letters, digits"), "{e}");
    }
}
