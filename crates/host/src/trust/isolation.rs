//! How approved hooks run under `require` ([`Isolation`]): in a private mount namespace in which
//! the plugin folder's own path shows its approval's snapshot, read-only (and the approval store
//! is read-only over itself) — so every spelling of a path reaches the approved bytes — or,
//! where the kernel cannot make one or the setting says `off`, through `CLAUDE_PLUGIN_ROOT`
//! and the rewritten command alone ("variable only"), in which case a command that names the
//! live plugin folder's absolute path is unpinnable ([`names_live_folder`]).
//!
//! Detected once per process (`hookbox_command::view_support`: a probe child that mounts an
//! empty folder read-only over itself), then remembered.

use std::path::Path;

use hookbox_command::{ReadOnlyView, ViewPolicy, ViewSupport, view_support};
use hookbox_core::rule::{CommandLine, CommandSpec};
use serde::{Deserialize, Serialize};

use super::SnapshotBind;

/// Whether approved hooks may run in a private mount namespace (`TrustPolicy::namespace`, the
/// user's `trust.namespace` setting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TrustNamespace {
    /// Where the kernel allows it: a mount namespace alone as root, inside a user namespace of
    /// its own otherwise. Default.
    #[default]
    Auto,
    /// Always inside a user namespace too, even as root (as an ordinary user runs them).
    UserNamespace,
    /// Never: approved hooks run through the variable and the rewritten command alone.
    Off,
}

impl TrustNamespace {
    /// The runner's policy for this setting.
    pub fn view_policy(self) -> ViewPolicy {
        match self {
            TrustNamespace::Auto => ViewPolicy::Auto,
            TrustNamespace::UserNamespace => ViewPolicy::UserNamespace,
            TrustNamespace::Off => ViewPolicy::Off,
        }
    }
}

/// How approved hooks run under `require`, on this machine, with this setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "isolation", rename_all = "kebab-case")]
pub enum Isolation {
    /// In a private mount namespace: the plugin folder's own path shows the snapshot,
    /// read-only.
    MountNamespace {
        /// Inside a user namespace of its own too (an ordinary user).
        user_namespace: bool,
    },
    /// `CLAUDE_PLUGIN_ROOT` points at the snapshot and the plugin files a command names are
    /// rewritten to it; nothing else. `reason`: why there is no namespace.
    VariableOnly {
        /// Why (the setting, the platform, the kernel's refusal).
        reason: String,
    },
}

impl Isolation {
    /// The isolation `setting` gives in this process (probed once, then remembered).
    pub fn of(setting: TrustNamespace) -> Isolation {
        match view_support(setting.view_policy()) {
            ViewSupport::MountNamespace { user_namespace } => {
                Isolation::MountNamespace { user_namespace }
            }
            ViewSupport::Unavailable { reason } => Isolation::VariableOnly { reason },
        }
    }

    /// Whether approved hooks get the snapshot at the plugin's own path.
    pub fn has_views(&self) -> bool {
        matches!(self, Isolation::MountNamespace { .. })
    }

    /// `mount-namespace` or `variable-only`, as in `--json`.
    pub fn name(&self) -> &'static str {
        match self {
            Isolation::MountNamespace { .. } => "mount-namespace",
            Isolation::VariableOnly { .. } => "variable-only",
        }
    }

    /// Why there is no namespace, when there is none.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Isolation::MountNamespace { .. } => None,
            Isolation::VariableOnly { reason } => Some(reason),
        }
    }

    /// One sentence for people: how approved hooks run and what that covers.
    pub fn describe(&self) -> String {
        match self {
            Isolation::MountNamespace { user_namespace } => format!(
                "under trust = require, approved hooks run in a private mount namespace{}: the plugin folder's own path shows its approved snapshot, read-only, whatever the spelling of the path",
                if *user_namespace {
                    " (inside a user namespace)"
                } else {
                    ""
                }
            ),
            Isolation::VariableOnly { reason } => format!(
                "under trust = require, approved hooks run from their snapshot through ${{CLAUDE_PLUGIN_ROOT}} only (no private mount namespace: {reason}); a command that names the plugin folder's own path cannot be pinned"
            ),
        }
    }
}

/// The views of an approved hook: each root of its snapshot's tree over the live folder (or
/// file) it was taken from, and the approval store over itself — all read-only, so that a
/// hook, even one running as root, writes neither.
pub(crate) fn plugin_views(binds: &[SnapshotBind], store: Option<&Path>) -> Vec<ReadOnlyView> {
    let mut views: Vec<ReadOnlyView> = binds
        .iter()
        .map(|b| ReadOnlyView {
            source: b.tree.clone(),
            target: b.live.clone(),
        })
        .collect();
    if let Some(store) = store {
        views.push(ReadOnlyView {
            source: store.to_owned(),
            target: store.to_owned(),
        });
    }
    views
}

/// Without views: why `spec` cannot be pinned when it names the live plugin folder (`root`,
/// canonical, or as the plugin was found) by its absolute path — what runs there is the live
/// folder's, whatever the snapshot holds. `None` when it does not.
pub fn names_live_folder(spec: &CommandSpec, roots: &[&Path]) -> Option<String> {
    let words: Vec<&str> = match &spec.command {
        CommandLine::Shell { text, .. } => vec![text.as_str()],
        CommandLine::Exec { argv } => argv.iter().map(String::as_str).collect(),
    };
    let root = roots.iter().find(|r| {
        let r = r.to_string_lossy();
        r.len() > 1 && words.iter().any(|w| w.contains(r.as_ref()))
    })?;
    Some(format!(
        "it names the plugin folder by its own path ({}), which reaches the live files without a private mount namespace — use ${{CLAUDE_PLUGIN_ROOT}}",
        root.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_naming_the_live_folder_is_found_in_either_form() {
        let root = Path::new("/home/u/plugins/guard");
        let shell = CommandSpec::shell("cd /home/u/plugins/guard && ./g.sh", 5.0);
        let why = names_live_folder(&shell, &[root]).unwrap();
        assert!(
            why.contains("/home/u/plugins/guard") && why.contains("${CLAUDE_PLUGIN_ROOT}"),
            "{why}"
        );
        let exec = CommandSpec::exec(vec!["/home/u/plugins/guard/g.sh".into()], 5.0);
        assert!(names_live_folder(&exec, &[root]).is_some());
        let var = CommandSpec::shell("\"${CLAUDE_PLUGIN_ROOT}/g.sh\"", 5.0);
        assert_eq!(names_live_folder(&var, &[root]), None);
        assert_eq!(names_live_folder(&var, &[Path::new("/")]), None);
    }

    #[test]
    fn turned_off_is_variable_only_with_the_reason() {
        let iso = Isolation::of(TrustNamespace::Off);
        assert_eq!(iso.name(), "variable-only");
        assert!(
            iso.reason().is_some_and(|r| r.contains("turned off")),
            "{iso:?}"
        );
        let v = serde_json::to_value(&iso).unwrap();
        assert_eq!(v["isolation"], "variable-only");
    }
}
