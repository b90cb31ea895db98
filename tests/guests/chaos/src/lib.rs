//! One typed hook that misbehaves on request, for the host's sandbox tests.
//!
//! The behaviour is read from the event: the `prompt` (`UserPromptSubmit`), else
//! `tool_input.command` (`PreToolUse` on a shell tool), else the rule's `config.behaviour`
//! (any event). Results are reported as one additional context so a test can assert on them.
//!
//! | behaviour | what the guest does | what the host must report |
//! | --- | --- | --- |
//! | `ok` | answers the context `ok` | success; proves the host still serves after a failure |
//! | `spin` | loops forever | `timeout` (epoch) or `out_of_fuel` |
//! | `burn:<n>` | does `n` steps of work (at least one fuel unit each), then loops forever | `timeout`, with at least `n` fuel consumed |
//! | `recurse` | recurses without bound | `trap` (stack overflow) |
//! | `alloc:<bytes>` | allocates and fills `<bytes>` | `memory_limit` over the cap; `alloc:<bytes> ok` under it |
//! | `stdout:<bytes>` / `stderr:<bytes>` | writes that many bytes | capped output, not a crash; context `wrote <n>` |
//! | `bad-json` | answers an `updated-input` that is not JSON | `invalid_output` |
//! | `respond:<bytes>` | answers one context of `<bytes>` × `x` | success under `response_bytes`; `invalid_output` over it |
//! | `update:<bytes>` | answers an `updated-input` object of about `<bytes>` | success under `response_bytes`; `invalid_output` over it |
//! | `trap` | panics with `chaos: trap requested` | `trap`, with the message from stderr |
//! | `err:<msg>` | returns `Err(<msg>)` | `trap` with `<msg>` |
//! | `exit:<code>` | calls `std::process::exit` inside a typed call | `trap` |
//! | `fs-read:<path>` | reads a file | context `ok:<first 4 KiB>` or `err:<kind>:<message>` |
//! | `fs-write:<path>` | writes `written by chaos\n` | context `ok` or `err:<kind>:<message>` |
//! | `fs-list:<path>` | lists a folder | context `ok:<names, one a line>` or `err:…` |
//! | `fs-trunc:<path>` | opens an existing file write-only with `O_TRUNC` (no create) | context `ok` or `err:<kind>:<message>` |
//! | `fs-link:<from>:<to>` | hard-links `<from>` as `<to>` (`link-at`) | context `ok` or `err:<kind>:<message>` |
//! | `fs-rename:<from>:<to>` | renames `<from>` to `<to>` (`rename-at`) | context `ok` or `err:<kind>:<message>` |
//! | `fs-symlink:<target>:<link>` | creates the symbolic link `<link>` → `<target>` (`symlink-at`) | context `ok` or `err:<kind>:<message>` |
//! | `env` / `args` | lists what it sees | context with `KEY=value` lines / arguments, one a line |
//! | `sleep:<ms>` | sleeps (a host call: epochs do not interrupt it) | `timeout` over the deadline |
//! | `log:<n>` | calls `host::log` `n` times | capped log lines; context `logged <n>` |
//! | `log-big:<bytes>` | logs one message of `<bytes>` × `x` | one truncated line, or `invalid_output` past the hostcall budget |
//! | `fs-write-n:<path>:<bytes>` | writes `<bytes>` × `x` to a file (`std::fs::write`) | context `ok` or `err:<kind>:<message>` |
//! | `fs-append-n:<path>:<bytes>` | appends `<bytes>` × `x` in 4 KiB writes (a file stream) | context `ok` or `err:<kind>:<message>` |
//! | `fs-create:<dir>:<n>` | creates files `<dir>/f0` … `f<n-1>` | context `created <n>`, or `created <k>; err:<kind>:<message>` |
//! | `config` | answers the rule's config JSON | context with the config |
//!
//! Table growth is not here: Rust has no stable way to grow a wasm table (`core::arch::wasm32`
//! offers memory intrinsics only), so the host's tests cover it with a WAT component.

use std::hint::black_box;
use std::io::Write;
use std::time::Duration;

use hookbox_guest::{Event, Hook, Response, host};

#[derive(Default)]
struct Chaos;

