/**
 * Which webhook targets may be called (the safety rules of webhook delivery): https only in
 * production; no loopback, private, link-local, carrier-grade NAT, metadata or otherwise
 * non-public address unless the subscription is in sandbox and the operator allows private
 * targets. Pure: the caller resolves host names and passes the addresses.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { WebhookEnvironment } from './values.js';

/** Every range that is not the public internet (IANA special-purpose registries). */
const NON_PUBLIC_V4 = [
  '0.0.0.0/8', // "this network"
  '10.0.0.0/8', // private
  '100.64.0.0/10', // carrier-grade NAT (also some cloud metadata services)
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local, cloud metadata 169.254.169.254
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation
  '192.88.99.0/24', // 6to4 relay
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation
  '203.0.113.0/24', // documentation
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, broadcast
].map((cidr) => ipaddr.IPv4.parseCIDR(cidr));
const NON_PUBLIC_V6 = [
  '::/128', // unspecified
  '::1/128', // loopback
  '64:ff9b::/96', // NAT64 (could reach private IPv4)
  '64:ff9b:1::/48',
  '100::/64', // discard
  '2001::/23', // IETF protocol assignments
  '2001:db8::/32', // documentation
  '2002::/16', // 6to4 (embeds IPv4)
  'fc00::/7', // unique local, cloud metadata fd00:ec2::254
  'fe80::/10', // link-local
  'fec0::/10', // site-local (deprecated)
  'ff00::/8', // multicast
].map((cidr) => ipaddr.IPv6.parseCIDR(cidr));

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), -translated (::ffff:0:a.b.c.d) or -compatible (::a.b.c.d) IPv6 address, else null. */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  if (address.isIPv4MappedAddress()) return address.toIPv4Address();
  const [p0, p1, p2, p3, p4, p5] = address.parts;
  const zeroPrefix = p0 === 0 && p1 === 0 && p2 === 0 && p3 === 0 && p5 === 0;
  if (zeroPrefix && (p4 === 0 || p4 === 0xffff)) return new ipaddr.IPv4(address.toByteArray().slice(12));
  return null;
}

/** True for an address outside the public internet (loopback, private, link-local, metadata, reserved…). */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  // Only the standard notations are addresses (not "127.1" or "0x7f.1", which some parsers accept).
  if (isIP(bare) === 0) return true; // not an address: never call it
  const parsed = ipaddr.parse(bare);
  const v4 = parsed.kind() === 'ipv4' ? (parsed as ipaddr.IPv4) : embeddedIpv4(parsed as ipaddr.IPv6);
  if (v4) return NON_PUBLIC_V4.some((range) => v4.match(range));
  return NON_PUBLIC_V6.some((range) => (parsed as ipaddr.IPv6).match(range));
}

export interface TargetPolicy {
  environment: WebhookEnvironment;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: only honoured for sandbox subscriptions. */
  allowPrivateTargets: boolean;
}

/** The setting that allows non-public targets, named in every refusal of one. */
export const PRIVATE_TARGETS_HINT = '; in development, the setting WEBHOOK_ALLOW_PRIVATE_TARGETS=true allows it for sandbox subscriptions';

export const privateTargetsAllowed = (p: TargetPolicy) => p.environment === 'sandbox' && p.allowPrivateTargets;

/** Host names that are loopback by definition (RFC 6761), whatever a resolver says. */
export function isLoopbackName(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

/**
 * Why a URL may not be a webhook target, before resolving its host (syntax, scheme, credentials,
 * literal addresses), or null when it may be.
 */
export function urlProblem(raw: string, policy: TargetPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'webhookUrl must be an absolute http or https URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'webhookUrl must use https (or http in sandbox)';
  if (url.protocol === 'http:' && policy.environment === 'production') return 'webhookUrl must use https for production subscriptions';
  if (url.username !== '' || url.password !== '') return 'webhookUrl must not carry credentials; sign deliveries with a secretKey instead';
  if (url.hash !== '') return 'webhookUrl must not have a fragment';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === '') return 'webhookUrl must name a host';
  if (!privateTargetsAllowed(policy)) {
    if (isLoopbackName(host)) return `webhookUrl must not point at a loopback host${PRIVATE_TARGETS_HINT}`;
    if (isIP(host) !== 0 && isNonPublicAddress(host)) return `webhookUrl must not point at a loopback, private, link-local or metadata address${PRIVATE_TARGETS_HINT}`;
  }
  return null;
}

/** Why the resolved addresses may not be called (any one non-public address refuses them all), or null. */
export function addressesProblem(addresses: readonly string[], policy: TargetPolicy): string | null {
  if (addresses.length === 0) return 'the host has no address';
  if (privateTargetsAllowed(policy)) return null;
  const bad = addresses.find(isNonPublicAddress);
  return bad ? `the host resolves to a non-public address (${bad})${PRIVATE_TARGETS_HINT}` : null;
}
