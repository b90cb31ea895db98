//! Allow-list entries of a tenant's http policy: a host name (`hooks.example.com`, a
//! `*.example.com` wildcard), optionally with a port, or an IP address or CIDR block (optionally
//! with a port). Parsed once, matched against each request's URL host and resolved address.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::HttpError;

/// One allow-list entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// A host name as written in hook URLs, compared without ASCII case and a trailing dot.
    Host {
        /// Lower case, without a trailing dot; after `*.` for a wildcard.
        name: String,
        /// `*.example.com`: any subdomain of `name`, not `name` itself.
        wildcard: bool,
        /// Only this port, when given.
        port: Option<u16>,
    },
    /// An IP address (`prefix` 32 or 128) or a CIDR block, matched against the resolved address.
    /// The only kind of entry that lets a special address (loopback, private, link-local,
    /// metadata) through.
    Net {
        /// The network address (host bits cleared).
        addr: IpAddr,
        /// Prefix length.
        prefix: u8,
        /// Only this port, when given.
        port: Option<u16>,
    },
}

impl Destination {
    /// Parses `hooks.example.com`, `*.example.com`, `hooks.example.com:8443`, `10.0.0.5`,
    /// `10.0.0.5:8080`, `10.0.0.0/8`, `::1`, `[::1]:8080`, `fd00::/8`.
    ///
    /// # Errors
    /// [`HttpError::BadDestination`] quoting the entry and what is wrong with it.
    pub fn parse(entry: &str) -> Result<Destination, HttpError> {
        let bad = |reason: &str| HttpError::BadDestination {
            entry: entry.to_owned(),
            reason: reason.to_owned(),
        };
        let text = entry.trim();
        if text.is_empty() {
            return Err(bad("it is empty"));
        }
        if text.contains("://") {
            return Err(bad(
                "write the host (`hooks.example.com`, `hooks.example.com:8443`), not a URL",
            ));
        }
        if let Some((net, prefix)) = text.split_once('/') {
            let addr: IpAddr = net
                .parse()
                .map_err(|_| bad("the part before `/` is not an IP address"))?;
            let max = if addr.is_ipv4() { 32 } else { 128 };
            let prefix: u8 = prefix
                .parse()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| bad(&format!("the prefix length must be 0 to {max}")))?;
            return Ok(Destination::Net {
                addr: mask(addr, prefix),
                prefix,
                port: None,
            });
        }
        if let Ok(addr) = text.parse::<IpAddr>() {
            return Ok(single(addr, None));
        }
        if let Some(rest) = text.strip_prefix('[') {
            let (v6, port) = rest
                .split_once("]:")
                .ok_or_else(|| bad("write an IPv6 address with a port as `[::1]:8080`"))?;
            let addr: IpAddr = v6
                .parse()
                .map_err(|_| bad("the part in brackets is not an IPv6 address"))?;
            return Ok(single(addr, Some(parse_port(port).map_err(&bad)?)));
        }
        let (host, port) = match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(parse_port(port).map_err(&bad)?)),
            None => (text, None),
        };
        if let Ok(addr) = host.parse::<IpAddr>() {
            return Ok(single(addr, port));
        }
        let (name, wildcard) = match host.strip_prefix("*.") {
            Some(rest) => (rest, true),
            None => (host, false),
        };
        let name = normalize(name);
        if !valid_host_name(&name) {
            return Err(bad(
                "not a host name, IP address or CIDR block (host names use letters, digits, `-` and `.`)",
            ));
        }
        Ok(Destination::Host {
            name,
            wildcard,
            port,
        })
    }

    /// Whether a request to `host` (its URL host, a name or an IP literal) on `port`, connected
    /// to `addr`, matches this entry.
    pub(crate) fn matches(&self, host: &str, port: u16, addr: IpAddr) -> bool {
        match self {
            Destination::Host {
                name,
                wildcard,
                port: want,
            } => {
                let host = normalize(host);
                let name_ok = if *wildcard {
                    host.strip_suffix(name.as_str())
                        .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.'))
                } else {
                    host == *name
                };
                name_ok && want.is_none_or(|p| p == port)
            }
            Destination::Net { port: want, .. } => {
                self.contains(addr) && want.is_none_or(|p| p == port)
            }
        }
    }

    /// Whether this is an IP/CIDR entry holding `addr` (on any port).
    pub(crate) fn contains(&self, addr: IpAddr) -> bool {
        match self {
            Destination::Net {
                addr: net, prefix, ..
            } => {
                // An IPv4-mapped IPv6 address is the IPv4 address for this purpose.
                let addr = match addr {
                    IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
                    v4 => v4,
                };
                addr.is_ipv4() == net.is_ipv4() && mask(addr, *prefix) == *net
            }
            Destination::Host { .. } => false,
        }
    }

    /// Whether this entry lets the special address `addr` through: an IP/CIDR entry holding
    /// it whose block lies inside `addr`'s special block of `special_prefix` bits (an entry
    /// at least as long as the block's prefix, in the same family). A host name never does,
    /// nor a wider block that merely contains the special one (`0.0.0.0/0`).
    pub(crate) fn unlocks(&self, addr: IpAddr, special_prefix: u8) -> bool {
        match self {
            Destination::Net {
                addr: net, prefix, ..
            } => {
                net.is_ipv4() == addr.is_ipv4() && *prefix >= special_prefix && self.contains(addr)
            }
            Destination::Host { .. } => false,
        }
    }
}

