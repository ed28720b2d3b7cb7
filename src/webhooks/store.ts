// Queries on webhooks and their deliveries (hook_task). No HTTP here.
import type { Insertable, Updateable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { HookTaskTable, WebhookTable } from './tables.js';
import type { WebhookRow, HookTaskRow } from './tables.js';

type Q = Db | Tx;

/** Where a hook belongs: a repository, a user or organization, or the site (system and default hooks). */
export type HookOwner = { repoId: number } | { ownerId: number } | { site: true };

function whereOwner(q: Q, owner: HookOwner) {
  let s = q.selectFrom('webhook').selectAll();
  if ('repoId' in owner) s = s.where('repo_id', '=', owner.repoId);
  else if ('ownerId' in owner) s = s.where('owner_id', '=', owner.ownerId);
  else s = s.where('repo_id', 'is', null).where('owner_id', 'is', null);
  return s;
}

// Webhooks

export async function insertHook(q: Q, row: Insertable<WebhookTable>): Promise<number> {
  return (await q.insertInto('webhook').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export function hookById(q: Q, id: number): Promise<WebhookRow | undefined> {
  return q.selectFrom('webhook').selectAll().where('id', '=', id).executeTakeFirst();
}

export function ownedHook(q: Q, owner: HookOwner, id: number): Promise<WebhookRow | undefined> {
  return whereOwner(q, owner).where('id', '=', id).executeTakeFirst();
}

export function listHooks(q: Q, owner: HookOwner, limit: number, offset: number) {
  return paged(whereOwner(q, owner).orderBy('id'), limit, offset);
}

export async function updateHook(q: Q, id: number, patch: Updateable<WebhookTable>): Promise<void> {
  await q.updateTable('webhook').set(patch).where('id', '=', id).execute();
}

export async function deleteHook(q: Q, id: number): Promise<void> {
  await q.deleteFrom('webhook').where('id', '=', id).execute();
}

/** The active hooks that fire for a repository: its own, its owner's and the system hooks. */
export function activeHooksFor(q: Q, repo: { id: number; owner_id: number }): Promise<WebhookRow[]> {
  return q
    .selectFrom('webhook')
    .selectAll()
    .where('is_active', '=', 1)
    .where((eb) =>
      eb.or([
        eb('repo_id', '=', repo.id),
        eb('owner_id', '=', repo.owner_id),
        eb('is_system_webhook', '=', 1),
      ]),
    )
    .orderBy('id')
    .execute();
}

/** The active hooks that fire for an owner's package: the owner's, its linked repository's and the system hooks. */
export function activeHooksForPackage(q: Q, ownerId: number, repoId: number | null): Promise<WebhookRow[]> {
  return q
    .selectFrom('webhook')
    .selectAll()
    .where('is_active', '=', 1)
    .where((eb) =>
      eb.or([
        eb('owner_id', '=', ownerId),
        eb('is_system_webhook', '=', 1),
        ...(repoId !== null ? [eb('repo_id', '=', repoId)] : []),
      ]),
    )
    .orderBy('id')
    .execute();
}

/** Default hooks (site-wide, not system): copied into every new repository. */
export function defaultHooks(q: Q): Promise<WebhookRow[]> {
  return q
    .selectFrom('webhook')
    .selectAll()
    .where('repo_id', 'is', null)
    .where('owner_id', 'is', null)
    .where('is_system_webhook', '=', 0)
    .orderBy('id')
    .execute();
}

export async function hooksByIds(q: Q, ids: number[]): Promise<Map<number, WebhookRow>> {
  if (ids.length === 0) return new Map();
  const rows = await q.selectFrom('webhook').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

// Deliveries

/** Inserts deliveries in chunks (bound parameters stay well under every driver's limit). */
export async function insertTasks(q: Q, rows: Insertable<HookTaskTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    await q
      .insertInto('hook_task')
      .values(rows.slice(i, i + 500))
      .execute();
  }
}

/**
 * Claims up to `limit` due deliveries in one statement: their next attempt moves to `leaseUntil`,
 * so neither this worker nor another sees them again until they are recorded (or the lease runs
 * out, when a worker died mid-delivery). The outer conditions are checked again on each row as
 * it is updated, so two workers never claim the same row.
 */
export function claimDue(
  q: Q,
  now: number,
  limit: number,
  leaseUntil: number,
  /** PostgreSQL: rows another process is claiming are passed over, not waited for. */
  skipLocked = false,
): Promise<HookTaskRow[]> {
  return q
    .updateTable('hook_task')
    .set({ next_attempt_unix: leaseUntil })
    .where('is_delivered', '=', 0)
    .where('next_attempt_unix', '<=', now)
    .where('id', 'in', (eb) => {
      const due = eb
        .selectFrom('hook_task')
        .select('id')
        .where('is_delivered', '=', 0)
        .where('next_attempt_unix', '<=', now)
        .orderBy('next_attempt_unix')
        .orderBy('id')
        .limit(limit);
      return skipLocked ? due.forUpdate().skipLocked() : due;
    })
    .returningAll()
    .execute();
}

/** Gives claimed deliveries back: due at `at`. */
export async function release(q: Q, ids: number[], at: number): Promise<void> {
  if (ids.length === 0) return;
  await q
    .updateTable('hook_task')
    .set({ next_attempt_unix: at })
    .where('id', 'in', ids)
    .where('is_delivered', '=', 0)
    .execute();
}

/** When the earliest pending delivery is due, if any. */
export async function nextDue(q: Q): Promise<number | undefined> {
  const r = await q
    .selectFrom('hook_task')
    .select('next_attempt_unix')
    .where('is_delivered', '=', 0)
    .orderBy('next_attempt_unix')
    .limit(1)
    .executeTakeFirst();
  return r?.next_attempt_unix;
}

export async function updateTask(q: Q, id: number, patch: Updateable<HookTaskTable>): Promise<void> {
  await q.updateTable('hook_task').set(patch).where('id', '=', id).execute();
}

export function listTasks(q: Q, hookId: number, limit: number, offset: number) {
  return paged(
    q.selectFrom('hook_task').selectAll().where('hook_id', '=', hookId).orderBy('id', 'desc'),
    limit,
    offset,
  );
}

/**
 * Removes finished deliveries beyond the newest `keep` of each hook: the history stays bounded.
 * One query finds the hooks over the limit; one delete per such hook.
 */
export async function pruneTasks(q: Q, keep: number): Promise<number> {
  const over = await q
    .selectFrom('hook_task')
    .select(['hook_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('is_delivered', '=', 1)
    .groupBy('hook_id')
    .having((eb) => eb.fn.countAll(), '>', keep)
    .execute();
  let removed = 0;
  for (const { hook_id } of over) {
    const edge = await q
      .selectFrom('hook_task')
      .select('id')
      .where('hook_id', '=', hook_id)
      .where('is_delivered', '=', 1)
      .orderBy('id', 'desc')
      .offset(keep)
      .limit(1)
      .executeTakeFirst();
    if (!edge) continue;
    const r = await q
      .deleteFrom('hook_task')
      .where('hook_id', '=', hook_id)
      .where('is_delivered', '=', 1)
      .where('id', '<=', edge.id)
      .executeTakeFirst();
    removed += Number(r.numDeletedRows);
  }
  return removed;
}

// Look-ups in other domains' tables that payloads need

/** Accounts by any activated e-mail address (lower-cased), for the usernames of commit authors: one query. */
export async function usersByEmails(q: Q, emails: string[]): Promise<Map<string, string>> {
  const lower = [...new Set(emails.map((e) => e.toLowerCase()).filter(Boolean))];
  if (lower.length === 0) return new Map();
  const rows = await q
    .selectFrom('email_address')
    .innerJoin('user', 'user.id', 'email_address.uid')
    .select(['user.name', 'email_address.lower_email'])
    .where('user.type', '=', 0)
    .where('email_address.is_activated', '=', 1)
    .where('email_address.lower_email', 'in', lower)
    .execute();
  return new Map(rows.map((r) => [r.lower_email, r.name]));
}

/** Copies the repository's webhooks to another repository (a repository generated from a template). */
export async function copyRepoHooks(q: Q, fromRepoId: number, toRepoId: number, now: number): Promise<void> {
  const rows = await q
    .selectFrom('webhook')
    .selectAll()
    .where('repo_id', '=', fromRepoId)
    .orderBy('id')
    .execute();
  for (const { id: _, ...row } of rows) {
    await q
      .insertInto('webhook')
      .values({ ...row, repo_id: toRepoId, owner_id: null, created_unix: now, updated_unix: now })
      .execute();
  }
}

/** One delivery of a hook by its X-Forgejo-Delivery id. */
export function taskByUuid(q: Q, hookId: number, uuid: string): Promise<HookTaskRow | undefined> {
  return q
    .selectFrom('hook_task')
    .selectAll()
    .where('hook_id', '=', hookId)
    .where('uuid', '=', uuid)
    .executeTakeFirst();
}
