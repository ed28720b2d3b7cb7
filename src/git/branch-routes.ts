// The git data API's branches and tags: list, read, create, rename and delete.
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import { signedIn } from '../http/auth.js';
import { PageFields, pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import type { GitDataService } from './data-service.js';
import type { GitRefService } from './data-refs.js';
import { NoContent, Params, WildParams, base, opener, read, schema, wild, write } from './data-route-kit.js';
import {
  Branch,
  CreateBranchRepoOption,
  CreateTagOption,
  Tag,
  UpdateBranchRepoOption,
  toBranchJson,
  toTagJson,
} from './data-schemas.js';

export interface BranchRoutesDeps {
  gitData: GitDataService;
  gitRefs: GitRefService;
  paging: PagingSettings;
  rootUrl: string;
}

export function branchRoutes(app: Api, deps: BranchRoutesDeps): void {
  const { gitData: svc, gitRefs: refs, paging, rootUrl } = deps;
  const open = opener(svc);

  // Branches

  app.get(
    `${base}/branches`,
    {
      schema: schema("List a repository's branches", {
        params: Params,
        querystring: Type.Object(PageFields),
        response: { 200: Type.Array(Branch) },
      }),
      config: { auth: read },
    },
    async (request, reply) => {
      const t = await open(request);
      const page = pageOf(request.query, paging);
      const [rows, total] = await svc.listBranches(t, page);
      const links = await svc.linksFor(
        t,
        rows.flatMap((b) => [b.commit.author.email, b.commit.committer.email]),
        rows.map((b) => b.commit.oid),
      );
      const canPush = svc.canPush(t);
      return sendPage(request, reply, [rows, total], page, rootUrl, (b) =>
        toBranchJson(b.ref.slice(11), b.commit, links, canPush),
      );
    },
  );

  app.get(
    `${base}/branches/*`,
    {
      schema: schema('Retrieve a specific branch from a repository', {
        params: WildParams('branch to get (may contain slashes)'),
        response: { 200: Branch },
      }),
      config: { auth: read },
    },
    async (request) => {
      const t = await open(request);
      const b = await svc.getBranch(t, wild(request));
      const links = await svc.linksFor(t, [b.commit.author.email, b.commit.committer.email], [b.commit.oid]);
      return toBranchJson(b.ref.slice(11), b.commit, links, svc.canPush(t));
    },
  );

  app.post(
    `${base}/branches`,
    {
      schema: schema('Create a branch', {
        description:
          'From old_ref_name (a branch, tag or commit), else old_branch_name, else the default branch. ' +
          '404 when that does not exist (or the repository is empty), 409 when the branch exists.',
        params: Params,
        body: CreateBranchRepoOption,
        response: { 201: Branch },
      }),
      config: { auth: write },
    },
    async (request, reply) => {
      const t = await open(request, 'write');
      const b = await refs.createBranch(t, signedIn(request).user, {
        name: request.body.new_branch_name,
        oldBranch: request.body.old_branch_name,
        oldRef: request.body.old_ref_name,
      });
      const links = await svc.linksFor(t, [b.commit.author.email, b.commit.committer.email]);
      return reply.code(201).send(toBranchJson(b.ref.slice(11), b.commit, links, svc.canPush(t)));
    },
  );

  app.patch(
    `${base}/branches/*`,
    {
      schema: schema('Update a branch', {
        description:
          'Renames the branch; the default branch, a protection rule named after it and open pull ' +
          'requests follow. 422 when the new name is taken, 403 when a glob protection rule covers it.',
        params: WildParams('name of the branch (may contain slashes)'),
        body: UpdateBranchRepoOption,
        response: { 204: NoContent },
      }),
      config: { auth: write },
    },
    async (request, reply) => {
      const t = await open(request, 'write');
      await refs.renameBranch(t, signedIn(request).user, wild(request), request.body.name);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    `${base}/branches/*`,
    {
      schema: schema('Delete a specific branch from a repository', {
        description: 'The default branch cannot be deleted (403).',
        params: WildParams('branch to delete (may contain slashes)'),
        response: { 204: NoContent },
      }),
      config: { auth: write },
    },
    async (request, reply) => {
      const t = await open(request, 'write');
      await refs.deleteBranch(t, signedIn(request).user, wild(request));
      return reply.code(204).send(null);
    },
  );

  // Tags

  app.get(
    `${base}/tags`,
    {
      schema: schema("List a repository's tags", {
        params: Params,
        querystring: Type.Object(PageFields),
        response: { 200: Type.Array(Tag) },
      }),
      config: { auth: read },
    },
    async (request, reply) => {
      const t = await open(request);
      const page = pageOf(request.query, paging);
      const links = await svc.linksFor(t, []);
      return sendPage(request, reply, await svc.listTags(t, page), page, rootUrl, (tag) =>
        toTagJson(tag, links),
      );
    },
  );

  app.get(
    `${base}/tags/*`,
    {
      schema: schema('Get the tag of a repository by tag name', {
        params: WildParams('name of the tag'),
        response: { 200: Tag },
      }),
      config: { auth: read },
    },
    async (request) => {
      const t = await open(request);
      return toTagJson(await svc.getTag(t, wild(request)), await svc.linksFor(t, []));
    },
  );

  app.post(
    `${base}/tags`,
    {
      schema: schema('Create a new git tag in a repository', {
        description:
          'Annotated when a message is given, lightweight otherwise; on the default branch without a target.',
        params: Params,
        body: CreateTagOption,
        response: { 201: Tag },
      }),
      config: { auth: write },
    },
    async (request, reply) => {
      const t = await open(request, 'write');
      const tag = await refs.createTag(t, signedIn(request).user, {
        name: request.body.tag_name,
        target: request.body.target,
        message: request.body.message,
      });
      return reply.code(201).send(toTagJson(tag, await svc.linksFor(t, [])));
    },
  );

  app.delete(
    `${base}/tags/*`,
    {
      schema: schema("Delete a repository's tag by name", {
        params: WildParams('name of the tag to delete'),
        response: { 204: NoContent },
      }),
      config: { auth: write },
    },
    async (request, reply) => {
      const t = await open(request, 'write');
      await refs.deleteTag(t, signedIn(request).user, wild(request));
      return reply.code(204).send(null);
    },
  );
}
