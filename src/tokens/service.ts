// Access tokens: creation (value shown once), listing, deletion and resolving a presented token.
import crypto from 'node:crypto';
import { nowUnix, transaction, writeGeneration, type Db } from '../db/database.js';
import { badRequest, invalid, notFound } from '../errors.js';
import type { UserRow } from '../users/tables.js';
import * as store from './store.js';
import { normalizeScopes, storedScopes, type ScopeSet } from './scopes.js';
import type { TokenRow } from './tables.js';

export const hashToken = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

/** Forgejo tokens are 40 hex characters. */
const TOKEN_SHAPE = /^[0-9a-f]{40}$/;

export interface CreatedToken {
  row: TokenRow;
  /** The token's value: returned once, never stored. */
  token: string;
}

/**
 * A resolved token is served from memory while no process has written to the database since it
 * was read, for at most RECENT_MS. This process's own changes (a token deleted, a user edited or
 * disabled) are seen at once; those of another `anvil web` on the same database as soon as its
 * announcement arrives over the cluster channel (cluster/service.ts); RECENT_MS bounds how late a
 * change is seen that nobody announced (the CLI on SQLite, a lost message). Entries are keyed by the presented
 * token itself, so a hit costs no hashing; only tokens that resolved are kept.
 */
const RECENT_MS = 1000;
const RECENT_MAX = 10_000;

interface Resolved {
  user: UserRow;
  scopes: ScopeSet;
  tokenId: number;
}

/** The other processes' writes (cluster/service.ts). */
export interface RemoteWrites {
  /** Moves when another process wrote; 0 without other processes. */
  generation(): number;
}

export interface TokenServiceDeps {
  db: Db;
  cluster: RemoteWrites;
}

export class TokenService {
  private readonly recent = new Map<string, { generation: string; until: number; resolved: Resolved }>();
  private readonly db: Db;
  private readonly cluster: RemoteWrites;

  constructor(deps: TokenServiceDeps) {
    this.db = deps.db;
    this.cluster = deps.cluster;
  }

  /** This process's writes and those other processes announced: a cached row older than either is dropped. */
  private generation(): string {
    return `${writeGeneration()}:${this.cluster.generation()}`;
  }

  async create(user: UserRow, name: string, scopes: readonly string[] | undefined): Promise<CreatedToken> {
    const trimmed = name.trim();
    if (!trimmed) throw invalid('[Name]: Required');
    if (!scopes || scopes.length === 0) throw badRequest('access token must have a scope');
    const scope = normalizeScopes(scopes);
    const token = crypto.randomBytes(20).toString('hex');
    const now = nowUnix();
    return transaction(this.db, async (tx) => {
      if (await store.getByName(tx, user.id, trimmed)) {
        throw badRequest('access token name has been used already');
      }
      const id = await store.insert(tx, {
        uid: user.id,
        name: trimmed,
        token_hash: hashToken(token),
        token_last_eight: token.slice(-8),
        scope,
        created_unix: now,
        updated_unix: now,
      });
      return { row: (await store.getById(tx, user.id, id))!, token };
    });
  }

  list(user: UserRow, limit: number, offset: number) {
    return store.listOfUser(this.db, user.id, limit, offset);
  }

  /** Deletes the token named by its id or its name. */
  async delete(user: UserRow, idOrName: string): Promise<void> {
    const byId = /^\d+$/.test(idOrName) ? await store.getById(this.db, user.id, Number(idOrName)) : undefined;
    const row = byId ?? (await store.getByName(this.db, user.id, idOrName));
    if (!row) throw notFound(`access token does not exist [id: ${idOrName}]`);
    await store.remove(this.db, row.id);
  }

  /** Resolves a presented token to its owner and scopes; undefined when it is unknown. */
  async resolve(token: string): Promise<Resolved | undefined> {
    if (!TOKEN_SHAPE.test(token)) return undefined;
    const generation = this.generation();
    const recent = this.recent.get(token);
    if (recent && recent.generation === generation && recent.until > Date.now()) return recent.resolved;
    const digest = hashToken(token);
    const hit = await store.findWithUser(this.db, digest);
    // The lookup is by digest; compare again in constant time so no timing tells how close a guess was.
    if (!hit || !crypto.timingSafeEqual(Buffer.from(hit.token.token_hash), Buffer.from(digest)))
      return undefined;
    const now = nowUnix();
    if (now - hit.token.updated_unix > 300) await store.touch(this.db, hit.token.id, now);
    const resolved = { user: hit.user, scopes: storedScopes(hit.token.scope), tokenId: hit.token.id };
    if (this.recent.size >= RECENT_MAX) this.recent.clear();
    this.recent.set(token, { generation, until: Date.now() + RECENT_MS, resolved });
    return resolved;
  }
}
