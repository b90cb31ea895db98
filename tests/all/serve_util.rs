//! Helpers for the `hookbox serve` tests: a tenants folder to fill, the real binary started on
//! 127.0.0.1:0 (its first stdout line is the address), and a minimal HTTP/1.1 client over
//! `std::net::TcpStream` — raw enough to trickle a request, send a body over the cap, or read a
//! server-sent event stream chunk by chunk. No test here measures time: waits are bounded only
//! so that a bug hangs no test run.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Longest any wait in these tests may take before it is a failure (a hang guard, not a
/// measurement).
pub(crate) const PATIENCE: Duration = Duration::from_secs(120);

/// Every test server shares one compile cache (content-addressed), so each component is
/// compiled once per test run, not once per test.
fn shared_cache() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-test-cache")
}

/// The hex SHA-256 of a token, as `tenant.toml` and the server configuration hold it.
pub(crate) fn digest(token: &str) -> String {
    hookbox_server::TokenHash::of_token(token).to_hex()
}

/// The admin token of every test server.
pub(crate) const ADMIN: &str = "admin-secret";

/// A tenants folder, a state folder and a configuration file, in one temporary folder.
pub(crate) struct Fixture {
    root: tempfile::TempDir,
    /// Compile into a cache of its own (every component compiled afresh) instead of the shared
    /// one.
    private_cache: bool,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        let root = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(root.path().join("tenants")).expect("mkdir");
        Fixture {
            root,
            private_cache: false,
        }
    }

    /// A fixture whose server compiles every component afresh (a cache of its own).
    pub(crate) fn with_private_cache() -> Fixture {
        Fixture {
            private_cache: true,
            ..Fixture::new()
        }
    }

    pub(crate) fn tenants_dir(&self) -> PathBuf {
        self.root.path().join("tenants")
    }

    pub(crate) fn tenant_dir(&self, id: &str) -> PathBuf {
        self.tenants_dir().join(id)
    }

    /// Writes tenant `id`: `tenant.toml` (its token's digest, then `policy` as the `[policy]`
    /// table's lines) and one plugin `p` whose `hooks/hooks.json` is `hooks`, with the given
    /// components copied into `hooks/`.
    pub(crate) fn tenant(
        &self,
        id: &str,
        token: &str,
        policy: &str,
        hooks: &Value,
        components: &[(&str, &str)],
    ) {
        let dir = self.tenant_dir(id);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(
            dir.join("tenant.toml"),
            format!("token_sha256 = \"{}\"\n[policy]\n{policy}\n", digest(token)),
        )
        .expect("tenant.toml");
        self.plugin(id, hooks, components);
    }

    /// Rewrites tenant `id`'s plugin `p`.
    pub(crate) fn plugin(&self, id: &str, hooks: &Value, components: &[(&str, &str)]) {
        let dir = self.tenant_dir(id).join("plugins/p/hooks");
        std::fs::create_dir_all(&dir).expect("mkdir");
        for (name, src) in components {
            std::fs::copy(src, dir.join(name)).expect("copy component");
        }
        // Write-then-rename: a reload racing this write sees the old file or the new one.
        let tmp = dir.join("hooks.json.tmp");
        std::fs::write(&tmp, serde_json::to_vec_pretty(hooks).expect("json")).expect("write");
        std::fs::rename(&tmp, dir.join("hooks.json")).expect("rename");
    }

    /// Starts `hookbox serve` on this folder with `extra` appended to the configuration (TOML
    /// keys at the top, then tables), and waits until `/readyz` answers 200.
    pub(crate) fn start(&self, extra: &str) -> Server {
        let server = self.spawn(extra);
        server.wait_ready();
        server
    }

    /// Starts `hookbox serve` without waiting for readiness.
    pub(crate) fn spawn(&self, extra: &str) -> Server {
        self.spawn_named("serve", "state", extra)
    }

    /// Starts replica `name` of a service on this folder: its own configuration file
    /// (`<name>.toml`) and state folder (`state-<name>`), the tenants folder shared; waits
    /// until `/readyz` answers 200.
    pub(crate) fn start_replica(&self, name: &str, extra: &str) -> Server {
        let server = self.spawn_named(name, &format!("state-{name}"), extra);
        server.wait_ready();
        server
    }

    /// The folder `rel` of the fixture (a control store, a state folder).
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    fn spawn_named(&self, name: &str, state: &str, extra: &str) -> Server {
        let config = self.root.path().join(format!("{name}.toml"));
        let (top, tables) = match extra.find('[') {
            Some(i) => extra.split_at(i),
            None => (extra, ""),
        };
        let cache = if self.private_cache {
            self.root.path().join("cache")
        } else {
            shared_cache()
        };
        std::fs::write(
            &config,
            format!(
                "tenants_dir = \"tenants\"\nstate_dir = \"{state}\"\ncache_dir = \"{}\"\nadmin_token_sha256 = \"{}\"\nlog_filter = \"info,hookbox_server=debug\"\n{top}\n{tables}\n",
                cache.display(),
                digest(ADMIN)
            ),
        )
        .expect("serve.toml");
        let mut child = Command::new(env!("CARGO_BIN_EXE_hookbox"))
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(&config)
            .env("NO_COLOR", "1")
            .env_remove("HOOKBOX_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start hookbox serve");
        let logs = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().expect("stderr");
        let sink = logs.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut s = sink.lock().expect("logs");
                s.push_str(&line);
                s.push('\n');
            }
        });
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        stdout.read_line(&mut first).expect("read the address");
        let addr = first.trim().parse().unwrap_or_else(|_| {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the first stdout line is not an address: {first:?}\nstderr:\n{}",
                logs.lock().expect("logs")
            )
        });
        // The rest of stdout (replay lines with `[replay] sink = "stdout"`) is read on, so
        // the server never writes to a closed pipe.
        let out = Arc::new(Mutex::new(String::new()));
        let sink = out.clone();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let mut s = sink.lock().expect("stdout");
                s.push_str(&line);
                s.push('\n');
            }
        });
        Server {
            child: Some(child),
            addr,
            logs,
            out,
        }
    }
}

