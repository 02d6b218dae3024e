import { suite } from "uvu";
import * as assert from "uvu/assert";
import { trustedProxies } from "../config.ts";
import { clientAddressOf } from "./client-address.ts";

const test = suite("client address");

test("the peer, unless it is a listed proxy; then X-Forwarded-For's right-most address that is not a listed proxy", () => {
  const listed = trustedProxies("10.0.0.5, 192.168.0.0/16, fd00::/8");
  // [peer, X-Forwarded-For, proxies, the client, why]
  const cases: Array<[string, string | string[] | undefined, string[], string, string]> = [
    ["203.0.113.1", "198.51.100.7", [], "203.0.113.1", "no proxies listed: the header is ignored"],
    ["203.0.113.1", "198.51.100.7", listed, "203.0.113.1", "an unlisted peer's header is ignored"],
    ["::ffff:203.0.113.1", undefined, listed, "203.0.113.1", "an IPv4-mapped peer is its IPv4 address"],
    ["10.0.0.5", undefined, listed, "10.0.0.5", "a proxy that sends no header is the client"],
    ["10.0.0.5", "198.51.100.7", listed, "198.51.100.7", "a listed proxy's header names the client"],
    [
      "::ffff:10.0.0.5",
      "1.2.3.4, 198.51.100.7",
      listed,
      "198.51.100.7",
      "left of the client is the client's own claim",
    ],
    ["10.0.0.5", "1.2.3.4, 198.51.100.7, 192.168.3.4", listed, "198.51.100.7", "listed hops are walked through"],
    ["10.0.0.5", ["1.2.3.4", "198.51.100.7"], listed, "198.51.100.7", "several header lines are one list"],
    ["fd00::1", "2001:db8::7", listed, "2001:db8::7", "IPv6 ranges are listed too"],
    ["10.0.0.5", "192.168.1.1, 192.168.1.2", listed, "192.168.1.1", "all listed: the left-most"],
    ["10.0.0.5", "198.51.100.7, not-an-address", listed, "10.0.0.5", "garbage ends the chain at the last trusted hop"],
  ];
  for (const [peer, header, proxies, client, why] of cases)
    assert.is(clientAddressOf(peer, header, proxies), client, why);
});

test("STACKSHIP_TRUSTED_PROXIES accepts addresses and CIDR ranges and refuses anything else", () => {
  assert.equal(trustedProxies(undefined), []);
  assert.equal(trustedProxies(" 10.0.0.5 ,::1,10.0.0.0/8,"), ["10.0.0.5", "::1", "10.0.0.0/8"]);
  for (const bad of ["localhost", "10.0.0.0/33", "::/129", "10.0.0.1/8/1", "10.0.0.0/x", "*"]) {
    assert.throws(() => trustedProxies(bad), /STACKSHIP_TRUSTED_PROXIES/, bad);
  }
});

test.run();
