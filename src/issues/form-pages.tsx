// The forms that change an existing issue or pull request from its page: comment (with files, and
// close or reopen), edit its text or a comment, react, rename, set the milestone, assignees and
// labels; and the preview of a markdown text box. Each goes through the same services as the API,
// and a refusal (bad input, no permission) comes back as a message on the page.
import type { FastifyReply, FastifyRequest } from 'fastify';
import fs from 'node:fs';
import { AppError, forbidden, notFound } from '../errors.js';
import type { AttachmentService } from '../attachments/service.js';
import { renderMarkdown } from '../markup/render.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import { formList, formText, uploadsOf, type PageRoutes } from '../web/plugin.js';
import { canWriteIssues, type IssueService } from './service.js';
import type { CommentService } from './comments.js';
import type { IssueTriageService } from './triage.js';

type Params = Record<string, string>;

export interface IssueFormPagesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  users: Pick<UserService, 'getById'>;
  issues: Pick<IssueService, 'requireVisibleIssue' | 'requireComment' | 'edit'>;
  issueComments: Pick<CommentService, 'createComment' | 'editComment' | 'allReactions' | 'react' | 'unreact'>;
  issueTriage: Pick<IssueTriageService, 'replaceLabels'>;
  attachments: Pick<AttachmentService, 'assertCanUpload' | 'upload'>;
}

