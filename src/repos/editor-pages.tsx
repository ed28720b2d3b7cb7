// The web editor at Forgejo's addresses: a new file (/{o}/{r}/_new/{branch}/{dir}), a file edited
// (/_edit/{branch}/{path}) or deleted (/_delete/{branch}/{path}), each with Forgejo's commit form
// (commit_summary, commit_message, commit_choice = direct | commit-to-new-branch, new_branch_name);
// files uploaded into a directory (/_upload/{branch}/{dir}: `files`, multipart, one commit adding
// or replacing each).
// A commit is made by GitFileService, as the contents API makes it: the same write permission,
// branch protection and quota checks; a refusal is shown on the form. A commit to a new branch
// goes on to the compare page to open a pull request.
import fs from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError, notFound } from '../errors.js';
import type { GitDataService, Target } from '../git/data-service.js';
import type { GitFileService } from '../git/data-files.js';
import { CsrfField, Field, Layout, type PageContext } from '../web/layout.js';
import { formText, uploadsOf, type PageRoutes, type Web } from '../web/plugin.js';
import { FileField, TextArea } from '../web/settings.js';
import { RepoHeader } from './code-pages.js';

export interface EditorPagesDeps {
  gitData: Pick<GitDataService, 'open' | 'resolveBranch' | 'contents' | 'isEmpty'>;
  gitFiles: Pick<GitFileService, 'changeFile' | 'changeFiles'>;
}

type Action = 'new' | 'edit' | 'delete' | 'upload';
type Values = Record<string, string>;
type Errors = Record<string, string | undefined>;

const enc = (p: string) => p.split('/').map(encodeURIComponent).join('/');

/** The fields of Forgejo's messages ("[Filepath]: ...") mapped to this form's fields. */
const FIELDS: Record<string, string> = {
  Filepath: 'tree_path',
  FromPath: 'tree_path',
  NewBranch: 'new_branch_name',
  Content: 'content',
};

/** A refusal of the commit (rules, quota, names) shown beside its field, or on the form; else rethrown. */
function refusalInto(errors: Errors, err: unknown): void {
  if (
    !(err instanceof AppError) ||
    !['invalid', 'bad_request', 'conflict', 'forbidden', 'not_found', 'payload_too_large'].includes(err.kind)
  ) {
    throw err;
  }
  const m = /^\[(\w+)\]: (.*)$/s.exec(err.message);
  const field = m ? FIELDS[m[1] ?? ''] : undefined;
  if (field) errors[field] = m?.[2];
  else if (err.message.startsWith('branch already exists')) errors.new_branch_name = err.message;
  else errors.form = err.message;
}

/** The commit message of the form: its summary (or `fallback`) and extended description. */
function messageOf(values: Values, fallback: string): string {
  const summary = (values['commit_summary'] ?? '').trim();
  const extended = (values['commit_message'] ?? '').trim();
  return `${summary || fallback}${extended ? `\n\n${extended}` : ''}`;
}

function CommitForm(props: { values: Values; errors: Errors; branch: string; action: Action }): VNode {
  const { values, errors } = props;
  const toNew = values['commit_choice'] === 'commit-to-new-branch';
  const verb = { new: 'Add', edit: 'Update', delete: 'Delete', upload: 'Upload' }[props.action];
  return (
    <fieldset class="commit-form">
      <legend>Commit changes</legend>
      <Field
        label="Summary"
        name="commit_summary"
        value={values['commit_summary'] ?? ''}
        error={errors.commit_summary}
      />
      <p class="muted hint">
        Empty: “
        {props.action === 'upload'
          ? `Upload files to '${values['tree_path'] || '/'}'`
          : `${verb} ${values['tree_path'] || 'file'}`}
        ”.
      </p>
      <TextArea
        label="Extended description"
        name="commit_message"
        value={values['commit_message']}
        rows={3}
        error={errors.commit_message}
      />
      <div class="field">
        <label>
          <input type="radio" name="commit_choice" value="direct" checked={!toNew} /> Commit directly to the{' '}
          <code>{props.branch}</code> branch
        </label>
        <label>
          <input type="radio" name="commit_choice" value="commit-to-new-branch" checked={toNew} /> Create a
          new branch for this commit and start a pull request
        </label>
      </div>
      <Field
        label="New branch name"
        name="new_branch_name"
        value={values['new_branch_name'] ?? ''}
        error={errors.new_branch_name}
      />
      <input type="hidden" name="last_commit" value={values['last_commit'] ?? ''} />
      {errors.last_commit ? (
        <p class="flash error" role="alert">
          {errors.last_commit}
        </p>
      ) : null}
      <button type="submit" class={props.action === 'delete' ? 'danger' : 'primary'}>
        Commit changes
      </button>
    </fieldset>
  );
}

