//! Catching the processes that leave a hook's process group: the policy (what to try), what a
//! runner ended up with, and the per-run scope that kills them when the hook ends.
//!
//! The process group kill (see `group.rs`) ends every process that stays in the group. A
//! process that calls `setsid` (or `setpgid`) leaves it, and survives that kill. Linux offers
//! two ways to still find it: a cgroup v2 per hook (complete: the kernel keeps every
//! descendant inside), or a child subreaper (orphans come back to this process; recognised by
//! an environment marker). When neither is available, the runner says so
//! ([`crate::CommandRunner::containment`]) and only the process group is killed.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::cgroup::{CgroupTree, HookCgroup};
use crate::subreaper::{RunMark, Subreaper};

/// How a runner catches processes that leave a hook's process group.
///
/// | field | default | effect |
/// | --- | --- | --- |
/// | [`cgroup`](Self::cgroup) | `true` | each hook in a cgroup v2 of its own, killed whole at the end |
/// | [`cgroup_parent`](Self::cgroup_parent) | `None` (this process's own cgroup) | where the hook cgroups are created |
/// | [`subreaper`](Self::subreaper) | `false` | without a usable cgroup, this process becomes a child subreaper |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainmentPolicy {
    /// Put each hook in a cgroup v2 of its own, and kill the whole cgroup (`cgroup.kill`) when
    /// the hook ends. Default `true`; used when a cgroup v2 hierarchy is mounted, the kernel
    /// has `cgroup.kill` (Linux 5.14) and this process may create cgroups under
    /// [`cgroup_parent`](Self::cgroup_parent) and move processes into them (root, or a
    /// delegated subtree: systemd `Delegate=yes`, a container with a writable cgroupfs).
    pub cgroup: bool,
    /// The cgroup v2 folder the hook cgroups are created in. Default `None`: a child folder of
    /// this process's own cgroup. Set it to a delegated subtree when this process's own cgroup
    /// is not writable (a systemd service without `Delegate=yes`: systemd manages that folder).
    pub cgroup_parent: Option<PathBuf>,
    /// Without a usable cgroup, make this process a child subreaper
    /// (`PR_SET_CHILD_SUBREAPER`) and kill each hook's orphans when it ends. Default `false`:
    /// it is process-wide, and it reaps every zombie child that no hook runner spawned, so only
    /// a process that starts its child processes through hookbox alone may turn it on (the
    /// `hookbox` CLI and `hookbox serve` do). Orphans are recognised by the
    /// [`RUN_MARKER_VAR`](crate::RUN_MARKER_VAR) environment variable, which a hook can remove.
    pub subreaper: bool,
}

impl Default for ContainmentPolicy {
    fn default() -> Self {
        ContainmentPolicy {
            cgroup: true,
            cgroup_parent: None,
            subreaper: false,
        }
    }
}

impl ContainmentPolicy {
    /// Only the process group: no cgroup, no subreaper.
    pub fn process_group_only() -> ContainmentPolicy {
        ContainmentPolicy {
            cgroup: false,
            cgroup_parent: None,
            subreaper: false,
        }
    }
}

/// What a runner uses to catch processes that leave a hook's process group.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Containment {
    /// A cgroup v2 per hook, created in `dir`: nothing a hook starts outlives it.
    Cgroup {
        /// The runner's folder of hook cgroups.
        dir: PathBuf,
    },
    /// This process is a child subreaper: a hook's orphans that keep its environment marker
    /// are killed when it ends.
    Subreaper {
        /// Why no cgroup is used.
        no_cgroup: String,
    },
    /// Only the process group is killed: a process that calls `setsid` outlives the hook.
    ProcessGroup {
        /// Why neither a cgroup nor a subreaper is used.
        reason: String,
    },
}

impl Containment {
    /// Whether a process that left the hook's process group is still killed.
    pub fn catches_escapes(&self) -> bool {
        !matches!(self, Containment::ProcessGroup { .. })
    }
}

impl fmt::Display for Containment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Containment::Cgroup { dir } => write!(
                f,
                "each hook runs in a cgroup v2 of its own under `{}`; everything it starts is killed when it ends",
                dir.display()
            ),
            Containment::Subreaper { no_cgroup } => write!(
                f,
                "no cgroup ({no_cgroup}); this process is a child subreaper and kills the orphans a hook leaves, \
                 unless they removed their HOOKBOX_HOOK_RUN variable"
            ),
            Containment::ProcessGroup { reason } => write!(
                f,
                "only the hook's process group is killed ({reason}); a process that calls `setsid` outlives its hook"
            ),
        }
    }
}

/// What a runner has set up, decided once on its first run.
#[derive(Debug)]
pub(crate) enum Active {
    Cgroup(Arc<CgroupTree>),
    Subreaper(Subreaper, String),
    ProcessGroup(String),
}

