// Forgejo's Hook, CreateHookOption and EditHookOption, Anvil's HookDelivery (the delivery
// history), and the row-to-JSON conversions.
import { Type, type Static } from 'typebox';
import { isoTime } from '../http/format.js';
import { eventName, eventsArray, parseSettings } from './events.js';
import type { HookTaskRow, WebhookRow } from './tables.js';

const StringMap = Type.Record(Type.String(), Type.String());

export const Hook = Type.Object(
  {
    id: Type.Integer(),
    type: Type.String({
      description:
        'forgejo, gitea, gogs, slack, discord, dingtalk, telegram, msteams, feishu, matrix, wechatwork, ' +
        'packagist or sourcehut_builds',
    }),
    branch_filter: Type.String(),
    url: Type.String({ description: 'where deliveries are sent' }),
    config: Type.Record(Type.String(), Type.String(), {
      description: 'Deprecated: url, content_type and http_method (and the type-specific settings)',
    }),
    events: Type.Array(Type.String()),
    authorization_header: Type.String(),
    content_type: Type.String({ description: 'json or form' }),
    metadata: Type.Unknown({
      description:
        'type-specific settings (slack: channel, username, icon_url, color; discord: username, icon_url; ' +
        'telegram: bot_token, chat_id, thread_id; packagist: username, api_token, package_url; ' +
        'sourcehut_builds: manifest_path, visibility, secrets); null for others',
    }),
    active: Type.Boolean(),
    updated_at: Type.String({ format: 'date-time' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Hook', description: 'Hook a hook is a web hook when one repository changed' },
);
export type HookJson = Static<typeof Hook>;

export const CreateHookOption = Type.Object(
  {
    type: Type.String({
      description:
        'forgejo, gitea, gogs, slack, discord, dingtalk, telegram, msteams, feishu, matrix, wechatwork, ' +
        'packagist or sourcehut_builds',
    }),
    config: Type.Record(Type.String(), Type.String(), {
      description:
        'url and content_type (json or form) are required (content_type is json for the chat and build ' +
        'types; telegram makes its url from bot_token, chat_id and thread_id, packagist from username ' +
        'and api_token); secret and http_method (POST or GET; PUT for matrix) are optional; the ' +
        'type-specific settings: slack channel, username, icon_url, color; discord username, icon_url; ' +
        'packagist package_url; sourcehut_builds manifest_path, visibility (PUBLIC, UNLISTED or PRIVATE), ' +
        'secrets ("true") and access_token (sent as "Authorization: Bearer"); on /admin/hooks ' +
        'is_system_webhook ("true") makes a system hook',
    }),
    events: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'event types (create, delete, fork, push, issues, issue_assign, issue_label, issue_milestone, ' +
          'issue_comment, pull_request, ..., repository, release); "issues" and "pull_request" ' +
          'include their families; empty: push only; "*": everything',
      }),
    ),
    branch_filter: Type.Optional(Type.String({ description: 'glob over branch names; empty or * for all' })),
    authorization_header: Type.Optional(Type.String()),
    active: Type.Optional(Type.Boolean({ default: false })),
    is_system_webhook: Type.Optional(
      Type.Boolean({ description: '/admin/hooks only: fire for every repository (else a default hook)' }),
    ),
  },
  { title: 'CreateHookOption' },
);
export type CreateHookBody = Static<typeof CreateHookOption>;

export const EditHookOption = Type.Object(
  {
    config: Type.Optional(StringMap),
    events: Type.Optional(Type.Array(Type.String())),
    branch_filter: Type.Optional(Type.String()),
    authorization_header: Type.Optional(Type.String()),
    active: Type.Optional(Type.Boolean()),
  },
  { title: 'EditHookOption' },
);
export type EditHookBody = Static<typeof EditHookOption>;

const Headers = Type.Record(Type.String(), Type.String());

export const HookDelivery = Type.Object(
  {
    id: Type.Integer(),
    uuid: Type.String({ description: 'X-Forgejo-Delivery' }),
    event: Type.String({ description: 'X-Forgejo-Event' }),
    event_type: Type.String({ description: 'X-Forgejo-Event-Type' }),
    delivered: Type.Boolean({ description: 'finished: delivered, or given up after the last attempt' }),
    success: Type.Boolean(),
    status_code: Type.Union([Type.Integer(), Type.Null()], {
      description: 'HTTP status of the last attempt; null when no response came back',
    }),
    attempts: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
    last_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'when the next attempt is due; null once finished',
    }),
    request: Type.Object({
      url: Type.String(),
      http_method: Type.String(),
      headers: Headers,
      body: Type.String({ description: 'the body as sent (the payload, or payload=... for form hooks)' }),
    }),
    response: Type.Union([
      Type.Object({
        status: Type.Integer(),
        headers: Headers,
        body: Type.String({ description: 'truncated to 16 KiB' }),
      }),
      Type.Null(),
    ]),
  },
  { title: 'HookDelivery', description: "One delivery of an event to a webhook (Anvil's extension)" },
);
export type HookDeliveryJson = Static<typeof HookDelivery>;

/** Type-specific settings kept in `meta`, shown as `metadata` and merged into `config`. */
export function metaOf(row: WebhookRow): Record<string, unknown> | null {
  if (!row.meta) return null;
  try {
    const v: unknown = JSON.parse(row.meta);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function toHookJson(row: WebhookRow, authorization: string, site = false): HookJson {
  const meta = metaOf(row);
  const config: Record<string, string> = {
    url: row.url,
    content_type: row.content_type,
    http_method: row.http_method,
  };
  for (const [k, v] of Object.entries(meta ?? {})) config[k] = typeof v === 'string' ? v : String(v);
  if (site) config['is_system_webhook'] = row.is_system_webhook ? 'true' : 'false';
  return {
    id: row.id,
    type: row.type,
    branch_filter: row.branch_filter,
    url: row.url,
    config,
    events: eventsArray(parseSettings(row.events)),
    authorization_header: authorization,
    content_type: row.content_type,
    metadata: meta,
    active: row.is_active === 1,
    updated_at: isoTime(row.updated_unix),
    created_at: isoTime(row.created_unix),
  };
}

function parseRecord<T>(text: string): T | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

export function toDeliveryJson(t: HookTaskRow, hook: WebhookRow): HookDeliveryJson {
  const req = parseRecord<{ url: string; http_method: string; headers: Record<string, string> }>(
    t.request_content,
  );
  const res = parseRecord<{ status: number; headers: Record<string, string>; body: string }>(
    t.response_content,
  );
  const method = req?.http_method ?? hook.http_method;
  const form = (req?.headers['Content-Type'] ?? '') === 'application/x-www-form-urlencoded';
  return {
    id: t.id,
    uuid: t.uuid,
    event: eventName(t.event_type),
    event_type: t.event_type,
    delivered: t.is_delivered === 1,
    success: t.is_succeed === 1,
    status_code: t.status_code || null,
    attempts: t.attempts,
    created_at: isoTime(t.created_unix),
    last_attempt_at: t.delivered_unix ? isoTime(t.delivered_unix) : null,
    next_attempt_at: t.is_delivered ? null : isoTime(t.next_attempt_unix),
    request: {
      url: req?.url ?? hook.url,
      http_method: method,
      headers: req?.headers ?? {},
      body: method === 'GET' ? '' : form ? new URLSearchParams({ payload: t.payload }).toString() : t.payload,
    },
    response: res,
  };
}
