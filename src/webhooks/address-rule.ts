import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * The webhook URL rule (docs/channels.md, The URL rule): https only, and every address the host resolves to must
 * be public. Checked when a connection is created and again before every send; the sender then
 * connects to exactly the addresses returned here, so a DNS answer that changes after the check
 * cannot redirect the request.
 */

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

export type UrlRuleViolation =
  | 'invalid_url'
  | 'not_https'
  | 'credentials_in_url'
  | 'unresolvable'
  | 'non_public_address';

export type UrlCheck =
  | { ok: true; url: URL; hostname: string; addresses: CheckedAddress[] }
  | { ok: false; reason: UrlRuleViolation; message: string; address?: string };

/** Resolves a host name to every address it has (A and AAAA). */
export type Resolve = (hostname: string) => Promise<CheckedAddress[]>;

export const systemResolve: Resolve = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

export interface AllowList {
  readonly cidrs: readonly string[];
  allows(address: CheckedAddress): boolean;
}

export const NO_ALLOWED_RANGES: AllowList = { cidrs: [], allows: () => false };

/**
 * Parses EARSHOT_WEBHOOK_ALLOW_CIDRS entries ("10.0.0.0/8", "::1/128", or a bare address); `setting`
 * names the variable in the error (EARSHOT_OAUTH_CLIENT_METADATA_ALLOW_CIDRS uses the same form).
 */
