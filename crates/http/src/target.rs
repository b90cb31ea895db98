//! The hook's URL, read once: scheme, host, port, what goes in the `Host` header and the
//! request line.

use std::net::IpAddr;

use hyper::Uri;

use crate::error::HttpError;

/// Where a hook's request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub(crate) https: bool,
    /// Lower case, an IPv6 literal without its brackets.
    pub(crate) host: String,
    /// The host as an IP address, when the URL names one.
    pub(crate) ip: Option<IpAddr>,
    pub(crate) port: u16,
    /// The `Host` header: the URL's host and port as written (no user info).
    pub(crate) authority: String,
    /// The request target: path and query (`/` when the URL has none). No fragment.
    pub(crate) path_and_query: String,
}

impl Target {
    /// Reads `url`: `http` or `https`, a host, no user info.
    pub(crate) fn parse(url: &str) -> Result<Target, HttpError> {
        let bad = |reason: &str| HttpError::BadUrl {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        // The fragment is the client's business, never sent.
        let without_fragment = url.split('#').next().unwrap_or(url);
        let uri: Uri = without_fragment.parse().map_err(|e| bad(&format!("{e}")))?;
        let https = match uri.scheme_str() {
            Some(s) if s.eq_ignore_ascii_case("https") => true,
            Some(s) if s.eq_ignore_ascii_case("http") => false,
            Some(other) => return Err(bad(&format!("the scheme `{other}` is not http or https"))),
            None => return Err(bad("it has no scheme; write `http://…` or `https://…`")),
        };
        let authority = uri.authority().ok_or_else(|| bad("it has no host"))?;
        if authority.as_str().contains('@') {
            return Err(bad(
                "user info (`user:password@`) in the URL is not sent; put credentials in a header",
            ));
        }
        let raw_host = authority.host();
        if raw_host.is_empty() {
            return Err(bad("it has no host"));
        }
        let host = raw_host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(raw_host)
            .to_ascii_lowercase();
        let ip = host.parse::<IpAddr>().ok();
        let port = authority.port_u16().unwrap_or(if https { 443 } else { 80 });
        if port == 0 {
            return Err(bad("port 0 cannot be connected to"));
        }
        let path_and_query = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
        Ok(Target {
            https,
            host,
            ip,
            port,
            authority: authority.as_str().to_owned(),
            path_and_query: if path_and_query.is_empty() {
                "/".to_owned()
            } else {
                path_and_query
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_read_into_their_parts() {
        let t = Target::parse("https://Hooks.Example.com/v1/hook?x=1#frag").unwrap();
        assert!(t.https);
        assert_eq!(t.host, "hooks.example.com");
        assert_eq!(t.port, 443);
        assert_eq!(t.authority, "Hooks.Example.com");
        assert_eq!(t.path_and_query, "/v1/hook?x=1");
        assert_eq!(t.ip, None);

        let t = Target::parse("http://[::1]:8080").unwrap();
        assert_eq!(t.host, "::1");
        assert_eq!(t.ip, Some("::1".parse().unwrap()));
        assert_eq!(t.port, 8080);
        assert_eq!(t.authority, "[::1]:8080");
        assert_eq!(t.path_and_query, "/");
    }

    #[test]
    fn unusable_urls_say_why() {
        for (url, reason) in [
            ("ftp://x/", "`ftp` is not http or https"),
            ("/relative", "no scheme"),
            ("http://user:pw@x/", "user info"),
            ("http://x:0/", "port 0"),
            ("not a url", "bad http hook URL `not a url`"),
        ] {
            let err = Target::parse(url).unwrap_err().to_string();
            assert!(err.contains(reason), "{url}: {err}");
            assert!(err.contains(url), "{url}: {err}");
        }
    }
}
