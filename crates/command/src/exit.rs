//! Reading the leader's exit status, and the notes that explain odd ones.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// The exit code, or the signal that ended the process.
pub(crate) fn code_and_signal(status: ExitStatus) -> (Option<i32>, Option<i32>) {
    (status.code(), status.signal())
}

/// A note for an exit code the shell uses to report a command it could not run.
pub(crate) fn shell_exit_note(code: i32) -> Option<&'static str> {
    match code {
        127 => Some("exit 127: the shell could not find the command; check the path or install it"),
        126 => Some(
            "exit 126: the shell found the command but could not execute it; \
             make it executable (`chmod +x`) or run it through `sh`",
        ),
        _ => None,
    }
}

/// `killed by signal 15 (SIGTERM)`.
pub(crate) fn signal_note(signal: i32) -> String {
    match signal_name(signal) {
        Some(name) => format!("killed by signal {signal} ({name})"),
        None => format!("killed by signal {signal}"),
    }
}

fn signal_name(signal: i32) -> Option<&'static str> {
    // The Linux numbers of the signals a hook is likely to die of.
    Some(match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes() {
        assert_eq!(signal_note(15), "killed by signal 15 (SIGTERM)");
        assert_eq!(signal_note(64), "killed by signal 64");
        assert!(shell_exit_note(127).is_some_and(|n| n.contains("could not find")));
        assert!(shell_exit_note(2).is_none());
    }

    #[test]
    fn raw_statuses_split_into_code_and_signal() {
        assert_eq!(
            code_and_signal(ExitStatus::from_raw(2 << 8)),
            (Some(2), None)
        );
        assert_eq!(code_and_signal(ExitStatus::from_raw(9)), (None, Some(9)));
    }
}