impl Hook for Chaos {
    fn handle(&self, event: &Event) -> Result<Response, String> {
        let behaviour = match event.prompt.clone().or_else(|| event.command()) {
            Some(behaviour) => behaviour,
            None => host::config_json()?["behaviour"]
                .as_str()
                .map(str::to_owned)
                .ok_or("chaos: no behaviour in prompt, tool_input.command or config.behaviour")?,
        };
        run(behaviour.trim())
    }
}

fn run(behaviour: &str) -> Result<Response, String> {
    let (verb, arg) = behaviour.split_once(':').unwrap_or((behaviour, ""));
    let number = || {
        arg.parse::<u64>()
            .map_err(|e| format!("chaos: `{behaviour}` needs a number: {e}"))
    };
    let report = |text: String| Ok(Response::context(text));
    match verb {
        "ok" => report("ok".to_owned()),
        "spin" => spin(),
        "burn" => {
            let mut acc: u64 = 0;
            for i in 0..number()? {
                acc = black_box(acc.wrapping_add(i));
            }
            black_box(acc);
            spin()
        }
        "recurse" => report(format!("recursed {}", recurse(0))),
        "alloc" => {
            let bytes = usize::try_from(number()?).map_err(|e| e.to_string())?;
            // `vec![x; n]` with a non-zero `x` writes every byte, so the pages are really used.
            let block = black_box(vec![0xA5_u8; bytes]);
            report(format!("alloc:{} ok", block.len()))
        }
        "stdout" => report(flood(&mut std::io::stdout(), number()?)),
        "stderr" => report(flood(&mut std::io::stderr(), number()?)),
        "respond" => report("x".repeat(size(number()?)?)),
        "update" => Ok(Response::updated_input(&hookbox_guest::serde_json::json!({
            "x": "x".repeat(size(number()?)?)
        }))),
        "bad-json" => Ok(Response {
            updated_input: Some("{not json".to_owned()),
            ..Response::none()
        }),
        "trap" => panic!("chaos: trap requested"),
        "err" => Err(arg.to_owned()),
        "exit" => {
            let code = i32::try_from(number()?).map_err(|e| e.to_string())?;
            std::process::exit(code)
        }
        "fs-read" => report(match std::fs::read(arg) {
            Ok(bytes) => format!(
                "ok:{}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(4096)])
            ),
            Err(e) => io_error(&e),
        }),
        "fs-write" => report(match std::fs::write(arg, b"written by chaos\n") {
            Ok(()) => "ok".to_owned(),
            Err(e) => io_error(&e),
        }),
        "fs-trunc" => report(outcome(
            std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(arg)
                .map(drop),
        )),
        "fs-link" => {
            let (from, to) = two_paths(behaviour, arg)?;
            report(outcome(std::fs::hard_link(from, to)))
        }
        "fs-rename" => {
            let (from, to) = two_paths(behaviour, arg)?;
            report(outcome(std::fs::rename(from, to)))
        }
        "fs-symlink" => {
            let (target, link) = two_paths(behaviour, arg)?;
            report(outcome(make_symlink(target, link)))
        }
        "fs-list" => report(match list(arg) {
            Ok(names) => format!("ok:{}", names.join("\n")),
            Err(e) => io_error(&e),
        }),
        "env" => {
            let mut vars: Vec<String> = std::env::vars_os()
                .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
                .collect();
            vars.sort();
            report(vars.join("\n"))
        }
        "args" => report(
            std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        "sleep" => {
            std::thread::sleep(Duration::from_millis(number()?));
            report("slept".to_owned())
        }
        "log" => {
            let calls = number()?;
            for i in 0..calls {
                host::info(&format!("chaos log line {i}"));
            }
            report(format!("logged {calls}"))
        }
        "log-big" => {
            let message = "x".repeat(size(number()?)?);
            host::info(&message);
            report(format!("logged {}", message.len()))
        }
        "fs-write-n" => {
            let (path, bytes) = path_and_number(behaviour, arg)?;
            report(outcome(std::fs::write(path, vec![b'x'; size(bytes)?])))
        }
        "fs-append-n" => {
            let (path, bytes) = path_and_number(behaviour, arg)?;
            report(outcome(append(path, size(bytes)?)))
        }
        "fs-create" => {
            let (dir, count) = path_and_number(behaviour, arg)?;
            let mut created = 0;
            for i in 0..count {
                if let Err(e) = std::fs::write(format!("{dir}/f{i}"), b"") {
                    return report(format!("created {created}; {}", io_error(&e)));
                }
                created += 1;
            }
            report(format!("created {created}"))
        }
        "config" => report(host::config_json()?.to_string()),
        _ => Err(format!("chaos: unknown behaviour `{behaviour}`")),
    }
}

fn spin() -> ! {
    let mut n: u64 = 0;
    loop {
        n = black_box(n.wrapping_add(1));
    }
}

/// Each frame keeps 256 bytes alive across the call and uses the result afterwards, so the
/// compiler can turn it neither into a loop nor into a tail call.
#[inline(never)]
fn recurse(depth: u64) -> u64 {
    let frame = black_box([depth; 32]);
    if black_box(depth) == u64::MAX {
        return frame[0];
    }
    black_box(recurse(depth + 1)).wrapping_add(frame[31])
}

/// Writes `bytes` bytes in 64 KiB chunks; stops at the first error (a capped or closed stream)
/// and says how far it got.
fn flood(stream: &mut impl Write, bytes: u64) -> String {
    let chunk = [b'x'; 65_536];
    let mut written: u64 = 0;
    while written < bytes {
        let len = usize::try_from((bytes - written).min(chunk.len() as u64)).unwrap_or(0);
        match stream.write(&chunk[..len]) {
            Ok(0) | Err(_) => break,
            Ok(n) => written += n as u64,
        }
    }
    let _ = stream.flush();
    format!("wrote {written}")
}

fn list(path: &str) -> std::io::Result<Vec<String>> {
    let mut names = std::fs::read_dir(path)?
        .map(|entry| entry.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<std::io::Result<Vec<_>>>()?;
    names.sort();
    Ok(names)
}

fn size(n: u64) -> Result<usize, String> {
    usize::try_from(n).map_err(|e| e.to_string())
}

/// `<path>:<number>` (the path may not contain `:`).
fn path_and_number<'a>(behaviour: &str, arg: &'a str) -> Result<(&'a str, u64), String> {
    let (path, n) = arg
        .split_once(':')
        .ok_or_else(|| format!("chaos: `{behaviour}` needs `<path>:<number>`"))?;
    let n = n
        .parse()
        .map_err(|e| format!("chaos: `{behaviour}` needs a number: {e}"))?;
    Ok((path, n))
}

/// Appends `bytes` × `x` to `path` (created if missing) in 4 KiB writes: an append stream.
fn append(path: &str, bytes: usize) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let chunk = [b'x'; 4096];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len());
        file.write_all(&chunk[..n])?;
        left -= n;
    }
    file.flush()
}

