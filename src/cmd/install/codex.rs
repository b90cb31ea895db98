//! Codex's trust in hookbox's entries (`hookbox_agents::install::codex_trust`): Codex skips an
//! untrusted command hook without a word, so after `install --agent codex` the guard protects
//! nothing until someone trusts it. With `--trust-codex` install records the trust in the user's
//! `$CODEX_HOME/config.toml` (else `~/.codex/config.toml`) — each entry's key and Codex's own hash
//! of it, shown before anything is written, the old file kept as a backup — and keeps it in step
//! with later installs and uninstalls. Without the flag it says, loudly, that the guard is
//! inactive until trusted.

use std::path::{Path, PathBuf};

use anyhow::Context;
use hookbox_agents::install::codex_trust;
use hookbox_host::default_state_root;

use super::report::{CodexTrustReport, Out};
use super::{diff, write};
use crate::cmd::term::untrusted;

/// Codex's user configuration file.
fn config_path() -> anyhow::Result<PathBuf> {
    let dir = std::env::var_os("CODEX_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".codex"))
        })
        .context("neither CODEX_HOME nor HOME is set, so Codex's config.toml cannot be found")?;
    Ok(dir.join("config.toml"))
}

/// After an install (or an uninstall that leaves entries) wrote `hooks_text` to `hooks_path`:
/// records Codex's trust in hookbox's entries when `flag` asks, or when the user asked before
/// (a block of records is there, and would otherwise trust entries that are gone); otherwise, on
/// install (`warn`), says that Codex will skip them.
pub(super) fn trust(
    out: &mut Out,
    hooks_path: &Path,
    hooks_text: &str,
    flag: bool,
    warn: bool,
    dry_run: bool,
) -> anyhow::Result<()> {
    let config = config_path()?;
    write::refuse_symlinks(None, &config)?;
    let before = write::read(&config)?;
    let old = before.clone().unwrap_or_default();
    let recorded = old.contains("hookbox: Codex's trust");
    if !flag && !recorded {
        if warn {
            out.warning(format!(
                "Codex skips hooks it has not been told to trust, without a word: until these entries are trusted, the guard protects NOTHING in Codex. Trust them in Codex's /hooks screen, or run install again with --trust-codex to record Codex's trust (its hash of each entry) in {}",
                config.display()
            ));
        }
        return Ok(());
    }
    let path = std::path::absolute(hooks_path).context("cannot resolve the hooks file")?;
    let records = codex_trust::records(&path.display().to_string(), hooks_text)?;
    let after = codex_trust::apply(&old, &records, &config.display().to_string())?;
    show_and_write(out, &config, before.as_deref(), &after, &records, dry_run)
}

/// After an uninstall that removed every hookbox entry: the trust records go too.
pub(super) fn untrust(out: &mut Out, dry_run: bool) -> anyhow::Result<()> {
    let config = config_path()?;
    write::refuse_symlinks(None, &config)?;
    let Some(old) = write::read(&config)? else {
        return Ok(());
    };
    let after = codex_trust::apply(&old, &[], &config.display().to_string())?;
    show_and_write(out, &config, Some(&old), &after, &[], dry_run)
}

fn show_and_write(
    out: &mut Out,
    config: &Path,
    before: Option<&str>,
    after: &str,
    records: &[codex_trust::TrustRecord],
    dry_run: bool,
) -> anyhow::Result<()> {
    let file = config.display().to_string();
    let mut report = CodexTrustReport {
        file: file.clone(),
        outcome: "unchanged",
        records: records
            .iter()
            .map(|r| serde_json::json!({"key": r.key, "hash": r.hash, "command": r.command}))
            .collect(),
        diff: None,
        backup: None,
    };
    let result = show_and_write_into(out, &mut report, config, before, after, dry_run);
    if out.json() {
        out.report.codex_trust = Some(report);
    }
    result
}

fn show_and_write_into(
    out: &mut Out,
    report: &mut CodexTrustReport,
    config: &Path,
    before: Option<&str>,
    after: &str,
    dry_run: bool,
) -> anyhow::Result<()> {
    let file = &report.file;
    if before.unwrap_or("") == after {
        if !report.records.is_empty() {
            out.line(&format!(
                "{file}: Codex's trust in the entries is already recorded"
            ))?;
        }
        return Ok(());
    }
    if !report.records.is_empty() {
        let n = report.records.len();
        out.line(&format!(
            "Codex's trust, recorded for {n} entr{} (Codex runs an entry only while its hash matches):",
            if n == 1 { "y" } else { "ies" }
        ))?;
        for r in &report.records {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            out.line(&format!(
                "  {}\n    {}\n    runs: {}",
                s("key"),
                s("hash"),
                untrusted(&s("command"))
            ))?;
        }
    }
    let change = diff::diff(file, before.unwrap_or(""), after);
    out.line(untrusted(change.trim_end_matches('\n')).as_ref())?;
    report.diff = Some(change);
    if dry_run {
        report.outcome = "dry-run";
        out.line(&format!("dry run: {file} not written"))?;
        return Ok(());
    }
    if let Some(old) = before.filter(|o| !o.is_empty()) {
        let saved = write::backup(default_state_root(), config, "codex", old)?;
        out.line(&format!("backup: {}", saved.display()))?;
        report.backup = Some(saved.display().to_string());
    }
    write::refuse_shared_folders(None, config)?;
    write::replace(config, after.as_bytes())?;
    report.outcome = if after.contains("hookbox: Codex's trust") {
        "written"
    } else {
        "removed"
    };
    out.line(&format!("written: {file}"))?;
    Ok(())
}
