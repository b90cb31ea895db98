//! Addresses a tenant's hook must not reach unless its policy lists them by address: this
//! machine, private networks, link-local (where cloud metadata services answer), and ranges
//! that embed an IPv4 address a special one could hide behind.
//!
//! Each special address belongs to a block (`127.0.0.0/8`, `169.254.0.0/16`, …). An allow-list
//! entry unlocks a special address only when the entry lies inside that block — the address
//! itself, or a CIDR no wider than the block — so `10.0.0.0/8` opens the private network an
//! operator named, while `0.0.0.0/0` ("anywhere public") opens neither loopback nor the
//! metadata service that it happens to contain.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is special, and the block it is special in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Special {
    /// For the refusal message.
    pub(crate) reason: &'static str,
    /// Prefix length of the special block holding the address, in the address's own family
    /// (an IPv4 address in a NAT64 or 6to4 address: 96 or 16 plus the IPv4 block's).
    pub(crate) prefix: u8,
}

/// Why `ip` is special (and its block), or `None` for an ordinary public address.
pub(crate) fn special(ip: IpAddr) -> Option<Special> {
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

fn special_v4(ip: Ipv4Addr) -> Option<Special> {
    let [a, b, c, _] = ip.octets();
    let (reason, prefix) = match (a, b, c) {
        (0, ..) => (
            "a \"this network\" address (0.0.0.0/8), which reaches this machine",
            8,
        ),
        (127, ..) => ("a loopback address (127.0.0.0/8): this machine", 8),
        (10, ..) => ("a private address (RFC 1918, 10.0.0.0/8)", 8),
        (172, 16..=31, _) => ("a private address (RFC 1918, 172.16.0.0/12)", 12),
        (192, 168, _) => ("a private address (RFC 1918, 192.168.0.0/16)", 16),
        (169, 254, _) => (
            "a link-local address (169.254.0.0/16), where cloud metadata services answer \
             (169.254.169.254)",
            16,
        ),
        (100, 64..=127, _) => (
            "a carrier-grade NAT address (100.64.0.0/10, RFC 6598; Alibaba Cloud's metadata \
             service is 100.100.100.200)",
            10,
        ),
        (192, 0, 0) => (
            "an IETF protocol address (192.0.0.0/24; Oracle Cloud's metadata is 192.0.0.192)",
            24,
        ),
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => ("a documentation address (RFC 5737)", 24),
        (198, 18..=19, _) => ("a benchmarking address (198.18.0.0/15)", 15),
        (224..=239, ..) => ("a multicast address (224.0.0.0/4)", 4),
        (240..=255, ..) => ("a reserved or broadcast address (240.0.0.0/4)", 4),
        _ => return None,
    };
    Some(Special { reason, prefix })
}

/// The IPv4 address's verdict inside an IPv6 block of `outer` bits that embeds it.
fn embedded(v4: Ipv4Addr, outer: u8) -> Option<Special> {
    special_v4(v4).map(|s| Special {
        reason: s.reason,
        prefix: outer + s.prefix,
    })
}

fn special_v6(ip: Ipv6Addr) -> Option<Special> {
    let seg = ip.segments();
    let block = |reason, prefix| Some(Special { reason, prefix });
    if ip.is_unspecified() {
        return block(
            "the unspecified address (::), which reaches this machine",
            128,
        );
    }
    if ip.is_loopback() {
        return block("the loopback address (::1): this machine", 128);
    }
    // Addresses that carry an IPv4 address: judged by it, so `::ffff:169.254.169.254` or the
    // NAT64 form of it are refused like the address itself.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return embedded(v4, 96);
    }
    if seg[..6] == [0, 0, 0, 0, 0, 0] {
        return block("an IPv4-compatible address (::/96, deprecated)", 96);
    }
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [.., hi, lo] = seg;
        return embedded(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo)), 96);
    }
    if seg[0] == 0x2002 {
        // 6to4: the IPv4 address is in bits 16..48.
        return embedded(
            Ipv4Addr::from((u32::from(seg[1]) << 16) | u32::from(seg[2])),
            16,
        );
    }
    match seg[0] {
        0x0064 if seg[1] == 0xff9b => block("a local-use NAT64 address (64:ff9b:1::/48)", 48),
        0x0100 if seg[1..4] == [0, 0, 0] => block("a discard-only address (100::/64)", 64),
        0x2001 if seg[1] == 0 => block(
            "a Teredo address (2001::/32), which tunnels to an IPv4 address",
            32,
        ),
        0x2001 if seg[1] == 0x0db8 => block("a documentation address (2001:db8::/32)", 32),
        s if s & 0xfe00 == 0xfc00 => block(
            "a unique local address (fc00::/7, RFC 4193; AWS's metadata service is fd00:ec2::254)",
            7,
        ),
        s if s & 0xffc0 == 0xfe80 => block("a link-local address (fe80::/10)", 10),
        s if s & 0xffc0 == 0xfec0 => block("a site-local address (fec0::/10, deprecated)", 10),
        s if s & 0xff00 == 0xff00 => block("a multicast address (ff00::/8)", 8),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_special(text: &str) -> bool {
        special(text.parse().unwrap()).is_some()
    }

    #[test]
    fn the_special_ranges_are_refused() {
        for ip in [
            "0.0.0.0",
            "127.0.0.1",
            "127.255.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "169.254.170.2",
            "100.64.0.1",
            "100.100.100.200",
            "192.0.0.192",
            "224.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "fd00:ec2::254",
            "fc00::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "2002:a9fe:a9fe::1",
            "2002:0a00:0001::1",
            "::127.0.0.1",
            "2001:0:4136:e378::1",
            "2001:db8::1",
        ] {
            assert!(is_special(ip), "{ip} should be special");
        }
    }

    #[test]
    fn public_addresses_are_ordinary() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "172.32.0.1",
            "172.15.255.255",
            "100.128.0.1",
            "169.255.0.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:0808:0808::1",
        ] {
            assert!(!is_special(ip), "{ip} should be ordinary");
        }
    }

    #[test]
    fn the_reason_names_the_metadata_service() {
        let reason = special("169.254.169.254".parse().unwrap()).unwrap().reason;
        assert!(reason.contains("metadata"), "{reason}");
        let reason = special("fd00:ec2::254".parse().unwrap()).unwrap().reason;
        assert!(reason.contains("fd00:ec2::254"), "{reason}");
    }

    #[test]
    fn each_special_address_knows_its_block() {
        for (ip, prefix) in [
            ("127.0.0.1", 8),
            ("10.1.2.3", 8),
            ("172.20.0.1", 12),
            ("192.168.1.1", 16),
            ("169.254.169.254", 16),
            ("100.100.100.200", 10),
            ("192.0.0.192", 24),
            ("0.0.0.0", 8),
            ("::", 128),
            ("::1", 128),
            ("::ffff:169.254.169.254", 112),
            ("64:ff9b::a9fe:a9fe", 112),
            ("2002:7f00:0001::1", 24),
            ("fd00:ec2::254", 7),
            ("fe80::1", 10),
        ] {
            assert_eq!(special(ip.parse().unwrap()).unwrap().prefix, prefix, "{ip}");
        }
    }
}
