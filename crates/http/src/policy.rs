//! Where `http` hooks may send the payload: anywhere for one developer's own settings (as
//! Claude Code), nowhere for a tenant unless its policy turns them on, and then only to
//! allow-listed destinations, with special addresses refused unless listed by IP or CIDR.
//!
//! The check runs on the address the connection is actually made to, after DNS resolution:
//! a name that resolves (or re-resolves, DNS rebinding) to the metadata service is refused
//! even when the name itself is listed.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::destination::Destination;
use crate::special::special;

/// The destination policy of `http` hooks.
///
/// | field | [`developer`](Self::developer) (one developer's own settings) | [`tenant`](Self::tenant) (the default for tenants, and for a deserialised policy's missing fields) |
/// | --- | --- | --- |
/// | [`enabled`](Self::enabled) | `true` | `false` |
/// | [`any_destination`](Self::any_destination) | `true` | `false` |
/// | [`allow`](Self::allow) | empty | empty |
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default = "HttpPolicy::tenant", deny_unknown_fields)]
pub struct HttpPolicy {
    /// Whether `http` hooks run at all. When `false` every one fails with `http_error` (the
    /// rule's fail mode then decides) without any network traffic.
    pub enabled: bool,
    /// Any destination, special addresses included, as Claude Code allows in a developer's own
    /// settings (hooks on `localhost` are common there). When `false`, only [`allow`](Self::allow).
    pub any_destination: bool,
    /// The allow-list when [`any_destination`](Self::any_destination) is `false`: host names
    /// (`hooks.example.com`, `*.example.com`), `host:port`, IP addresses and CIDR blocks
    /// (`10.0.0.5`, `10.0.0.5:8080`, `10.0.0.0/8`, `[::1]:8080`). A request is allowed when an
    /// entry matches its URL host or its resolved address, and that address is not special
    /// (loopback, private, link-local, CGNAT, unique local, metadata, …) — a special address
    /// needs an IP or CIDR entry holding it; a host-name entry never lets one through.
    pub allow: Vec<Destination>,
}

impl HttpPolicy {
    /// One developer's own settings: any destination (Claude Code's behaviour).
    pub fn developer() -> HttpPolicy {
        HttpPolicy {
            enabled: true,
            any_destination: true,
            allow: Vec::new(),
        }
    }

    /// A tenant's default: `http` hooks off.
    pub fn tenant() -> HttpPolicy {
        HttpPolicy {
            enabled: false,
            any_destination: false,
            allow: Vec::new(),
        }
    }

    /// A tenant's policy with `http` hooks on, to `allow` only.
    pub fn allow_only(allow: impl IntoIterator<Item = Destination>) -> HttpPolicy {
        HttpPolicy {
            enabled: true,
            any_destination: false,
            allow: allow.into_iter().collect(),
        }
    }

    /// Why a request to URL host `host` on `port`, connected to `addr`, is refused; `None`
    /// when it is allowed.
    pub(crate) fn refusal(&self, host: &str, port: u16, addr: IpAddr) -> Option<String> {
        if self.any_destination {
            return None;
        }
        if !self.allow.iter().any(|d| d.matches(host, port, addr)) {
            return Some(format!(
                "`{host}` ({addr}) port {port} is not in the policy's allow-list"
            ));
        }
        match special(addr) {
            Some(what) if !self.allow.iter().any(|d| d.contains(addr)) => Some(format!(
                "`{host}` resolves to {addr}, {what}; only an IP or CIDR entry of the allow-list \
                 can permit it"
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(entries: &[&str]) -> HttpPolicy {
        HttpPolicy::allow_only(entries.iter().map(|e| Destination::parse(e).unwrap()))
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_developer_reaches_anything() {
        let p = HttpPolicy::developer();
        assert_eq!(p.refusal("localhost", 80, ip("127.0.0.1")), None);
        assert_eq!(p.refusal("x", 80, ip("169.254.169.254")), None);
    }

    #[test]
    fn a_tenant_reaches_listed_public_destinations_only() {
        let p = policy(&["hooks.example.com", "1.2.3.0/24"]);
        assert_eq!(
            p.refusal("hooks.example.com", 443, ip("93.184.216.34")),
            None
        );
        assert_eq!(p.refusal("other.example.com", 443, ip("1.2.3.4")), None);
        let refused = p
            .refusal("other.example.com", 443, ip("93.184.216.34"))
            .unwrap();
        assert!(
            refused.contains("not in the policy's allow-list"),
            "{refused}"
        );
    }

    #[test]
    fn a_listed_name_resolving_to_a_special_address_is_refused() {
        let p = policy(&["hooks.example.com"]);
        let refused = p
            .refusal("hooks.example.com", 443, ip("169.254.169.254"))
            .unwrap();
        assert!(refused.contains("metadata"), "{refused}");
        let refused = p.refusal("hooks.example.com", 443, ip("10.0.0.1")).unwrap();
        assert!(refused.contains("private"), "{refused}");
    }

    #[test]
    fn a_special_address_listed_by_ip_or_cidr_is_allowed() {
        let p = policy(&["127.0.0.1:8080", "10.0.0.0/8"]);
        assert_eq!(p.refusal("localhost", 8080, ip("127.0.0.1")), None);
        assert!(p.refusal("localhost", 8081, ip("127.0.0.1")).is_some());
        assert_eq!(p.refusal("internal.corp", 443, ip("10.9.8.7")), None);
        assert!(
            p.refusal("internal.corp", 443, ip("169.254.169.254"))
                .is_some()
        );
    }

    #[test]
    fn a_deserialised_policy_defaults_to_off() {
        let p: HttpPolicy = serde_json::from_str("{}").unwrap();
        assert_eq!(p, HttpPolicy::tenant());
        let p: HttpPolicy =
            serde_json::from_str(r#"{"enabled": true, "allow": ["hooks.example.com"]}"#).unwrap();
        assert!(p.enabled && !p.any_destination);
        assert!(serde_json::from_str::<HttpPolicy>(r#"{"alow": []}"#).is_err());
    }
}
