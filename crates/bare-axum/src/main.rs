//! `bare-axum`: the HTTP baseline of `scripts/bench-http.sh`, and nothing else — every ratio that
//! script prints is taken against this server (the library, `bare_axum`, says what it serves).
//! It runs on the runtime `hookbox serve` runs on: multi-threaded tokio with its defaults (one
//! worker per core).
//!
//! Usage: `bare-axum [--listen IP:PORT] [--answer-bytes N]` (default `127.0.0.1:0`, a free
//! port; `--answer-bytes` pads `POST /dispatch`'s answer to N bytes, so that it is as long as
//! the `hookbox serve` answer it is compared with); the first line on stdout is the address
//! bound, as `hookbox serve` prints it. It runs until killed.

use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;

use bare_axum::Answer;

const USAGE: &str = "usage: bare-axum [--listen IP:PORT] [--answer-bytes N]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bare-axum: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let args = parse(std::env::args().skip(1))?;
    // `hookbox serve` runs on this runtime (src/host_setup.rs): multi-threaded, default workers.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    rt.block_on(async move {
        let listener = bare_axum::bind(args.listen).await?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("cannot read the bound address: {e}"))?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{addr}")
            .and_then(|()| out.flush())
            .map_err(|e| format!("cannot write to stdout: {e}"))?;
        drop(out);
        bare_axum::serve(listener, args.answer).await;
        Ok(())
    })
}

/// The command line.
#[derive(Debug, PartialEq, Eq)]
struct Args {
    listen: SocketAddr,
    answer: Answer,
}

/// `--listen IP:PORT` and `--answer-bytes N`, each as `--flag value` or `--flag=value`.
fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut parsed = Args {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        answer: Answer::default(),
    };
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f.to_owned(), Some(v.to_owned())),
            None => (arg.clone(), None),
        };
        match flag.as_str() {
            "--listen" => {
                let value = inline
                    .or_else(|| args.next())
                    .ok_or("--listen needs an address, IP:PORT")?;
                parsed.listen = value
                    .parse()
                    .map_err(|e| format!("--listen `{value}` is not an IP:PORT address: {e}"))?;
            }
            "--answer-bytes" => {
                let value = inline
                    .or_else(|| args.next())
                    .ok_or("--answer-bytes needs a number of bytes")?;
                let n = value.parse().map_err(|e| {
                    format!("--answer-bytes `{value}` is not a number of bytes: {e}")
                })?;
                parsed.answer.bytes = Some(n);
            }
            _ => return Err(format!("unknown argument `{arg}`; {USAGE}")),
        }
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> impl Iterator<Item = String> {
        list.iter()
            .map(|s| (*s).to_owned())
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn listen_defaults_to_a_free_loopback_port() {
        let a = parse(args(&[])).unwrap();
        assert_eq!(a.listen, SocketAddr::from(([127, 0, 0, 1], 0)));
        assert_eq!(a.answer.bytes, None);
    }

    #[test]
    fn listen_and_answer_bytes_take_either_spelling() {
        let want = SocketAddr::from(([127, 0, 0, 1], 8080));
        assert_eq!(
            parse(args(&["--listen", "127.0.0.1:8080"])).unwrap().listen,
            want
        );
        assert_eq!(
            parse(args(&["--listen=127.0.0.1:8080"])).unwrap().listen,
            want
        );
        let a = parse(args(&["--answer-bytes", "528", "--listen=127.0.0.1:8080"])).unwrap();
        assert_eq!((a.listen, a.answer.bytes), (want, Some(528)));
        assert_eq!(
            parse(args(&["--answer-bytes=9"])).unwrap().answer.bytes,
            Some(9)
        );
    }

    #[test]
    fn bad_arguments_are_named() {
        let e = parse(args(&["--listen", "localhost"])).unwrap_err();
        assert!(e.contains("`localhost`"), "{e}");
        let e = parse(args(&["--port", "1"])).unwrap_err();
        assert!(e.contains("`--port`"), "{e}");
        let e = parse(args(&["--listen"])).unwrap_err();
        assert!(e.contains("IP:PORT"), "{e}");
        let e = parse(args(&["--answer-bytes", "lots"])).unwrap_err();
        assert!(e.contains("`lots`"), "{e}");
    }
}
