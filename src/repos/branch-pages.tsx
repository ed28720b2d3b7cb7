// The branches and tags pages at Forgejo's addresses: /{o}/{r}/branches lists the branches and,
// for a writer, creates one from a branch, tag or commit (POST /branches/_new/{branch|tag|commit}/{ref}
// with new_branch_name), deletes one (POST /branches/delete?name=) and restores a deleted one at its
// last commit (POST /branches/restore with branch_id and name); /{o}/{r}/tags lists the
// tags and creates one (tag_name, tag_target, content: a message makes it annotated) or deletes one
// (POST /tags/delete?name=). Every change is made by GitRefService, as the API makes it: the same
// write permission, branch protection and quota checks; a refusal is shown beside the field.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ComponentChildren, VNode } from 'preact';
import { AppError } from '../errors.js';
import type { GitDataService, Target } from '../git/data-service.js';
import type { GitRefService } from '../git/data-refs.js';
import { CsrfField, Field, Layout, type PageContext } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import { TextArea } from '../web/settings.js';
import { When } from '../web/components.js';
import { RepoHeader } from './code-pages.js';
import type { RepoService } from './service.js';
import type { UserRow } from '../users/tables.js';

export interface BranchPagesDeps {
  gitData: Pick<GitDataService, 'open' | 'listBranches' | 'listTags' | 'canPush'>;
  gitRefs: Pick<GitRefService, 'createBranch' | 'deleteBranch' | 'createTag' | 'deleteTag'>;
  /** Deleted branches, offered back to writers. */
  repos: Pick<RepoService, 'deletedBranches' | 'deletedBranch'>;
}

type Values = Record<string, string>;
type Errors = Record<string, string | undefined>;

const enc = (p: string) => p.split('/').map(encodeURIComponent).join('/');
const firstLine = (m: string) => m.split('\n')[0] ?? '';
const SHOWN = ['invalid', 'bad_request', 'conflict', 'forbidden', 'not_found', 'payload_too_large'];

/** The message of a refusal the form can show ("[Field]: reason" loses its prefix), else rethrows. */
function refusal(err: unknown): string {
  if (!(err instanceof AppError) || !SHOWN.includes(err.kind)) throw err;
  return err.message.replace(/^\[\w+\]: /, '');
}

/** The box of a create form, its form-wide error above the fields. */
function CreateCard(props: { title: string; error: string | undefined; children: ComponentChildren }): VNode {
  return (
    <section class="card">
      <h2>{props.title}</h2>
      {props.error ? (
        <p class="flash error" role="alert">
          {props.error}
        </p>
      ) : null}
      {props.children}
    </section>
  );
}

/** A list row's delete button for a branch or a tag. */
function DeleteRef(props: { page: PageContext; action: string; label: string }): VNode {
  return (
    <form class="actions" method="post" action={props.action}>
      <CsrfField page={props.page} />
      <button type="submit" class="danger" aria-label={props.label}>
        Delete
      </button>
    </form>
  );
}

