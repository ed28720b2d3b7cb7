// Forgejo's IssueMeta, AddTimeOption, TrackedTime and StopWatch, the time list queries, and the
// row-to-JSON conversions of tracked times and stopwatches.
import { Type, type Static } from 'typebox';
import { isoTime, PageQuery } from './input.js';
import type { IssueJson, TrackedTimeJson } from './schemas.js';
import type { StopwatchRow, TrackedTimeRow } from './tables.js';

const Time = Type.String({ format: 'date-time' });

export const IssueMeta = Type.Object(
  {
    owner: Type.Optional(Type.String()),
    repo: Type.Optional(Type.String()),
    index: Type.Optional(Type.Integer()),
  },
  { title: 'IssueMeta', description: 'IssueMeta basic issue information' },
);
export type IssueMetaBody = Static<typeof IssueMeta>;

export const AddTimeOption = Type.Object(
  {
    time: Type.Integer({ description: 'time in seconds' }),
    created: Type.Optional(Time),
    user_name: Type.Optional(Type.String({ description: 'User who spent the time (optional)' })),
  },
  { title: 'AddTimeOption', description: 'AddTimeOption options for adding time to an issue' },
);

// TrackedTime lives with Issue in schemas.ts, since the timeline carries it too.
export { TrackedTime, type TrackedTimeJson } from './schemas.js';

export const StopWatch = Type.Object(
  {
    created: Time,
    seconds: Type.Integer(),
    duration: Type.String(),
    issue_index: Type.Integer(),
    issue_title: Type.String(),
    repo_owner_name: Type.String(),
    repo_name: Type.String(),
  },
  { title: 'StopWatch', description: 'StopWatch represent a running stopwatch' },
);
export type StopWatchJson = Static<typeof StopWatch>;

const since = Type.Optional(
  Type.String({
    description: 'Only show times updated after the given time. This is a timestamp in RFC 3339 format',
  }),
);
const before = Type.Optional(
  Type.String({
    description: 'Only show times updated before the given time. This is a timestamp in RFC 3339 format',
  }),
);
const user = Type.Optional(
  Type.String({ description: 'optional filter by user (available for issue managers)' }),
);

export const TimeListQuery = Type.Object({ user, since, before, ...PageQuery.properties });
export const MyTimeListQuery = Type.Object({ since, before, ...PageQuery.properties });

export function toTrackedTimeJson(t: TrackedTimeRow, issue: IssueJson, userName: string): TrackedTimeJson {
  return {
    id: t.id,
    created: isoTime(t.created_unix),
    time: Number(t.time),
    user_id: t.user_id,
    user_name: userName,
    issue_id: t.issue_id,
    issue,
  };
}

/** Forgejo's SecToTime: "1 hour 2 minutes", the two largest units that matter. */
export function secondsToText(duration: number): string {
  const allDays = Math.floor(duration / 86400);
  const years = Math.floor(allDays / 365);
  let rest = allDays - years * 365;
  const months = Math.floor((rest * 12) / 365);
  rest -= Math.floor((months * 365) / 12);
  const weeks = Math.floor(rest / 7);
  const days = rest - weeks * 7;
  const hours = Math.floor(duration / 3600) % 24;
  const minutes = Math.floor(duration / 60) % 60;
  const seconds = duration % 60;
  const part = (v: number, name: string) => (v === 1 ? `1 ${name}` : v > 1 ? `${v} ${name}s` : '');
  const pairs: Array<[number, string, number, string]> = [
    [years, 'year', months, 'month'],
    [months, 'month', weeks, 'week'],
    [weeks, 'week', days, 'day'],
    [days, 'day', hours, 'hour'],
    [hours, 'hour', minutes, 'minute'],
  ];
  const [a, an, b, bn] = pairs.find(([v]) => v > 0) ?? [minutes, 'minute', seconds, 'second'];
  return [part(a, an), part(b, bn)].filter(Boolean).join(' ');
}

export function toStopWatchJson(
  sw: StopwatchRow,
  issue: { index: number; title: string },
  repo: { owner: string; name: string },
  now: number,
): StopWatchJson {
  const seconds = Math.max(0, now - sw.created_unix);
  return {
    created: isoTime(sw.created_unix),
    seconds,
    duration: secondsToText(seconds),
    issue_index: issue.index,
    issue_title: issue.title,
    repo_owner_name: repo.owner,
    repo_name: repo.name,
  };
}
