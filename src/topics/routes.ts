// /repos/{owner}/{repo}/topics (read: readers; change: repository administrators, as Forgejo) and
// /topics/search.
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import { signedViewer } from '../http/auth.js';
import { PageFields, pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import { RepoParams } from '../http/params.js';
import { isoTime } from '../http/format.js';
import type { RepoService } from '../repos/service.js';
import type { TopicService } from './service.js';

const TopicName = Type.Object({ topics: Type.Array(Type.String()) }, { title: 'TopicName' });
const RepoTopicOptions = Type.Object(
  { topics: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })) },
  { title: 'RepoTopicOptions' },
);
const TopicResponse = Type.Object(
  {
    id: Type.Integer(),
    topic_name: Type.String(),
    repo_count: Type.Integer(),
    created: Type.String({ format: 'date-time' }),
    updated: Type.String({ format: 'date-time' }),
  },
  { title: 'TopicResponse' },
);
const NoContent = { 204: Type.Null() };

export interface TopicRoutesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  topics: TopicService;
  paging: PagingSettings;
  rootUrl: string;
}

export function topicRoutes(app: Api, deps: TopicRoutesDeps): void {
  const { repos, topics, paging, rootUrl } = deps;
  const read = { scope: 'repository' } as const;
  const write = { scope: 'repository', require: 'signed' } as const;

  app.get(
    '/repos/:owner/:repo/topics',
    {
      schema: {
        tags: ['repository'],
        operationId: 'repoListTopics',
        summary: 'Get list of topics that a repository has',
        params: RepoParams,
        querystring: Type.Object(PageFields),
        response: { 200: TopicName },
      },
      config: { auth: read },
    },
    async (request) => {
      const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, request.viewer);
      const page = pageOf(request.query, paging);
      return { topics: (await topics.list(repo)).slice(page.offset, page.offset + page.limit) };
    },
  );

  app.put(
    '/repos/:owner/:repo/topics',
    {
      schema: {
        tags: ['repository'],
        operationId: 'repoUpdateTopics',
        summary: 'Replace list of topics for a repository',
        params: RepoParams,
        body: RepoTopicOptions,
        response: NoContent,
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { owner, repo: name } = request.params;
      const { repo } = await repos.requireRepo(owner, name, signedViewer(request), 'admin');
      await topics.replace(repo, request.body.topics ?? []);
      return reply.code(204).send(null);
    },
  );

  for (const [method, operationId, summary] of [
    ['PUT', 'repoAddTopic', 'Add a topic to a repository'],
    ['DELETE', 'repoDeleteTopic', 'Delete a topic from a repository'],
  ] as const) {
    app.route({
      method,
      url: '/repos/:owner/:repo/topics/:topic',
      schema: {
        tags: ['repository'],
        operationId,
        summary,
        params: Type.Object({ owner: Type.String(), repo: Type.String(), topic: Type.String() }),
        response: NoContent,
      },
      config: { auth: write },
      handler: async (request, reply) => {
        const { owner, repo: name, topic } = request.params;
        const { repo } = await repos.requireRepo(owner, name, signedViewer(request), 'admin');
        if (method === 'PUT') await topics.add(repo, topic);
        else await topics.remove(repo, topic);
        return reply.code(204).send(null);
      },
    });
  }

  app.get(
    '/topics/search',
    {
      schema: {
        tags: ['repository'],
        operationId: 'topicSearch',
        summary: 'Search topics via keyword',
        querystring: Type.Object({ ...PageFields, q: Type.Optional(Type.String()) }),
        response: { 200: Type.Object({ topics: Type.Array(TopicResponse) }) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const page = pageOf(request.query, paging);
      const result = await topics.search(request.query.q ?? '', page);
      const list = sendPage(request, reply, result, page, rootUrl, (t) => ({
        id: t.id,
        topic_name: t.name,
        repo_count: t.repo_count,
        created: isoTime(t.created_unix),
        updated: isoTime(t.updated_unix),
      }));
      return { topics: list };
    },
  );
}
