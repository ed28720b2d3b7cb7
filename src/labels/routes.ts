// HTTP routes for labels: a repository's labels (/repos/{owner}/{repo}/labels) and an
// organization's (/orgs/{org}/labels), usable on the organization's repositories. Reading follows
// the repository's (or organization's) visibility; writing needs write access to the repository's
// issues, or ownership of the organization. Archived labels are listed only with archived=true.
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedViewer } from '../http/auth.js';
import { pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import type { OrgService } from '../orgs/service.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import type { LabelRow } from './tables.js';
import {
  CreateLabelOption,
  EditLabelOption,
  Label,
  LabelListQuery,
  toLabelJson,
  type LabelUrls,
} from './schemas.js';
import type { LabelInput, LabelService } from './service.js';
import { LABEL_TEMPLATES, labelTemplate } from './templates.js';
import { notFound } from '../errors.js';

import { RepoParams } from '../http/params.js';
const OrgParams = Type.Object({ org: Type.String() });
const NoContent = Type.Null();

const LabelTemplateJson = Type.Object(
  {
    name: Type.String(),
    color: Type.String({ description: 'six hex digits', examples: ['00aabb'] }),
    description: Type.String(),
    exclusive: Type.Boolean(),
  },
  { title: 'LabelTemplate' },
);

export interface LabelsRoutesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  users: Pick<UserService, 'getById'>;
  orgs: Pick<OrgService, 'requireVisibleOrg' | 'requireOwner'>;
  labels: LabelService;
  paging: PagingSettings;
  rootUrl: string;
}

