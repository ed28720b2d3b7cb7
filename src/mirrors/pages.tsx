// The mirror settings page of a repository (Forgejo has it on the options page): the pull
// mirror's address, interval, last update and last error with "Synchronize now"; push mirrors
// listed, added (address, username, password, interval), synchronized now and deleted. The
// migration pages (/repo/migrate, migrate-pages.tsx) are registered with them.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import { When } from '../web/components.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import { Checkbox, DangerForm, Section, SettingsLayout, repoSettingsNav, ticked } from '../web/settings.js';
import { formatGoDuration } from './duration.js';
import { migratePages, type MigratePagesDeps } from './migrate-pages.js';
import type { MirrorService } from './service.js';
import type { MirrorRow, PushMirrorRow } from './tables.js';

export interface MirrorPagesDeps {
  mirrors: MigratePagesDeps['mirrors'] &
    Pick<
      MirrorService,
      | 'mirrorOf'
      | 'requestPullSync'
      | 'setPullInterval'
      | 'listPushMirrors'
      | 'getPushMirror'
      | 'createPushMirror'
      | 'deletePushMirror'
      | 'syncPush'
    >;
  repos: MigratePagesDeps['repos'] & Pick<RepoService, 'requireRepo'>;
}

type Values = Record<string, string>;

function Status(props: { updated: number; error: string }): VNode {
  return (
    <>
      <dt>Last update</dt>
      <dd>{props.updated ? <When unix={props.updated} /> : 'never'}</dd>
      <dt>Last error</dt>
      <dd>{props.error ? <code class="mirror-error">{props.error}</code> : 'none'}</dd>
    </>
  );
}

function MirrorsPage(props: {
  page: PageContext;
  owner: string;
  repo: RepoRow;
  pull: MirrorRow | undefined;
  push: PushMirrorRow[];
  values: Values;
  error?: string | undefined;
  intervalError?: string | undefined;
}): VNode {
  const { owner, repo, page } = props;
  const base = `/${owner}/${repo.name}/settings/mirrors`;
  const nav = repoSettingsNav(owner, repo.name);
  return (
    <SettingsLayout
      page={page}
      title={`Mirrors · ${owner}/${repo.name}`}
      area={`${owner}/${repo.name}`}
      nav={nav}
      active={base}
    >
      {props.pull ? (
        <Section title="Pull mirror">
          <dl class="mirror-facts">
            <dt>Remote address</dt>
            <dd>
              <code>{props.pull.remote_address}</code>
            </dd>
            <dt>Interval</dt>
            <dd>{props.pull.interval ? formatGoDuration(props.pull.interval) : 'only on request'}</dd>
            <Status updated={props.pull.updated_unix} error={props.pull.last_error} />
          </dl>
          <form method="post" action={`${base}/interval`}>
            <CsrfField page={page} />
            <Field
              label="Mirror interval (e.g. 8h0m0s; 0 for manual only)"
              name="interval"
              value={props.values['interval'] ?? formatGoDuration(props.pull.interval)}
              error={props.intervalError}
            />
            <button type="submit">Update interval</button>
          </form>
          <form method="post" action={`${base}/sync`}>
            <CsrfField page={page} />
            <button type="submit">Synchronize now</button>
          </form>
        </Section>
      ) : null}
      <Section title="Push mirrors">
        {props.push.length === 0 ? <p class="empty">There are no push mirrors.</p> : null}
        <ul class="list">
          {props.push.map((m) => (
            <li key={m.id}>
              <dl class="mirror-facts">
                <dt>Remote address</dt>
                <dd>
                  <code>{m.remote_address}</code>
                </dd>
                <dt>Interval</dt>
                <dd>{m.interval ? formatGoDuration(m.interval) : 'only on request'}</dd>
                <Status updated={m.last_update_unix} error={m.last_error} />
              </dl>
              <form method="post" action={`${base}/push/${m.remote_name}/sync`}>
                <CsrfField page={page} />
                <button type="submit">Synchronize now</button>
              </form>
              <DangerForm
                page={page}
                action={`${base}/push/${m.remote_name}/delete`}
                button="Delete"
                confirm="Delete this push mirror?"
              />
            </li>
          ))}
        </ul>
      </Section>
      <Section title="Add a push mirror">
        <form method="post" action={`${base}/push`}>
          <CsrfField page={page} />
          {props.error ? (
            <p class="flash error" role="alert">
              {props.error}
            </p>
          ) : null}
          <Field
            label="Git remote repository URL"
            name="push_mirror_address"
            value={props.values['push_mirror_address'] ?? ''}
            required
          />
          <Field
            label="Username"
            name="push_mirror_username"
            value={props.values['push_mirror_username'] ?? ''}
            autocomplete="off"
          />
          <Field label="Password" name="push_mirror_password" type="password" autocomplete="new-password" />
          <Field
            label="Mirror interval (e.g. 8h0m0s; 0 for manual only)"
            name="push_mirror_interval"
            value={props.values['push_mirror_interval'] ?? '8h0m0s'}
          />
          <Checkbox
            label="Push when commits are pushed"
            name="push_mirror_sync_on_commit"
            checked={props.values['push_mirror_sync_on_commit'] === 'on'}
          />
          <button type="submit" class="primary">
            Add push mirror
          </button>
        </form>
      </Section>
    </SettingsLayout>
  );
}