export function branchPages(deps: BranchPagesDeps): PageRoutes {
  const { gitData: svc, gitRefs: refs } = deps;
  return (app, web: Web) => {
    const open = (request: FastifyRequest, mode: 'read' | 'write') => {
      if (mode === 'write') web.requireUser(request);
      const p = request.params as Record<string, string>;
      return svc.open(p['owner'] ?? '', p['repo'] ?? '', request.web.viewer, mode);
    };
    const baseOf = (t: Target) => `/${t.owner.name}/${t.repo.name}`;
    const layout = (request: FastifyRequest, t: Target, title: string, body: VNode) => (
      <Layout page={web.page(request) as PageContext} title={`${title} · ${t.owner.name}/${t.repo.name}`}>
        <RepoHeader t={t} active="code" />
        {body}
      </Layout>
    );

    async function branchesPage(
      request: FastifyRequest,
      reply: FastifyReply,
      t: Target,
      values: Values,
      errors: Errors,
      status: number,
    ) {
      const [[branches], deleted] = await Promise.all([
        svc.listBranches(t, { page: 1, limit: 1000, offset: 0 }),
        deps.repos.deletedBranches(t.repo),
      ]);
      const base = baseOf(t);
      const page = web.page(request) as PageContext;
      const writer = svc.canPush(t);
      const from = values['from_kind'] ?? 'branch';
      const ref = values['from_ref'] ?? t.repo.default_branch;
      return web.send(
        reply,
        layout(
          request,
          t,
          'Branches',
          <>
            {writer ? (
              <CreateCard title="Create a branch" error={errors.form}>
                <form method="post" action={`${base}/branches/_new/${from}/${enc(ref)}`}>
                  <CsrfField page={page} />
                  <p class="muted">
                    From the {from} <code>{ref}</code>
                  </p>
                  <Field
                    label="New branch name"
                    name="new_branch_name"
                    value={values['new_branch_name'] ?? ''}
                    required
                    error={errors.new_branch_name}
                  />
                  <button type="submit" class="primary">
                    Create branch
                  </button>
                </form>
              </CreateCard>
            ) : null}
            <ul class="list">
              {branches
                .map(({ ref: r, commit }) => ({ name: r.replace(/^refs\/heads\//, ''), commit }))
                .map((b) => (
                  <li>
                    <div class="grow">
                      <a class="title" href={`${base}/src/branch/${enc(b.name)}`}>
                        {b.name}
                      </a>
                      {b.name === t.repo.default_branch ? <span class="pill">default</span> : null}
                      <p class="muted">{firstLine(b.commit.message)}</p>
                    </div>
                    {writer && b.name !== t.repo.default_branch ? (
                      <DeleteRef
                        page={page}
                        action={`${base}/branches/delete?name=${encodeURIComponent(b.name)}`}
                        label={`Delete branch ${b.name}`}
                      />
                    ) : null}
                  </li>
                ))}
            </ul>
            {deleted.length ? (
              <section aria-labelledby="deleted-heading">
                <h3 id="deleted-heading">Deleted branches</h3>
                <ul class="list">
                  {deleted.map((d) => (
                    <li>
                      <div class="grow">
                        <del class="title">{d.name}</del>
                        <p class="muted">
                          <a href={`${base}/commit/${d.commit_id}`}>
                            <code>{d.commit_id.slice(0, 10)}</code>
                          </a>{' '}
                          {d.commit_message} · deleted <When unix={d.deleted_unix} />
                        </p>
                      </div>
                      {writer ? (
                        <form class="actions" method="post" action={`${base}/branches/restore`}>
                          <CsrfField page={page} />
                          <input type="hidden" name="branch_id" value={String(d.id)} />
                          <input type="hidden" name="name" value={d.name} />
                          <button type="submit" aria-label={`Restore branch ${d.name}`}>
                            Restore
                          </button>
                        </form>
                      ) : null}
                    </li>
                  ))}
                </ul>
              </section>
            ) : null}
          </>,
        ),
        status,
      );
    }

    app.get('/:owner/:repo/branches', async (request, reply) =>
      branchesPage(request, reply, await open(request, 'read'), {}, {}, 200),
    );

    app.post('/:owner/:repo/branches/_new/*', async (request, reply) => {
      const t = await open(request, 'write');
      const user = web.requireUser(request);
      const rest = (request.params as Record<string, string>)['*'] ?? '';
      const slash = rest.indexOf('/');
      const kind = slash > 0 ? rest.slice(0, slash) : rest;
      const ref = slash > 0 ? rest.slice(slash + 1) : '';
      const b = (request.body ?? {}) as Record<string, unknown>;
      const name = formText(b['new_branch_name']).trim();
      const values: Values = { new_branch_name: name, from_kind: kind, from_ref: ref };
      const errors: Errors = {};
      if (!['branch', 'tag', 'commit'].includes(kind) || !ref) {
        values['from_kind'] = 'branch';
        values['from_ref'] = t.repo.default_branch;
        errors.form = 'Create a branch from a branch, a tag or a commit.';
      } else if (!name) errors.new_branch_name = 'The new branch name is required.';
      else {
        try {
          const from = kind === 'branch' ? { oldBranch: ref } : { oldRef: ref };
          await refs.createBranch(t, user, { name, ...from });
          return web.redirect(reply, `${baseOf(t)}/src/branch/${enc(name)}`, {
            kind: 'info',
            text: `Branch ${name} has been created from ${kind} ${ref}.`,
          });
        } catch (err) {
          const m = refusal(err);
          if (err instanceof AppError && err.kind === 'not_found') errors.form = m;
          else errors.new_branch_name = m;
        }
      }
      return branchesPage(request, reply, t, values, errors, 422);
    });

    /** POST /{owner}/{repo}/{branches|tags}/delete?name=: back to the list with what happened. */
    const deleteRoute = (
      list: 'branches' | 'tags',
      noun: string,
      remove: (t: Target, user: UserRow, name: string) => Promise<void>,
    ) =>
      app.post(`/:owner/:repo/${list}/delete`, async (request, reply) => {
        const t = await open(request, 'write');
        const user = web.requireUser(request);
        const name = formText((request.query as Record<string, unknown>)['name']);
        const to = `${baseOf(t)}/${list}`;
        try {
          await remove(t, user, name);
          return web.redirect(reply, to, { kind: 'info', text: `${noun} ${name} has been deleted.` });
        } catch (err) {
          return web.redirect(reply, to, { kind: 'error', text: `${name}: ${refusal(err)}` });
        }
      });
    deleteRoute('branches', 'Branch', (t, user, name) => refs.deleteBranch(t, user, name));
    deleteRoute('tags', 'Tag', (t, user, name) => refs.deleteTag(t, user, name));

    // Forgejo's restore: the branch made again at its last commit (a push, as creating it is).
    app.post('/:owner/:repo/branches/restore', async (request, reply) => {
      const t = await open(request, 'write');
      const user = web.requireUser(request);
      const form = (request.body ?? {}) as Record<string, unknown>;
      const id = Number(formText(form['branch_id']));
      const to = `${baseOf(t)}/branches`;
      const row = Number.isSafeInteger(id) ? await deps.repos.deletedBranch(t.repo, id) : undefined;
      if (!row || row.name !== formText(form['name']))
        return web.redirect(reply, to, { kind: 'error', text: 'That deleted branch does not exist.' });
      try {
        await refs.createBranch(t, user, { name: row.name, oldRef: row.commit_id });
        return web.redirect(reply, to, { kind: 'info', text: `Branch ${row.name} has been restored.` });
      } catch (err) {
        return web.redirect(reply, to, { kind: 'error', text: `${row.name}: ${refusal(err)}` });
      }
    });

    async function tagsPage(
      request: FastifyRequest,
      reply: FastifyReply,
      t: Target,
      values: Values,
      errors: Errors,
      status: number,
    ) {
      const [tags] = await svc.listTags(t, { page: 1, limit: 1000, offset: 0 });
      const base = baseOf(t);
      const page = web.page(request) as PageContext;
      const writer = svc.canPush(t);
      return web.send(
        reply,
        layout(
          request,
          t,
          'Tags',
          <>
            {writer ? (
              <CreateCard title="Create a tag" error={errors.form}>
                <form method="post" action={`${base}/tags`}>
                  <CsrfField page={page} />
                  <Field
                    label="Tag name"
                    name="tag_name"
                    value={values['tag_name'] ?? ''}
                    required
                    error={errors.tag_name}
                  />
                  <Field
                    label="Target (branch, tag or commit)"
                    name="tag_target"
                    value={values['tag_target'] ?? t.repo.default_branch}
                    error={errors.tag_target}
                  />
                  <TextArea
                    label="Message (makes an annotated tag)"
                    name="content"
                    value={values['content']}
                    rows={3}
                    error={errors.content}
                  />
                  <button type="submit" class="primary">
                    Create tag
                  </button>
                </form>
              </CreateCard>
            ) : null}
            <ul class="list">
              {tags.map((tag) => (
                <li>
                  <div class="grow">
                    <a class="title" href={`${base}/src/tag/${enc(tag.name)}`}>
                      {tag.name}
                    </a>
                    <p class="muted">
                      <a href={`${base}/archive/${enc(tag.name)}.zip`}>ZIP</a> ·{' '}
                      <a href={`${base}/archive/${enc(tag.name)}.tar.gz`}>TAR.GZ</a>
                    </p>
                  </div>
                  {writer ? (
                    <DeleteRef
                      page={page}
                      action={`${base}/tags/delete?name=${encodeURIComponent(tag.name)}`}
                      label={`Delete tag ${tag.name}`}
                    />
                  ) : null}
                </li>
              ))}
            </ul>
          </>,
        ),
        status,
      );
    }

    app.get('/:owner/:repo/tags', async (request, reply) =>
      tagsPage(request, reply, await open(request, 'read'), {}, {}, 200),
    );

    app.post('/:owner/:repo/tags', async (request, reply) => {
      const t = await open(request, 'write');
      const user = web.requireUser(request);
      const b = (request.body ?? {}) as Record<string, unknown>;
      const values: Values = {
        tag_name: formText(b['tag_name']).trim(),
        tag_target: formText(b['tag_target']).trim(),
        content: formText(b['content']),
      };
      const errors: Errors = {};
      const name = values['tag_name'] ?? '';
      if (!name) errors.tag_name = 'The tag name is required.';
      else {
        try {
          await refs.createTag(t, user, {
            name,
            target: values['tag_target'] || undefined,
            message: values['content'] || undefined,
          });
          return web.redirect(reply, `${baseOf(t)}/tags`, {
            kind: 'info',
            text: `Tag ${name} has been created.`,
          });
        } catch (err) {
          const m = refusal(err);
          if (err instanceof AppError && err.message.startsWith('[Target]')) errors.tag_target = m;
          else if (err instanceof AppError && err.kind === 'not_found') errors.tag_target = m;
          else if (
            err instanceof AppError &&
            err.kind === 'invalid' &&
            !err.message.startsWith('[TagName]')
          ) {
            errors.form = m;
          } else errors.tag_name = m;
        }
      }
      return tagsPage(request, reply, t, values, errors, 422);
    });
  };
}
