//! The tenants folder on disk: `<tenants_dir>/<tenant-id>/tenant.toml` holds the tenant's token
//! digest and policy, `<tenants_dir>/<tenant-id>/plugins/` its plugins. This module reads that
//! layout — which folders are tenants, and what one tenant's file says — and nothing else; the
//! loader decides what to do with it.
//!
//! `tenant.toml` is read with core's reader for untrusted small files (beneath the tenant's
//! folder, nothing followed out of it, opened without blocking so a FIFO swapped in is refused
//! rather than waited on while the admin lock is held, a regular file, bounded), then checked
//! against the operator's `[tenant_maxima]`: a value over one is refused naming the file, the
//! line, the key, the value and the maximum.

use std::path::{Path, PathBuf};

use hookbox_host::{OverMaximum, TenantId, TenantMaxima, TenantPolicy, TenantSpec};
use serde::Deserialize;

use crate::token::TokenHash;

/// The file in a tenant's folder that makes it a tenant.
pub use hookbox_host::TENANT_FILE;

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
    /// Not valid TOML, an unknown key, a bad digest or a policy value of the wrong type or out
    /// of range.
    #[error("{} is invalid: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message (line, column, the offending text).
        message: String,
        /// The tenant's token, when the rest of the file could be read for it: its holder is
        /// told the tenant is unavailable instead of that it does not exist.
        token: Option<TokenHash>,
    },
    /// The text alone (no file: [`TenantFile::parse`]) is not a valid `tenant.toml`; reading a
    /// file turns this into [`TenantFileError::Parse`], with the file.
    #[error("invalid tenant.toml: {message}")]
    Syntax {
        /// The parser's message (line, column, the offending text).
        message: String,
    },
    /// A policy value over the operator's maximum (`[tenant_maxima]` in `serve.toml`).
    #[error("{}{}: [policy] {over}; the operator's serve.toml caps it", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    OverMaximum {
        /// The file.
        path: PathBuf,
        /// The line of the key, when found.
        line: Option<usize>,
        /// The key, its value, the maximum.
        over: Box<OverMaximum>,
        /// The tenant's token (the file parsed): its holder is told the tenant is unavailable.
        token: TokenHash,
    },
}

impl TenantFileError {
    /// The tenant's token digest, when the file was read far enough to know it.
    pub fn token(&self) -> Option<TokenHash> {
        match self {
            TenantFileError::OverMaximum { token, .. } => Some(*token),
            TenantFileError::Parse { token, .. } => *token,
            _ => None,
        }
    }
}

impl TenantFile {
    /// Reads `<folder>/tenant.toml` (beneath the folder, without blocking, bounded) and checks
    /// its policy against the operator's `maxima`.
    pub fn read(folder: &Path, maxima: &TenantMaxima) -> Result<TenantFile, TenantFileError> {
        use hookbox_core::files::{ReadErrorKind, read_file_beneath};
        let path = folder.join(TENANT_FILE);
        let refused = |reason: String| TenantFileError::Refused {
            path: path.clone(),
            reason,
        };
        let text = match read_file_beneath(folder, Path::new(TENANT_FILE), MAX_TENANT_FILE_BYTES) {
            Ok(t) => t,
            Err(e) => {
                return Err(match e.kind {
                    ReadErrorKind::NotFound => TenantFileError::Missing { path },
                    ReadErrorKind::NotAFile { kind } => refused(format!(
                        "is not a regular file ({kind}): a folder, FIFO or device is refused"
                    )),
                    ReadErrorKind::Symlink { .. } | ReadErrorKind::Escapes => refused(
                        "is a symbolic link: a tenant's file is never read through one (it could lead out of the tenant's folder)".into(),
                    ),
                    ReadErrorKind::TooLarge { size, max } => {
                        refused(format!("is {size} bytes: over the {max}-byte limit"))
                    }
                    ReadErrorKind::Io(source) => TenantFileError::Read { path, source },
                    other => refused(other.to_string()),
                });
            }
        };
        let file = TenantFile::parse(&text).map_err(|e| TenantFileError::Parse {
            path: path.clone(),
            message: match e {
                TenantFileError::Syntax { message } => message,
                other => other.to_string(),
            },
            token: token_of(&text),
        })?;
        if let Some(over) = maxima.check(&file.policy).into_iter().next() {
            return Err(TenantFileError::OverMaximum {
                line: line_of(&text, over.field),
                path,
                over: Box::new(over),
                token: file.token_sha256,
            });
        }
        Ok(file)
    }

