import type { LookupAddress, LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { CheckedAddress } from './address-rule.ts';

/** A lookup that answers only the checked host name, and only with the checked addresses. */
export function pinnedLookup(hostname: string, addresses: readonly CheckedAddress[]): LookupFunction {
  return (host: string, options: LookupOptions, callback) => {
    const wanted =
      options.family === 4 || options.family === 'IPv4'
        ? 4
        : options.family === 6 || options.family === 'IPv6'
          ? 6
          : 0;
    const candidates = addresses.filter((a) => wanted === 0 || a.family === wanted);
    const first = candidates[0];
    if (host.toLowerCase() !== hostname.toLowerCase() || !first) {
      const error: NodeJS.ErrnoException = new Error(`${host} is not the checked webhook host ${hostname}`);
      error.code = 'ENOTFOUND';
      callback(error, '', 0);
      return;
    }
    if (options.all) {
      callback(
        null,
        candidates.map((a): LookupAddress => ({ address: a.address, family: a.family })),
      );
    } else {
      callback(null, first.address, first.family);
    }
  };
}
