//! The shell a shell-form hook runs under (`shell`: `sh`, `bash`, `powershell`), and how each
//! one is handed the command text.

use hookbox_core::rule::Shell;

/// One way to start a shell: the program and the flags that precede the command text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Launcher {
    /// The program: an absolute path, or a name looked up on the hook's `PATH`.
    pub(crate) program: &'static str,
    /// Arguments before the command text.
    pub(crate) flags: &'static [&'static str],
}

/// The launchers of `shell`, in the order to try them: the next one is tried only when the
/// previous program is not installed.
///
/// - `sh`: `/bin/sh -c`, an absolute path, so a hook still runs when the inherited `PATH` is odd
///   or empty; POSIX systems all have it (Claude Code runs `sh -c` on macOS and Linux).
/// - `bash`: `bash -c` from `PATH`, since bash lives in `/bin`, `/usr/bin` or `/usr/local/bin`
///   (Homebrew) depending on the system.
/// - `powershell`: PowerShell 7 (`pwsh`) first, then Windows PowerShell 5 (`powershell`), as
///   Claude Code does; `-NoProfile` so a user's profile script neither slows the hook nor
///   changes what it does.
pub(crate) fn launchers(shell: Shell) -> &'static [Launcher] {
    match shell {
        Shell::Sh => &[Launcher {
            program: "/bin/sh",
            flags: &["-c"],
        }],
        Shell::Bash => &[Launcher {
            program: "bash",
            flags: &["-c"],
        }],
        Shell::Powershell => &[
            Launcher {
                program: "pwsh",
                flags: &["-NoProfile", "-Command"],
            },
            Launcher {
                program: "powershell",
                flags: &["-NoProfile", "-Command"],
            },
        ],
    }
}

/// How to fix a hook whose shell is not installed, for the spawn error.
pub(crate) fn install_hint(shell: Shell) -> &'static str {
    match shell {
        Shell::Sh => "this system has no `/bin/sh`; hookbox needs a POSIX shell there",
        Shell::Bash => {
            "install bash (and make sure it is on the hook's PATH), or remove `\"shell\": \"bash\"` \
             to run the hook under `sh`"
        }
        Shell::Powershell => {
            "install PowerShell 7 (`pwsh`, https://aka.ms/powershell) on the hook's PATH, or \
             remove `\"shell\": \"powershell\"` to run the hook under `sh`"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shell_gets_its_flags() {
        assert_eq!(launchers(Shell::Sh)[0].program, "/bin/sh");
        assert_eq!(launchers(Shell::Bash)[0].flags, ["-c"]);
        let ps: Vec<&str> = launchers(Shell::Powershell)
            .iter()
            .map(|l| l.program)
            .collect();
        assert_eq!(ps, ["pwsh", "powershell"]);
        assert_eq!(
            launchers(Shell::Powershell)[1].flags,
            ["-NoProfile", "-Command"]
        );
    }
}
