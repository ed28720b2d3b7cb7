// Forgejo's Label and the label option objects, and the row-to-JSON conversion.
import { Type, type Static } from 'typebox';
import { PageQuery } from '../issues/input.js';
import type { LabelRow } from './tables.js';

export const Label = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    exclusive: Type.Boolean({
      description:
        'with a scope (the part of the name before its last "/"), an issue can hold only one of them',
    }),
    is_archived: Type.Boolean(),
    color: Type.String({ description: 'six hexadecimal digits, without "#"' }),
    description: Type.String(),
    url: Type.String(),
  },
  { title: 'Label', description: 'Label a label to an issue or a pr' },
);
export type LabelJson = Static<typeof Label>;

const color = Type.String({ description: 'hex color, with or without "#": 00aabb, #00aabb or #0ab' });

export const CreateLabelOption = Type.Object(
  {
    name: Type.String(),
    color,
    description: Type.Optional(Type.String()),
    exclusive: Type.Optional(Type.Boolean()),
    is_archived: Type.Optional(Type.Boolean()),
  },
  { title: 'CreateLabelOption' },
);

export const EditLabelOption = Type.Object(
  {
    name: Type.Optional(Type.String()),
    color: Type.Optional(color),
    description: Type.Optional(Type.String()),
    exclusive: Type.Optional(Type.Boolean()),
    is_archived: Type.Optional(Type.Boolean()),
  },
  { title: 'EditLabelOption' },
);

export const LabelListQuery = Type.Object({
  archived: Type.Optional(
    Type.Boolean({ description: 'also list archived labels (hidden by default)', default: false }),
  ),
  ...PageQuery.properties,
});

/** Where labels live in the API: a repository's or an organization's labels URL, by label. */
export interface LabelUrls {
  rootUrl: string;
  /** `owner/name` of a repository, by id. */
  repoFullName(repoId: number): string | undefined;
  /** Name of an organization, by id. */
  orgName(orgId: number): string | undefined;
}

export function toLabelJson(l: LabelRow, urls: LabelUrls): LabelJson {
  let url = '';
  if (l.repo_id !== null) {
    const full = urls.repoFullName(l.repo_id);
    if (full) url = `${urls.rootUrl}api/v1/repos/${full}/labels/${l.id}`;
  } else if (l.org_id !== null) {
    const org = urls.orgName(l.org_id);
    if (org) url = `${urls.rootUrl}api/v1/orgs/${encodeURIComponent(org)}/labels/${l.id}`;
  }
  return {
    id: l.id,
    name: l.name,
    exclusive: l.exclusive === 1,
    is_archived: l.archived_unix > 0,
    color: l.color.replace(/^#/, ''),
    description: l.description,
    url,
  };
}
