// Where an export link may lead. The data service hands out a link and chainlake fetches it and
// keeps what it gets in the lake: a hostile or broken service could point it at an address that
// only this machine reaches (a cloud's metadata endpoint, a database's admin page) and have the
// answer stored. So a link is https, and its host resolves to public addresses only, checked
// before connecting and pinned for the connection (a second lookup could answer otherwise).
// Plain http and loopback are taken where the data service itself is plain http on loopback (the
// simulator, a test double) and the link names that same host; a pipeline may allow private
// addresses outright (`sources.data.privateLinks: true`) for a file store inside its network.
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export interface LinkPolicy {
  /** The data service's URL: links to its own loopback host are taken when it is on loopback. */
  service: string;
  /** Links to loopback, private and link-local addresses are followed. */
  privateLinks: boolean;
  /** Bound on one downloaded file. */
  maxBytes: number;
}

/** 4 GiB: a year of a busy address's transactions as gzipped CSV is a fraction of it. */
export const DEFAULT_MAX_DOWNLOAD_BYTES = 4 * 1024 ** 3;

const INTERNAL = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // this network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, where clouds serve instance metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and broadcast
] as const)
  INTERNAL.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const)
  INTERNAL.addSubnet(net, bits, 'ipv6');

/** Whether an address is one only this machine or its network reaches. */
export function isInternal(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return INTERNAL.check(address, 'ipv4');
  if (family !== 6) return true;
  // An IPv4 address written as IPv6 (::ffff:127.0.0.1) is that IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return INTERNAL.check(mapped[1]!, 'ipv4');
  return INTERNAL.check(address, 'ipv6');
}

/** A URL's host without IPv6 brackets. */
function hostOf(u: URL): string {
  return u.hostname.replace(/^\[(.*)\]$/, '$1');
}

function onLoopback(u: URL): boolean {
  const h = hostOf(u);
  return h === 'localhost' || (isIP(h) !== 0 && isInternal(h) && (h.startsWith('127.') || h === '::1'));
}

/**
 * Checks a link against the policy and resolves its host; returns the lookup that pins the
 * connection to the address checked. Throws an Error whose message says what is wrong with it.
 */
export async function checkLink(link: URL, policy: LinkPolicy): Promise<LookupFunction> {
  const service = new URL(policy.service);
  // The simulator's case: the service is plain http on loopback, and so is its file store.
  const local = service.protocol === 'http:' && onLoopback(service) && hostOf(link) === hostOf(service);
  const host = hostOf(link);
  if (link.protocol !== 'https:' && !(link.protocol === 'http:' && (local || policy.privateLinks)))
    throw new Error(`its downloadUrl is ${link.protocol.replace(/:$/, '')}://${link.host}/..., not https: chainlake downloads export files over https only`);
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host) !== 0) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await dnsLookup(host, { all: true });
    } catch (err) {
      throw new Error(`its downloadUrl's host ${link.host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  if (addresses.length === 0) throw new Error(`its downloadUrl's host ${link.host} resolves to no address`);
  if (!local && !policy.privateLinks) {
    const internal = addresses.find((a) => isInternal(a.address));
    if (internal)
      throw new Error(
        `its downloadUrl's host ${link.host} is ${internal.address === host ? '' : `at ${internal.address}, `}a loopback, private or link-local address: chainlake follows no export link into this machine or its network (sources.data.privateLinks: true allows it)`,
      );
  }
  const pinned = addresses[0]!;
  return ((_host: string, options: { all?: boolean }, cb: (err: Error | null, address: string | Array<{ address: string; family: number }>, family?: number) => void) => {
    if (options?.all) cb(null, [pinned]);
    else cb(null, pinned.address, pinned.family);
  }) as unknown as LookupFunction;
}
