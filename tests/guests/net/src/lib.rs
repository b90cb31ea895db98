//! A typed hook that opens a TCP connection. Using `std::net` makes the component import
//! `wasi:sockets`, which the host must refuse when it loads the component (class
//! `incompatible_component`, naming the import) — it must never get as far as calling it.

use std::net::TcpStream;

use hookbox_guest::{Event, Hook, Response};

#[derive(Default)]
struct Net;

impl Hook for Net {
    fn handle(&self, _event: &Event) -> Result<Response, String> {
        Ok(Response::context(
            match TcpStream::connect("127.0.0.1:80") {
                Ok(_) => "connected".to_owned(),
                Err(e) => format!("err:{e}"),
            },
        ))
    }
}

hookbox_guest::export_hook!(Net);
