// Talking to remote git servers for migrations and mirrors: which addresses may be reached
// ([migrations] ALLOWED_DOMAINS, BLOCKED_DOMAINS, ALLOW_LOCALNETWORKS), and running git against
// them with credentials that never reach a command line, a repository's config or a message.
import { spawn } from 'node:child_process';
import dns from 'node:dns/promises';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import picomatch from 'picomatch';
import { gitEnv } from '../git/git.js';

export interface Credentials {
  username: string;
  password: string;
}

/** A remote address, split into its address without credentials and the credentials it carried. */
export interface RemoteAddress {
  url: URL;
  /** The address without user information: safe to store and show. */
  safe: string;
  credentials: Credentials | null;
}

export type AddressProblem =
  'invalid_url' | 'protocol' | 'local_path' | 'blocked' | 'local_network' | 'unresolvable';

export class AddressError extends Error {
  constructor(
    readonly problem: AddressProblem,
    message: string,
  ) {
    super(message);
    this.name = 'AddressError';
  }
}

const SCHEMES = new Set(['http:', 'https:', 'git:']);

/**
 * Parses a clone or push address: only http(s) and git URLs, never file:// or local paths.
 * Credentials come from `username`/`password` when given, else from the URL's user information.
 */
export function parseRemote(
  raw: string,
  username = '',
  password = '',
  schemes: ReadonlySet<string> = SCHEMES,
): RemoteAddress {
  const text = raw.trim();
  if (!text) throw new AddressError('invalid_url', 'the remote address is empty');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    if (text.startsWith('/') || text.startsWith('.') || text.startsWith('~') || /^[a-z]:\\/i.test(text)) {
      throw new AddressError('local_path', 'You are not allowed to import local repositories.');
    }
    throw new AddressError('invalid_url', `the remote address is not a valid URL`);
  }
  if (url.protocol === 'file:') {
    throw new AddressError('local_path', 'You are not allowed to import local repositories.');
  }
  if (!schemes.has(url.protocol)) {
    throw new AddressError(
      'protocol',
      `the URL scheme ${url.protocol.replace(/:$/, '')} is not allowed: use ${[...schemes].map((s) => s.replace(/:$/, '')).join(', ')}`,
    );
  }
  if (!url.hostname) throw new AddressError('invalid_url', 'the remote address has no host');
  let credentials: Credentials | null = null;
  if (username || password) credentials = { username, password };
  else if (url.username || url.password) {
    credentials = {
      username: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
    };
  }
  // git's credential protocol is line-based: a line break would smuggle in other attributes.
  if (credentials && /[\r\n\0]/.test(credentials.username + credentials.password)) {
    throw new AddressError('invalid_url', 'credentials must not contain line breaks');
  }
  url.username = '';
  url.password = '';
  url.hash = '';
  return { url, safe: url.toString(), credentials };
}

export interface HostPolicy {
  allowedDomains: string[];
  blockedDomains: string[];
  allowLocalNetworks: boolean;
}

interface CompiledList {
  names: Array<(host: string) => boolean>;
  nets: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
}

function compileList(entries: string[]): CompiledList {
  const list: CompiledList = { names: [], nets: [] };
  for (const raw of entries) {
    const e = raw.trim().toLowerCase();
    if (!e) continue;
    if (e.includes('/') && ipaddr.isValidCIDR(e)) {
      list.nets.push(ipaddr.parseCIDR(e));
    } else if (ipaddr.isValid(e)) {
      const ip = ipaddr.process(e);
      list.nets.push([ip, ip.kind() === 'ipv4' ? 32 : 128]);
    } else {
      list.names.push(picomatch(e, { nocase: true, dot: true }));
    }
  }
  return list;
}

function inNets(list: CompiledList, ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  return list.nets.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
}

/** Addresses a migration may reach without ALLOW_LOCALNETWORKS: public unicast only. */
function isExternal(ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  return ip.range() === 'unicast';
}

/** Loopback, private and link-local ranges: what ALLOW_LOCALNETWORKS opens. */
const LOCAL_RANGES = new Set([
  'loopback',
  'private',
  'linkLocal',
  'uniqueLocal',
  'unspecified',
  'carrierGradeNat',
]);

export class HostChecker {
  private readonly allowed: CompiledList;
  private readonly blocked: CompiledList;

  constructor(private readonly policy: HostPolicy) {
    this.allowed = compileList(policy.allowedDomains);
    this.blocked = compileList(policy.blockedDomains);
  }

