// What the URL of an issue request names, as its caller may see it: the repository, an issue or a
// comment (404 for what they may not read, or when the repository has turned that unit off).
// Shared by the issue routes.
import type { FastifyRequest } from 'fastify';
import type { RepoService } from '../repos/service.js';
import type { IssueService, RepoView } from './service.js';

export interface IssueTargetsDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  issues: Pick<IssueService, 'requireVisibleIssue' | 'requireComment'>;
}

export function issueTargets({ repos, issues }: IssueTargetsDeps) {
  /** The repository of the URL as the caller sees it: 404 when they may not read it. */
  async function repoView(request: FastifyRequest): Promise<RepoView> {
    const { owner, repo } = request.params as { owner: string; repo: string };
    return repos.requireRepo(owner, repo, request.viewer, 'read', 'repo.issues');
  }

  /** The issue `:index` of the URL's repository. */
  async function issueOf(request: FastifyRequest) {
    const view = await repoView(request);
    const issue = await issues.requireVisibleIssue(view, (request.params as { index: number }).index);
    return { view, issue };
  }

  /** The comment `:id` of the URL's repository, on an issue the caller may read. */
  async function commentOf(request: FastifyRequest) {
    const view = await repoView(request);
    const { comment, issue } = await issues.requireComment(view.repo, (request.params as { id: number }).id);
    await issues.requireVisibleIssue(view, issue.index);
    return { view, issue, comment };
  }

  return { repoView, issueOf, commentOf };
}