    /// Parses the text of a `tenant.toml` ([`TenantFileError::Syntax`] when it is not one).
    pub fn parse(text: &str) -> Result<TenantFile, TenantFileError> {
        toml::from_str(text).map_err(|e| TenantFileError::Syntax {
            message: e.to_string().trim_end().to_owned(),
        })
    }

    /// The spec that loads this tenant from `folder` (plugins from `<folder>/plugins`).
    pub fn spec(&self, id: TenantId, folder: PathBuf) -> TenantSpec<TokenHash> {
        TenantSpec {
            id,
            folder,
            policy: self.policy.clone(),
            plugins: None,
            attached: self.token_sha256,
        }
    }
}

/// The token digest of a `tenant.toml` whose policy does not parse, if its `token_sha256` does.
fn token_of(text: &str) -> Option<TokenHash> {
    #[derive(Deserialize)]
    struct TokenOnly {
        token_sha256: TokenHash,
    }
    toml::from_str::<TokenOnly>(text)
        .ok()
        .map(|t| t.token_sha256)
}

/// The 1-based line where `key = …` is written, if it is.
fn line_of(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|i| i + 1)
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
        assert_eq!(
            f.policy.default_timeout_secs,
            std::time::Duration::from_secs(1)
        );
        assert_eq!(f.policy.fail_mode, hookbox_core::rule::FailMode::Block);
        assert!(!f.policy.allow_native_commands, "defaults stay closed");
        let e = TenantFile::parse(&format!(
            "token_sha256 = \"{DIGEST}\"\n[policy]\nmax_rulez = 5"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("max_rulez"), "{e}");
        let e = TenantFile::parse("[policy]\nmax_rules = 5")
            .unwrap_err()
            .to_string();
        assert!(e.contains("token_sha256"), "{e}");
        let e = TenantFile::parse(&format!("token_sha256 = \"{DIGEST}\"\ntoken = \"x\""))
            .unwrap_err()
            .to_string();
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
    fn a_tenant_file_must_be_a_small_regular_file_in_its_folder() {
        let max = TenantMaxima::default();
        let dir = tempfile::tempdir().unwrap();
        let e = TenantFile::read(dir.path(), &max).unwrap_err();
        assert!(matches!(e, TenantFileError::Missing { .. }), "{e}");
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(
            outside.path().join("real.toml"),
            format!("token_sha256 = \"{DIGEST}\""),
        )
        .unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("real.toml"),
            dir.path().join(TENANT_FILE),
        )
        .unwrap();
        let e = TenantFile::read(dir.path(), &max).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        std::fs::remove_file(dir.path().join(TENANT_FILE)).unwrap();
        std::fs::write(dir.path().join(TENANT_FILE), "#".repeat(70_000)).unwrap();
        let e = TenantFile::read(dir.path(), &max).unwrap_err();
        assert!(e.to_string().contains("over the"), "{e}");
    }

    #[test]
    fn a_fifo_in_place_of_the_tenant_file_is_refused_without_waiting() {
        // Stat-then-read once blocked here (in `open`) while the admin lock was held.
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join(TENANT_FILE);
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let (tx, rx) = std::sync::mpsc::channel();
        let folder = dir.path().to_owned();
        std::thread::spawn(move || {
            let _ = tx.send(TenantFile::read(&folder, &TenantMaxima::default()).map(|_| ()));
        });
        let e = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the read returned instead of waiting for a writer")
            .unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
    }

    #[test]
    fn a_policy_over_the_operators_maxima_is_refused_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(TENANT_FILE),
            format!(
                "token_sha256 = \"{DIGEST}\"\n[policy]\nmax_rules = 5\n  max_hooks_in_flight = 1000000000\n"
            ),
        )
        .unwrap();
        let e = TenantFile::read(dir.path(), &TenantMaxima::default()).unwrap_err();
        let shown = e.to_string();
        assert!(
            shown.contains("tenant.toml:4:")
                && shown.contains("max_hooks_in_flight")
                && shown.contains("1000000000")
                && shown.contains("256"),
            "{shown}"
        );
        assert!(
            e.token()
                .unwrap()
                .matches(&TokenHash::from_hex(DIGEST).unwrap())
        );
        let roomy = TenantMaxima {
            max_hooks_in_flight: usize::MAX,
            ..TenantMaxima::default()
        };
        assert!(TenantFile::read(dir.path(), &roomy).is_ok());
    }
}
