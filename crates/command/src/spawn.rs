//! Turning a request into a started process: program and arguments with placeholders
//! substituted, the rule's shell, environment, working directory, pipes, a process group of
//! its own, and the run's containment (its cgroup, or the subreaper's marker).

use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::process::Stdio;

use hookbox_core::rule::CommandLine;
use tokio::process::Command;

use crate::child::HookChild;
use crate::containment::Scope;
use crate::environment::{context_vars, placeholder_values};
use crate::error::SpawnError;
use crate::join::join_before_exec;
use crate::pass_fds::keep_open;
use crate::placeholder::substitute;
use crate::request::CommandRequest;
use crate::shell::{install_hint, launchers};
use crate::subreaper::{RUN_MARKER_VAR, spawn_registered};

/// A started hook, with notes about how it was started when that was unusual.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub(crate) child: HookChild,
    pub(crate) notes: Vec<String>,
}

/// What to execute: the candidates in order (several only for a shell with alternatives), and
/// the arguments after the program.
struct Plan {
    programs: Vec<String>,
    args: Vec<Vec<String>>,
}

/// Starts the hook described by `req`, with `inherited` as the base of its environment, in
/// `scope`.
///
/// The child leads a new process group (so the whole group can be killed), has all three
/// standard streams piped, and is killed if its `HookChild` is dropped unreaped. In a cgroup
/// scope it is created inside its cgroup (`clone3`, see `clone3.rs`), or, where that is not
/// available, joins it before it executes (`join.rs`). A shell that is not installed is tried next
/// in line (`pwsh`, then `powershell`); none installed is [`SpawnError::ShellMissing`].
pub(crate) fn spawn(
    req: &CommandRequest,
    inherited: &[(OsString, OsString)],
    scope: &Scope<'_>,
) -> Result<Spawned, SpawnError> {
    let plan = plan(req)?;
    let cwd = req.cwd.as_deref().or(req.context.plugin_data.as_deref());
    let mut notes = Vec::new();
    let mut missing = None;
    for (program, args) in plan.programs.iter().zip(&plan.args) {
        match attempt(req, inherited, scope, cwd, program, args, &mut notes) {
            Ok(child) => return Ok(Spawned { child, notes }),
            // Not installed: try the next candidate (`powershell` after `pwsh`).
            Err(e) if e.kind() == io::ErrorKind::NotFound && cwd.is_none_or(Path::is_dir) => {
                missing = Some((program, e));
            }
            Err(e) => return Err(classify(program.clone(), cwd, e)),
        }
    }
    Err(match (missing, &req.spec.command) {
        (Some(_), CommandLine::Shell { shell, .. }) => SpawnError::ShellMissing {
            shell: shell.as_str(),
            tried: plan.programs,
            hint: install_hint(*shell),
        },
        (Some((program, e)), CommandLine::Exec { .. }) => classify(program.clone(), cwd, e),
        // `plan` always has a candidate.
        (None, _) => SpawnError::NoCommand,
    })
}

/// Starts `program`, inside the run's cgroup if it has one.
///
/// A failure with the cgroup may be the kernel refusing it or the program's own error;
/// only a second try without the cgroup tells (it costs a spawn on real errors only). When
/// that one starts, the cgroup was the problem: the hook runs without it, with a note, and the
/// runner stops trying cgroups.
fn attempt(
    req: &CommandRequest,
    inherited: &[(OsString, OsString)],
    scope: &Scope<'_>,
    cwd: Option<&Path>,
    program: &str,
    args: &[String],
    notes: &mut Vec<String>,
) -> io::Result<HookChild> {
    let Scope::Cgroup(cgroup) = scope else {
        return start(req, inherited, scope, true, cwd, program, args);
    };
    let refused = match start(req, inherited, scope, true, cwd, program, args) {
        Ok(child) => return Ok(child),
        Err(e) => e,
    };
    // Failing again without the cgroup: the program's own error, reported as such.
    let child = start(req, inherited, scope, false, cwd, program, args)?;
    cgroup.tree().mark_broken();
    let note = format!(
        "the hook ran without a cgroup: the kernel refused to move it into `{}` ({refused}); \
         processes that leave its process group outlive it",
        cgroup.dir().display()
    );
    tracing::warn!("{note}; later hooks of this runner run without a cgroup");
    notes.push(note);
    Ok(child)
}

