// GPG keys of users (Forgejo's rules: a key is added when one of its user IDs is an activated address
// of the user, or when the user signs the verification token with it), and the verification of
// signed commits: GPG signatures against the registered keys and the instance key, SSH signatures
// (git's gpg.format=ssh) against the SSH keys of the committer (through SshKeyLookup) and the
// instance key. Raw commits are read in one `git cat-file --batch` per request; results are kept in
// a bounded LRU by commit id, dropped when keys change here and after a minute in any case.
import type { Static } from 'typebox';
import type { Logger } from 'pino';
import type { Cluster } from '../cluster/service.js';
import type { SigningConfig } from '../config/config.js';
import { transaction, type Db } from '../db/database.js';
import { invalid, notFound } from '../errors.js';
import { readBlobs } from '../git/data.js';
import { usersByEmails } from '../git/data-store.js';
import type { PayloadCommitVerification } from '../git/data-schemas.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import type { Page } from '../http/pagination.js';
import type * as openpgp from 'openpgp';
import { loadOpenpgp } from './openpgp.js';
import * as store from './store.js';
import type { GpgKeyFull } from './store.js';
import { parseKey, readArmoredKeys, signsToken, verificationToken } from './keys.js';
import { InstanceSigner, type CommitSigning } from './instance.js';
import {
  isSshSignature,
  parseCommitObject,
  parseSshSignature,
  readGpgSignature,
  sshFingerprint,
  verifyGpg,
  verifySshSignature,
  type SignedCommitParts,
} from './verify.js';

export type Verification = Static<typeof PayloadCommitVerification>;

/** The SSH keys users registered (the ssh domain), looked up by OpenSSH SHA256 fingerprint. */
export interface SshKeyLookup {
  byFingerprint(fp: string): Promise<{ userId: number; fingerprint: string } | undefined>;
}

export const REASON = {
  notSigned: 'gpg.error.not_signed_commit',
  extractSign: 'gpg.error.extract_sign',
  noKey: 'gpg.error.no_gpg_keys_found',
  bad: 'gpg.error.probable_bad_signature',
} as const;

const CACHE_SIZE = 5000;
const CACHE_TTL_MS = 60_000;

export interface SigningServiceDeps {
  db: Db;
  log: Logger;
  /** [repository.signing]: the instance's key. */
  signing: SigningConfig;
  /** [security] SECRET_KEY (the verification tokens). */
  secretKey: string;
  /** Tells the other processes that keys changed, and hears of theirs. */
  cluster: Pick<Cluster, 'on' | 'publish'>;
  users: Pick<UserService, 'getByIds'>;
  sshKeys?: SshKeyLookup | undefined;
}

export class SigningService {
  readonly instance: InstanceSigner;
  /** Wired to the ssh domain's keys; undefined while it is absent (SSH signatures then match only the instance key). */
  sshKeys: SshKeyLookup | undefined;
  private readonly cache = new Map<string, { gen: number; at: number; v: Verification }>();
  private generation = 0;
  private readonly parsedKeys = new Map<number, Promise<openpgp.PublicKey[]>>();

  private readonly db: Db;

  constructor(private readonly deps: SigningServiceDeps) {
    this.db = deps.db;
    this.instance = new InstanceSigner(deps.signing, deps.log);
    this.sshKeys = deps.sshKeys;
    // Another process's keys changed (or, on a `reset`, may have).
    deps.cluster.on('signing.keys', () => this.forgetVerifications());
  }

  // Keys

  listKeys(owner: UserRow, page: Page): Promise<[GpgKeyFull[], number]> {
    return store.listKeys(this.db, owner.id, page.limit, page.offset);
  }

  async getKey(owner: UserRow, id: number): Promise<GpgKeyFull> {
    const row = await store.keyById(this.db, id);
    if (!row || row.owner_id !== owner.id || row.primary_key_id !== '')
      throw notFound(`public key does not exist [id: ${id}]`);
    return (await store.withParts(this.db, [row]))[0]!;
  }

  /** The user's activated addresses, lower-cased (which of a key's addresses are verified). */
  async activated(uid: number): Promise<Set<string>> {
    return (await store.activatedEmails(this.db, [uid])).get(uid) ?? new Set<string>();
  }

