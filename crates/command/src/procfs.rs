//! Reading `/proc`: a process's state, parent, group and session, and its environment marker.
//! Used to tell which processes escaped a hook's process group and whose they are.

use std::path::Path;

/// What `/proc/<pid>/stat` says about a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    /// `R`, `S`, `D`, `Z` (zombie), …
    pub(crate) state: char,
    /// The parent's pid.
    pub(crate) ppid: i32,
    /// The process group.
    pub(crate) pgrp: i32,
}

impl ProcStat {
    /// Dead and only waiting for its parent to collect it.
    pub(crate) fn is_zombie(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }
}

/// Reads `/proc/<pid>/stat`; `None` when the process is gone (or the file is unreadable).
pub(crate) fn stat(pid: i32) -> Option<ProcStat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Parses a `stat` line. The command name is in parentheses and may hold spaces or `)`: the
/// fields start after the last `)`.
fn parse_stat(text: &str) -> Option<ProcStat> {
    let mut fields = text[text.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(ProcStat { state, ppid, pgrp })
}

/// Every pid listed in `/proc` now.
pub(crate) fn all_pids() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// The value of `name` in the environment `pid` was started with (`/proc/<pid>/environ`).
/// `None` when it is not set, the process is gone or a zombie, or it belongs to another user.
pub(crate) fn environ_var(pid: i32, name: &str) -> Option<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    find_var(&bytes, name)
}

fn find_var(environ: &[u8], name: &str) -> Option<String> {
    environ.split(|&b| b == 0).find_map(|entry| {
        let rest = entry.strip_prefix(name.as_bytes())?.strip_prefix(b"=")?;
        String::from_utf8(rest.to_vec()).ok()
    })
}

/// Pids listed in a `cgroup.procs` file (one per line).
pub(crate) fn read_pids(path: &Path) -> std::io::Result<Vec<i32>> {
    Ok(std::fs::read_to_string(path)?
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_after_an_odd_command_name() {
        let line = "42 (a) b (c)) S 7 42 42 0 -1 4194560 100 0 0 0";
        assert_eq!(
            parse_stat(line),
            Some(ProcStat {
                state: 'S',
                ppid: 7,
                pgrp: 42
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn our_own_stat_is_readable() {
        let me = stat(std::process::id() as i32).unwrap();
        assert!(!me.is_zombie());
        assert_eq!(me.ppid, std::os::unix::process::parent_id() as i32);
    }

    #[test]
    fn environ_lookup_is_exact() {
        let env = b"A=1\0AB=2\0B=x=y\0\0";
        assert_eq!(find_var(env, "A").as_deref(), Some("1"));
        assert_eq!(find_var(env, "AB").as_deref(), Some("2"));
        assert_eq!(find_var(env, "B").as_deref(), Some("x=y"));
        assert_eq!(find_var(env, "C"), None);
    }
}
