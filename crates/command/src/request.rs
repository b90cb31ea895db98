//! What the host asks the runner to run: the rule's command, the payload, and the context the
//! hook's environment is built from.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hookbox_core::Dialect;
use hookbox_core::event::Event;
use hookbox_core::rule::CommandSpec;

use crate::views::{ReadOnlyView, ViewPolicy};

/// The context a hook runs in: it decides the environment variables and placeholders.
#[derive(Debug, Clone)]
pub struct HookContext {
    /// The rule's dialect: `ghast` adds `GHAST_HOOK=true`, `simple` adds the `HOOK_*` variables.
    pub dialect: Dialect,
    /// The project root (`CLAUDE_PROJECT_DIR`); unset when `None`.
    pub project_dir: Option<PathBuf>,
    /// The plugin's folder (`CLAUDE_PLUGIN_ROOT`, `PLUGIN_ROOT`); unset when `None`.
    pub plugin_root: Option<PathBuf>,
    /// The plugin's per-session writable folder (`CLAUDE_PLUGIN_DATA`, `PLUGIN_DATA`), as made by
    /// [`crate::create_plugin_data_dir`]; unset when `None`.
    pub plugin_data: Option<PathBuf>,
    /// The event, for the simple dialect's `HOOK_EVENT`, `HOOK_TOOL_NAME`, `HOOK_TOOL_INPUT` and
    /// `HOOK_TOOL_OUTPUT`. Shared, since one event fans out to many hooks.
    pub event: Option<Arc<Event>>,
}

impl HookContext {
    /// A context of `dialect` with nothing else known.
    pub fn new(dialect: Dialect) -> HookContext {
        HookContext {
            dialect,
            project_dir: None,
            plugin_root: None,
            plugin_data: None,
            event: None,
        }
    }

    /// This context with the project root.
    pub fn with_project_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.project_dir = Some(dir.into());
        self
    }

    /// This context with the plugin's folder.
    pub fn with_plugin_root(mut self, dir: impl Into<PathBuf>) -> Self {
        self.plugin_root = Some(dir.into());
        self
    }

    /// This context with the plugin's data folder.
    pub fn with_plugin_data(mut self, dir: impl Into<PathBuf>) -> Self {
        self.plugin_data = Some(dir.into());
        self
    }

    /// This context with the event.
    pub fn with_event(mut self, event: impl Into<Arc<Event>>) -> Self {
        self.event = Some(event.into());
        self
    }
}

/// One command hook to run.
#[derive(Debug, Clone)]
pub struct CommandRequest {
    /// The rule's command: shell form (run by its shell, `sh -c` by default) or exec form (no
    /// shell). `run_async` is the host's business: the runner always runs to completion.
    pub spec: CommandSpec,
    /// Written to the hook's stdin, then stdin is closed. Shared, since one payload fans out to
    /// many hooks. A hook that does not read it is fine.
    pub stdin: Arc<[u8]>,
    /// The working directory. `None`: the plugin data folder when known (ghast's rule when the
    /// event has no `cwd`), else the host's own working directory.
    pub cwd: Option<PathBuf>,
    /// The environment context.
    pub context: HookContext,
    /// Wall-clock limit. On expiry the hook's whole process group is killed and the run reports
    /// `timed_out`. Set from `spec.timeout_secs` by [`CommandRequest::new`].
    pub timeout: Duration,
    /// Descriptors the hook inherits, at the same numbers (3 or above): the sealed copies of
    /// pinned scripts the command names as `/proc/self/fd/N`. Every other descriptor of the
    /// host stays closed to the hook. Default: none.
    pub pass_fds: Vec<Arc<OwnedFd>>,
    /// Folders (or files) the hook sees read-only at other paths, in a private mount namespace
    /// of its own that everything it starts inherits (see [`crate::view_support`]). Made
    /// before the hook's working directory is entered; a view that cannot be made fails the
    /// spawn (the hook never runs without the views asked for). Default: none (the host's
    /// mounts, no namespace).
    pub views: Vec<ReadOnlyView>,
    /// How the namespace of `views` is made. Default: [`ViewPolicy::Auto`].
    pub view_policy: ViewPolicy,
}

impl CommandRequest {
    /// A request for `spec` with an empty stdin and no working directory; the timeout is the
    /// spec's `timeout_secs` (a negative or NaN value, which config validation should have
    /// refused, falls back to the dialect's default; a value too large for a `Duration` means
    /// no practical limit).
    pub fn new(spec: CommandSpec, context: HookContext) -> CommandRequest {
        let timeout = timeout_from_secs(spec.timeout_secs, context.dialect);
        CommandRequest {
            spec,
            stdin: Arc::from(Vec::new()),
            cwd: None,
            context,
            timeout,
            pass_fds: Vec::new(),
            views: Vec::new(),
            view_policy: ViewPolicy::Auto,
        }
    }

    /// This request with `bytes` as stdin.
    pub fn with_stdin(mut self, bytes: impl Into<Arc<[u8]>>) -> Self {
        self.stdin = bytes.into();
        self
    }

    /// This request running in `cwd`.
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// This request passing `fds` to the hook (see [`CommandRequest::pass_fds`]).
    pub fn with_pass_fds(mut self, fds: Vec<Arc<OwnedFd>>) -> Self {
        self.pass_fds = fds;
        self
    }

    /// This request showing `views` to the hook (see [`CommandRequest::views`]), its namespace
    /// made as `policy` says.
    pub fn with_views(mut self, views: Vec<ReadOnlyView>, policy: ViewPolicy) -> Self {
        self.views = views;
        self.view_policy = policy;
        self
    }

    /// This request with `timeout` instead of the spec's.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

fn timeout_from_secs(secs: f64, dialect: Dialect) -> Duration {
    if secs.is_nan() || secs < 0.0 {
        return Duration::from_secs_f64(dialect.default_timeout_secs());
    }
    Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_comes_from_the_spec() {
        assert_eq!(
            timeout_from_secs(0.25, Dialect::Claude),
            Duration::from_millis(250)
        );
        assert_eq!(
            timeout_from_secs(-1.0, Dialect::Ghast),
            Duration::from_secs(10)
        );
        assert_eq!(
            timeout_from_secs(f64::NAN, Dialect::Simple),
            Duration::from_secs(30)
        );
        assert_eq!(
            timeout_from_secs(f64::INFINITY, Dialect::Claude),
            Duration::MAX
        );
    }
}
