// `/{owner}/{repo}/settings/keys`: a repository's deploy keys (list, add with `title`, `content`
// and `is_writable`, delete with `id`), for its administrators, as Forgejo's page.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import type { RepoService } from '../repos/service.js';
import {
  FormError,
  Input,
  RepoSettingsFrame,
  adminRepo,
  field,
  formErrors,
  type AdminRepo,
  type Form,
} from '../repos/settings-common.js';
import type { UserService } from '../users/service.js';
import { When } from '../web/components.js';
import { CsrfField, type PageContext } from '../web/layout.js';
import type { PageRoutes, Web } from '../web/plugin.js';
import { Checkbox, DangerForm, Section, TextArea, ticked } from '../web/settings.js';
import type { SshKeyService } from './service.js';
import type { DeployKeyRow } from './tables.js';

export interface DeployKeyPagesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  users: Pick<UserService, 'getById'>;
  sshKeys: Pick<SshKeyService, 'listDeployKeys' | 'addDeployKey' | 'requireDeployKey' | 'deleteDeployKey'>;
}

function DeployKeysPage(props: {
  page: PageContext;
  t: AdminRepo;
  keys: DeployKeyRow[];
  values: Form;
  errors: Form;
}): VNode {
  const { page, t, values: v, errors: e } = props;
  return (
    <RepoSettingsFrame page={page} t={t} title="Deploy keys" active="/keys">
      <Section title="Deploy keys">
        <p class="muted">
          A deploy key clones this repository over SSH (and pushes to it, when it has write access), and
          nothing else.
        </p>
        {props.keys.length ? (
          <ul class="list settings-rows">
            {props.keys.map((k) => (
              <li>
                <span class="title">{k.name}</span>
                <span class="pill">{k.read_only ? 'Read' : 'Read and write'}</span>
                <code class="muted fingerprint">{k.fingerprint}</code>
                <span class="muted">
                  Added <When unix={k.created_unix} />
                </span>
                <DangerForm
                  page={page}
                  action={`${t.base}/keys/delete`}
                  button="Delete"
                  confirm={`Delete the deploy key ${k.name}?`}
                >
                  <input type="hidden" name="id" value={String(k.id)} />
                </DangerForm>
              </li>
            ))}
          </ul>
        ) : (
          <p class="empty">No deploy keys yet.</p>
        )}
      </Section>
      <Section title="Add a deploy key">
        <form method="post" action={`${t.base}/keys`}>
          <CsrfField page={page} />
          <FormError error={e['form']} />
          <Input
            id="f-title"
            label="Title"
            name="title"
            value={v['title']}
            required
            maxLength={255}
            error={e['title']}
          />
          <TextArea
            label="Content"
            name="content"
            value={v['content']}
            rows={5}
            required
            hint="An OpenSSH public key: begins with 'ssh-ed25519', 'ssh-rsa', 'ecdsa-sha2-nistp256', ..."
            error={e['content']}
          />
          <Checkbox
            label="Enable write access"
            name="is_writable"
            checked={v['is_writable'] === 'on'}
            hint="Lets the key push to the repository."
          />
          <button type="submit" class="primary">
            Add key
          </button>
        </form>
      </Section>
    </RepoSettingsFrame>
  );
}

export function deployKeyPages(deps: DeployKeyPagesDeps): PageRoutes {
  return (app, web: Web) => {
    const { repos, users, sshKeys } = deps;
    const load = (request: FastifyRequest) => adminRepo(web, request, { repos, owners: users });

    const show = async (
      request: FastifyRequest,
      reply: FastifyReply,
      t: AdminRepo,
      values: Form = {},
      errors: Form = {},
    ) => {
      const [keys] = await sshKeys.listDeployKeys(t.repo, { page: 1, limit: 1000, offset: 0 }, {});
      return web.send(
        reply,
        <DeployKeysPage page={web.page(request)} t={t} keys={keys} values={values} errors={errors} />,
        Object.keys(errors).length ? 422 : 200,
      );
    };

    app.get('/:owner/:repo/settings/keys', async (request, reply) =>
      show(request, reply, await load(request)),
    );

    app.post('/:owner/:repo/settings/keys', async (request, reply) => {
      const t = await load(request);
      const body = request.body;
      const values: Form = {
        title: field(body, 'title'),
        content: field(body, 'content'),
        is_writable: ticked(field(body, 'is_writable')) ? 'on' : undefined,
      };
      if (!values['title']) return show(request, reply, t, values, { title: 'Give the key a title.' });
      if (!values['content']) return show(request, reply, t, values, { content: 'Paste the public key.' });
      try {
        await sshKeys.addDeployKey(
          t.repo,
          values['title']!,
          values['content']!,
          values['is_writable'] !== 'on',
        );
      } catch (err) {
        return show(request, reply, t, values, formErrors(err, { title: 'title', key: 'content' }));
      }
      return web.redirect(reply, `${t.base}/keys`, {
        kind: 'info',
        text: `The deploy key ${values['title']} was added.`,
      });
    });

    app.post('/:owner/:repo/settings/keys/delete', async (request, reply) => {
      const t = await load(request);
      const id = field(request.body, 'id');
      const key = await sshKeys.requireDeployKey(t.repo, /^\d{1,15}$/.test(id) ? Number(id) : 0);
      await sshKeys.deleteDeployKey(t.repo, key.id);
      return web.redirect(reply, `${t.base}/keys`, {
        kind: 'info',
        text: `The deploy key ${key.name} was deleted.`,
      });
    });
  };
}