/// A running `hookbox serve`; killed when dropped if still running.
pub(crate) struct Server {
    child: Option<Child>,
    pub(crate) addr: SocketAddr,
    logs: Arc<Mutex<String>>,
    /// What it wrote on stdout after its address.
    out: Arc<Mutex<String>>,
}

impl Server {
    /// What the server wrote on stdout after its address line, so far.
    pub(crate) fn stdout(&self) -> String {
        self.out.lock().expect("stdout").clone()
    }

    /// What the server logged so far.
    pub(crate) fn logs(&self) -> String {
        self.logs.lock().expect("logs").clone()
    }

    fn wait_ready(&self) {
        let until = Instant::now() + PATIENCE;
        loop {
            if let Ok(r) = get(self.addr, "/readyz", None)
                && r.status == 200
            {
                return;
            }
            assert!(
                Instant::now() < until,
                "the server never became ready:\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends a signal (`TERM`, `HUP`, …) to the server process.
    pub(crate) fn signal(&self, name: &str) {
        let pid = self.child.as_ref().expect("running").id().to_string();
        let ok = Command::new("kill")
            .args([&format!("-{name}"), &pid])
            .status()
            .expect("run kill")
            .success();
        assert!(ok, "kill -{name} {pid} failed");
    }

    /// Waits for the process to exit and returns its exit code.
    pub(crate) fn wait_exit(&mut self) -> Option<i32> {
        let mut child = self.child.take().expect("running");
        let until = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                return status.code();
            }
            if Instant::now() > until {
                let _ = child.kill();
                panic!("the server did not exit:\n{}", self.logs());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `POST path` with a JSON body and a bearer token.
    pub(crate) fn post(&self, path: &str, token: Option<&str>, body: &Value) -> Reply {
        let bytes = serde_json::to_vec(body).expect("json");
        self.call("POST", path, token, Some(&bytes))
    }

    /// `GET path` with a bearer token.
    pub(crate) fn get(&self, path: &str, token: Option<&str>) -> Reply {
        self.call("GET", path, token, None)
    }

    /// Any request; a transport error fails the test, with the server's logs.
    pub(crate) fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&[u8]>,
    ) -> Reply {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers: Vec<(&str, &str)> = Vec::new();
        if let Some(a) = &auth {
            headers.push(("Authorization", a));
        }
        request(self.addr, method, path, &headers, body).unwrap_or_else(|e| {
            panic!("{method} {path} failed: {e}\nserver logs:\n{}", self.logs())
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// An answer's headers, in order.
pub(crate) type Headers = Vec<(String, String)>;

/// An HTTP answer.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "the body is not JSON ({e}): {} {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The `error.code` and `error.field` of an error answer.
    pub(crate) fn error(&self) -> (String, Option<String>) {
        let v = self.json();
        (
            v["error"]["code"].as_str().unwrap_or_default().to_owned(),
            v["error"]["field"].as_str().map(str::to_owned),
        )
    }
}

/// `GET` without a server handle.
pub(crate) fn get(addr: SocketAddr, path: &str, token: Option<&str>) -> std::io::Result<Reply> {
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", a.as_str())).collect();
    request(addr, "GET", path, &headers, None)
}

/// One request on a fresh connection (`Connection: close`), the whole answer read.
pub(crate) fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> std::io::Result<Reply> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(PATIENCE))?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        head.push_str(&format!("Content-Length: {}\r\n", b.len()));
    }
    head.push_str("\r\n");
    // One write: the head and body arrive together, so a server that answers before reading
    // the body (a 413) finds it already read, and closes without resetting the connection.
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.unwrap_or_default());
    stream.write_all(&bytes)?;
    read_reply(&mut BufReader::new(stream))
}

/// Reads one answer: status line, headers, then a body by `Content-Length`, chunked, or to EOF.
pub(crate) fn read_reply(r: &mut impl BufRead) -> std::io::Result<Reply> {
    let (status, headers) = read_head(r)?;
    let header = |n: &str| {
        headers
            .iter()
            .find(|(k, _): &&(String, String)| k.eq_ignore_ascii_case(n))
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        while let Some(chunk) = read_chunk(r)? {
            body.extend(chunk);
        }
    } else if let Some(n) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(n, 0);
        r.read_exact(&mut body)?;
    } else {
        r.read_to_end(&mut body)?;
    }
    Ok(Reply {
        status,
        headers,
        body,
    })
}

/// The status and headers of an answer.
pub(crate) fn read_head(r: &mut impl BufRead) -> std::io::Result<(u16, Vec<(String, String)>)> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the connection closed before an answer",
        ));
    }
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    Ok((status, headers))
}