  /**
   * Resolves the host of `url` and checks the name and every address it resolves to; returns the
   * addresses, for pinning git to exactly what was checked.
   */
  async check(url: URL): Promise<string[]> {
    const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const refuse = (problem: AddressProblem, why: string) =>
      new AddressError(problem, `migration/cloning from '${host}' is not allowed: ${why}`);
    if (this.blocked.names.some((m) => m(host))) throw refuse('blocked', 'the host is blocked');
    const nameAllowed = this.allowed.names.some((m) => m(host));
    const hasAllowList = this.allowed.names.length > 0 || this.allowed.nets.length > 0;
    // Only addresses could still be allowed: no need to ask DNS when the list names none.
    if (hasAllowList && !nameAllowed && this.allowed.nets.length === 0) {
      throw refuse('blocked', 'the host is not in the allowed domains');
    }
    let addresses: string[];
    if (net.isIP(host)) {
      addresses = [host];
    } else {
      try {
        addresses = (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
      } catch {
        throw refuse('unresolvable', 'the host name cannot be resolved');
      }
      if (addresses.length === 0) throw refuse('unresolvable', 'the host name cannot be resolved');
    }
    for (const a of addresses) {
      const ip = ipaddr.process(a);
      if (inNets(this.blocked, ip)) throw refuse('blocked', 'the address is blocked');
      const explicitlyAllowed = inNets(this.allowed, ip);
      if (hasAllowList && !nameAllowed && !explicitlyAllowed) {
        throw refuse('blocked', 'the host is not in the allowed domains');
      }
      if (explicitlyAllowed || isExternal(ip)) continue;
      if (this.policy.allowLocalNetworks && LOCAL_RANGES.has(ip.range())) continue;
      throw refuse('local_network', 'the host resolves to a local network address');
    }
    return addresses;
  }
}

/** Removes credentials from text that may quote URLs or the password (git's messages, errors). */
export function scrub(text: string, credentials: Credentials | null): string {
  let out = text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1');
  const secret = credentials?.password;
  if (secret && secret.length >= 3) out = out.split(secret).join('***');
  return out;
}

export class RemoteGitError extends Error {
  constructor(
    message: string,
    readonly authFailed: boolean,
  ) {
    super(message);
    this.name = 'RemoteGitError';
  }
}

export interface RemoteRun {
  /** git arguments after the connection options, e.g. ['clone', '--bare', '--', url, dir]. */
  args: string[];
  url: URL;
  credentials: Credentials | null;
  /** Checked addresses of the host, to pin http(s) connections to. */
  addresses: string[];
  gitDir?: string;
  timeoutMs: number;
}

/**
 * The credential helper git calls for a username and password: it answers from the environment
 * of this one git process, so credentials are never on a command line or in any config file.
 */
const CREDENTIAL_HELPER =
  '!f() { test "$1" = get || exit 0; printf "username=%s\\npassword=%s\\n" "$ANVIL_REMOTE_USERNAME" "$ANVIL_REMOTE_PASSWORD"; }; f';

function pinArgs(url: URL, addresses: string[]): string[] {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return [];
  if (net.isIP(url.hostname.replace(/^\[|\]$/g, ''))) return [];
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const list = addresses.map((a) => (a.includes(':') ? `[${a}]` : a)).join(',');
  return ['-c', `http.curloptResolve=${url.hostname}:${port}:${list}`];
}

/**
 * The address to hand to git: http(s) connections are pinned to the checked addresses by
 * http.curloptResolve; git:// goes straight to a checked address.
 */
export function gitUrl(url: URL, addresses: string[]): string {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (url.protocol !== 'git:' || net.isIP(host) || !addresses[0]) return url.toString();
  const pinned = new URL(url.toString());
  pinned.hostname = addresses[0].includes(':') ? `[${addresses[0]}]` : addresses[0];
  return pinned.toString();
}

/** Runs git against a remote; failures come back as RemoteGitError with scrubbed messages. */
export function runRemoteGit(run: RemoteRun): Promise<string> {
  const args = [
    ...(run.gitDir ? ['--git-dir', run.gitDir] : []),
    // Only the helper below answers for credentials; no other helper sees or stores them.
    '-c',
    'credential.helper=',
    ...(run.credentials ? ['-c', `credential.helper=${CREDENTIAL_HELPER}`] : []),
    // A redirect could lead to a host that was never checked.
    '-c',
    'http.followRedirects=false',
    '-c',
    'protocol.file.allow=never',
    ...pinArgs(run.url, run.addresses),
    ...run.args,
  ];
  const env = gitEnv({
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    ANVIL_REMOTE_USERNAME: run.credentials?.username ?? '',
    ANVIL_REMOTE_PASSWORD: run.credentials?.password ?? '',
  });
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, run.timeoutMs);
    child.stdout.on('data', (d: Buffer) => {
      if (stdout.length < 1_000_000) stdout += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 100_000) stderr += d.toString('utf8');
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new RemoteGitError(scrub(err.message, run.credentials), false));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) return resolve(stdout);
      const text = scrub(stderr.trim(), run.credentials);
      const authFailed =
        /Authentication failed|could not read Username|could not read Password|401|403/i.test(text);
      const why = timedOut ? `timed out after ${Math.round(run.timeoutMs / 1000)}s` : text || `exit ${code}`;
      reject(new RemoteGitError(why, authFailed));
    });
  });
}