/// The program candidates and their arguments, placeholders substituted.
fn plan(req: &CommandRequest) -> Result<Plan, SpawnError> {
    let values = placeholder_values(&req.context);
    let vars: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    match &req.spec.command {
        CommandLine::Shell { text, shell } => {
            let text = substitute(text, &vars).into_owned();
            let shells = launchers(*shell);
            Ok(Plan {
                programs: shells.iter().map(|l| l.program.to_owned()).collect(),
                args: shells
                    .iter()
                    .map(|l| {
                        let mut args: Vec<String> =
                            l.flags.iter().map(|f| (*f).to_owned()).collect();
                        args.push(text.clone());
                        args
                    })
                    .collect(),
            })
        }
        CommandLine::Exec { argv } => {
            let mut args = argv.iter().map(|a| substitute(a, &vars).into_owned());
            let program = args.next().ok_or(SpawnError::EmptyArgs)?;
            Ok(Plan {
                programs: vec![program],
                args: vec![args.collect()],
            })
        }
    }
}

/// One spawn attempt: through `clone3` where the kernel has it, else through std.
fn start(
    req: &CommandRequest,
    inherited: &[(OsString, OsString)],
    scope: &Scope<'_>,
    join_cgroup: bool,
    cwd: Option<&Path>,
    program: &str,
    args: &[String],
) -> io::Result<HookChild> {
    // Views are made by the `clone3` child only: without it the hook does not run (it never
    // runs without the views asked for).
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    let views = if req.views.is_empty() {
        None
    } else {
        if req.view_policy == crate::ViewPolicy::Off {
            return Err(io::Error::other(
                "the host asked for read-only views with views turned off",
            ));
        }
        if !crate::clone3::available() {
            return Err(io::Error::other(
                "read-only views need clone3 (Linux 5.7 or later), which this kernel refused",
            ));
        }
        let user = crate::views::wants_user_namespace(req.view_policy);
        Some(crate::views::ViewPlan::new(&req.views, user).map_err(io::Error::other)?)
    };
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    if !req.views.is_empty() {
        return Err(io::Error::other(
            "read-only views are made only on x86_64 Linux",
        ));
    }
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    if crate::clone3::available() {
        use std::os::fd::AsFd;

        use crate::clone3::{Clone3Error, Launch};

        let mut env: Vec<(OsString, OsString)> = inherited.to_vec();
        env.extend(
            context_vars(&req.context)
                .into_iter()
                .map(|(k, v)| (OsString::from(k), v)),
        );
        let cgroup = match scope {
            Scope::Cgroup(cgroup) if join_cgroup => cgroup.handle().map(|f| f.as_fd()),
            Scope::Subreaper(mark) => {
                env.push((RUN_MARKER_VAR.into(), mark.value().into()));
                None
            }
            _ => None,
        };
        let launch = Launch {
            program,
            args,
            env,
            cwd,
            cgroup,
            pass_fds: &req.pass_fds,
            views: views.as_ref(),
        };
        // `None`: no `clone3` with these flags on this kernel; std's spawn below, from now on.
        if let Some(child) = spawn_registered(
            || match crate::clone3::spawn(&launch) {
                Ok(child) => Ok(Some(child)),
                Err(Clone3Error::Unsupported) if launch.views.is_some() => Err(io::Error::other(
                    "read-only views need clone3 (Linux 5.7 or later), which this kernel refused",
                )),
                Err(Clone3Error::Unsupported) => Ok(None),
                Err(Clone3Error::Io(e)) => Err(e),
            },
            |c| c.as_ref().map(crate::clone3::DirectChild::id),
        )? {
            return Ok(HookChild::Direct(child));
        }
    }
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env_clear()
        .envs(inherited.iter().map(|(k, v)| (k, v)))
        .envs(context_vars(&req.context))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    if !req.pass_fds.is_empty() {
        keep_open(&mut cmd, &req.pass_fds);
    }
    match scope {
        Scope::Cgroup(cgroup) if join_cgroup => {
            join_before_exec(&mut cmd, cgroup.procs()?);
        }
        Scope::Subreaper(mark) => {
            cmd.env(RUN_MARKER_VAR, mark.value());
        }
        _ => {}
    }
    spawn_registered(|| cmd.spawn(), tokio::process::Child::id).map(HookChild::Std)
}

/// A missing working directory fails the spawn with the same "not found" as a missing program;
/// look at the directory to say which one it was.
fn classify(program: String, cwd: Option<&Path>, source: io::Error) -> SpawnError {
    match cwd {
        Some(cwd) if !cwd.is_dir() => SpawnError::Cwd {
            program,
            cwd: cwd.to_owned(),
        },
        _ => SpawnError::Spawn { program, source },
    }
}