function EditorPage(props: {
  page: PageContext;
  t: Target;
  action: Action;
  branch: string;
  dir: string;
  values: Values;
  errors: Errors;
}): VNode {
  const { t, action, branch, values, errors } = props;
  const base = `/${t.owner.name}/${t.repo.name}`;
  const target = action === 'new' ? props.dir : (values['tree_path'] ?? '');
  const actionUrl = `${base}/_${action}/${enc(branch)}${target ? `/${enc(target)}` : ''}`;
  const title = {
    new: 'New file',
    edit: `Edit ${target}`,
    delete: `Delete ${target}`,
    upload: `Upload files${target ? ` to ${target}` : ''}`,
  }[action];
  return (
    <Layout page={props.page} title={`${title} · ${t.owner.name}/${t.repo.name}`}>
      <RepoHeader t={t} active="code" />
      <section class="card editor">
        <h2>{title}</h2>
        {errors.form ? (
          <p class="flash error" role="alert">
            {errors.form}
          </p>
        ) : null}
        <form
          method="post"
          action={actionUrl}
          enctype={action === 'upload' ? 'multipart/form-data' : undefined}
        >
          <CsrfField page={props.page} />
          {action === 'upload' ? (
            <>
              <Field
                label="Directory"
                name="tree_path"
                value={values['tree_path'] ?? ''}
                error={errors.tree_path}
              />
              <FileField label="Files" name="files" multiple required error={errors.files} />
            </>
          ) : action === 'delete' ? (
            <>
              <p>
                Delete <code>{target}</code> from the <code>{branch}</code> branch.
              </p>
              <input type="hidden" name="tree_path" value={target} />
            </>
          ) : (
            <>
              <Field
                label="File path"
                name="tree_path"
                value={values['tree_path'] ?? ''}
                required
                error={errors.tree_path}
              />
              <TextArea
                label="Content"
                name="content"
                value={values['content']}
                rows={20}
                error={errors.content}
              />
            </>
          )}
          <CommitForm values={values} errors={errors} branch={branch} action={action} />
        </form>
      </section>
    </Layout>
  );
}

