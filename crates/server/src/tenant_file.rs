//! The tenants folder on disk: `<tenants_dir>/<tenant-id>/tenant.toml` holds the tenant's token
//! digest and policy, `<tenants_dir>/<tenant-id>/plugins/` its plugins. This module reads that
//! layout — which folders are tenants, and what one tenant's file says — and nothing else; the
//! registry decides what to do with it.

use std::path::{Path, PathBuf};

use hookbox_host::{TenantId, TenantPolicy, TenantSpec};
use serde::Deserialize;

use crate::token::TokenHash;

/// The file in a tenant's folder that makes it a tenant.
pub const TENANT_FILE: &str = "tenant.toml";

/// A `tenant.toml` is a few lines; a bigger one is refused rather than read.
pub const MAX_TENANT_FILE_BYTES: u64 = 64 << 10;

/// What `tenant.toml` says.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TenantFile {
    /// Hex SHA-256 of the tenant's bearer token.
    pub token_sha256: TokenHash,
    /// Its policy; every key optional, with [`TenantPolicy`]'s defaults (safe for untrusted
    /// code), unknown keys refused.
    #[serde(default)]
    pub policy: TenantPolicy,
}

/// Why a tenant's folder cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TenantFileError {
    /// No `tenant.toml`.
    #[error("{} is missing: a tenant folder needs one with its `token_sha256`", path.display())]
    Missing {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// Not a regular file, or over the size bound.
    #[error("{} {reason}", path.display())]
    Refused {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Unreadable.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not valid TOML, an unknown key, a bad digest or a policy value of the wrong type.
    #[error("{} is invalid: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message (line, column, the offending text).
        message: String,
    },
}

impl TenantFile {
    /// Reads `<folder>/tenant.toml`, without following a symlink in its place.
    pub fn read(folder: &Path) -> Result<TenantFile, TenantFileError> {
        let path = folder.join(TENANT_FILE);
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(TenantFileError::Missing { path });
            }
            Err(source) => return Err(TenantFileError::Read { path, source }),
        };
        if !meta.file_type().is_file() {
            return Err(TenantFileError::Refused {
                path,
                reason: "is not a regular file (a symlink, a folder or a device is refused)".into(),
            });
        }
        if meta.len() > MAX_TENANT_FILE_BYTES {
            return Err(TenantFileError::Refused {
                path,
                reason: format!(
                    "is {} bytes: over the {MAX_TENANT_FILE_BYTES}-byte limit",
                    meta.len()
                ),
            });
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(source) => return Err(TenantFileError::Read { path, source }),
        };
        TenantFile::parse(&text).map_err(|message| TenantFileError::Parse { path, message })
    }

    /// Parses the text of a `tenant.toml`.
    pub fn parse(text: &str) -> Result<TenantFile, String> {
        toml::from_str(text).map_err(|e| e.to_string().trim_end().to_owned())
    }

    /// The spec that loads this tenant from `folder` (plugins from `<folder>/plugins`).
    pub fn spec(&self, id: TenantId, folder: PathBuf) -> TenantSpec {
        TenantSpec {
            id,
            folder,
            policy: self.policy.clone(),
            plugins: None,
        }
    }
}

/// What a scan of the tenants folder found.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// Tenant folders, by id (sorted).
    pub(crate) tenants: Vec<(TenantId, PathBuf)>,
    /// Entries that are not tenants, and why (hidden entries are skipped silently).
    pub(crate) skipped: Vec<(String, String)>,
}

/// Lists the tenant folders of `dir`: every subfolder whose name is a valid tenant id. Hidden
/// entries (Kubernetes' `..data` links of a mounted volume, `.git`) are skipped silently;
/// other names that are not tenant ids, and files, are reported.
pub(crate) fn scan(dir: &Path) -> std::io::Result<Scan> {
    let mut scan = Scan::default();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        // `metadata` follows a symlinked tenant folder (a mounted volume may use them); the
        // tenant's own loading then checks its plugins really are inside that folder.
        let is_dir = std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir());
        if !is_dir {
            scan.skipped.push((name, "not a folder".into()));
            continue;
        }
        match TenantId::new(&name) {
            Ok(id) => scan.tenants.push((id, entry.path())),
            Err(e) => scan.skipped.push((name, e.to_string())),
        }
    }
    scan.tenants.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(scan)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";

    #[test]
    fn policy_keys_are_tenant_policy_field_names() {
        let f = TenantFile::parse(&format!(
            "token_sha256 = \"{DIGEST}\"\n[policy]\nmax_rules = 5\ndefault_timeout_secs = 1\nfail_mode = \"block\"\n"
        ))
        .unwrap();
        assert_eq!(f.policy.max_rules, 5);
        assert_eq!(f.policy.default_timeout_secs, 1.0);
        assert_eq!(f.policy.fail_mode, hookbox_core::rule::FailMode::Block);
        assert!(!f.policy.allow_native_commands, "defaults stay closed");
        let e = TenantFile::parse(&format!(
            "token_sha256 = \"{DIGEST}\"\n[policy]\nmax_rulez = 5"
        ))
        .unwrap_err();
        assert!(e.contains("max_rulez"), "{e}");
        let e = TenantFile::parse("[policy]\nmax_rules = 5").unwrap_err();
        assert!(e.contains("token_sha256"), "{e}");
        let e =
            TenantFile::parse(&format!("token_sha256 = \"{DIGEST}\"\ntoken = \"x\"")).unwrap_err();
        assert!(e.contains("token"), "{e}");
    }

    #[test]
    fn scan_finds_tenant_folders_and_reports_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["acme", "b-2", "not valid", ".hidden", "..data"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        std::fs::write(dir.path().join("README"), "x").unwrap();
        let s = scan(dir.path()).unwrap();
        let ids: Vec<&str> = s.tenants.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["acme", "b-2"]);
        let mut skipped: Vec<&str> = s.skipped.iter().map(|(n, _)| n.as_str()).collect();
        skipped.sort_unstable();
        assert_eq!(skipped, ["README", "not valid"]);
    }

    #[test]
    fn a_tenant_file_must_be_a_small_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let e = TenantFile::read(dir.path()).unwrap_err();
        assert!(matches!(e, TenantFileError::Missing { .. }), "{e}");
        std::fs::write(
            dir.path().join("real.toml"),
            format!("token_sha256 = \"{DIGEST}\""),
        )
        .unwrap();
        std::os::unix::fs::symlink(dir.path().join("real.toml"), dir.path().join(TENANT_FILE))
            .unwrap();
        let e = TenantFile::read(dir.path()).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        std::fs::remove_file(dir.path().join(TENANT_FILE)).unwrap();
        std::fs::write(dir.path().join(TENANT_FILE), "#".repeat(70_000)).unwrap();
        let e = TenantFile::read(dir.path()).unwrap_err();
        assert!(e.to_string().contains("over the"), "{e}");
    }
}
