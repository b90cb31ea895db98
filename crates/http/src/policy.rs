//! Where `http` hooks may send the payload: anywhere for one developer's own settings (as
//! Claude Code), nowhere for a tenant unless its policy turns them on, and then only to
//! allow-listed destinations, with special addresses refused unless listed by address (or by a
//! CIDR block inside the special range: `0.0.0.0/0` does not open loopback).
//!
//! The check runs on the address the connection is actually made to, after DNS resolution:
//! a name that resolves (or re-resolves, DNS rebinding) to the metadata service is refused
//! even when the name itself is listed.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::destination::{Destination, mask};
use crate::special::special;

/// The destination policy of `http` hooks.
///
/// | field | [`developer`](Self::developer) (one developer's own settings) | [`tenant`](Self::tenant) (the default for tenants, and for a deserialised policy's missing fields) |
/// | --- | --- | --- |
/// | [`enabled`](Self::enabled) | `true` | `false` |
/// | [`any_destination`](Self::any_destination) | `true` | `false` |
/// | [`allow`](Self::allow) | empty | empty |
/// | [`credential_env`](Self::credential_env) | empty | empty |
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
    /// needs an entry naming it by address, or a CIDR block inside its special range
    /// (`127.0.0.1`, `10.0.0.0/8`, `169.254.169.254`); a host-name entry never lets one
    /// through, and neither does a wider block that merely contains it (`0.0.0.0/0`, `::/0`,
    /// `8.0.0.0/5`).
    pub allow: Vec<Destination>,
    /// Credentials (names on the shared deny-list,
    /// [`hookbox_core::credentials::CREDENTIAL_ENV`]: `ANTHROPIC_API_KEY`,
    /// `AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`, …) that `$VAR` in a rule's header values may
    /// expand when the rule's `allowedEnvVars` lists them. Default **empty**: a plugin's
    /// `allowedEnvVars` asks, this field — the user's or operator's own policy — consents.
    /// Exact names, case as written; no globs. Variables not on the deny-list need only
    /// `allowedEnvVars`. (Where `$VAR`s are read from at all is the host's business: a
    /// tenant's hooks read no host environment.)
    pub credential_env: Vec<String>,
}

impl HttpPolicy {
    /// One developer's own settings: any destination (Claude Code's behaviour).
    pub fn developer() -> HttpPolicy {
        HttpPolicy {
            enabled: true,
            any_destination: true,
            allow: Vec::new(),
            credential_env: Vec::new(),
        }
    }

    /// A tenant's default: `http` hooks off.
    pub fn tenant() -> HttpPolicy {
        HttpPolicy {
            enabled: false,
            any_destination: false,
            allow: Vec::new(),
            credential_env: Vec::new(),
        }
    }

    /// A tenant's policy with `http` hooks on, to `allow` only.
    pub fn allow_only(allow: impl IntoIterator<Item = Destination>) -> HttpPolicy {
        HttpPolicy {
            enabled: true,
            any_destination: false,
            allow: allow.into_iter().collect(),
            credential_env: Vec::new(),
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
        // An IPv4-mapped IPv6 address is its IPv4 address here, so its block is IPv4's.
        let plain = match addr {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
            v4 => v4,
        };
        match special(plain) {
            Some(s) if !self.allow.iter().any(|d| d.unlocks(plain, s.prefix)) => Some(format!(
                "`{host}` resolves to {addr}, {}; only an allow-list entry naming that address, \
                 or a CIDR block inside {}/{}, can permit it (a wider block that contains it, \
                 such as `0.0.0.0/0`, does not)",
                s.reason,
                mask(plain, s.prefix),
                s.prefix
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
    fn a_block_wider_than_the_special_range_does_not_open_it() {
        // Issue 16: `0.0.0.0/0` meant "anywhere public" and also opened loopback and metadata.
        let p = policy(&["0.0.0.0/0", "::/0"]);
        assert_eq!(
            p.refusal("hooks.example.com", 443, ip("93.184.216.34")),
            None
        );
        assert_eq!(
            p.refusal("v6.example.com", 443, ip("2606:4700::1111")),
            None
        );
        for special in [
            "127.0.0.1",
            "169.254.169.254",
            "10.0.0.1",
            "100.100.100.200",
            "0.0.0.0",
            "::1",
            "::",
            "fd00:ec2::254",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "2002:a9fe:a9fe::1",
        ] {
            let refused = p
                .refusal("x.example.com", 80, ip(special))
                .unwrap_or_else(|| panic!("{special} must stay closed under 0.0.0.0/0"));
            assert!(refused.contains("does not"), "{refused}");
        }
        // Blocks that contain a special range without being inside it: refused as well.
        let p = policy(&["8.0.0.0/5", "172.0.0.0/8", "169.0.0.0/8", "fc00::/6"]);
        for special in ["10.0.0.1", "172.16.0.1", "169.254.169.254", "fd00:ec2::254"] {
            assert!(p.refusal("x", 80, ip(special)).is_some(), "{special}");
        }
    }

    #[test]
    fn a_block_inside_the_special_range_or_the_address_opens_it() {
        let p = policy(&[
            "127.0.0.0/8",
            "172.20.0.0/16",
            "169.254.169.254",
            "fd00::/8",
            "::1",
        ]);
        for (addr, allowed) in [
            ("127.0.0.1", true),
            ("::ffff:127.0.0.1", true),
            ("172.20.1.1", true),
            ("172.21.0.1", false),
            ("169.254.169.254", true),
            ("169.254.170.2", false),
            ("fd00:ec2::254", true),
            ("fc00::1", false),
            ("::1", true),
        ] {
            assert_eq!(p.refusal("x", 80, ip(addr)).is_none(), allowed, "{addr}");
        }
        // The whole special range named as itself is inside it.
        let p = policy(&["10.0.0.0/8", "172.16.0.0/12", "100.64.0.0/10"]);
        for addr in ["10.9.8.7", "172.31.0.1", "100.100.100.200"] {
            assert_eq!(p.refusal("x", 80, ip(addr)), None, "{addr}");
        }
    }

    #[test]
    fn a_deserialised_policy_defaults_to_off() {
        let p: HttpPolicy = serde_json::from_str("{}").unwrap();
        assert_eq!(p, HttpPolicy::tenant());
        let p: HttpPolicy =
            serde_json::from_str(r#"{"enabled": true, "allow": ["hooks.example.com"]}"#).unwrap();
        assert!(p.enabled && !p.any_destination);
        assert!(serde_json::from_str::<HttpPolicy>(r#"{"alow": []}"#).is_err());
        assert!(p.credential_env.is_empty());
    }
}
