//! What a command rule runs, checked when the rule set is built: every file its command names
//! that hookbox can resolve (`hookbox_trust::resolve_command`: the program, through
//! `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PROJECT_DIR}`, `~`, a relative or an absolute path; an
//! interpreter's script argument) must exist and be a regular file, and the program of a direct
//! exec must be executable. A guard whose script is missing would otherwise "run" as the shell's
//! exit 127, which agents read as a non-blocking error: the action goes through.
//!
//! Only names are checked here (`stat`, following links as the shell would); what runs is read
//! at dispatch, or pinned by trust. What a command finds on `PATH` (`npx`, `jq`) is not checked.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use hookbox_core::rule::CommandSpec;
use hookbox_trust::{Base, FileRole, resolve_command};

/// Where relative names point: the plugin's folder, the project, the home folder.
pub(crate) struct Roots<'a> {
    /// The plugin's folder, absolute.
    pub(crate) plugin: &'a Path,
    /// The project folder (`CLAUDE_PROJECT_DIR`, and the cwd hooks run in).
    pub(crate) project: &'a Path,
}

impl Roots<'_> {
    fn resolve(&self, base: Base, path: &str) -> Option<PathBuf> {
        let root = match base {
            Base::Plugin => self.plugin.to_owned(),
            Base::Project => self.project.to_owned(),
            Base::Home => PathBuf::from(std::env::var_os("HOME").filter(|h| !h.is_empty())?),
            Base::Root => PathBuf::from("/"),
        };
        Some(root.join(path))
    }
}

/// Why `spec` cannot run as written, naming the first file that is not there or not runnable
/// (as the rule writes it, then where that is); `None` when every file it names checks out.
pub(crate) fn cannot_run(spec: &CommandSpec, roots: &Roots<'_>) -> Option<String> {
    for f in resolve_command(spec).files {
        let shown = format!("{}{}", f.base.prefix(), f.path);
        let Some(full) = roots.resolve(f.base, &f.path) else {
            continue;
        };
        let role = f.role.as_str();
        let meta = match std::fs::metadata(&full) {
            Ok(m) => m,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Some(format!(
                    "its {role} {shown} does not exist ({})",
                    full.display()
                ));
            }
            Err(e) => {
                return Some(format!(
                    "its {role} {shown} cannot be looked at ({}): {e}",
                    full.display()
                ));
            }
        };
        if !meta.is_file() {
            return Some(format!(
                "its {role} {shown} is not a regular file ({})",
                full.display()
            ));
        }
        if f.role == FileRole::Program && meta.permissions().mode() & 0o111 == 0 {
            return Some(format!(
                "its program {shown} is not executable (mode {:o}, {}): run it through its interpreter (`bash …`, `python3 …`) or make it executable (chmod +x)",
                meta.permissions().mode() & 0o7777,
                full.display()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, mode: u32) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn each_file_a_command_names_is_checked() {
        let plugin = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        write(plugin.path(), "hooks/ok.sh", 0o755);
        write(plugin.path(), "hooks/plain.sh", 0o644);
        std::fs::create_dir_all(plugin.path().join("hooks/dir.sh")).unwrap();
        let roots = Roots {
            plugin: plugin.path(),
            project: project.path(),
        };
        let check = |c: &str| cannot_run(&CommandSpec::shell(c, 5.0), &roots);
        assert_eq!(check("${CLAUDE_PLUGIN_ROOT}/hooks/ok.sh"), None);
        assert_eq!(check("jq . && npx something"), None, "PATH is not checked");
        let why = check("${CLAUDE_PLUGIN_ROOT}/hooks/gone.sh").unwrap();
        assert!(
            why.starts_with("its program ${CLAUDE_PLUGIN_ROOT}/hooks/gone.sh does not exist"),
            "{why}"
        );
        let why = check("${CLAUDE_PLUGIN_ROOT}/hooks/plain.sh").unwrap();
        assert!(why.contains("is not executable (mode 644"), "{why}");
        assert_eq!(
            check("bash ${CLAUDE_PLUGIN_ROOT}/hooks/plain.sh"),
            None,
            "a script read by its interpreter needs no x bit"
        );
        let why = check("python3 ${CLAUDE_PLUGIN_ROOT}/hooks/gone.py").unwrap();
        assert!(why.starts_with("its script "), "{why}");
        let why = check("${CLAUDE_PLUGIN_ROOT}/hooks/dir.sh").unwrap();
        assert!(why.contains("is not a regular file"), "{why}");
        let why = check("./scripts/missing.sh").unwrap();
        assert!(
            why.starts_with("its program ${CLAUDE_PROJECT_DIR}/scripts/missing.sh does not exist"),
            "{why}"
        );
        let exec = CommandSpec::exec(vec!["${CLAUDE_PLUGIN_ROOT}/hooks/gone".into()], 5.0);
        assert!(cannot_run(&exec, &roots).is_some());
    }
}