fn single(addr: IpAddr, port: Option<u16>) -> Destination {
    Destination::Net {
        addr,
        prefix: if addr.is_ipv4() { 32 } else { 128 },
        port,
    }
}

fn parse_port(text: &str) -> Result<u16, &'static str> {
    text.parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
        .ok_or("the port must be a number from 1 to 65535")
}

/// `addr` with the bits after `prefix` cleared.
pub(crate) fn mask(addr: IpAddr, prefix: u8) -> IpAddr {
    match addr {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            let kept = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V4((bits & kept).into())
        }
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let kept = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V6((bits & kept).into())
        }
    }
}

/// Lower case, without the trailing dot of a fully qualified name.
pub(crate) fn normalize(host: &str) -> String {
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

fn valid_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Destination::Host {
                name,
                wildcard,
                port,
            } => {
                if *wildcard {
                    f.write_str("*.")?;
                }
                f.write_str(name)?;
                if let Some(port) = port {
                    write!(f, ":{port}")?;
                }
                Ok(())
            }
            Destination::Net { addr, prefix, port } => {
                let full = if addr.is_ipv4() { 32 } else { 128 };
                match (port, addr) {
                    (Some(port), IpAddr::V6(v6)) => write!(f, "[{v6}]:{port}"),
                    (Some(port), IpAddr::V4(v4)) => write!(f, "{v4}:{port}"),
                    (None, _) if *prefix == full => write!(f, "{addr}"),
                    (None, _) => write!(f, "{addr}/{prefix}"),
                }
            }
        }
    }
}

impl FromStr for Destination {
    type Err = HttpError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Destination::parse(s)
    }
}

impl Serialize for Destination {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Destination {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Destination::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Destination {
        Destination::parse(s).unwrap()
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn every_form_parses_and_prints_back() {
        for text in [
            "hooks.example.com",
            "*.example.com",
            "hooks.example.com:8443",
            "10.0.0.5",
            "10.0.0.5:8080",
            "10.0.0.0/8",
            "::1",
            "[::1]:8080",
            "fd00::/8",
            "0.0.0.0/0",
        ] {
            assert_eq!(parse(text).to_string(), text);
        }
        assert_eq!(parse("Hooks.Example.COM.").to_string(), "hooks.example.com");
        assert_eq!(parse("10.1.2.3/8").to_string(), "10.0.0.0/8");
    }

    #[test]
    fn bad_entries_are_quoted_with_the_reason() {
        for (text, reason) in [
            ("", "empty"),
            ("10.0.0.0/33", "0 to 32"),
            ("fd00::/129", "0 to 128"),
            ("nope/8", "not an IP address"),
            ("host:0", "port"),
            ("host:99999", "port"),
            ("[::1]", "[::1]:8080"),
            ("exa mple.com", "not a host name"),
            ("-bad.com", "not a host name"),
            ("http://x.com", "not a URL"),
        ] {
            let err = Destination::parse(text).unwrap_err().to_string();
            assert!(err.contains(&format!("`{text}`")), "{err}");
            assert!(err.contains(reason), "{text}: {err}");
        }
    }

    #[test]
    fn host_entries_match_names_and_ports() {
        let any_port = parse("hooks.example.com");
        assert!(any_port.matches("HOOKS.example.com.", 443, ip("1.2.3.4")));
        assert!(!any_port.matches("evil-hooks.example.com", 443, ip("1.2.3.4")));
        let port = parse("hooks.example.com:8443");
        assert!(port.matches("hooks.example.com", 8443, ip("1.2.3.4")));
        assert!(!port.matches("hooks.example.com", 443, ip("1.2.3.4")));
        let wild = parse("*.example.com");
        assert!(wild.matches("a.b.example.com", 80, ip("1.2.3.4")));
        assert!(!wild.matches("example.com", 80, ip("1.2.3.4")));
        assert!(!wild.matches("badexample.com", 80, ip("1.2.3.4")));
        // A host entry never matches by address.
        assert!(!any_port.contains(ip("1.2.3.4")));
    }

    #[test]
    fn net_entries_match_addresses() {
        let net = parse("10.0.0.0/8");
        assert!(net.matches("anything", 1, ip("10.200.0.1")));
        assert!(!net.matches("anything", 1, ip("11.0.0.1")));
        assert!(net.contains(ip("::ffff:10.0.0.1")));
        let one = parse("127.0.0.1:8080");
        assert!(one.matches("localhost", 8080, ip("127.0.0.1")));
        assert!(!one.matches("localhost", 8081, ip("127.0.0.1")));
        assert!(parse("::/0").contains(ip("2001:db8::1")));
        assert!(!parse("::/0").contains(ip("1.2.3.4")));
        assert!(parse("0.0.0.0/0").contains(ip("1.2.3.4")));
    }

    #[test]
    fn entries_deserialize_from_strings() {
        let list: Vec<Destination> =
            serde_json::from_str(r#"["a.example.com", "10.0.0.0/8"]"#).unwrap();
        assert_eq!(list.len(), 2);
        let err = serde_json::from_str::<Vec<Destination>>(r#"["10.0.0.0/99"]"#).unwrap_err();
        assert!(err.to_string().contains("10.0.0.0/99"), "{err}");
    }
}
