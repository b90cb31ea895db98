//! Why a command hook could not be started.

use std::io;
use std::path::PathBuf;

use hookbox_core::output::{FailureClass, HookFailure};

/// A command hook that could not be started. Converts into a [`HookFailure`] of class
/// [`FailureClass::SpawnError`].
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// There was no program to try (never for a command the loader built: a shell has a
    /// launcher, an exec form a program).
    #[error("the command hook names no program to run")]
    NoCommand,
    /// The exec form `args` is an empty list.
    #[error("the command hook's `args` is empty; its first element is the program to run")]
    EmptyArgs,
    /// The working directory is missing or not a folder.
    #[error(
        "cannot run `{program}` in `{cwd}`: the working directory does not exist or is not a folder"
    )]
    Cwd {
        /// The program.
        program: String,
        /// The working directory asked for.
        cwd: PathBuf,
    },
    /// The rule's `shell` is not installed (none of its programs is on the hook's `PATH`).
    #[error(
        "the hook asks for shell `{shell}`, but {} installed; {hint}",
        not_installed(tried)
    )]
    ShellMissing {
        /// The shell as written in the rule (`bash`, `powershell`).
        shell: &'static str,
        /// The programs tried, in order (`pwsh`, `powershell`).
        tried: Vec<String>,
        /// How to fix it.
        hint: &'static str,
    },
    /// The operating system refused to start the program.
    #[error("cannot run `{program}`: {source}{hint}", hint = hint(source))]
    Spawn {
        /// The program (first `args` element after substitution, or the shell).
        program: String,
        /// The operating system's error.
        source: io::Error,
    },
}

/// "`bash` is not", "neither `pwsh` nor `powershell` is".
fn not_installed(tried: &[String]) -> String {
    match tried {
        [one] => format!("`{one}` is not"),
        [first @ .., last] => {
            let first: Vec<String> = first.iter().map(|p| format!("`{p}`")).collect();
            format!("neither {} nor `{last}` is", first.join(", "))
        }
        [] => "no program is".to_owned(),
    }
}

/// What to do about a spawn error, when there is an obvious fix.
fn hint(e: &io::Error) -> &'static str {
    match e.kind() {
        io::ErrorKind::NotFound => "; check the path or install it",
        io::ErrorKind::PermissionDenied => {
            "; make it executable (`chmod +x`) or run it through `sh`"
        }
        _ => "",
    }
}

impl From<SpawnError> for HookFailure {
    fn from(e: SpawnError) -> HookFailure {
        HookFailure::new(FailureClass::SpawnError, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spawn_message_quotes_the_program_and_suggests_a_fix() {
        let e = SpawnError::Spawn {
            program: "foo".into(),
            source: io::Error::from_raw_os_error(2),
        };
        assert_eq!(
            e.to_string(),
            "cannot run `foo`: No such file or directory (os error 2); check the path or install it"
        );
        let failure = HookFailure::from(e);
        assert_eq!(failure.class, FailureClass::SpawnError);
    }

    #[test]
    fn a_missing_shell_is_named_with_every_program_tried() {
        let e = SpawnError::ShellMissing {
            shell: "powershell",
            tried: vec!["pwsh".into(), "powershell".into()],
            hint: "install it",
        };
        assert_eq!(
            e.to_string(),
            "the hook asks for shell `powershell`, but neither `pwsh` nor `powershell` is installed; install it"
        );
        let e = SpawnError::ShellMissing {
            shell: "bash",
            tried: vec!["bash".into()],
            hint: "install it",
        };
        assert!(e.to_string().contains("but `bash` is not installed"), "{e}");
    }
}