export function editorPages(deps: EditorPagesDeps): PageRoutes {
  const { gitData: svc, gitFiles: files } = deps;
  return (app: FastifyInstance, web: Web) => {
    /** The repository for a writer, and the branch and path of `rest` (the longest branch that exists). */
    async function locate(request: FastifyRequest) {
      web.requireUser(request);
      const p = request.params as Record<string, string>;
      const t = await svc.open(p['owner'] ?? '', p['repo'] ?? '', request.web.viewer, 'write');
      const parts = (p['*'] ?? '').split('/').filter((s) => s !== '');
      if (await svc.isEmpty(t)) {
        return { t, branch: parts[0] ?? t.repo.default_branch, rest: parts.slice(1).join('/'), head: '' };
      }
      for (let i = parts.length; i >= 1; i--) {
        const branch = parts.slice(0, i).join('/');
        try {
          const r = await svc.resolveBranch(t, branch);
          return { t, branch, rest: parts.slice(i).join('/'), head: r.oid };
        } catch (err) {
          if (!(err instanceof AppError && err.kind === 'not_found')) throw err;
        }
      }
      throw notFound(`branch does not exist [name: ${parts[0] ?? ''}]`);
    }

    async function fileText(t: Target, path: string, branch: string): Promise<{ text: string; oid: string }> {
      const e = await svc.contents(t, path, branch);
      if (Array.isArray(e) || e.type !== 'file') throw notFound(`file does not exist [path: ${path}]`);
      if (!e.content || e.content.includes(0)) {
        throw notFound(`file cannot be edited in the browser [path: ${path}]`);
      }
      return { text: e.content.toString('utf8'), oid: e.oid };
    }

    const show = (
      request: FastifyRequest,
      reply: FastifyReply,
      at: { t: Target; branch: string },
      action: Action,
      dir: string,
      values: Values,
      errors: Errors,
      status: number,
    ) =>
      web.send(
        reply,
        <EditorPage
          page={web.page(request)}
          t={at.t}
          action={action}
          branch={at.branch}
          dir={dir}
          values={values}
          errors={errors}
        />,
        status,
      );

    for (const action of ['new', 'edit', 'delete'] as const) {
      const route = `/:owner/:repo/_${action}/*`;

      app.get(route, async (request, reply) => {
        const at = await locate(request);
        const values: Values = { last_commit: at.head, commit_choice: 'direct' };
        if (action === 'new') values['tree_path'] = at.rest ? `${at.rest}/` : '';
        else {
          values['tree_path'] = at.rest;
          if (action === 'edit') values['content'] = (await fileText(at.t, at.rest, at.branch)).text;
          else await fileText(at.t, at.rest, at.branch);
        }
        return show(request, reply, at, action, at.rest, values, {}, 200);
      });

      app.post(route, async (request, reply) => {
        const at = await locate(request);
        const user = web.requireUser(request);
        const b = (request.body ?? {}) as Record<string, unknown>;
        const values: Values = {};
        for (const k of [
          'tree_path',
          'content',
          'commit_summary',
          'commit_message',
          'commit_choice',
          'new_branch_name',
          'last_commit',
        ]) {
          values[k] = formText(b[k]);
        }
        if (action !== 'new') values['tree_path'] = at.rest;
        // Browsers send CRLF line ends in a textarea; the file keeps LF unless it had CRLF.
        let content = values['content'] ?? '';
        const errors: Errors = {};
        const treePath = (values['tree_path'] ?? '').trim().replace(/^\/+|\/+$/g, '');
        if (!treePath) errors.tree_path = 'The file path is required.';
        else if (treePath.split('/').some((s) => s === '..' || s === '.' || s === '')) {
          errors.tree_path = `The file path "${treePath}" is not valid ("." and ".." are not allowed).`;
        }
        const toNew = values['commit_choice'] === 'commit-to-new-branch';
        const newBranch = (values['new_branch_name'] ?? '').trim();
        if (toNew && !newBranch) errors.new_branch_name = 'The new branch name is required.';
        let old: { text: string; oid: string } | undefined;
        if (action !== 'new' && !errors.tree_path) old = await fileText(at.t, treePath, at.branch);
        if (!old?.text.includes('\r\n')) content = content.replace(/\r\n/g, '\n');
        if (action !== 'new' && values['last_commit'] && values['last_commit'] !== at.head) {
          errors.last_commit =
            `The ${at.branch} branch has changed since you opened this page: ` +
            'reload it to see the new version.';
        }
        if (Object.keys(errors).length === 0) {
          const verb = action === 'new' ? 'Add' : action === 'edit' ? 'Update' : 'Delete';
          const message = messageOf(values, `${verb} ${treePath}`);
          try {
            await files.changeFile(at.t, user, {
              op: action === 'new' ? 'create' : action === 'edit' ? 'update' : 'delete',
              path: treePath,
              sha: old?.oid,
              content: action === 'delete' ? undefined : Buffer.from(content, 'utf8').toString('base64'),
              message,
              branch: at.branch,
              newBranch: toNew ? newBranch : undefined,
            });
            const base = `/${at.t.owner.name}/${at.t.repo.name}`;
            if (toNew) {
              return web.redirect(reply, `${base}/compare/${enc(at.branch)}...${enc(newBranch)}`);
            }
            const dir = treePath.includes('/') ? treePath.slice(0, treePath.lastIndexOf('/')) : '';
            const to =
              action === 'delete'
                ? `${base}/src/branch/${enc(at.branch)}${dir ? `/${enc(dir)}` : ''}`
                : `${base}/src/branch/${enc(at.branch)}/${enc(treePath)}`;
            return web.redirect(reply, to, { kind: 'info', text: `Committed to ${at.branch}.` });
          } catch (err) {
            refusalInto(errors, err);
          }
        }
        values['tree_path'] = treePath;
        values['content'] = content;
        return show(request, reply, at, action, action === 'new' ? at.rest : treePath, values, errors, 422);
      });
    }

    app.get('/:owner/:repo/_upload/*', async (request, reply) => {
      const at = await locate(request);
      const values: Values = { tree_path: at.rest, last_commit: at.head, commit_choice: 'direct' };
      return show(request, reply, at, 'upload', at.rest, values, {}, 200);
    });

    // Forgejo's upload: each file added to the directory (or replacing the file of its name), one commit.
    app.post('/:owner/:repo/_upload/*', async (request, reply) => {
      const at = await locate(request);
      const user = web.requireUser(request);
      const b = (request.body ?? {}) as Record<string, unknown>;
      const values: Values = {};
      for (const k of [
        'tree_path',
        'commit_summary',
        'commit_message',
        'commit_choice',
        'new_branch_name',
        'last_commit',
      ]) {
        values[k] = formText(b[k]);
      }
      const errors: Errors = {};
      const dir = (values['tree_path'] ?? '').trim().replace(/^\/+|\/+$/g, '');
      if (dir && dir.split('/').some((s) => s === '..' || s === '.' || s === '')) {
        errors.tree_path = `The directory "${dir}" is not valid ("." and ".." are not allowed).`;
      }
      const uploads = uploadsOf(b['files']);
      const names = uploads.map((u) => u.filename.replace(/\\/g, '/').split('/').pop() ?? '');
      if (uploads.length === 0) errors.files = 'Choose at least one file to upload.';
      else if (names.some((n) => n === '' || n === '.' || n === '..'))
        errors.files = 'A file name is not valid.';
      else if (new Set(names).size !== names.length) errors.files = 'Two files have the same name.';
      const toNew = values['commit_choice'] === 'commit-to-new-branch';
      const newBranch = (values['new_branch_name'] ?? '').trim();
      if (toNew && !newBranch) errors.new_branch_name = 'The new branch name is required.';
      if (Object.keys(errors).length === 0) {
        try {
          const ops = [];
          for (const [i, u] of uploads.entries()) {
            const p = dir ? `${dir}/${names[i]}` : names[i]!;
            let sha: string | undefined;
            try {
              const e = await svc.contents(at.t, p, at.branch);
              if (Array.isArray(e) || e.type !== 'file')
                throw new AppError('invalid', `[Filepath]: ${p} is a directory`);
              sha = e.oid;
            } catch (err) {
              if (!(err instanceof AppError && err.kind === 'not_found')) throw err;
            }
            const content = (await fs.promises.readFile(u.path)).toString('base64');
            ops.push(
              sha
                ? { op: 'update' as const, path: p, sha, content }
                : { op: 'create' as const, path: p, content },
            );
          }
          await files.changeFiles(at.t, user, {
            files: ops,
            message: messageOf(values, `Upload files to '${dir || '/'}'`),
            branch: at.branch,
            newBranch: toNew ? newBranch : undefined,
          });
          const base = `/${at.t.owner.name}/${at.t.repo.name}`;
          if (toNew) return web.redirect(reply, `${base}/compare/${enc(at.branch)}...${enc(newBranch)}`);
          return web.redirect(reply, `${base}/src/branch/${enc(at.branch)}${dir ? `/${enc(dir)}` : ''}`, {
            kind: 'info',
            text: `Committed ${uploads.length === 1 ? 'one file' : `${uploads.length} files`} to ${at.branch}.`,
          });
        } catch (err) {
          refusalInto(errors, err);
          // A file's path refused (a directory of that name, a bad name): said on the files.
          if (errors.tree_path) {
            errors.files = errors.tree_path;
            delete errors.tree_path;
          }
        }
      }
      values['tree_path'] = dir;
      return show(request, reply, at, 'upload', dir, values, errors, 422);
    });
  };
}
