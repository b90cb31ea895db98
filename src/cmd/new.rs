//! `hookbox new NAME --kind … --lang …`: start a plugin from a template compiled into the binary
//! (`new/templates.rs`) — the manifest, `hooks/hooks.json`, the hook's source (a script, or a
//! wasm guest with its build script), a README with the two commands that build and test it, and
//! `tests/` cases that pass as generated.
//!
//! It writes only into a folder that does not exist or is empty, and never through a symlink:
//! the folder is opened `O_DIRECTORY | O_NOFOLLOW` and every file and folder is created beneath
//! that handle with `O_EXCL | O_NOFOLLOW`, so a link planted inside it (or in its place) is
//! refused instead of written through. `--dry-run` lists the files instead.

pub(crate) mod templates;

use std::io::Write as _;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use rustix::fs::{Mode, OFlags};
use serde_json::json;

use crate::cli::{KindArg, LangArg, NewArgs};
use templates::{Kind, Lang, TemplateFile};

/// The longest plugin name `new` accepts (Claude Code's plugin names are short kebab-case).
pub(crate) const MAX_NAME_CHARS: usize = 64;

impl From<KindArg> for Kind {
    fn from(k: KindArg) -> Kind {
        match k {
            KindArg::Guard => Kind::Guard,
            KindArg::Context => Kind::Context,
            KindArg::Stop => Kind::Stop,
            KindArg::Audit => Kind::Audit,
        }
    }
}

impl From<LangArg> for Lang {
    fn from(l: LangArg) -> Lang {
        match l {
            LangArg::Sh => Lang::Sh,
            LangArg::Python => Lang::Python,
            LangArg::Node => Lang::Node,
            LangArg::Rust => Lang::Rust,
            LangArg::Js => Lang::Js,
            LangArg::PythonWasm => Lang::PythonWasm,
        }
    }
}

/// Runs `hookbox new`.
pub(crate) fn run(args: &NewArgs) -> anyhow::Result<ExitCode> {
    check_name(&args.name)?;
    let (kind, lang) = (Kind::from(args.kind), Lang::from(args.lang));
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(&args.name));
    let files = templates::plugin(&args.name, kind, lang);
    if !args.dry_run {
        write_plugin(&dir, &files)?;
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        let v = json!({
            "name": args.name,
            "kind": kind.as_str(),
            "lang": lang.as_str(),
            "dir": dir.display().to_string(),
            "written": !args.dry_run,
            "files": files.iter().map(|f| json!({"path": f.path, "bytes": f.text.len()})).collect::<Vec<_>>(),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?).context("cannot write to stdout")?;
        return Ok(ExitCode::SUCCESS);
    }
    let verb = if args.dry_run {
        "would create"
    } else {
        "created"
    };
    writeln!(
        out,
        "{verb} {} — a {} plugin in {} ({} files):",
        dir.display(),
        kind.as_str(),
        lang.as_str(),
        files.len()
    )?;
    let width = files.iter().map(|f| f.path.len()).max().unwrap_or(0);
    for f in &files {
        writeln!(out, "  {:<width$}  {:>6} bytes", f.path, f.text.len())?;
    }
    if !args.dry_run {
        let build = if lang.is_wasm() {
            "sh build.sh"
        } else {
            "hookbox validate ."
        };
        writeln!(
            out,
            "next: cd {} && {build} && hookbox test .   (README.md says more)",
            dir.display()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A plugin name: lowercase ASCII letters, digits and `-`, starting with a letter, not ending
/// with `-`, at most [`MAX_NAME_CHARS`]. It becomes a folder, a manifest name, a Rust crate and
/// a component file, so nothing else (no `/`, `..`, space or quote) gets in.
pub(crate) fn check_name(name: &str) -> anyhow::Result<()> {
    let ok = name.len() <= MAX_NAME_CHARS
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.ends_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        bail!(
            "`{}` is not a plugin name: use lowercase letters, digits and `-`, starting with a letter, at most {MAX_NAME_CHARS} characters (e.g. `my-guard`); give the folder with --dir",
            name.escape_debug()
        );
    }
    Ok(())
}

/// Creates `dir` (or takes it when it is an empty folder) and writes `files` beneath it.
fn write_plugin(dir: &Path, files: &[TemplateFile]) -> anyhow::Result<()> {
    let root = open_target(dir)?;
    for (n, f) in files.iter().enumerate() {
        let names: Vec<String> = f.path.split('/').map(str::to_owned).collect();
        let mode = if f.executable { 0o755 } else { 0o644 };
        crate::scratch::create_beneath(&root, &names, f.text.as_bytes(), mode).with_context(
            || {
                format!(
                    "cannot write {}/{} ({n} of {} files written)",
                    dir.display(),
                    f.path,
                    files.len()
                )
            },
        )?;
    }
    Ok(())
}

/// The target folder, opened without following a symlink: created when missing (its parents
/// too), refused when it is anything but an empty folder.
fn open_target(dir: &Path) -> anyhow::Result<OwnedFd> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("cannot create {}", parent.display()))?;
            }
            std::fs::create_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", dir.display())),
        Ok(m) if m.file_type().is_symlink() => {
            bail!(
                "{} is a symbolic link: hookbox new writes only into a new or empty folder, never through a link",
                dir.display()
            )
        }
        Ok(m) if !m.is_dir() => {
            bail!("{} exists and is not a folder", dir.display())
        }
        Ok(_) => {
            let mut entries: Vec<String> = std::fs::read_dir(dir)
                .with_context(|| format!("cannot read {}", dir.display()))?
                .take(4)
                .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect::<Result<_, _>>()
                .with_context(|| format!("cannot read {}", dir.display()))?;
            if !entries.is_empty() {
                entries.sort();
                bail!(
                    "{} is not empty ({}…): hookbox new writes only into a new or empty folder; pick another --dir",
                    dir.display(),
                    entries.join(", ")
                );
            }
        }
    }
    rustix::fs::open(
        dir,
        OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .with_context(|| format!("cannot open {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_leave_the_folder_are_refused() {
        for bad in [
            "../x", "a/b", "/abs", "..", ".", "", "A", "my guard", "-x", "x-", "x\0", "é", "a\"b",
        ] {
            let e = check_name(bad).unwrap_err().to_string();
            assert!(e.contains("is not a plugin name"), "{bad:?}: {e}");
        }
        check_name(&"a".repeat(MAX_NAME_CHARS)).unwrap();
        check_name(&"a".repeat(MAX_NAME_CHARS + 1)).unwrap_err();
        check_name("my-guard-2").unwrap();
    }
}