impl Active {
    /// Sets up what `policy` asks for, falling back as far as needed.
    pub(crate) fn set_up(policy: &ContainmentPolicy) -> Active {
        let no_cgroup = if policy.cgroup {
            match CgroupTree::create(policy.cgroup_parent.as_deref()) {
                Ok(tree) => return Active::Cgroup(Arc::new(tree)),
                Err(e) => e.to_string(),
            }
        } else {
            "turned off by the runner's containment policy".to_owned()
        };
        if !policy.subreaper {
            let reason = format!("{no_cgroup}; the subreaper fallback is off");
            let what = Containment::ProcessGroup {
                reason: reason.clone(),
            };
            // A warning only when the policy asked for a cgroup and did not get one.
            if policy.cgroup {
                tracing::warn!("{what}");
            } else {
                tracing::info!("{what}");
            }
            return Active::ProcessGroup(reason);
        }
        match Subreaper::enable() {
            Ok(reaper) => Active::Subreaper(reaper, no_cgroup),
            Err(e) => {
                let reason = format!("{no_cgroup}; cannot become a child subreaper: {e}");
                tracing::warn!(
                    "{}",
                    Containment::ProcessGroup {
                        reason: reason.clone()
                    }
                );
                Active::ProcessGroup(reason)
            }
        }
    }

    /// The public description.
    pub(crate) fn describe(&self) -> Containment {
        match self {
            Active::Cgroup(tree) if tree.is_broken() => Containment::ProcessGroup {
                reason: format!(
                    "the kernel refused to move a hook into a cgroup under `{}`",
                    tree.dir().display()
                ),
            },
            Active::Cgroup(tree) => Containment::Cgroup {
                dir: tree.dir().to_owned(),
            },
            Active::Subreaper(_, no_cgroup) => Containment::Subreaper {
                no_cgroup: no_cgroup.clone(),
            },
            Active::ProcessGroup(reason) => Containment::ProcessGroup {
                reason: reason.clone(),
            },
        }
    }

    /// The scope of one run, with a note when it cannot have its usual one.
    pub(crate) fn scope(&self, notes: &mut Vec<String>) -> Scope<'_> {
        match self {
            Active::Cgroup(tree) if tree.is_broken() => Scope::ProcessGroup,
            Active::Cgroup(tree) => match tree.hook() {
                Ok(cgroup) => Scope::Cgroup(cgroup),
                Err(e) => {
                    notes.push(format!(
                        "the hook ran without a cgroup ({e}); processes that leave its process \
                         group outlive it"
                    ));
                    Scope::ProcessGroup
                }
            },
            Active::Subreaper(reaper, _) => Scope::Subreaper(reaper.begin()),
            Active::ProcessGroup(_) => Scope::ProcessGroup,
        }
    }
}

/// How one run's leftovers are found and killed.
#[derive(Debug)]
pub(crate) enum Scope<'a> {
    Cgroup(HookCgroup),
    Subreaper(RunMark<'a>),
    ProcessGroup,
}

impl Scope<'_> {
    /// Kills what is left of the hook beyond its process group `pgid` (already killed), and
    /// waits (up to `limit`) until it is gone. Returns the notes to add to the run.
    pub(crate) async fn finish(&mut self, pgid: Option<i32>, limit: Duration) -> Vec<String> {
        let mut notes = Vec::new();
        match self {
            Scope::Cgroup(cgroup) => {
                match cgroup.kill(pgid) {
                    Ok(0) => {}
                    Ok(n) => notes.push(escaped_note(n, "with the hook's cgroup")),
                    Err(e) => notes.push(format!(
                        "cannot kill the hook's cgroup ({e}); processes that left its process \
                         group may outlive it"
                    )),
                }
                if !cgroup.emptied(limit).await {
                    notes.push(format!(
                        "the hook's cgroup `{}` still had processes {} s after the kill",
                        cgroup.dir().display(),
                        limit.as_secs_f64()
                    ));
                } else {
                    cgroup.release();
                }
            }
            Scope::Subreaper(mark) => {
                let (killed, done) = mark.sweep(pgid, limit).await;
                if killed > 0 {
                    notes.push(escaped_note(killed, "by the subreaper sweep"));
                }
                if !done {
                    notes.push(format!(
                        "processes the hook left behind were still being killed {} s after it \
                         ended; some may outlive it",
                        limit.as_secs_f64()
                    ));
                }
            }
            Scope::ProcessGroup => {}
        }
        notes
    }
}

fn escaped_note(n: usize, how: &str) -> String {
    let what = if n == 1 {
        "1 process".to_owned()
    } else {
        format!("{n} processes")
    };
    format!(
        "{what} had left the hook's process group (`setsid`, a daemon) and would have outlived \
         it; killed {how}"
    )
}
