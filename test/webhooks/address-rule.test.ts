import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CheckedAddress,
  checkWebhookUrl,
  classifyAddress,
  ipv6Bytes,
  parseAllowCidrs,
  type Resolve,
} from '../../src/webhooks/address-rule.ts';

const resolveTo =
  (...addresses: string[]): Resolve =>
  async () =>
    addresses.map((address): CheckedAddress => ({ address, family: address.includes(':') ? 6 : 4 }));

const literal = (address: string) =>
  address.includes(':') ? `https://[${address}]/hook` : `https://${address}/hook`;

const NON_PUBLIC: Array<[string, string]> = [
  ['0.1.2.3', 'this network'],
  ['10.1.2.3', 'private'],
  ['100.64.0.1', 'CGNAT'],
  ['100.127.255.254', 'CGNAT'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.169.254', 'link-local'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.0.0.8', 'IETF protocol'],
  ['192.0.2.10', 'documentation'],
  ['192.168.1.1', 'private'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['224.0.0.251', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['fe80::1', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  ['fc00::1', 'unique local'],
  ['fd12:3456:789a::1', 'unique local'],
  ['fec0::1', 'site-local'],
  ['ff02::1', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['100::1', 'discard-only'],
  ['2001::1', 'IETF protocol'],
  ['2001:2::1', 'IETF protocol'],
  ['64:ff9b:1::a', 'local-use NAT64'],
  ['4000::1', 'reserved'],
  ['5f00::1', 'reserved'],
  ['::ffff:10.0.0.1', 'IPv4-mapped form of 10.0.0.1: private'],
  ['::ffff:169.254.169.254', 'IPv4-mapped form of 169.254.169.254: link-local'],
  ['::ffff:7f00:1', 'IPv4-mapped form of 127.0.0.1: loopback'],
  ['64:ff9b::7f00:1', 'NAT64 (64:ff9b::/96) form of 127.0.0.1: loopback'],
  ['64:ff9b::192.168.0.1', 'NAT64 (64:ff9b::/96) form of 192.168.0.1: private'],
  ['::127.0.0.1', 'IPv4-compatible form of 127.0.0.1: loopback'],
  ['::8.8.8.8', 'deprecated IPv4-compatible'],
  ['2002:a00:1::1', '6to4 (2002::/16) form of 10.0.0.1: private'],
];

const PUBLIC = [
  '1.1.1.1',
  '8.8.8.8',
  '93.184.215.14',
  '2606:4700:4700::1111',
  '2a00:1450:4001::200e',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
];

describe('the webhook URL rule', () => {
  it.each(NON_PUBLIC)('rejects the literal address %s as %s', async (address, description) => {
    const check = await checkWebhookUrl(literal(address));
    expect(check).toMatchObject({ ok: false, reason: 'non_public_address' });
    if (check.ok) return;
    expect(check.message).toContain(description);
    expect(check.message).toContain('not a public address');
  });

  it.each(NON_PUBLIC)('rejects a host name that resolves to %s', async (address) => {
    const check = await checkWebhookUrl('https://hooks.example.com/in', { resolve: resolveTo(address) });
    expect(check).toMatchObject({ ok: false, reason: 'non_public_address', address });
    if (check.ok) return;
    expect(check.message).toContain(`Webhook URL host hooks.example.com resolves to ${address}`);
  });

  it.each(NON_PUBLIC)('accepts %s once an allowed CIDR covers it', async (address) => {
    const allow = parseAllowCidrs([address.includes(':') ? `${address}/128` : `${address}/32`]);
    const check = await checkWebhookUrl('https://hooks.example.com/in', {
      resolve: resolveTo(address),
      allow,
    });
    expect(check).toMatchObject({ ok: true, addresses: [{ address }] });
  });

  it.each(PUBLIC)('accepts the public address %s', async (address) => {
    expect(classifyAddress(address)).toBeUndefined();
    const check = await checkWebhookUrl(literal(address));
    expect(check.ok).toBe(true);
  });

  it.each([
    ['https://2130706433/', '127.0.0.1'],
    ['https://0x7f.0.0.1/', '127.0.0.1'],
    ['https://0177.0.0.1/', '127.0.0.1'],
    ['https://127.1/', '127.0.0.1'],
    ['https://0xa000001/', '10.0.0.1'],
    ['https://[0:0:0:0:0:ffff:7f00:1]/', '::ffff:7f00:1'],
    ['https://[::ffff:192.168.0.1]/', '::ffff:c0a8:1'],
  ])('checks the shorthand literal %s as %s without resolving it', async (url, address) => {
    let resolved = false;
    const check = await checkWebhookUrl(url, {
      resolve: async () => {
        resolved = true;
        return [];
      },
    });
    expect(check).toMatchObject({ ok: false, reason: 'non_public_address', address });
    expect(resolved).toBe(false);
  });

  it('requires every resolved address to be public, not just the first', async () => {
    const check = await checkWebhookUrl('https://hooks.example.com/', {
      resolve: resolveTo('8.8.8.8', '10.9.8.7'),
    });
    expect(check).toMatchObject({ ok: false, reason: 'non_public_address', address: '10.9.8.7' });
  });

  it('returns every checked address so the sender can pin them', async () => {
    const check = await checkWebhookUrl('https://Hooks.Example.com:8443/in?x=1', {
      resolve: resolveTo('8.8.8.8', '2606:4700:4700::1111'),
    });
    expect(check).toMatchObject({
      ok: true,
      hostname: 'hooks.example.com',
      addresses: [
        { address: '8.8.8.8', family: 4 },
        { address: '2606:4700:4700::1111', family: 6 },
      ],
    });
  });

  it('rejects localhost as resolved by the system resolver', async () => {
    const check = await checkWebhookUrl('https://localhost/hook');
    expect(check).toMatchObject({ ok: false, reason: 'non_public_address' });
  });

  it.each([
    ['http://hooks.example.com/', 'not_https', 'must use https, not http'],
    ['ftp://hooks.example.com/', 'not_https', 'must use https'],
    ['hooks.example.com/in', 'invalid_url', 'not a valid absolute URL'],
    ['https://user:pw@hooks.example.com/', 'credentials_in_url', 'must not contain a user name or password'],
  ])('rejects %s (%s)', async (url, reason, message) => {
    const check = await checkWebhookUrl(url, { resolve: resolveTo('8.8.8.8') });
    expect(check).toMatchObject({ ok: false, reason });
    if (!check.ok) expect(check.message).toContain(message);
  });

  it('reports a host that does not resolve, has no addresses, or resolves too slowly', async () => {
    const failing = await checkWebhookUrl('https://nowhere.example.com/', {
      resolve: async () => {
        throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example.com'), { code: 'ENOTFOUND' });
      },
    });
    expect(failing).toMatchObject({ ok: false, reason: 'unresolvable' });
    if (!failing.ok) expect(failing.message).toContain('ENOTFOUND');

    expect(await checkWebhookUrl('https://empty.example.com/', { resolve: resolveTo() })).toMatchObject({
      ok: false,
      reason: 'unresolvable',
    });

    const slow = await checkWebhookUrl('https://slow.example.com/', {
      resolve: () => new Promise(() => undefined),
      resolveTimeoutMs: 50,
    });
    expect(slow).toMatchObject({ ok: false, reason: 'unresolvable' });
    if (!slow.ok) expect(slow.message).toContain('timed out after 50 ms');
  });

  it('rejects a malformed allow-list entry with the entry named', () => {
    expect(() => parseAllowCidrs(['10.0.0.0/8', '10.0.0.0/33'])).toThrow('"10.0.0.0/33" is not a CIDR');
    expect(() => parseAllowCidrs(['intranet'])).toThrow('"intranet" is not a CIDR');
    expect(parseAllowCidrs(['127.0.0.1']).allows({ address: '127.0.0.1', family: 4 })).toBe(true);
    expect(parseAllowCidrs(['127.0.0.0/8']).allows({ address: '127.0.0.2', family: 4 })).toBe(true);
  });

  it('judges every IPv6 form that embeds a non-public IPv4 address by that address', () => {
    const v4 = fc
      .tuple(
        fc.constantFrom(0, 10, 100, 127, 169, 172, 192, 198, 224, 240, 255),
        fc.integer({ min: 0, max: 255 }),
        fc.integer({ min: 0, max: 255 }),
        fc.integer({ min: 0, max: 255 }),
      )
      .map(([a, b, c, d]) => `${a}.${b}.${c}.${d}`)
      .filter((address) => classifyAddress(address) !== undefined);
    fc.assert(
      fc.property(v4, (address) => {
        const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
        const hex = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
        for (const form of [
          `::ffff:${address}`,
          `::ffff:${hex}`,
          `64:ff9b::${hex}`,
          `::${address}`,
          `2002:${hex}::1`,
        ]) {
          expect(classifyAddress(form), form).toBeDefined();
        }
      }),
    );
  });

  it('expands IPv6 text to its 16 bytes', () => {
    expect(Array.from(ipv6Bytes('::ffff:1.2.3.4') ?? [])).toEqual([
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4,
    ]);
    expect(Array.from(ipv6Bytes('fe80::1%eth0') ?? [])).toEqual([
      0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
    ]);
    expect(ipv6Bytes('10.0.0.1')).toBeUndefined();
  });
});