export function parseAllowCidrs(
  cidrs: readonly string[],
  setting = 'EARSHOT_WEBHOOK_ALLOW_CIDRS',
): AllowList {
  if (cidrs.length === 0) return NO_ALLOWED_RANGES;
  const list = new BlockList();
  for (const entry of cidrs) {
    const [network = '', prefixText, extra] = entry.trim().split('/');
    const family = isIP(network);
    const maxPrefix = family === 6 ? 128 : 32;
    const prefix = prefixText === undefined ? maxPrefix : Number(prefixText);
    if (
      family === 0 ||
      extra !== undefined ||
      !Number.isInteger(prefix) ||
      prefix < 0 ||
      prefix > maxPrefix
    ) {
      throw new Error(`${setting}: "${entry}" is not a CIDR such as 10.0.0.0/8 or fd00::/8`);
    }
    list.addSubnet(network, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return {
    cidrs: [...cidrs],
    allows: ({ address, family }) => list.check(address, family === 6 ? 'ipv6' : 'ipv4'),
  };
}

interface Range {
  cidr: string;
  label: string;
  list: BlockList;
}

function range(cidr: string, label: string): Range {
  const [network = '', prefix = ''] = cidr.split('/');
  const list = new BlockList();
  list.addSubnet(network, Number(prefix), isIP(network) === 6 ? 'ipv6' : 'ipv4');
  return { cidr, label, list };
}

// IANA IPv4 Special-Purpose Address Registry, every entry that is not globally reachable plus
// the benchmark and documentation ranges.
const IPV4_RANGES: Range[] = [
  range('0.0.0.0/8', '"this network" address'),
  range('10.0.0.0/8', 'private address'),
  range('100.64.0.0/10', 'carrier-grade NAT (CGNAT) address'),
  range('127.0.0.0/8', 'loopback address'),
  range('169.254.0.0/16', 'link-local address'),
  range('172.16.0.0/12', 'private address'),
  range('192.0.0.0/24', 'IETF protocol assignment'),
  range('192.0.2.0/24', 'documentation address (TEST-NET-1)'),
  range('192.88.99.0/24', 'deprecated 6to4 relay anycast address'),
  range('192.168.0.0/16', 'private address'),
  range('198.18.0.0/15', 'benchmarking address'),
  range('198.51.100.0/24', 'documentation address (TEST-NET-2)'),
  range('203.0.113.0/24', 'documentation address (TEST-NET-3)'),
  range('224.0.0.0/4', 'multicast address'),
  range('255.255.255.255/32', 'broadcast address'),
  range('240.0.0.0/4', 'reserved address'),
];

// Checked after the forms that embed an IPv4 address have been unwrapped. Anything outside
// 2000::/3 (global unicast) that is not listed here is reported as reserved.
const IPV6_RANGES: Range[] = [
  range('::/128', 'unspecified address'),
  range('::1/128', 'loopback address'),
  range('64:ff9b:1::/48', 'local-use NAT64 address'),
  range('100::/64', 'discard-only address'),
  range('2001:db8::/32', 'documentation address'),
  range('2001::/23', 'IETF protocol assignment (Teredo, benchmarking, ORCHID)'),
  range('3fff::/20', 'documentation address'),
  range('fc00::/7', 'unique local address (ULA)'),
  range('fe80::/10', 'link-local address'),
  range('fec0::/10', 'site-local address'),
  range('ff00::/8', 'multicast address'),
];
const GLOBAL_UNICAST = range('2000::/3', 'global unicast');

export interface NonPublic {
  /** The range the address falls in, e.g. "10.0.0.0/8". */
  cidr: string;
  /** A human description, e.g. "private address, 10.0.0.0/8". */
  description: string;
}

function classifyV4(address: string): NonPublic | undefined {
  const hit = IPV4_RANGES.find((r) => r.list.check(address, 'ipv4'));
  return hit && { cidr: hit.cidr, description: `${hit.label}, ${hit.cidr}` };
}

/** The 16 bytes of an IPv6 address (zone id stripped), or undefined when it is not one. */
export function ipv6Bytes(text: string): Uint8Array | undefined {
  const address = text.replace(/%.*$/, '');
  if (isIP(address) !== 6) return undefined;
  let groups: string[];
  let tail: number[] = [];
  const lastColon = address.lastIndexOf(':');
  const last = address.slice(lastColon + 1);
  let head = address;
  if (last.includes('.')) {
    tail = last.split('.').map(Number);
    head = `${address.slice(0, lastColon + 1)}0:0`;
  }
  const [left = '', right] = head.split('::');
  const leftGroups = left === '' ? [] : left.split(':');
  if (right === undefined) {
    groups = leftGroups;
  } else {
    const rightGroups = right === '' ? [] : right.split(':');
    groups = [...leftGroups, ...Array(8 - leftGroups.length - rightGroups.length).fill('0'), ...rightGroups];
  }
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    const value = Number.parseInt(group, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  });
  if (tail.length === 4) bytes.set(tail, 12);
  return bytes;
}

const v4At = (bytes: Uint8Array, offset: number) => Array.from(bytes.subarray(offset, offset + 4)).join('.');
const zeros = (bytes: Uint8Array, from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);

/** The IPv4 address embedded in an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 address. */
function embeddedV4(bytes: Uint8Array): { form: string; v4: string } | undefined {
  if (zeros(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return { form: 'IPv4-mapped', v4: v4At(bytes, 12) };
  }
  if (
    bytes[0] === 0x00 &&
    bytes[1] === 0x64 &&
    bytes[2] === 0xff &&
    bytes[3] === 0x9b &&
    zeros(bytes, 4, 12)
  ) {
    return { form: 'NAT64 (64:ff9b::/96)', v4: v4At(bytes, 12) };
  }
  if (zeros(bytes, 0, 12) && !zeros(bytes, 12, 15)) {
    return { form: 'IPv4-compatible', v4: v4At(bytes, 12) };
  }
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return { form: '6to4 (2002::/16)', v4: v4At(bytes, 2) };
  return undefined;
}

/**
 * Why an address is not public, or undefined when it is. IPv6 forms that carry an IPv4 address
 * are judged by that IPv4 address.
 */
export function classifyAddress(address: string): NonPublic | undefined {
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return classifyV4(bare);
  const bytes = ipv6Bytes(bare);
  if (family !== 6 || !bytes) return { cidr: '', description: 'not an IP address' };
  const embedded = embeddedV4(bytes);
  if (embedded) {
    const inner = classifyV4(embedded.v4);
    if (inner)
      return {
        cidr: inner.cidr,
        description: `${embedded.form} form of ${embedded.v4}: ${inner.description}`,
      };
    if (embedded.form === 'IPv4-compatible') {
      return { cidr: '::/96', description: 'deprecated IPv4-compatible address, ::/96' };
    }
    return undefined;
  }
  const hit = IPV6_RANGES.find((r) => r.list.check(bare, 'ipv6'));
  if (hit) return { cidr: hit.cidr, description: `${hit.label}, ${hit.cidr}` };
  if (!GLOBAL_UNICAST.list.check(bare, 'ipv6')) {
    return { cidr: '', description: 'reserved address, outside global unicast 2000::/3' };
  }
  return undefined;
}

export interface UrlRuleOptions {
  allow?: AllowList;
  resolve?: Resolve;
  /** Upper bound on name resolution; default 5000 ms. */
  resolveTimeoutMs?: number;
  /** What the messages call the URL; default "Webhook URL". */
  subject?: string;
  /** The rule a non-public address breaks; default "webhook destinations must be public". */
  publicRule?: string;
}

const fail = (reason: UrlRuleViolation, message: string, address?: string): UrlCheck =>
  address === undefined ? { ok: false, reason, message } : { ok: false, reason, message, address };

async function resolveWithin(
  resolve: Resolve,
  hostname: string,
  timeoutMs: number,
): Promise<CheckedAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`name resolution timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([resolve(hostname), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Applies the webhook URL rule to `input`; never throws. */
export async function checkWebhookUrl(input: string, options: UrlRuleOptions = {}): Promise<UrlCheck> {
  const allow = options.allow ?? NO_ALLOWED_RANGES;
  const name = options.subject ?? 'Webhook URL';
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return fail('invalid_url', `${name} is not a valid absolute URL.`);
  }
  if (url.protocol !== 'https:') {
    return fail('not_https', `${name} must use https, not ${url.protocol.replace(/:$/, '')}.`);
  }
  if (url.username !== '' || url.password !== '') {
    return fail('credentials_in_url', `${name} must not contain a user name or password.`);
  }
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = isIP(hostname);
  let addresses: CheckedAddress[];
  if (literal !== 0) {
    addresses = [{ address: hostname, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await resolveWithin(
        options.resolve ?? systemResolve,
        hostname,
        options.resolveTimeoutMs ?? 5000,
      );
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      return fail('unresolvable', `${name} host ${hostname} could not be resolved (${detail}).`);
    }
    if (addresses.length === 0) {
      return fail('unresolvable', `${name} host ${hostname} has no addresses.`);
    }
  }
  for (const candidate of addresses) {
    if (allow.allows(candidate)) continue;
    const nonPublic = classifyAddress(candidate.address);
    if (!nonPublic) continue;
    const subject =
      literal !== 0
        ? `${name} address ${hostname}`
        : `${name} host ${hostname} resolves to ${candidate.address}, which`;
    return fail(
      'non_public_address',
      `${subject} is not a public address (${nonPublic.description}); ${options.publicRule ?? 'webhook destinations must be public'}.`,
      candidate.address,
    );
  }
  return { ok: true, url, hostname, addresses };
}
