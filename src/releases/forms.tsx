// Writing releases in the web interface at Forgejo's URLs and field names: /releases/new and
// /releases/edit/{tag} (tag_name, tag_target, title, content, prerelease, hide_archive_links, the
// `draft` button, new assets as `files`, existing ones renamed by `attachment-edit-{uuid}` and
// removed by `attachment-del-{uuid}`) and POST /releases/delete (id), for writers only, through the
// same releases and attachments services as the API. The form is multipart and needs no script.
// Bad input comes back beside its field, kept; files are stored before the release is written, so
// a refused file leaves no release behind.
import fs from 'node:fs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import type { AttachmentService, Staged } from '../attachments/service.js';
import type { AttachmentRow } from '../attachments/tables.js';
import { AppError } from '../errors.js';
import { MarkdownField } from '../issues/thread.js';
import { openRepo, type OpenRepoDeps, type OpenedRepo } from '../issues/open-repo.js';
import { RepoHeader } from '../repos/code-pages.js';
import type { UserRow } from '../users/tables.js';
import { CsrfField, Field, Layout, type PageContext } from '../web/layout.js';
import { formText, uploadsOf, type PageRoutes, type Upload } from '../web/plugin.js';
import { Checkbox, DangerForm, FileField, ticked } from '../web/settings.js';
import type { ReleaseRow, ReleaseService } from './service.js';

type Form = Record<string, string | undefined>;
const FIELDS = ['tag_name', 'tag_target', 'title', 'content', 'draft', 'prerelease', 'hide_archive_links'];
const enc = (s: string) => s.split('/').map(encodeURIComponent).join('/');

