// Tables of the webhooks domain (see db/migrations/0011_webhooks.ts).
import type { Generated, Selectable } from 'kysely';

/**
 * A webhook. Exactly one of three kinds, as in Forgejo: a repository's (`repo_id`), a user's or
 * organization's (`owner_id`: fires for all the owner's repositories), or a site-wide one (both
 * null): a system webhook (`is_system_webhook` 1) fires for every repository, a default webhook
 * (0) is copied into each new repository.
 */
export interface WebhookTable {
  id: Generated<number>;
  repo_id: number | null;
  owner_id: number | null;
  is_system_webhook: Generated<number>;
  /** One of Forgejo's hook types (./types.ts HOOK_TYPES). */
  type: string;
  /** Where deliveries go (http or https). */
  url: string;
  /** POST (GET, PUT for matrix). */
  http_method: string;
  /** json or form. */
  content_type: string;
  /** Encrypted (auth/secrets.ts); '' when there is none. */
  secret: Generated<string>;
  /** Forgejo's HookEvent JSON: push_only, send_everything, choose_events and the events chosen. */
  events: string;
  /** Glob over branch names for push, create and delete events; '' or '*' matches every branch. */
  branch_filter: Generated<string>;
  is_active: number;
  /** Type-specific settings as JSON (Forgejo's meta: slack, discord, telegram, packagist, sourcehut_builds); '' when none. */
  meta: Generated<string>;
  /** The Authorization header sent with each delivery, encrypted; '' when there is none. */
  header_authorization: Generated<string>;
  created_unix: number;
  updated_unix: number;
}

/**
 * One delivery of one event to one webhook: the durable queue and the delivery history. A row is
 * written right after the change that caused it; the worker sends it, retrying with back-off
 * until it succeeds or runs out of attempts (then `is_delivered` is 1).
 */
export interface HookTaskTable {
  id: Generated<number>;
  hook_id: number;
  /** X-Forgejo-Delivery. */
  uuid: string;
  /** X-Forgejo-Event-Type: push, create, issues, issue_comment, pull_request_comment, ... */
  event_type: string;
  /** The payload exactly as sent (JSON). */
  payload: string;
  /** 1 once finished: delivered successfully, or given up. */
  is_delivered: Generated<number>;
  is_succeed: Generated<number>;
  attempts: Generated<number>;
  /** While pending: when the next attempt is due (a claimed row is pushed past its lease). */
  next_attempt_unix: number;
  /** Time of the last attempt; 0 before the first. */
  delivered_unix: Generated<number>;
  /** HTTP status of the last attempt's response; 0 when there was none. */
  status_code: Generated<number>;
  /** JSON {url, http_method, headers} of the last attempt ('' before the first). */
  request_content: Generated<string>;
  /** JSON {status, headers, body} of the last attempt, the body truncated ('' before the first). */
  response_content: Generated<string>;
  created_unix: number;
}

export interface WebhookTables {
  webhook: WebhookTable;
  hook_task: HookTaskTable;
}

export type WebhookRow = Selectable<WebhookTable>;
export type HookTaskRow = Selectable<HookTaskTable>;
