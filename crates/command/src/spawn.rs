//! Turning a request into a started process: program and arguments with placeholders
//! substituted, environment, working directory, pipes, and a process group of its own.

use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;

use tokio::process::{Child, Command};

use crate::environment::{context_vars, placeholder_values};
use crate::error::SpawnError;
use crate::placeholder::substitute;
use crate::request::CommandRequest;

/// The shell of the shell form. An absolute path, so a hook still runs when the inherited
/// `PATH` is odd or empty; POSIX systems all have it.
const SHELL: &str = "/bin/sh";

/// Starts the hook described by `req`, with `inherited` as the base of its environment.
///
/// The child leads a new process group (so the whole group can be killed), has all three
/// standard streams piped, and is killed if its `Child` is dropped unreaped.
pub(crate) fn spawn(
    req: &CommandRequest,
    inherited: &[(OsString, OsString)],
) -> Result<Child, SpawnError> {
    let values = placeholder_values(&req.context);
    let vars: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (program, args) = match (&req.spec.command, &req.spec.args) {
        (Some(text), _) => (
            SHELL.to_owned(),
            vec!["-c".to_owned(), substitute(text, &vars).into_owned()],
        ),
        (None, Some(args)) => {
            let mut args = args.iter().map(|a| substitute(a, &vars).into_owned());
            let program = args.next().ok_or(SpawnError::EmptyArgs)?;
            (program, args.collect())
        }
        (None, None) => return Err(SpawnError::NoCommand),
    };

    let mut cmd = Command::new(&program);
    cmd.args(&args)
        .env_clear()
        .envs(inherited.iter().map(|(k, v)| (k, v)))
        .envs(context_vars(&req.context))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let cwd = req.cwd.as_deref().or(req.context.plugin_data.as_deref());
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    cmd.spawn().map_err(|source| classify(program, cwd, source))
}

/// A missing working directory fails the spawn with the same "not found" as a missing program;
/// look at the directory to say which one it was.
fn classify(program: String, cwd: Option<&Path>, source: std::io::Error) -> SpawnError {
    match cwd {
        Some(cwd) if !cwd.is_dir() => SpawnError::Cwd {
            program,
            cwd: cwd.to_owned(),
        },
        _ => SpawnError::Spawn { program, source },
    }
}
