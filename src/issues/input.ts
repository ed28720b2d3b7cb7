// Checks and conversions of request values shared by the issues, labels and milestones domains:
// ids, text (PostgreSQL text cannot hold NUL), RFC 3339 times and due dates, and @mentions.
import { Type, type Static, type TSchema } from 'typebox';
import { invalidField } from '../errors.js';

/**
 * `schema` or null, as OpenAPI 3.0 says it (`nullable: true`): fast-json-stringify writes it
 * directly, where a union with null would be checked against each branch for every value.
 */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });
}

/** page and limit of list queries, bounded so that an offset always fits the databases' integers. */
export const PageQuery = Type.Object({
  page: Type.Optional(
    Type.Integer({ maximum: 2 ** 31 - 1, description: 'page number of results to return (1-based)' }),
  ),
  limit: Type.Optional(Type.Integer({ maximum: 2 ** 31 - 1, description: 'page size of results' })),
});

/** Whether `n` can be a row id (a positive integer the databases can hold exactly). */
export const isId = (n: number): boolean => Number.isSafeInteger(n) && n > 0;

/** Whether `s` can name something stored (no NUL character). */
export const isName = (s: string): boolean => !s.includes('\0');

/** `value` unchanged, or a 422 naming `field` when it holds a NUL character. */
export function checkText(value: string, field: string): string {
  if (!isName(value)) throw invalidField(field, 'must not contain NUL characters');
  return value;
}

// One time formatter for the whole API lives in http/format.ts.
export { isoTime } from '../http/format.js';

/** Unix seconds of an RFC 3339 time; 422 naming `field` when it is not one. */
export function parseTime(value: string, field: string): number {
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(ms)) {
    throw invalidField(field, `must be an RFC 3339 time [${field}: ${value}]`);
  }
  return Math.floor(ms / 1000);
}

/** 23:59:59 of the day of an RFC 3339 time, in that time's own offset (Forgejo's due dates). */
export function endOfDay(value: string, field: string): number {
  parseTime(value, field);
  const m = /^(\d{4})-(\d{2})-(\d{2})T[^Zz+-]*(?:[Zz]|([+-])(\d{2}):?(\d{2}))?$/.exec(value);
  if (!m) throw invalidField(field, `must be an RFC 3339 time [${field}: ${value}]`);
  const offset = m[4] ? (m[4] === '-' ? -1 : 1) * (Number(m[5]) * 60 + Number(m[6])) : 0;
  return Math.floor(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 23, 59, 59) / 1000) - offset * 60;
}

const MAX_MENTIONS = 30;
const MENTION = /(?:^|[\s([{>,;])@([0-9A-Za-z_-]+(?:\.[0-9A-Za-z_-]+)*)/g;

/** The user names `@name` mentions in a text (at most 30, lower-cased, each once). */
export function mentionedNames(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(MENTION)) {
    out.add(m[1]!.toLowerCase());
    if (out.size >= MAX_MENTIONS) break;
  }
  return [...out];
}
