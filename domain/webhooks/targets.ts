/**
 * Which webhook targets may be called (the safety rules of webhook delivery): https only in
 * production; no loopback, private, link-local, carrier-grade NAT, metadata or otherwise
 * non-public address unless the subscription is in sandbox and the operator allows private
 * targets. Pure: the caller resolves host names and passes the addresses.
 */
import { BlockList, isIP } from 'node:net';
import type { WebhookEnvironment } from './values.js';

/** Every range that is not the public internet (IANA special-purpose registries). */
const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (also some cloud metadata services)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b::', 96], // NAT64 (could reach private IPv4)
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (embeds IPv4)
  ['fc00::', 7], // unique local, cloud metadata fd00:ec2::254
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, 'ipv6');
}

/** The IPv4 address inside an IPv4-mapped or -compatible IPv6 address (::ffff:a.b.c.d), else null. */
function embeddedIpv4(address: string): string | null {
  const m = /^::(?:ffff:(?:0:)?)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return m[1]!;
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return null;
}

/** True for an address outside the public internet (loopback, private, link-local, metadata, reserved…). */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return NON_PUBLIC.check(bare, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    if (v4) return NON_PUBLIC.check(v4, 'ipv4');
    return NON_PUBLIC.check(bare, 'ipv6');
  }
  return true; // not an address: never call it
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