  /** The current token to sign (and the previous minute's, still accepted). */
  tokens(user: UserRow): [string, string] {
    const secret = this.deps.secretKey;
    return [verificationToken(user, secret, 1), verificationToken(user, secret, 0)];
  }

  async addKey(user: UserRow, armored: string, signature?: string): Promise<GpgKeyFull> {
    const keys = await readArmoredKeys(armored);
    const [token, last] = this.tokens(user);
    let verified = false;
    let chosen = keys;
    if (signature) {
      const signer = (await signsToken(keys, token, signature)) ?? (await signsToken(keys, last, signature));
      if (!signer) throw invalidTokenSignature(token);
      chosen = [signer];
      verified = true;
    }
    const parsed = await Promise.all(chosen.map(parseKey));
    const ids = await transaction(this.db, async (tx) => {
      const activated = (await store.activatedEmails(tx, [user.id])).get(user.id) ?? new Set<string>();
      const taken = await store.keysByKeyIds(tx, [
        ...parsed.map((p) => p.keyId),
        ...parsed.flatMap((p) => p.subkeys.map((s) => s.keyId)),
      ]);
      if (taken.length) throw invalid('A key with the same id already exists');
      const out: number[] = [];
      const now = Math.floor(Date.now() / 1000);
      for (const p of parsed) {
        const emails = p.emails.filter((e) => activated.has(e.toLowerCase()));
        if (!verified && emails.length === 0) {
          throw notFound(
            'None of the emails attached to the GPG key could be found. It may still be added if you ' +
              `provide a valid signature for the token: ${token}`,
          );
        }
        out.push(await store.insertKey(tx, user.id, { ...p, armored: p.key.armor(), verified, emails }, now));
      }
      return out;
    });
    this.keysChanged();
    return this.getKey(user, ids[0]!);
  }

  async deleteKey(doer: UserRow, id: number): Promise<void> {
    const row = await store.keyById(this.db, id);
    if (!row || row.primary_key_id !== '' || (row.owner_id !== doer.id && !doer.is_admin))
      throw notFound(`public key does not exist [id: ${id}]`);
    await transaction(this.db, (tx) => store.deleteKey(tx, row));
    this.parsedKeys.delete(row.id);
    this.keysChanged();
  }

  /** Marks the doer's key `keyId` verified when `signature` signs their current token with it. */
  async verifyKey(user: UserRow, keyId: string, signature: string): Promise<GpgKeyFull> {
    const id = keyId.trim().toUpperCase().replace(/^0+/, '');
    if (!id) throw notFound('no key id given');
    const padded = id.padStart(16, '0');
    const row = (await store.keysByKeyIds(this.db, [padded])).find(
      (r) => r.owner_id === user.id && r.primary_key_id === '',
    );
    if (!row) throw notFound(`public key does not exist [key_id: ${keyId}]`);
    const [token, last] = this.tokens(user);
    const keys = await this.keysOf(row);
    if (
      !signature ||
      (!(await signsToken(keys, token, signature)) && !(await signsToken(keys, last, signature)))
    )
      throw invalidTokenSignature(token);
    await transaction(this.db, (tx) => store.markVerified(tx, row));
    this.keysChanged();
    return this.getKey(user, row.id);
  }

  /**
   * Whether `armored` (an `ssh-keygen -Y sign -n gitea` signature) signs the user's current or
   * previous verification token with the key whose fingerprint is `fingerprint`.
   */
  sshSignsToken(user: UserRow, fingerprint: string, armored: string): boolean {
    let sig;
    try {
      sig = parseSshSignature(armored.trim());
    } catch {
      return false;
    }
    if (sshFingerprint(sig.publicKey) !== fingerprint) return false;
    return this.tokens(user).some((t) => verifySshSignature(sig, Buffer.from(t), 'gitea'));
  }

  /**
   * Forgets cached verifications, in every process: called when GPG keys change, and by the ssh
   * domain when SSH keys are added or removed.
   */
  keysChanged(): void {
    this.forgetVerifications();
    this.deps.cluster.publish('signing.keys');
  }

  private forgetVerifications(): void {
    this.generation++;
    this.cache.clear();
  }