export function mirrorPages(deps: MirrorPagesDeps): PageRoutes {
  const { mirrors } = deps;
  return (app: FastifyInstance, web: Web) => {
    const resolve = async (request: FastifyRequest) => {
      web.requireUser(request);
      const p = request.params as Record<string, string>;
      const owner = p['owner'] ?? '';
      const { repo } = await deps.repos.requireRepo(owner, p['repo'] ?? '', request.web.viewer, 'admin');
      return { owner, repo, base: `/${owner}/${repo.name}/settings/mirrors` };
    };
    const show = async (
      request: FastifyRequest,
      owner: string,
      repo: RepoRow,
      values: Values,
      error?: string,
      intervalError?: string,
    ) => {
      const [push] = await mirrors.listPushMirrors(repo, 100, 0);
      const pull = repo.is_mirror ? await mirrors.mirrorOf(repo.id) : undefined;
      return (
        <MirrorsPage
          page={web.page(request)}
          owner={owner}
          repo={repo}
          pull={pull}
          push={push}
          values={values}
          error={error}
          intervalError={intervalError}
        />
      );
    };
    const prefix = '/:owner/:repo/settings/mirrors';

    app.get(prefix, async (request, reply) => {
      const { owner, repo } = await resolve(request);
      return web.send(reply, await show(request, owner, repo, {}));
    });

    app.post(`${prefix}/sync`, async (request, reply) => {
      const { repo, base } = await resolve(request);
      await mirrors.requestPullSync(repo);
      return web.redirect(reply, base, { kind: 'info', text: 'The mirror is being synchronized.' });
    });

    app.post(`${prefix}/interval`, async (request, reply) => {
      const { owner, repo, base } = await resolve(request);
      const interval = formText((request.body as Record<string, unknown> | undefined)?.['interval']).trim();
      try {
        await mirrors.setPullInterval(repo, interval || '0');
      } catch (err) {
        if (!(err instanceof AppError) || err.kind !== 'invalid') throw err;
        return web.send(reply, await show(request, owner, repo, { interval }, undefined, err.message), 422);
      }
      return web.redirect(reply, base, { kind: 'info', text: 'The mirror interval has been updated.' });
    });

    app.post(`${prefix}/push`, async (request, reply) => {
      const { owner, repo, base } = await resolve(request);
      const b = (request.body ?? {}) as Record<string, unknown>;
      const values: Values = {
        push_mirror_address: formText(b['push_mirror_address']).trim(),
        push_mirror_username: formText(b['push_mirror_username']).trim(),
        push_mirror_interval: formText(b['push_mirror_interval']).trim(),
        push_mirror_sync_on_commit: ticked(b['push_mirror_sync_on_commit']) ? 'on' : '',
      };
      let error: string | undefined;
      if (!values['push_mirror_address']) error = 'The remote address is required.';
      else {
        try {
          await mirrors.createPushMirror(repo, {
            remoteAddress: values['push_mirror_address'],
            remoteUsername: values['push_mirror_username'],
            remotePassword: formText(b['push_mirror_password']),
            interval: values['push_mirror_interval'] || '0',
            syncOnCommit: values['push_mirror_sync_on_commit'] === 'on',
          });
          return web.redirect(reply, base, { kind: 'info', text: 'The push mirror has been added.' });
        } catch (err) {
          if (!(err instanceof AppError) || (err.kind !== 'bad_request' && err.kind !== 'invalid')) throw err;
          error = err.message;
        }
      }
      return web.send(reply, await show(request, owner, repo, values, error), 422);
    });

    app.post(`${prefix}/push/:name/sync`, async (request, reply) => {
      const { repo, base } = await resolve(request);
      const m = await mirrors.getPushMirror(repo, (request.params as Record<string, string>)['name'] ?? '');
      await mirrors.syncPush(m.id);
      return web.redirect(reply, base, { kind: 'info', text: 'The push mirror has been synchronized.' });
    });

    app.post(`${prefix}/push/:name/delete`, async (request, reply) => {
      const { repo, base } = await resolve(request);
      await mirrors.deletePushMirror(repo, (request.params as Record<string, string>)['name'] ?? '');
      return web.redirect(reply, base, { kind: 'info', text: 'The push mirror has been deleted.' });
    });

    migratePages(deps)(app, web);
  };
}