export function labelsRoutes(app: Api, deps: LabelsRoutesDeps): void {
  const { repos, labels, users, orgs, paging, rootUrl } = deps;

  app.get(
    '/label/templates',
    {
      schema: {
        tags: ['miscellaneous'],
        operationId: 'listLabelTemplates',
        summary: 'Returns a list of all label templates',
        response: { 200: Type.Array(Type.String()) },
      },
    },
    async () => Object.keys(LABEL_TEMPLATES).sort(),
  );

  app.get(
    '/label/templates/:name',
    {
      schema: {
        tags: ['miscellaneous'],
        operationId: 'getLabelTemplateInfo',
        summary: 'Returns all labels in a template',
        params: Type.Object({ name: Type.String() }),
        response: { 200: Type.Array(LabelTemplateJson) },
      },
    },
    async (request) => {
      const template = labelTemplate(request.params.name);
      if (!template) throw notFound(`label template does not exist [name: ${request.params.name}]`);
      return template.map((l) => ({ ...l }));
    },
  );
  const tags = ['issue'];
  const read: RouteAuth = { scope: 'issue' };
  const write: RouteAuth = { scope: 'issue', require: 'signed' };
  const orgRead: RouteAuth = { scope: 'organization' };
  const orgWrite: RouteAuth = { scope: 'organization', require: 'signed' };

  const input = (b: {
    name?: string;
    color?: string;
    description?: string;
    exclusive?: boolean;
    is_archived?: boolean;
  }): LabelInput => ({
    name: b.name,
    color: b.color,
    description: b.description,
    exclusive: b.exclusive,
    isArchived: b.is_archived,
  });

  async function repoUrls(repo: RepoRow): Promise<LabelUrls> {
    const owner = (await users.getById(repo.owner_id))!;
    return {
      rootUrl,
      repoFullName: (id) => (id === repo.id ? `${owner.name}/${repo.name}` : undefined),
      orgName: (id) => (id === owner.id ? owner.name : undefined),
    };
  }

  const orgUrls = (org: UserRow): LabelUrls => ({
    rootUrl,
    repoFullName: () => undefined,
    orgName: (id) => (id === org.id ? org.name : undefined),
  });

  // Repository labels

  const repoOf = (
    params: { owner: string; repo: string },
    viewer: Parameters<typeof repos.requireRepo>[2],
    need: 'read' | 'write',
  ) => repos.requireRepo(params.owner, params.repo, viewer, need, 'repo.issues');

  app.get(
    '/repos/:owner/:repo/labels',
    {
      schema: {
        tags,
        summary: "Get all of a repository's labels",
        description: 'Archived labels only with archived=true.',
        params: RepoParams,
        querystring: LabelListQuery,
        response: { 200: Type.Array(Label) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { repo } = await repoOf(request.params, request.viewer, 'read');
      const page = pageOf(request.query, paging);
      const result = await labels.list({ repoId: repo.id }, request.query.archived ?? false, page);
      const urls = await repoUrls(repo);
      return sendPage(request, reply, result, page, rootUrl, (l: LabelRow) => toLabelJson(l, urls));
    },
  );

  app.post(
    '/repos/:owner/:repo/labels',
    {
      schema: {
        tags,
        summary: 'Create a label',
        description: 'color: hex, with or without "#" (422 otherwise). Writers of the issues only.',
        params: RepoParams,
        body: CreateLabelOption,
        response: { 201: Label },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { repo } = await repoOf(request.params, request.viewer, 'write');
      const label = await labels.create({ repoId: repo.id }, input(request.body));
      return reply.code(201).send(toLabelJson(label, await repoUrls(repo)));
    },
  );

  app.get(
    '/repos/:owner/:repo/labels/:id',
    {
      schema: {
        tags,
        summary: 'Get a single label',
        description: 'By id, or by name when the segment is not a number.',
        params: Type.Object({ owner: Type.String(), repo: Type.String(), id: Type.String() }),
        response: { 200: Label },
      },
      config: { auth: read },
    },
    async (request) => {
      const { repo } = await repoOf(request.params, request.viewer, 'read');
      const label = await labels.requireRepoLabel(repo, request.params.id);
      return toLabelJson(label, await repoUrls(repo));
    },
  );

  const IdParams = Type.Object({ owner: Type.String(), repo: Type.String(), id: Type.Integer() });

  app.patch(
    '/repos/:owner/:repo/labels/:id',
    {
      schema: {
        tags,
        summary: 'Update a label',
        description: 'is_archived true archives it (keeping the first archive time), false unarchives it.',
        params: IdParams,
        body: EditLabelOption,
        response: { 200: Label },
      },
      config: { auth: write },
    },
    async (request) => {
      const { repo } = await repoOf(request.params, request.viewer, 'write');
      const label = await labels.requireRepoLabel(repo, request.params.id);
      return toLabelJson(await labels.edit(label, input(request.body)), await repoUrls(repo));
    },
  );

  app.delete(
    '/repos/:owner/:repo/labels/:id',
    {
      schema: { tags, summary: 'Delete a label', params: IdParams, response: { 204: NoContent } },
      config: { auth: write },
    },
    async (request, reply) => {
      const { repo } = await repoOf(request.params, request.viewer, 'write');
      await labels.delete(await labels.requireRepoLabel(repo, request.params.id));
      return reply.code(204).send(null);
    },
  );

  // Organization labels

  const orgTags = ['organization'];
  const OrgIdParams = Type.Object({ org: Type.String(), id: Type.Integer() });

  app.get(
    '/orgs/:org/labels',
    {
      schema: {
        tags: orgTags,
        summary: "List an organization's labels",
        description: 'Archived labels only with archived=true.',
        params: OrgParams,
        querystring: LabelListQuery,
        response: { 200: Type.Array(Label) },
      },
      config: { auth: orgRead },
    },
    async (request, reply) => {
      const org = await orgs.requireVisibleOrg(request.params.org, request.viewer);
      const page = pageOf(request.query, paging);
      const result = await labels.list({ orgId: org.id }, request.query.archived ?? false, page);
      const urls = orgUrls(org);
      return sendPage(request, reply, result, page, rootUrl, (l: LabelRow) => toLabelJson(l, urls));
    },
  );

  app.post(
    '/orgs/:org/labels',
    {
      schema: {
        tags: orgTags,
        summary: 'Create a label for an organization',
        description: 'Organization owners only.',
        params: OrgParams,
        body: CreateLabelOption,
        response: { 201: Label },
      },
      config: { auth: orgWrite },
    },
    async (request, reply) => {
      const org = await orgs.requireVisibleOrg(request.params.org, request.viewer);
      await orgs.requireOwner(org, signedViewer(request));
      const label = await labels.create({ orgId: org.id }, input(request.body));
      return reply.code(201).send(toLabelJson(label, orgUrls(org)));
    },
  );

  app.get(
    '/orgs/:org/labels/:id',
    {
      schema: { tags: orgTags, summary: 'Get a single label', params: OrgIdParams, response: { 200: Label } },
      config: { auth: orgRead },
    },
    async (request) => {
      const org = await orgs.requireVisibleOrg(request.params.org, request.viewer);
      return toLabelJson(await labels.requireOrgLabel(org, request.params.id), orgUrls(org));
    },
  );

  app.patch(
    '/orgs/:org/labels/:id',
    {
      schema: {
        tags: orgTags,
        summary: 'Update a label',
        params: OrgIdParams,
        body: EditLabelOption,
        response: { 200: Label },
      },
      config: { auth: orgWrite },
    },
    async (request) => {
      const org = await orgs.requireVisibleOrg(request.params.org, request.viewer);
      await orgs.requireOwner(org, signedViewer(request));
      const label = await labels.requireOrgLabel(org, request.params.id);
      return toLabelJson(await labels.edit(label, input(request.body)), orgUrls(org));
    },
  );

  app.delete(
    '/orgs/:org/labels/:id',
    {
      schema: { tags: orgTags, summary: 'Delete a label', params: OrgIdParams, response: { 204: NoContent } },
      config: { auth: orgWrite },
    },
    async (request, reply) => {
      const org = await orgs.requireVisibleOrg(request.params.org, request.viewer);
      await orgs.requireOwner(org, signedViewer(request));
      await labels.delete(await labels.requireOrgLabel(org, request.params.id));
      return reply.code(204).send(null);
    },
  );
}
