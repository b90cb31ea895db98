//! The machine a bench report was taken on: CPU model, cores, kernel, memory. A baseline says
//! where it came from so that `--compare` can warn when it was taken somewhere else.

use serde::Serialize;

/// The build that measured: only a release build's numbers mean anything.
pub(crate) fn build() -> &'static str {
    if cfg!(debug_assertions) {
        "debug (numbers are not meaningful: use --release)"
    } else {
        "release"
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Machine {
    pub(crate) cpu: String,
    pub(crate) cores: usize,
    pub(crate) kernel: String,
    pub(crate) memory_gib: u64,
}

impl Machine {
    /// This machine, read from `/proc` (fields it cannot read say `unknown`).
    pub(crate) fn this() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .and_then(|v| v.split_once(':'))
            .map_or_else(|| "unknown".to_owned(), |(_, m)| m.trim().to_owned());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map_or_else(|_| "unknown".to_owned(), |k| k.trim().to_owned());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_gib = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |kib| (kib + (1 << 19)) >> 20);
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            kernel,
            memory_gib,
        }
    }
}
