// A repository page's starting point (issues, pull requests, milestones): the repository of the URL
// as the viewer may see it (404 otherwise), its owner, and the path of its pages.
import type { FastifyRequest } from 'fastify';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';

export interface OpenRepoDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  users: Pick<UserService, 'getById'>;
}

/** The repository of the URL (`:owner/:repo`) for the viewer, who must be able to read (or `need`) `unit`. */
export async function openRepo(
  deps: OpenRepoDeps,
  request: FastifyRequest,
  unit: string,
  need: 'read' | 'write' = 'read',
) {
  const p = request.params as Record<string, string>;
  const view = await deps.repos.requireRepo(
    p['owner'] ?? '',
    p['repo'] ?? '',
    request.web.viewer,
    need,
    unit,
  );
  const owner = (await deps.users.getById(view.repo.owner_id))!;
  return { view, owner, base: `/${owner.name}/${view.repo.name}` };
}

export type OpenedRepo = Awaited<ReturnType<typeof openRepo>>;