export function issueFormPages(deps: IssueFormPagesDeps): PageRoutes {
  return (app, web) => {
    const { issues, issueComments: comments, issueTriage: triage, users, attachments } = deps;

    /** The issue (or pull request) a form posts to, and the page to go back to. */
    const target = async (request: FastifyRequest) => {
      const user = web.requireUser(request);
      const p = request.params as Params;
      const view = await deps.repos.requireRepo(
        p['owner'] ?? '',
        p['repo'] ?? '',
        request.web.viewer,
        'read',
      );
      const issue = await issues.requireVisibleIssue(view, Number(p['index']));
      const owner = (await users.getById(view.repo.owner_id))!;
      const back = `/${owner.name}/${view.repo.name}/${issue.is_pull ? 'pulls' : 'issues'}/${issue.index}`;
      return { user, view, issue, back };
    };
    /** Runs a change; a refusal (bad input, no permission) comes back as a message on the page. */
    const change = async (reply: FastifyReply, back: string, fn: () => Promise<string | void>) => {
      try {
        const to = await fn();
        return web.redirect(reply, to ?? back);
      } catch (err) {
        if (err instanceof AppError && (err.kind === 'invalid' || err.kind === 'forbidden'))
          return web.redirect(reply, back, { kind: 'error', text: err.message });
        throw err;
      }
    };

    app.post('/:owner/:repo/issues/:index/comments', async (request, reply) => {
      const { user, view, issue, back } = await target(request);
      const body = request.body as Record<string, unknown>;
      const files = uploadsOf(body['files']);
      // A comment of files only gets a line naming them (a comment needs a text).
      const content =
        formText(body['content']) || (files.length ? files.map((f) => f.filename).join(', ') : '');
      const status = formText(body['status']);
      return change(reply, back, async () => {
        let anchor = '';
        if (content.trim() || !status) {
          if (files.length)
            await attachments.assertCanUpload({ kind: 'issue', repo: view.repo, issueId: issue.id });
          const c = await comments.createComment(view, issue, user, content);
          anchor = `#issuecomment-${c.id}`;
          for (const f of files)
            await attachments.upload(
              { kind: 'comment', repo: view.repo, issueId: issue.id, commentId: c.id },
              user,
              f.filename,
              fs.createReadStream(f.path),
            );
        }
        if (status === 'close' || status === 'reopen')
          await issues.edit(view, issue, user, { state: status === 'close' ? 'closed' : 'open' });
        return back + anchor;
      });
    });

    app.post('/:owner/:repo/issues/:index/content', async (request, reply) => {
      const { user, view, issue, back } = await target(request);
      const content = formText((request.body as Record<string, unknown>)['content']);
      return change(reply, back, async () => {
        await issues.edit(view, issue, user, { body: content });
      });
    });

    app.post('/:owner/:repo/comments/:id', async (request, reply) => {
      const user = web.requireUser(request);
      const p = request.params as Params;
      const view = await deps.repos.requireRepo(
        p['owner'] ?? '',
        p['repo'] ?? '',
        request.web.viewer,
        'read',
      );
      const { comment, issue } = await issues.requireComment(view.repo, Number(p['id']));
      await issues.requireVisibleIssue(view, issue.index);
      const owner = (await users.getById(view.repo.owner_id))!;
      const back = `/${owner.name}/${view.repo.name}/${issue.is_pull ? 'pulls' : 'issues'}/${issue.index}`;
      const content = formText((request.body as Record<string, unknown>)['content']);
      return change(reply, back, async () => {
        await comments.editComment(view, issue, comment, user, content);
        return `${back}#issuecomment-${comment.id}`;
      });
    });

    app.post('/:owner/:repo/issues/:index/reactions', async (request, reply) => {
      const { user, view, issue, back } = await target(request);
      const body = request.body as Record<string, unknown>;
      const content = formText(body['content']);
      const rawId = formText(body['comment_id']) || '0';
      if (!/^\d{1,15}$/.test(rawId)) throw notFound('comment does not exist');
      const commentId = Number(rawId);
      return change(reply, back, async () => {
        if (commentId) {
          const found = await issues.requireComment(view.repo, commentId);
          if (found.issue.id !== issue.id) throw notFound('comment does not exist');
        }
        const mine = (await comments.allReactions(issue)).some(
          (r) => r.comment_id === commentId && r.user_id === user.id && r.type === content,
        );
        if (mine) await comments.unreact(view, issue, commentId, user, content);
        else await comments.react(view, issue, commentId, user, content);
        return commentId ? `${back}#issuecomment-${commentId}` : back;
      });
    });

    // The preview of a markdown text box: the one sanitizing renderer the pages use.
    app.post('/-/markup', async (request, reply) => {
      const text = formText((request.body as Record<string, unknown> | undefined)?.['text']);
      if (text.length > 1 << 20) return reply.code(413).type('text/plain').send('too long');
      return reply
        .type('text/html; charset=utf-8')
        .header('Cache-Control', 'no-store')
        .send(renderMarkdown(text));
    });

    app.post('/:owner/:repo/issues/:index/title', async (request, reply) => {
      const { user, view, issue, back } = await target(request);
      const title = formText((request.body as Record<string, unknown>)['title']);
      return change(reply, back, async () => {
        await issues.edit(view, issue, user, { title });
      });
    });

    app.post('/:owner/:repo/issues/:index/milestone', async (request, reply) => {
      const { user, view, issue, back } = await target(request);
      const id = Number(formText((request.body as Record<string, unknown>)['milestone']));
      return change(reply, back, async () => {
        if (!canWriteIssues(view.access, issue.is_pull))
          throw forbidden('only writers may set the milestone');
        await issues.edit(view, issue, user, { milestone: Number.isSafeInteger(id) && id > 0 ? id : 0 });
      });
    });

    app.post('/:owner/:repo/issues/:index/assignees', async (request, reply) => {
      const { user, view, issue, back } = await target(request);
      const names = formList((request.body as Record<string, unknown>)['assignee']);
      return change(reply, back, async () => {
        if (!canWriteIssues(view.access, issue.is_pull)) throw forbidden('only writers may assign');
        await issues.edit(view, issue, user, { assignees: names });
      });
    });

    app.post('/:owner/:repo/issues/:index/labels', async (request, reply) => {
      const { user, view, issue, back } = await target(request);
      const ids = formList((request.body as Record<string, unknown>)['label'])
        .map(Number)
        .filter((n) => Number.isSafeInteger(n) && n > 0);
      return change(reply, back, async () => {
        await triage.replaceLabels(view, issue, user, ids);
      });
    });
  };
}
