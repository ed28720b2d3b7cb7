// OAuth2 applications a user registers: create (the client secret is returned once and only its
// SHA-256 kept, as access tokens are), list, read, edit and delete, each on the caller's own
// applications only (another user's is a 404). Deleting an application removes its grants, codes
// and so every token it issued (foreign keys). The authorization flow is provider.ts and issuer.ts.
import crypto from 'node:crypto';
import { nowUnix, transaction, type Db } from '../db/database.js';
import { invalid, notFound } from '../errors.js';
import { hashToken } from '../tokens/service.js';
import type { UserRow } from '../users/tables.js';
import * as store from './store.js';
import type { OAuth2AppRow } from './tables.js';

export interface OAuth2AppInput {
  name?: string | undefined;
  redirectUris?: readonly string[] | undefined;
  confidentialClient?: boolean | undefined;
}

export interface CreatedApp {
  row: OAuth2AppRow;
  /** The client secret: returned once, never stored. */
  secret: string;
}

/** Forgejo's client secrets: `gto_` and random characters. */
const newSecret = () => `gto_${crypto.randomBytes(32).toString('base64url')}`;

const MAX_NAME = 255;

function checkName(name: string | undefined): string {
  const trimmed = (name ?? '').trim();
  if (!trimmed) throw invalid('[Name]: Required');
  if (trimmed.length > MAX_NAME) throw invalid(`[Name]: must be at most ${MAX_NAME} characters`);
  return trimmed;
}

/** Each redirect URI must be an absolute URL (any scheme: native clients use their own) without a fragment. */
function checkRedirectUris(uris: readonly string[] | undefined): string[] {
  const out = (uris ?? []).map((u) => u.trim());
  if (out.length === 0) throw invalid('[RedirectURIs]: Required');
  for (const u of out) {
    let url: URL | undefined;
    try {
      url = new URL(u);
    } catch {
      url = undefined;
    }
    if (!url || !/^[a-z][a-z0-9+.-]*:/i.test(u)) {
      throw invalid(`[RedirectURIs]: ${JSON.stringify(u)} is not an absolute URL`);
    }
    if (url.hash || u.includes('#')) {
      throw invalid(`[RedirectURIs]: ${JSON.stringify(u)} must not have a fragment`);
    }
  }
  return out;
}

export const redirectUrisOf = (row: OAuth2AppRow): string[] => JSON.parse(row.redirect_uris) as string[];

export interface OAuth2ServiceDeps {
  db: Db;
}

export class OAuth2Service {
  private readonly db: Db;

  constructor(deps: OAuth2ServiceDeps) {
    this.db = deps.db;
  }

  async create(user: UserRow, input: OAuth2AppInput): Promise<CreatedApp> {
    const name = checkName(input.name);
    const redirectUris = checkRedirectUris(input.redirectUris);
    const secret = newSecret();
    const now = nowUnix();
    const id = await store.insert(this.db, {
      uid: user.id,
      name,
      client_id: crypto.randomUUID(),
      client_secret_hash: hashToken(secret),
      redirect_uris: JSON.stringify(redirectUris),
      confidential_client: input.confidentialClient ? 1 : 0,
      created_unix: now,
      updated_unix: now,
    });
    return { row: (await store.getOfUser(this.db, user.id, id))!, secret };
  }

  list(user: UserRow, limit: number, offset: number) {
    return store.listOfUser(this.db, user.id, limit, offset);
  }

  /** The caller's application `id`; 404 for none or another user's. */
  async get(user: UserRow, id: number): Promise<OAuth2AppRow> {
    const row = await store.getOfUser(this.db, user.id, id);
    if (!row) throw notFound(`OAuth Application does not exist [id: ${id}]`);
    return row;
  }

  /** Changes what `input` names; the client id and secret stay. */
  async edit(user: UserRow, id: number, input: OAuth2AppInput): Promise<OAuth2AppRow> {
    const row = await this.get(user, id);
    await store.update(this.db, row.id, {
      name: input.name === undefined ? undefined : checkName(input.name),
      redirect_uris:
        input.redirectUris === undefined ? undefined : JSON.stringify(checkRedirectUris(input.redirectUris)),
      confidential_client:
        input.confidentialClient === undefined ? undefined : input.confidentialClient ? 1 : 0,
      updated_unix: nowUnix(),
    });
    return this.get(user, id);
  }

  /**
   * A new client secret for the caller's application `id` (returned once); the old one stops
   * working, and so do the tokens and codes issued under it (the users' grants stay).
   */
  async regenerateSecret(user: UserRow, id: number): Promise<CreatedApp> {
    const row = await this.get(user, id);
    const secret = newSecret();
    await transaction(this.db, async (tx) => {
      await store.update(tx, row.id, { client_secret_hash: hashToken(secret), updated_unix: nowUnix() });
      await store.invalidateIssued(tx, row.id);
    });
    return { row: await this.get(user, id), secret };
  }

  async delete(user: UserRow, id: number): Promise<void> {
    const row = await this.get(user, id);
    await store.remove(this.db, row.id);
  }
}
