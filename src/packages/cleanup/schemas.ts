// The shapes of Anvil's package cleanup rule API (Forgejo keeps these rules in its web UI only;
// the fields are its package_cleanup_rule's).
import { Type, type Static } from 'typebox';
import { isoTime } from '../../http/format.js';
import { PACKAGE_TYPES } from '../tables.js';
import type { RuleRow } from './tables.js';

const types = PACKAGE_TYPES.map((t) => Type.Literal(t));

export const CleanupRule = Type.Object({
  id: Type.Integer(),
  type: Type.String(),
  enabled: Type.Boolean(),
  keep_count: Type.Integer({ description: 'the newest this many versions of each package are kept' }),
  keep_pattern: Type.String({ description: 'versions matching this regular expression are kept' }),
  remove_days: Type.Integer({ description: 'only versions older than this many days are removed (0: any)' }),
  remove_pattern: Type.String({ description: 'only versions matching this are removed (empty: all)' }),
  match_full_name: Type.Boolean({ description: 'patterns match "name/version" instead of the version' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type CleanupRuleJson = Static<typeof CleanupRule>;

const fields = {
  enabled: Type.Optional(Type.Boolean()),
  keep_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  keep_pattern: Type.Optional(Type.String({ maxLength: 255 })),
  remove_days: Type.Optional(Type.Integer({ minimum: 0, maximum: 36_500 })),
  remove_pattern: Type.Optional(Type.String({ maxLength: 255 })),
  match_full_name: Type.Optional(Type.Boolean()),
};

export const CreateCleanupRule = Type.Object(
  { type: Type.Union(types), ...fields },
  { additionalProperties: false },
);
export const EditCleanupRule = Type.Object(
  { type: Type.Optional(Type.Union(types)), ...fields },
  { additionalProperties: false },
);

export const RuleParams = Type.Object({ owner: Type.String(), id: Type.Integer() });

export function toRuleJson(r: RuleRow): CleanupRuleJson {
  return {
    id: r.id,
    type: r.type,
    enabled: r.enabled === 1,
    keep_count: r.keep_count,
    keep_pattern: r.keep_pattern,
    remove_days: r.remove_days,
    remove_pattern: r.remove_pattern,
    match_full_name: r.match_full_name === 1,
    created_at: isoTime(r.created_unix),
    updated_at: isoTime(r.updated_unix),
  };
}
