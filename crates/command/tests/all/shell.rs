//! `shell` is honoured (issue 12 #6): `sh` by default, `bash`, `powershell` where installed,
//! and a clear spawn error naming the shell when it is not.

use hookbox_core::output::FailureClass;
use hookbox_core::rule::{CommandLine, Shell};

use crate::util::{Fixture, exec, request, shell};

/// Prints the executable of the shell running the command.
const WHICH_SHELL: &str = "readlink /proc/$$/exe";

fn with_shell(command: &str, kind: Shell) -> hookbox_core::rule::CommandSpec {
    let mut spec = shell(command);
    spec.command = CommandLine::Shell {
        text: command.to_owned(),
        shell: kind,
    };
    spec
}

#[tokio::test]
async fn the_default_shell_is_bin_sh() {
    let fx = Fixture::new();
    let run = fx.runner().run(&request(shell(WHICH_SHELL))).await.unwrap();
    let sh = std::fs::canonicalize("/bin/sh").unwrap();
    assert_eq!(run.output.stdout.trim(), sh.to_str().unwrap());
}

#[tokio::test]
async fn bash_runs_bash_syntax() {
    let fx = Fixture::new();
    // `[[ ]]` and arrays are bash, not POSIX sh.
    let command = format!("{WHICH_SHELL}; a=(x y); [[ ${{a[1]}} == y ]] && echo bash-only");
    let run = fx
        .runner()
        .run(&request(with_shell(&command, Shell::Bash)))
        .await
        .unwrap();
    assert_eq!(run.output.exit_code, Some(0), "{run:?}");
    let mut lines = run.output.stdout.lines();
    assert!(lines.next().unwrap().ends_with("/bash"), "{run:?}");
    assert_eq!(lines.next(), Some("bash-only"));
}

#[tokio::test]
async fn a_shell_that_is_not_installed_is_a_spawn_error_saying_how_to_fix_it() {
    let fx = Fixture::new();
    // An empty PATH: `bash` cannot be found, `/bin/sh` (an absolute path) still can.
    let runner = fx.runner().with_host_env([("PATH", "/nonexistent")]);
    let err = runner
        .run(&request(with_shell("echo never", Shell::Bash)))
        .await
        .unwrap_err();
    assert_eq!(err.class, FailureClass::SpawnError);
    assert!(
        err.message.starts_with(
            "the hook asks for shell `bash`, but `bash` is not installed; install bash"
        ),
        "{}",
        err.message
    );
    let run = runner.run(&request(shell("echo sh"))).await.unwrap();
    assert_eq!(run.output.stdout, "sh\n");
    // A missing program is not the kernel refusing a cgroup: the runner keeps using them.
    assert_eq!(
        runner.containment().catches_escapes(),
        fx.runner().containment().catches_escapes()
    );
}

#[tokio::test]
async fn powershell_runs_where_installed_and_is_named_where_not() {
    let fx = Fixture::new();
    let result = fx
        .runner()
        .run(&request(with_shell("Write-Output ok", Shell::Powershell)))
        .await;
    let installed = ["pwsh", "powershell"].iter().any(|p| {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(p).is_file()))
    });
    if installed {
        assert_eq!(result.unwrap().output.stdout.trim(), "ok");
        return;
    }
    let err = result.unwrap_err();
    assert_eq!(err.class, FailureClass::SpawnError);
    assert_eq!(
        err.message,
        "the hook asks for shell `powershell`, but neither `pwsh` nor `powershell` is installed; \
         install PowerShell 7 (`pwsh`, https://aka.ms/powershell) on the hook's PATH, or remove \
         `\"shell\": \"powershell\"` to run the hook under `sh`"
    );
}

#[tokio::test]
async fn the_exec_form_runs_without_a_shell() {
    let fx = Fixture::new();
    let spec = exec(&["/bin/echo", "$0"]);
    let run = fx.runner().run(&request(spec)).await.unwrap();
    assert_eq!(run.output.stdout, "$0\n");
}
