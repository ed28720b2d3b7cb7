// Forgejo's Milestone and the milestone option objects, and the row-to-JSON conversion.
import { Type, type Static } from 'typebox';
import { PageQuery } from '../issues/input.js';
import { isoTime, Nullable } from '../issues/input.js';
import { MILESTONE_SORTS } from './tables.js';
import type { MilestoneRow } from './tables.js';
import { NO_DEADLINE } from './tables.js';

const Time = Type.String({ format: 'date-time' });
const NullableTime = Nullable(Time);

export const Milestone = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    description: Type.String(),
    state: Type.String({ description: 'open or closed' }),
    open_issues: Type.Integer(),
    closed_issues: Type.Integer(),
    created_at: Time,
    updated_at: NullableTime,
    closed_at: NullableTime,
    due_on: NullableTime,
  },
  { title: 'Milestone', description: 'Milestone milestone is a collection of issues on one repository' },
);
export type MilestoneJson = Static<typeof Milestone>;

const State = Type.Union([Type.Literal('open'), Type.Literal('closed')], { description: 'open or closed' });

export const CreateMilestoneOption = Type.Object(
  {
    title: Type.String({ maxLength: 255 }),
    description: Type.Optional(Type.String()),
    due_on: Type.Optional(Type.Union([Time, Type.Null()])),
    state: Type.Optional(State),
  },
  { title: 'CreateMilestoneOption' },
);

export const EditMilestoneOption = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: 255 })),
    description: Type.Optional(Type.String()),
    due_on: Type.Optional(Type.Union([Time, Type.Null()], { description: 'null removes the due date' })),
    state: Type.Optional(State),
  },
  { title: 'EditMilestoneOption' },
);

export const MilestoneListQuery = Type.Object({
  state: Type.Optional(
    Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('all')], {
      description: 'open (the default), closed or all',
    }),
  ),
  name: Type.Optional(Type.String({ description: 'filter by title (case-insensitive substring)' })),
  sort: Type.Optional(
    Type.Union(
      Object.keys(MILESTONE_SORTS).map((k) => Type.Literal(k)),
      {
        description:
          'closestduedate (the default), furthestduedate, leastcomplete, mostcomplete, leastissues, mostissues or id',
      },
    ),
  ),
  ...PageQuery.properties,
});

export function toMilestoneJson(m: MilestoneRow): MilestoneJson {
  return {
    id: m.id,
    title: m.name,
    description: m.content,
    state: m.is_closed ? 'closed' : 'open',
    open_issues: m.num_issues - m.num_closed_issues,
    closed_issues: m.num_closed_issues,
    created_at: isoTime(m.created_unix),
    updated_at: isoTime(m.updated_unix),
    closed_at: m.is_closed ? isoTime(m.closed_date_unix) : null,
    due_on: m.deadline_unix > 0 && m.deadline_unix < NO_DEADLINE ? isoTime(m.deadline_unix) : null,
  };
}
