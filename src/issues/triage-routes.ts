// HTTP routes for what writers do to an issue beside editing it: its labels, due date, lock and
// pin, and the lists of pinned issues. The rules live in IssueTriageService.
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { isoTime } from '../http/format.js';
import { RepoParams } from '../http/params.js';
import type { LabelService } from '../labels/service.js';
import { Label } from '../labels/schemas.js';
import type { RepoService } from '../repos/service.js';
import type { IssuePresenter } from './present.js';
import type { IssueService } from './service.js';
import { MAX_PINNED, type IssueTriageService } from './triage.js';
import { endOfDay } from './input.js';
import { issueTargets } from './targets.js';
import {
  EditDeadlineOption,
  Issue,
  IssueDeadline,
  IssueLabelsOption,
  LockIssueOption,
  NoContent,
  IndexParams,
  IndexIdParams,
} from './schemas.js';

export interface IssueTriageRoutesDeps {
  repos: RepoService;
  issues: IssueService;
  issueTriage: IssueTriageService;
  labels: Pick<LabelService, 'ofIssue'>;
  present: IssuePresenter;
}

export function issueTriageRoutes(app: Api, deps: IssueTriageRoutesDeps): void {
  const { issueTriage: triage, labels, present } = deps;
  const { repoView, issueOf } = issueTargets(deps);
  const tags = ['issue'];
  const read: RouteAuth = { scope: 'issue' };
  const write: RouteAuth = { scope: 'issue', require: 'signed' };

  app.get(
    '/repos/:owner/:repo/issues/pinned',
    {
      schema: {
        tags: ['repository'],
        summary: "List a repo's pinned issues",
        params: RepoParams,
        response: { 200: Type.Array(Issue) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { repo } = await repoView(request);
      if (!repo.has_issues) return [];
      return present.issues(await triage.pinned(repo), request.viewer, [repo]);
    },
  );

  app.get(
    '/repos/:owner/:repo/new_pin_allowed',
    {
      schema: {
        tags: ['repository'],
        operationId: 'repoNewPinAllowed',
        summary: 'Returns if new Issue Pins are allowed',
        params: RepoParams,
        response: {
          200: Type.Object(
            { issues: Type.Boolean(), pull_requests: Type.Boolean() },
            { title: 'NewIssuePinsAllowed' },
          ),
        },
      },
      config: { auth: read },
    },
    async (request) => {
      const { repo } = await repoView(request);
      const [pinnedIssues, pinnedPulls] = await Promise.all([triage.pinned(repo), triage.pinned(repo, true)]);
      return { issues: pinnedIssues.length < MAX_PINNED, pull_requests: pinnedPulls.length < MAX_PINNED };
    },
  );

  // Due date, lock, pins

  app.post(
    '/repos/:owner/:repo/issues/:index/deadline',
    {
      schema: {
        tags,
        summary:
          'Set an issue deadline. If set to null, the deadline is deleted. If using deadline only the date will be taken into account, and time of day ignored.',
        params: IndexParams,
        body: EditDeadlineOption,
        response: { 201: IssueDeadline },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      const due = request.body.due_date === null ? null : endOfDay(request.body.due_date, 'due_date');
      const value = await triage.setDeadline(view, issue, signedIn(request).user, due);
      return reply.code(201).send({ due_date: value ? isoTime(value) : null });
    },
  );

  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: '/repos/:owner/:repo/issues/:index/lock',
      schema: {
        tags,
        summary: 'Lock an issue',
        description:
          'Writers only. lock_reason: empty or one of Too heated, Off-topic, Resolved, Spam (400 ' +
          'otherwise). 208 when it already is locked.',
        params: IndexParams,
        body: Type.Union([LockIssueOption, Type.Null()]),
        response: { 204: NoContent, 208: NoContent },
      },
      config: { auth: write },
      handler: async (request, reply) => {
        const { view, issue } = await issueOf(request);
        const body = request.body as { lock_reason?: string } | undefined;
        const changed = await triage.setLocked(
          view,
          issue,
          signedIn(request).user,
          true,
          body?.lock_reason ?? '',
        );
        return reply.code(changed ? 204 : 208).send(null);
      },
    });
  }

  app.delete(
    '/repos/:owner/:repo/issues/:index/lock',
    {
      schema: {
        tags,
        summary: 'Unlock an issue',
        description: 'Writers only; 208 when it is not locked.',
        params: IndexParams,
        response: { 204: NoContent, 208: NoContent },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      const changed = await triage.setLocked(view, issue, signedIn(request).user, false);
      return reply.code(changed ? 204 : 208).send(null);
    },
  );

  app.post(
    '/repos/:owner/:repo/issues/:index/pin',
    {
      schema: {
        tags,
        summary: 'Pin an Issue',
        description: 'Writers only; at most 3 pinned issues per repository (400 beyond).',
        params: IndexParams,
        response: { 204: NoContent },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      await triage.pin(view, issue, signedIn(request).user);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/repos/:owner/:repo/issues/:index/pin',
    {
      schema: { tags, summary: 'Unpin an Issue', params: IndexParams, response: { 204: NoContent } },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      await triage.unpin(view, issue, signedIn(request).user);
      return reply.code(204).send(null);
    },
  );

  app.patch(
    '/repos/:owner/:repo/issues/:index/pin/:position',
    {
      schema: {
        tags,
        summary: 'Moves the Pin to the given Position',
        params: Type.Object({
          owner: Type.String(),
          repo: Type.String(),
          index: Type.Integer(),
          position: Type.Integer(),
        }),
        response: { 204: NoContent },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      await triage.movePin(view, issue, request.params.position);
      return reply.code(204).send(null);
    },
  );

  // Labels of an issue

  app.get(
    '/repos/:owner/:repo/issues/:index/labels',
    {
      schema: {
        tags,
        summary: "Get an issue's labels",
        params: IndexParams,
        response: { 200: Type.Array(Label) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { view, issue } = await issueOf(request);
      return present.labels(await labels.ofIssue(issue.id), view.repo);
    },
  );

  const labelsChange = (summary: string, description: string) => ({
    tags,
    summary,
    description,
    params: IndexParams,
    body: IssueLabelsOption,
    response: { 200: Type.Array(Label) },
  });

  app.post(
    '/repos/:owner/:repo/issues/:index/labels',
    {
      schema: labelsChange(
        'Add a label to an issue',
        'Labels by id or by name (not both). An exclusive label replaces the label of the same scope; ' +
          'two exclusive labels of one scope are a 422 and change nothing. An unknown label is a 422.',
      ),
      config: { auth: write },
    },
    async (request) => {
      const { view, issue } = await issueOf(request);
      const labels = await triage.addLabels(view, issue, signedIn(request).user, request.body.labels ?? []);
      return present.labels(labels, view.repo);
    },
  );

  app.put(
    '/repos/:owner/:repo/issues/:index/labels',
    {
      schema: labelsChange(
        "Replace an issue's labels",
        'Labels by id or by name (not both); two exclusive labels of one scope are a 422.',
      ),
      config: { auth: write },
    },
    async (request) => {
      const { view, issue } = await issueOf(request);
      const labels = await triage.replaceLabels(
        view,
        issue,
        signedIn(request).user,
        request.body.labels ?? [],
      );
      return present.labels(labels, view.repo);
    },
  );

  app.delete(
    '/repos/:owner/:repo/issues/:index/labels',
    {
      schema: {
        tags,
        summary: 'Remove all labels from an issue',
        params: IndexParams,
        response: { 204: NoContent },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      await triage.clearLabels(view, issue, signedIn(request).user);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/repos/:owner/:repo/issues/:index/labels/:id',
    {
      schema: {
        tags,
        summary: 'Remove a label from an issue',
        description: '422 when the repository has no such label.',
        params: IndexIdParams,
        response: { 204: NoContent },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { view, issue } = await issueOf(request);
      await triage.removeLabel(view, issue, signedIn(request).user, request.params.id);
      return reply.code(204).send(null);
    },
  );
}
