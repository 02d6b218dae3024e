import { BlockList, isIP } from "node:net";

// The client address the sign-in throttle counts failures against. The peer of the connection,
// unless that peer is a reverse proxy listed in STACKSHIP_TRUSTED_PROXIES: then the right-most
// X-Forwarded-For address that is not itself a listed proxy (addresses to its left were written by
// the client and prove nothing). A header from any other peer is ignored.

/** `::ffff:192.0.2.1` (an IPv4 peer on a dual-stack socket) as `192.0.2.1`. */
function normalize(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped ? mapped[1] : address;
}

const lists = new WeakMap<readonly string[], BlockList>();

/** The listed proxies (IPs and CIDRs, as config.ts validated them) as a lookup, built once per list. */
function trustedList(entries: readonly string[]): BlockList {
  let list = lists.get(entries);
  if (!list) {
    list = new BlockList();
    for (const entry of entries) {
      const [address, prefix] = entry.split("/");
      const type = isIP(address) === 6 ? "ipv6" : "ipv4";
      if (prefix === undefined) list.addAddress(address, type);
      else list.addSubnet(address, Number(prefix), type);
    }
    lists.set(entries, list);
  }
  return list;
}

function isTrusted(list: BlockList, address: string): boolean {
  const version = isIP(address);
  return version !== 0 && list.check(address, version === 6 ? "ipv6" : "ipv4");
}

/** The address a request is attributed to (see above); `peer` is the socket's remote address. */
export function clientAddressOf(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trustedProxies: readonly string[],
): string {
  const direct = normalize(peer ?? "unknown");
  if (trustedProxies.length === 0 || forwardedFor === undefined) return direct;
  const list = trustedList(trustedProxies);
  if (!isTrusted(list, direct)) return direct;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor)
    .split(",")
    .map((hop) => normalize(hop.trim()))
    .filter((hop) => hop !== "");
  let client = direct;
  for (let i = hops.length - 1; i >= 0; i--) {
    // Something that is not an address ends the chain: the last trusted hop is all we know.
    if (isIP(hops[i]) === 0) return client;
    client = hops[i];
    if (!isTrusted(list, client)) return client;
  }
  return client;
}
