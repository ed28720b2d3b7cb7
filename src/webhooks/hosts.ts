// Which servers deliveries may reach: [webhook] ALLOWED_HOST_LIST, as Forgejo reads it. Entries
// are "external" (public addresses: the default), "private" (RFC 1918 and unique-local), "loopback",
// "*" (anything), host name globs, IP addresses and CIDR ranges. Names are checked before the
// connection and every address a name resolves to when connecting, so DNS cannot smuggle a
// delivery into a network the list keeps out.
import dns from 'node:dns';
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import picomatch from 'picomatch';

type Ip = ipaddr.IPv4 | ipaddr.IPv6;

export class BlockedHostError extends Error {
  constructor(host: string, address: string) {
    super(
      `webhook can only call allowed HTTP servers (check your [webhook] ALLOWED_HOST_LIST setting), deny '${host}(${address})'`,
    );
    this.name = 'BlockedHostError';
  }
}

export class HostList {
  private readonly all: boolean;
  private readonly builtins = new Set<string>();
  private readonly names: Array<(host: string) => boolean> = [];
  private readonly nets: Array<[Ip, number]> = [];

  constructor(entries: readonly string[]) {
    const list = entries.map((e) => e.trim().toLowerCase()).filter(Boolean);
    this.all = list.includes('*');
    for (const e of list.length ? list : ['external']) {
      if (e === '*') continue;
      if (e === 'external' || e === 'private' || e === 'loopback') this.builtins.add(e);
      else if (e.includes('/') && ipaddr.isValidCIDR(e)) this.nets.push(ipaddr.parseCIDR(e));
      else if (ipaddr.isValid(e)) {
        const ip = ipaddr.process(e);
        this.nets.push([ip, ip.kind() === 'ipv4' ? 32 : 128]);
      } else this.names.push(picomatch(e, { nocase: true, dot: true }));
    }
  }

  /** Whether the host name itself is listed (then any address it resolves to is allowed). */
  allowsName(host: string): boolean {
    return this.all || this.names.some((m) => m(host.toLowerCase()));
  }

  allowsAddress(address: string): boolean {
    if (this.all) return true;
    let ip: Ip;
    try {
      ip = ipaddr.process(address);
    } catch {
      return false;
    }
    if (this.nets.some(([n, bits]) => n.kind() === ip.kind() && ip.match(n, bits))) return true;
    const range = ip.range();
    if (this.builtins.has('loopback') && range === 'loopback') return true;
    if (this.builtins.has('private') && (range === 'private' || range === 'uniqueLocal')) return true;
    return this.builtins.has('external') && range === 'unicast';
  }

  /** Throws BlockedHostError unless `host` (a name or an address literal) may be reached. */
  checkLiteral(host: string): void {
    const bare = host.replace(/^\[|\]$/g, '');
    if (net.isIP(bare) && !this.allowsName(bare) && !this.allowsAddress(bare)) {
      throw new BlockedHostError(bare, bare);
    }
  }

  /** A `lookup` for http(s).request that only yields allowed addresses. */
  lookup(): LookupFunction {
    return ((hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
      dns.lookup(hostname, { ...options, all: true }, (err, addresses: dns.LookupAddress[]) => {
        if (err) return callback(err);
        const nameOk = this.allowsName(hostname);
        const ok = addresses.filter((a) => nameOk || this.allowsAddress(a.address));
        if (ok.length === 0) {
          return callback(new BlockedHostError(hostname, addresses[0]?.address ?? ''));
        }
        if (options.all) return callback(null, ok);
        return callback(null, ok[0]!.address, ok[0]!.family);
      });
    }) as unknown as LookupFunction;
  }
}