/** A size as Forgejo shows one (1.5 KiB). */
export function fileSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let n = bytes;
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${n.toFixed(1).replace(/\.0$/, '')} ${units[i]}`;
}

function ReleaseForm(props: {
  page: PageContext;
  action: string;
  values: Form;
  errors: Form;
  /** The release edited (none for a new one) and its assets. */
  release?: ReleaseRow;
  assets: AttachmentRow[];
  defaultBranch: string;
}): VNode {
  const { values, errors, release } = props;
  const editing = !!release;
  // The tag of a published release exists: its name and target are what they are.
  const fixedTag = editing && !release.is_draft;
  return (
    <form method="post" action={props.action} class="release-form card" enctype="multipart/form-data">
      <h2>{editing ? 'Edit release' : 'New release'}</h2>
      <CsrfField page={props.page} />
      <div class="release-tag-row">
        <Field
          label="Tag name"
          name="tag_name"
          value={values['tag_name'] ?? ''}
          required
          error={errors['tag_name']}
          readonly={fixedTag}
        />
        <Field
          label="Target (branch or commit)"
          name="tag_target"
          value={values['tag_target'] ?? ''}
          error={errors['tag_target']}
          readonly={fixedTag}
        />
      </div>
      <p class="muted hint release-tag-hint">
        {fixedTag
          ? 'The tag exists: its name and commit stay.'
          : `A tag that does not exist yet is created at the target (${props.defaultBranch} when empty) when the release is published.`}
      </p>
      <Field label="Title" name="title" value={values['title'] ?? ''} error={errors['title']} />
      <MarkdownField
        id="f-content"
        name="content"
        label="Content"
        value={values['content'] ?? ''}
        placeholder="Describe this release (Markdown)"
      />
      <fieldset class="release-assets">
        <legend>Assets</legend>
        {props.assets.length ? (
          <ul class="asset-edit">
            {props.assets.map((a) => (
              <li>
                <label class="sr-only" for={`f-attachment-edit-${a.uuid}`}>
                  Name of {a.name}
                </label>
                <input
                  type="text"
                  id={`f-attachment-edit-${a.uuid}`}
                  name={`attachment-edit-${a.uuid}`}
                  value={values[`attachment-edit-${a.uuid}`] ?? a.name}
                />
                <span class="muted">{a.external_url ? 'link' : fileSize(Number(a.size))}</span>
                <span class="check">
                  <input
                    id={`f-attachment-del-${a.uuid}`}
                    type="checkbox"
                    name={`attachment-del-${a.uuid}`}
                    value="true"
                    checked={ticked(values[`attachment-del-${a.uuid}`])}
                  />
                  <label for={`f-attachment-del-${a.uuid}`}>Delete</label>
                </span>
              </li>
            ))}
          </ul>
        ) : null}
        <FileField label="Attach binaries" name="files" multiple error={errors['files']} />
      </fieldset>
      <Checkbox
        label="Mark as pre-release"
        name="prerelease"
        checked={ticked(values['prerelease'])}
        hint="Not ready for production."
      />
      <Checkbox
        label="Hide archive links"
        name="hide_archive_links"
        checked={ticked(values['hide_archive_links'])}
        hint="Leave out the generated source code archives."
      />
      <div class="actions release-actions">
        {editing ? (
          <a class="button" href={props.action.replace(/\/edit\/.*$/, '')}>
            Cancel
          </a>
        ) : null}
        {!editing || release.is_draft ? (
          <button type="submit" name="draft" value="1">
            Save draft
          </button>
        ) : null}
        <button type="submit" class="primary">
          {editing && !release.is_draft ? 'Update release' : 'Publish release'}
        </button>
      </div>
    </form>
  );
}

export interface ReleaseFormDeps extends OpenRepoDeps {
  releases: Pick<ReleaseService, 'create' | 'edit' | 'get' | 'getByTag' | 'delete' | 'assertEnabled'>;
  attachments: Pick<
    AttachmentService,
    'assertCanUpload' | 'stage' | 'discard' | 'commit' | 'list' | 'edit' | 'delete'
  >;
}

/** The message of a refusal without Forgejo's `[kind]: ` prefix. */
const messageOf = (err: AppError) => err.message.replace(/^\[[^\]]*\]: /, '');

export function releaseForms(deps: ReleaseFormDeps): PageRoutes {
  return (app, web) => {
    const { releases, attachments } = deps;
    const writer = async (request: FastifyRequest) => {
      // An anonymous visitor is sent to sign in and back.
      const user = web.requireUser(request);
      const t = await openRepo(deps, request, 'repo.releases', 'write');
      releases.assertEnabled(t.view.repo);
      return { t, user };
    };
    const formPage = async (
      request: FastifyRequest,
      reply: FastifyReply,
      t: OpenedRepo,
      values: Form,
      errors: Form,
      release?: ReleaseRow,
    ) => {
      const assets = release
        ? await attachments.list({ kind: 'release', repo: t.view.repo, releaseId: release.id })
        : [];
      const name = `${t.owner.name}/${t.view.repo.name}`;
      return web.send(
        reply,
        <Layout page={web.page(request)} title={`${release ? 'Edit release' : 'New release'} · ${name}`}>
          <RepoHeader t={{ owner: t.owner, repo: t.view.repo, access: t.view.access }} active="releases" />
          <ReleaseForm
            page={web.page(request)}
            action={release ? `${t.base}/releases/edit/${enc(release.tag_name)}` : `${t.base}/releases/new`}
            values={values}
            errors={errors}
            {...(release ? { release } : {})}
            assets={assets}
            defaultBranch={t.view.repo.default_branch}
          />
          {release ? (
            <section class="release-form release-danger card" aria-label="Delete this release">
              <p>Deleting a release deletes its assets; its tag stays.</p>
              <DangerForm
                page={web.page(request)}
                action={`${t.base}/releases/delete`}
                button="Delete release"
                confirm={`Delete the release ${release.title || release.tag_name}?`}
              >
                <input type="hidden" name="id" value={String(release.id)} />
              </DangerForm>
            </section>
          ) : null}
        </Layout>,
        Object.keys(errors).length ? 422 : 200,
      );
    };
    const posted = (request: FastifyRequest) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      const values: Form = {};
      for (const k of FIELDS) values[k] = formText(body[k]);
      for (const k of Object.keys(body)) if (k.startsWith('attachment-')) values[k] = formText(body[k]);
      return { values, files: uploadsOf(body['files']) };
    };
    /** Stores the posted files (not yet anyone's); a refused one discards them all. */
    const stageFiles = async (t: OpenedRepo, files: Upload[]): Promise<Staged[] | string> => {
      const staged: Staged[] = [];
      try {
        if (files.length)
          await attachments.assertCanUpload({ kind: 'release', repo: t.view.repo, releaseId: 0 });
        for (const f of files)
          staged.push(
            await attachments.stage(
              { kind: 'release', repo: t.view.repo, releaseId: 0 },
              f.filename,
              fs.createReadStream(f.path),
            ),
          );
        return staged;
      } catch (err) {
        for (const s of staged) await attachments.discard(s);
        if (err instanceof AppError && err.kind !== 'internal') return messageOf(err);
        throw err;
      }
    };
    const commitFiles = async (
      t: OpenedRepo,
      user: UserRow,
      release: ReleaseRow,
      files: Upload[],
      staged: Staged[],
    ) => {
      const holder = { kind: 'release' as const, repo: t.view.repo, releaseId: release.id };
      for (const [i, s] of staged.entries()) await attachments.commit(holder, user, files[i]!.filename, s);
    };
    /** Which field a refusal of the releases service is about. */
    const fieldOf = (err: AppError): string => {
      const named = /^\[([^\]]*)\]/.exec(err.message)?.[1]?.toLowerCase() ?? '';
      if (named.includes('target')) return 'tag_target';
      if (named.includes('tag')) return 'tag_name';
      return err.kind === 'not_found' || /target|commit|branch/i.test(err.message)
        ? 'tag_target'
        : 'tag_name';
    };
    const refusal = (err: unknown): AppError | undefined =>
      err instanceof AppError && ['invalid', 'conflict', 'not_found', 'bad_request'].includes(err.kind)
        ? err
        : undefined;

    app.get('/:owner/:repo/releases/new', async (request, reply) => {
      const { t } = await writer(request);
      const q = request.query as Record<string, unknown>;
      return formPage(request, reply, t, { tag_name: typeof q['tag'] === 'string' ? q['tag'] : '' }, {});
    });

    app.post('/:owner/:repo/releases/new', async (request, reply) => {
      const { t, user } = await writer(request);
      const { values, files } = posted(request);
      const tag = (values['tag_name'] ?? '').trim();
      if (!tag) return formPage(request, reply, t, values, { tag_name: 'A release needs a tag name.' });
      const staged = await stageFiles(t, files);
      if (typeof staged === 'string') return formPage(request, reply, t, values, { files: staged });
      let created;
      try {
        created = await releases.create(t.view.repo, user, {
          tagName: tag,
          target: (values['tag_target'] ?? '').trim(),
          title: (values['title'] ?? '').trim() || tag,
          note: values['content'] ?? '',
          isDraft: ticked(values['draft']),
          isPrerelease: ticked(values['prerelease']),
          hideArchiveLinks: ticked(values['hide_archive_links']),
        });
      } catch (err) {
        for (const s of staged) await attachments.discard(s);
        const e = refusal(err);
        if (!e) throw err;
        return formPage(request, reply, t, values, { [fieldOf(e)]: messageOf(e) });
      }
      await commitFiles(t, user, created, files, staged);
      return web.redirect(reply, `${t.base}/releases`, {
        kind: 'info',
        text: `The release ${created.title || created.tag_name} has been ${created.is_draft ? 'saved as a draft' : 'published'}.`,
      });
    });

    const editing = async (request: FastifyRequest) => {
      const w = await writer(request);
      const tag = (request.params as Record<string, string>)['*'] ?? '';
      return { ...w, release: await releases.getByTag(w.t.view.repo, tag, true) };
    };

    app.get('/:owner/:repo/releases/edit/*', async (request, reply) => {
      const { t, release: r } = await editing(request);
      const values: Form = {
        tag_name: r.tag_name,
        tag_target: r.target,
        title: r.title,
        content: r.note,
        prerelease: r.is_prerelease ? 'on' : '',
        hide_archive_links: r.hide_archive_links ? 'on' : '',
      };
      return formPage(request, reply, t, values, {}, r);
    });

    app.post('/:owner/:repo/releases/edit/*', async (request, reply) => {
      const { t, user, release } = await editing(request);
      const { values, files } = posted(request);
      if (!(values['title'] ?? '').trim())
        return formPage(request, reply, t, values, { title: 'A release needs a title.' }, release);
      const holder = { kind: 'release' as const, repo: t.view.repo, releaseId: release.id };
      const assets = await attachments.list(holder);
      for (const a of assets) {
        const name = values[`attachment-edit-${a.uuid}`];
        if (name !== undefined && !name.trim() && !ticked(values[`attachment-del-${a.uuid}`]))
          return formPage(
            request,
            reply,
            t,
            values,
            { files: `An asset needs a name (${a.name}).` },
            release,
          );
      }
      const staged = await stageFiles(t, files);
      if (typeof staged === 'string') return formPage(request, reply, t, values, { files: staged }, release);
      let updated: ReleaseRow;
      try {
        updated = await releases.edit(t.view.repo, user, release, {
          ...(release.is_draft
            ? {
                tagName: (values['tag_name'] ?? '').trim() || undefined,
                target: (values['tag_target'] ?? '').trim() || undefined,
              }
            : {}),
          title: (values['title'] ?? '').trim() || undefined,
          note: values['content'],
          noteAsGiven: true,
          isDraft: ticked(values['draft']),
          isPrerelease: ticked(values['prerelease']),
          hideArchiveLinks: ticked(values['hide_archive_links']),
        });
        for (const a of assets) {
          if (ticked(values[`attachment-del-${a.uuid}`])) await attachments.delete(a);
          else {
            const name = (values[`attachment-edit-${a.uuid}`] ?? '').trim();
            if (name && name !== a.name) await attachments.edit(holder, a, { name });
          }
        }
      } catch (err) {
        for (const s of staged) await attachments.discard(s);
        const e = refusal(err);
        if (!e) throw err;
        const field = /extension or type/.test(e.message) ? 'files' : fieldOf(e);
        return formPage(request, reply, t, values, { [field]: messageOf(e) }, release);
      }
      await commitFiles(t, user, updated, files, staged);
      return web.redirect(reply, `${t.base}/releases`, {
        kind: 'info',
        text: `The release ${updated.title || updated.tag_name} has been ${updated.is_draft ? 'saved as a draft' : 'updated'}.`,
      });
    });

    app.post('/:owner/:repo/releases/delete', async (request, reply) => {
      const { t, user } = await writer(request);
      const id =
        formText((request.body as Record<string, unknown> | undefined)?.['id']) ||
        String((request.query as Record<string, unknown>)['id'] ?? '');
      if (!/^\d+$/.test(id)) throw new AppError('not_found', 'release does not exist');
      const r = await releases.get(t.view.repo, Number(id), true);
      await releases.delete(t.view.repo, r, user);
      return web.redirect(reply, `${t.base}/releases`, {
        kind: 'info',
        text: `The release ${r.title || r.tag_name} has been deleted.`,
      });
    });
  };
}
