// Forgejo's quota JSON shapes as TypeBox schemas, and conversions.
import { Type, type Static } from 'typebox';
import type { Group, Rule, Usage } from './evaluate.js';

/** Forgejo's error bodies (APIError, APIForbiddenError, APIValidationError, APINotFound): a
 * message and the documentation URL, plus `errors` on a 404. */
export const ApiError = Type.Object(
  { message: Type.String(), url: Type.String() },
  { title: 'APIError', additionalProperties: true },
);

/** The error responses an operation declares in the API description. */
export function declares(...statuses: number[]): Record<number, typeof ApiError> {
  return Object.fromEntries(statuses.map((s) => [s, ApiError]));
}

export const QuotaRuleInfo = Type.Object(
  {
    name: Type.Optional(Type.String({ description: 'name of the rule (only shown to admins)' })),
    limit: Type.Integer({ description: 'the limit set by the rule, in bytes; -1 is unlimited' }),
    subjects: Type.Array(Type.String(), { description: 'subjects the rule affects' }),
  },
  { title: 'QuotaRuleInfo' },
);

export const QuotaGroup = Type.Object(
  { name: Type.String(), rules: Type.Array(QuotaRuleInfo) },
  { title: 'QuotaGroup' },
);

const n = () => Type.Integer();
export const QuotaUsed = Type.Object(
  {
    size: Type.Object({
      repos: Type.Object({ public: n(), private: n() }),
      git: Type.Object({ LFS: n() }),
      assets: Type.Object({
        attachments: Type.Object({ issues: n(), releases: n() }),
        artifacts: n(),
        packages: Type.Object({ all: n() }),
      }),
    }),
  },
  { title: 'QuotaUsed' },
);

export const QuotaInfo = Type.Object(
  { used: QuotaUsed, groups: Type.Array(QuotaGroup) },
  { title: 'QuotaInfo' },
);

export const CreateQuotaRuleOptions = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    limit: Type.Optional(Type.Integer({ minimum: -1 })),
    subjects: Type.Optional(Type.Array(Type.String())),
  },
  { title: 'CreateQuotaRuleOptions' },
);

export const EditQuotaRuleOptions = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: -1 })),
    subjects: Type.Optional(Type.Array(Type.String())),
  },
  { title: 'EditQuotaRuleOptions' },
);

export const CreateQuotaGroupOptions = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    rules: Type.Optional(Type.Array(CreateQuotaRuleOptions)),
  },
  { title: 'CreateQuotaGroupOptions' },
);

export const SetUserQuotaGroupsOptions = Type.Object(
  { groups: Type.Array(Type.String()) },
  { title: 'SetUserQuotaGroupsOptions' },
);

export const QuotaUsedAttachment = Type.Object(
  {
    name: Type.String(),
    size: Type.Integer(),
    api_url: Type.String(),
    contained_in: Type.Object({ api_url: Type.String(), html_url: Type.String() }),
  },
  { title: 'QuotaUsedAttachment' },
);
export type QuotaUsedAttachmentJson = Static<typeof QuotaUsedAttachment>;

export const QuotaUsedArtifact = Type.Object(
  { name: Type.String(), size: Type.Integer(), html_url: Type.String() },
  { title: 'QuotaUsedArtifact' },
);
export type QuotaUsedArtifactJson = Static<typeof QuotaUsedArtifact>;

export const QuotaUsedPackage = Type.Object(
  {
    name: Type.String(),
    type: Type.String(),
    version: Type.String(),
    size: Type.Integer(),
    html_url: Type.String(),
  },
  { title: 'QuotaUsedPackage' },
);
export type QuotaUsedPackageJson = Static<typeof QuotaUsedPackage>;

export function toRuleJson(rule: Rule, withName: boolean): Static<typeof QuotaRuleInfo> {
  return withName
    ? { name: rule.name, limit: rule.limit, subjects: rule.subjects }
    : { limit: rule.limit, subjects: rule.subjects };
}

export function toGroupJson(group: Group, withNames: boolean): Static<typeof QuotaGroup> {
  return { name: group.name, rules: group.rules.map((r) => toRuleJson(r, withNames)) };
}

export function toUsedJson(u: Usage): Static<typeof QuotaUsed> {
  const v = (k: keyof Usage) => u[k] ?? 0;
  return {
    size: {
      repos: { public: v('size:repos:public'), private: v('size:repos:private') },
      git: { LFS: v('size:git:lfs') },
      assets: {
        attachments: {
          issues: v('size:assets:attachments:issues'),
          releases: v('size:assets:attachments:releases'),
        },
        artifacts: v('size:assets:artifacts'),
        packages: { all: v('size:assets:packages:all') },
      },
    },
  };
}