  /** The parsed public key of a primary row (kept while the row lives). */
  private keysOf(row: { id: number; armored: string }): Promise<openpgp.PublicKey[]> {
    let p = this.parsedKeys.get(row.id);
    if (!p) {
      p = loadOpenpgp()
        .then((o) => o.readKeys({ armoredKeys: row.armored }))
        .catch(() => []) as Promise<openpgp.PublicKey[]>;
      this.parsedKeys.set(row.id, p);
      if (this.parsedKeys.size > CACHE_SIZE) this.parsedKeys.delete(this.parsedKeys.keys().next().value!);
    }
    return p;
  }

  // Commits

  /** The verification of each of `oids` (commits of the repository at `dir`). */
  async verifyCommits(dir: string, oids: string[]): Promise<Map<string, Verification>> {
    const out = new Map<string, Verification>();
    const now = Date.now();
    const missing: string[] = [];
    for (const oid of new Set(oids)) {
      const hit = this.cache.get(oid);
      if (hit && hit.gen === this.generation && now - hit.at < CACHE_TTL_MS) {
        this.cache.delete(oid);
        this.cache.set(oid, hit);
        out.set(oid, hit.v);
      } else missing.push(oid);
    }
    if (missing.length === 0) return out;
    const gen = this.generation;
    const raws = await readBlobs(dir, missing);
    const parts = new Map<string, SignedCommitParts>();
    for (const [oid, raw] of raws) parts.set(oid, parseCommitObject(raw));
    const signed = [...parts.values()].filter((p) => p.signature);
    const gpgSigs = new Map<SignedCommitParts, Awaited<ReturnType<typeof readGpgSignature>>>();
    for (const p of signed) {
      if (!isSshSignature(p.signature)) gpgSigs.set(p, await readGpgSignature(p.signature));
    }
    const pre = await this.gpgCandidates([...gpgSigs.values()].flatMap((g) => (g ? [g] : [])));
    const committers = await usersByEmails(
      this.db,
      signed.map((p) => p.committerEmail),
    );
    for (const oid of missing) {
      const p = parts.get(oid);
      let v: Verification;
      if (!p || !p.signature) {
        v = { verified: false, reason: REASON.notSigned, signature: '', signer: null, payload: '' };
      } else {
        const committer = committers.get(p.committerEmail.toLowerCase());
        const r = isSshSignature(p.signature)
          ? await this.checkSsh(p, committer)
          : await this.checkGpg(p, gpgSigs.get(p), committer, pre);
        v = {
          verified: r.signer !== undefined,
          reason: r.reason,
          signature: p.signature,
          signer: r.signer ? { name: r.signer.name, email: r.signer.email, username: '' } : null,
          payload: p.payload.toString('utf8'),
        };
      }
      out.set(oid, v);
      if (gen === this.generation) {
        this.cache.set(oid, { gen, at: now, v });
        if (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
      }
    }
    return out;
  }

  /**
   * The registered keys the GPG signatures of `commits` name, with their owners and the owners'
   * activated addresses: a fixed number of queries for a whole page.
   */
  private async gpgCandidates(sigs: Array<{ keyIds: string[] }>): Promise<{
    byKeyId: Map<string, GpgKeyFull[]>;
    owners: Map<number, UserRow>;
    activated: Map<number, Set<string>>;
  }> {
    const db = this.db;
    const rows = await store.keysByKeyIds(db, [...new Set(sigs.flatMap((s) => s.keyIds))]);
    const primaryIds = [...new Set(rows.map((r) => r.primary_key_id).filter(Boolean))];
    const primaries = await store.keysByKeyIds(db, primaryIds);
    const full = await store.withParts(db, [...rows.filter((r) => !r.primary_key_id), ...primaries]);
    const byPrimary = new Map(full.map((k) => [k.key_id, k]));
    const byKeyId = new Map<string, GpgKeyFull[]>();
    for (const r of rows) {
      const k = byPrimary.get(r.primary_key_id || r.key_id);
      if (k) byKeyId.set(r.key_id, [...(byKeyId.get(r.key_id) ?? []), k]);
    }
    const ownerIds = full.map((k) => k.owner_id);
    const [owners, activated] = await Promise.all([
      this.deps.users.getByIds(ownerIds),
      store.activatedEmails(db, ownerIds),
    ]);
    return { byKeyId, owners, activated };
  }

  private async checkGpg(
    p: SignedCommitParts,
    sig: { signature: openpgp.Signature; keyIds: string[] } | undefined,
    committer: UserRow | undefined,
    pre: Awaited<ReturnType<SigningService['gpgCandidates']>>,
  ): Promise<CheckResult> {
    if (!sig) return { reason: REASON.extractSign };
    let fallback: string = REASON.noKey;
    // 1. The keys whose id the signature names, when one of their addresses is activated.
    const candidates = sig.keyIds.flatMap((id) => pre.byKeyId.get(id) ?? []);
    if (candidates.length) {
      for (const key of candidates) {
        const emails = pre.activated.get(key.owner_id) ?? new Set<string>();
        const usable =
          key.emails.some((e) => emails.has(e.toLowerCase())) || (key.verified === 1 && emails.size > 0);
        const owner = pre.owners.get(key.owner_id);
        if (!usable || !owner) continue;
        const id = await verifyGpg(sig.signature, p.payload, await this.keysOf(key));
        if (id) return { reason: `${owner.name} / ${id}`, signer: owner };
      }
      fallback = REASON.bad;
    } else if (committer) {
      // 2. The committer's keys that may vouch for the committer's address (signatures without a
      // known issuer id).
      const email = p.committerEmail.toLowerCase();
      for (const key of await store.allKeysOf(this.db, committer.id)) {
        if (!(key.verified === 1 || key.emails.some((e) => e.toLowerCase() === email))) continue;
        const id = await verifyGpg(sig.signature, p.payload, await this.keysOf(key));
        if (id) return { reason: `${committer.name} / ${id}`, signer: committer };
      }
    }
    // 3. The instance's key (the merges it signed).
    const inst = await this.instance.publicGpg();
    if (inst) {
      const id = await verifyGpg(sig.signature, p.payload, inst.keys);
      const s = this.instance.settings;
      if (id) return { reason: `${s.name} / ${id}`, signer: { name: s.name, email: s.email } };
      const instIds = inst.keys.flatMap((k) => k.getKeyIDs().map((i) => i.toHex().toUpperCase()));
      if (sig.keyIds.some((k) => instIds.includes(k))) fallback = REASON.bad;
    }
    return { reason: fallback };
  }

  private async checkSsh(p: SignedCommitParts, committer: UserRow | undefined): Promise<CheckResult> {
    let sig;
    try {
      sig = parseSshSignature(p.signature);
    } catch {
      return { reason: REASON.noKey };
    }
    const fp = sshFingerprint(sig.publicKey);
    const inst = this.instance.publicSsh();
    if (inst && inst.fingerprint === fp && verifySshSignature(sig, p.payload)) {
      const s = this.instance.settings;
      return { reason: `${s.name} / ${fp}`, signer: { name: s.name, email: s.email } };
    }
    if (committer && this.sshKeys) {
      const key = await this.sshKeys.byFingerprint(fp);
      if (key && key.userId === committer.id && verifySshSignature(sig, p.payload)) {
        return { reason: `${committer.name} / ${key.fingerprint}`, signer: committer };
      }
    }
    return { reason: REASON.noKey };
  }

  // Merges

  /**
   * How a merge made by `doer` is signed, or undefined: when the instance has a key and the
   * [repository.signing] MERGES rules allow it (never, always, pubkey: the doer has a GPG key).
   */
  async mergeSigning(doer: UserRow): Promise<CommitSigning | undefined> {
    const rules = this.instance.settings.merges;
    if (!this.instance.enabled || rules.includes('never')) return undefined;
    if (rules.includes('pubkey') && (await store.listKeys(this.db, doer.id, 1, 0))[1] === 0) return undefined;
    return this.instance.commitSigning();
  }
}

interface CheckResult {
  reason: string;
  signer?: { name: string; email: string };
}

const invalidTokenSignature = (token: string) =>
  invalid(
    'The provided GPG key, signature and token do not match or token is out of date. ' +
      `Provide a valid signature for the token: ${token}`,
  );
