//! Addresses a tenant's hook must not reach unless its policy lists them by IP or CIDR:
//! this machine, private networks, link-local (where cloud metadata services answer), and
//! ranges that embed an IPv4 address a special one could hide behind.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` is special, or `None` for an ordinary public address.
pub(crate) fn special(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

fn special_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, ..) => "a \"this network\" address (0.0.0.0/8), which reaches this machine",
        (127, ..) => "a loopback address (127.0.0.0/8): this machine",
        (10, ..) | (172, 16..=31, _) | (192, 168, _) => "a private address (RFC 1918)",
        (169, 254, _) => {
            "a link-local address (169.254.0.0/16), where cloud metadata services answer \
             (169.254.169.254)"
        }
        (100, 64..=127, _) => {
            "a carrier-grade NAT address (100.64.0.0/10, RFC 6598; Alibaba Cloud's metadata \
             service is 100.100.100.200)"
        }
        (192, 0, 0) => {
            "an IETF protocol address (192.0.0.0/24; Oracle Cloud's metadata is 192.0.0.192)"
        }
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address (RFC 5737)",
        (198, 18..=19, _) => "a benchmarking address (198.18.0.0/15)",
        (224..=239, ..) => "a multicast address",
        (240..=255, ..) => "a reserved or broadcast address (240.0.0.0/4)",
        _ => return None,
    })
}

fn special_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let seg = ip.segments();
    if ip.is_unspecified() {
        return Some("the unspecified address (::), which reaches this machine");
    }
    if ip.is_loopback() {
        return Some("the loopback address (::1): this machine");
    }
    // Addresses that carry an IPv4 address: judged by it, so `::ffff:169.254.169.254` or the
    // NAT64 form of it are refused like the address itself.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return special_v4(v4);
    }
    if seg[..6] == [0, 0, 0, 0, 0, 0] {
        return Some("an IPv4-compatible address (::/96, deprecated)");
    }
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [.., hi, lo] = seg;
        return special_v4(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo)));
    }
    if seg[0] == 0x2002 {
        // 6to4: the IPv4 address is in bits 16..48.
        return special_v4(Ipv4Addr::from(
            (u32::from(seg[1]) << 16) | u32::from(seg[2]),
        ));
    }
    Some(match seg[0] {
        0x0064 if seg[1] == 0xff9b => "a local-use NAT64 address (64:ff9b:1::/48)",
        0x0100 if seg[1..4] == [0, 0, 0] => "a discard-only address (100::/64)",
        0x2001 if seg[1] == 0 => "a Teredo address (2001::/32), which tunnels to an IPv4 address",
        0x2001 if seg[1] == 0x0db8 => "a documentation address (2001:db8::/32)",
        s if s & 0xfe00 == 0xfc00 => {
            "a unique local address (fc00::/7, RFC 4193; AWS's metadata service is fd00:ec2::254)"
        }
        s if s & 0xffc0 == 0xfe80 => "a link-local address (fe80::/10)",
        s if s & 0xffc0 == 0xfec0 => "a site-local address (fec0::/10, deprecated)",
        s if s & 0xff00 == 0xff00 => "a multicast address",
        _ => return None,
    })
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
        let reason = special("169.254.169.254".parse().unwrap()).unwrap();
        assert!(reason.contains("metadata"), "{reason}");
        let reason = special("fd00:ec2::254".parse().unwrap()).unwrap();
        assert!(reason.contains("fd00:ec2::254"), "{reason}");
    }
}
