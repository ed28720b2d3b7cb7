// What the git data routes share: path parameters and query strings, the routes' authentication,
// and opening the repository of a request (GitDataService.open: the API's permission checks).
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { RouteAuth } from '../http/auth.js';
import type { GitDataService } from './data-service.js';

export const RepoParams = { owner: Type.String(), repo: Type.String() };
export const Params = Type.Object(RepoParams);
export const WildParams = (description: string) =>
  Type.Object({ ...RepoParams, '*': Type.String({ description }) });
export const ShaParams = Type.Object({ ...RepoParams, sha: Type.String() });
export const RefQuery = Type.Object({
  ref: Type.Optional(
    Type.String({
      description: "The name of the commit/branch/tag. Default the repository's default branch",
    }),
  ),
});
export const CommitOptionsQuery = {
  stat: Type.Optional(Type.Boolean({ description: "include diff stats for every commit (default 'true')" })),
  verification: Type.Optional(
    Type.Boolean({ description: "include verification for every commit (default 'true')" }),
  ),
  files: Type.Optional(
    Type.Boolean({ description: "include a list of affected files for every commit (default 'true')" }),
  ),
};
export const Binary = Type.String({ format: 'binary' });
export const NoContent = Type.Null();

export const read: RouteAuth = { scope: 'repository' };
export const write: RouteAuth = { scope: 'repository', require: 'signed' };
export const base = '/repos/:owner/:repo';

export const schema = <S extends object>(summary: string, s: S) => ({ tags: ['repository'], summary, ...s });
export const wild = (request: FastifyRequest) => (request.params as Record<string, string>)['*'] ?? '';

/** Opens the repository of a request's path for reading or writing. */
export function opener(svc: Pick<GitDataService, 'open'>) {
  return (request: FastifyRequest, need: 'read' | 'write' = 'read') => {
    const p = request.params as { owner: string; repo: string };
    return svc.open(p.owner, p.repo, request.viewer, need);
  };
}