/// `<from>:<to>` (neither may contain `:`, which keeps the syntax trivial).
fn two_paths<'a>(behaviour: &str, arg: &'a str) -> Result<(&'a str, &'a str), String> {
    arg.split_once(':')
        .ok_or_else(|| format!("chaos: `{behaviour}` needs `<from>:<to>`"))
}

/// `ok`, or the error as `err:<kind>:<message>`.
fn outcome(result: std::io::Result<()>) -> String {
    match result {
        Ok(()) => "ok".to_owned(),
        Err(e) => io_error(&e),
    }
}

fn io_error(error: &std::io::Error) -> String {
    format!("err:{:?}:{error}", error.kind())
}

/// `symlink(2)` through wasi-libc (`symlink-at` beneath the preopen holding `link`): std has no
/// stable way to create a symbolic link on WASI (`std::os::wasi::fs::symlink_path` is unstable).
#[allow(
    unsafe_code,
    reason = "calls wasi-libc's symlink, which std does not expose on WASI"
)]
fn make_symlink(target: &str, link: &str) -> std::io::Result<()> {
    use std::ffi::{CString, c_char, c_int};
    unsafe extern "C" {
        fn symlink(target: *const c_char, link: *const c_char) -> c_int;
    }
    let nul = |s: &str| CString::new(s).map_err(std::io::Error::other);
    let (target, link) = (nul(target)?, nul(link)?);
    // SAFETY: both pointers are NUL-terminated strings that live until the call returns, and
    // wasi-libc's `symlink` only reads them.
    match unsafe { symlink(target.as_ptr(), link.as_ptr()) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

hookbox_guest::export_hook!(Chaos);