/// One chunk of a chunked body; `None` at the last one.
pub(crate) fn read_chunk(r: &mut impl BufRead) -> std::io::Result<Option<Vec<u8>>> {
    let mut size = String::new();
    if r.read_line(&mut size)? == 0 {
        return Ok(None);
    }
    let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
        .map_err(|e| std::io::Error::other(format!("bad chunk size {size:?}: {e}")))?;
    let mut chunk = vec![0; n];
    r.read_exact(&mut chunk)?;
    let mut crlf = [0; 2];
    r.read_exact(&mut crlf)?;
    Ok((n > 0).then_some(chunk))
}

/// An open server-sent event stream.
pub(crate) struct Events {
    reader: BufReader<TcpStream>,
    buf: String,
}

/// One event: its `id:` (if any), `event:` name and `data:` line.
#[derive(Debug)]
pub(crate) struct Event {
    pub(crate) id: Option<String>,
    pub(crate) name: String,
    pub(crate) data: String,
}

impl Events {
    /// Opens `GET path` as an event stream; the answer's status and headers come back too.
    pub(crate) fn open(
        addr: SocketAddr,
        path: &str,
        token: &str,
    ) -> std::io::Result<(u16, Headers, Events)> {
        let stream = TcpStream::connect(addr)?;
        stream.set_read_timeout(Some(PATIENCE))?;
        let mut w = stream.try_clone()?;
        write!(
            w,
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n"
        )?;
        let mut reader = BufReader::new(stream);
        let (status, headers) = read_head(&mut reader)?;
        Ok((
            status,
            headers,
            Events {
                reader,
                buf: String::new(),
            },
        ))
    }

    /// The next event (comments and keep-alives skipped); `None` when the stream ends.
    pub(crate) fn next(&mut self) -> Option<Event> {
        self.next_within(PATIENCE)
    }

    /// The next event, or `None` when the stream ends or `wait` passes without one (checked at
    /// each keep-alive, so the server's `sse_keepalive_secs` must be shorter than `wait`).
    pub(crate) fn next_within(&mut self, wait: Duration) -> Option<Event> {
        let until = Instant::now() + wait;
        loop {
            if Instant::now() >= until {
                return None;
            }
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut name = None;
                let mut id = None;
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(i) = line.strip_prefix("id: ") {
                        id = Some(i.to_owned());
                    } else if let Some(n) = line.strip_prefix("event: ") {
                        name = Some(n.to_owned());
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        data.push_str(d);
                    }
                }
                if let Some(name) = name {
                    return Some(Event { id, name, data });
                }
                continue;
            }
            let chunk = read_chunk(&mut self.reader).ok()??;
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

/// Polls `f` until it returns `Some`, within [`PATIENCE`].
pub(crate) fn eventually<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let until = Instant::now() + PATIENCE;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < until, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Reads a value out of `/metrics` text: the sample whose name and labels start with `prefix`.
pub(crate) fn metric(text: &str, prefix: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}
