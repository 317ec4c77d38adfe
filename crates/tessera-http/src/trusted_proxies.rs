//! Trusted proxies: the peers the operator names (`--trust-proxy
//! CIDR,...`) as the load balancers in front of the server, and the client
//! address taken from what they say — never from anyone else.
//!
//! Behind a proxy every connection comes from the proxy, so per-caller
//! limits keyed by the peer address would count all anonymous callers as
//! one. A trusted proxy says whom it forwards for in `X-Forwarded-For`
//! (HTTP) or in a PROXY protocol header (layer 4, see
//! [`ServeOptions::proxy_protocol`](crate::ServeOptions::proxy_protocol)).
//! `X-Forwarded-For` is read by the rightmost-untrusted rule: walking its
//! entries from the right (the nearest hop first), the first address that is
//! not a trusted proxy is the client; what a client wrote to the left of it
//! is never read. A request from a peer that is not trusted is the peer, its
//! headers ignored. `Forwarded` (RFC 7239) is not read: a proxy that sets
//! only `X-Forwarded-For` passes a client's own `Forwarded` through.

use std::net::IpAddr;

use http::HeaderMap;
use ipnet::IpNet;

/// The proxies whose word on the client address is taken.
///
/// ```
/// use std::net::IpAddr;
/// use http::HeaderMap;
/// use tessera_http::TrustedProxies;
///
/// let proxies = TrustedProxies::parse("10.0.0.0/8, 127.0.0.1").unwrap();
/// let mut headers = HeaderMap::new();
/// headers.insert("x-forwarded-for", "6.6.6.6, 203.0.113.9, 10.1.2.3".parse().unwrap());
/// let proxy: IpAddr = "127.0.0.1".parse().unwrap();
/// // The client wrote 6.6.6.6; the first hop not a proxy, from the right, is 203.0.113.9.
/// assert_eq!(proxies.client_address(proxy, &headers), "203.0.113.9".parse::<IpAddr>().unwrap());
/// // From a peer that is not a proxy, the header means nothing.
/// let stranger: IpAddr = "198.51.100.1".parse().unwrap();
/// assert_eq!(proxies.client_address(stranger, &headers), stranger);
/// assert!(TrustedProxies::parse("10.0.0.0/33").is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    nets: Vec<IpNet>,
}

impl TrustedProxies {
    /// Proxies in `nets`.
    pub fn new(nets: impl IntoIterator<Item = IpNet>) -> Self {
        Self {
            nets: nets.into_iter().map(|n| n.trunc()).collect(),
        }
    }

    /// Parses `CIDR,CIDR,...` (a bare address is one host), as `--trust-proxy` takes it.
    pub fn parse(list: &str) -> Result<Self, String> {
        let nets = list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse::<IpNet>()
                    .or_else(|_| s.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        format!("a trusted proxy is an address or a CIDR block (e.g. 10.0.0.0/8), not {s:?}")
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if nets.is_empty() {
            return Err("--trust-proxy names no address or CIDR block".into());
        }
        Ok(Self::new(nets))
    }

    /// Whether no proxy is trusted.
    pub fn is_empty(&self) -> bool {
        self.nets.is_empty()
    }

    /// Whether `addr` is a trusted proxy.
    pub fn trusts(&self, addr: IpAddr) -> bool {
        let addr = addr.to_canonical();
        self.nets.iter().any(|n| n.contains(&addr))
    }

    /// The client address of a request that came from `peer` with `headers`.
    pub fn client_address(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        if !self.trusts(peer) {
            return peer;
        }
        let mut client = peer;
        let entries = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .collect::<Vec<_>>();
        for entry in entries.into_iter().rev() {
            // What is not an address ends the walk at the last hop known.
            let Some(addr) = parse_hop(entry.trim()) else {
                return client;
            };
            client = addr;
            if !self.trusts(addr) {
                return addr;
            }
        }
        client
    }
}

/// One `X-Forwarded-For` entry: an address, `[v6]`, or either with a port.
fn parse_hop(entry: &str) -> Option<IpAddr> {
    entry
        .parse()
        .ok()
        .or_else(|| entry.parse::<std::net::SocketAddr>().ok().map(|s| s.ip()))
        .or_else(|| {
            entry
                .strip_prefix('[')
                .and_then(|e| e.strip_suffix(']'))
                .and_then(|e| e.parse().ok())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xff(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append("x-forwarded-for", v.parse().unwrap());
        }
        headers
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_rightmost_untrusted_hop_is_the_client() {
        let proxies = TrustedProxies::parse("127.0.0.1,10.0.0.0/8,2001:db8::/32").unwrap();
        let proxy = ip("127.0.0.1");
        let cases: &[(&[&str], &str)] = &[
            (&[], "127.0.0.1"),
            (&["203.0.113.9"], "203.0.113.9"),
            (&["1.1.1.1, 203.0.113.9"], "203.0.113.9"),
            (&["1.1.1.1", "203.0.113.9, 10.0.0.2"], "203.0.113.9"),
            (&["203.0.113.9:4711"], "203.0.113.9"),
            (&["[2001:db9::1]:443"], "2001:db9::1"),
            (&["2001:db8::5, 10.0.0.1"], "2001:db8::5"),
            (&["garbage, 203.0.113.9"], "203.0.113.9"),
            (&["203.0.113.9, garbage"], "127.0.0.1"),
            (&["10.0.0.3, garbage, 10.0.0.2"], "10.0.0.2"),
        ];
        for (headers, want) in cases {
            assert_eq!(
                proxies.client_address(proxy, &xff(headers)),
                ip(want),
                "{headers:?}"
            );
        }
        // A peer that is not a proxy is itself, whatever it says.
        assert_eq!(
            proxies.client_address(ip("198.51.100.1"), &xff(&["10.0.0.9"])),
            ip("198.51.100.1")
        );
        // An IPv4 peer reached over IPv6 is matched as IPv4.
        assert!(proxies.trusts(ip("::ffff:127.0.0.1")));
    }

    #[test]
    fn a_list_is_parsed_strictly() {
        assert!(TrustedProxies::parse("").is_err());
        assert!(TrustedProxies::parse("10.0.0.0/8,nope").is_err());
        assert!(
            TrustedProxies::parse("10.0.0.0/8")
                .unwrap()
                .trusts(ip("10.200.0.1"))
        );
        assert!(
            !TrustedProxies::parse("10.0.0.0/8")
                .unwrap()
                .trusts(ip("11.0.0.1"))
        );
    }
}
