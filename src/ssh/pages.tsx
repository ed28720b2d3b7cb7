// A user's keys page (/user/settings/keys, Forgejo's one page for both kinds): SSH keys with their
// fingerprints and last use (add with `title` + `content`, delete) and the GPG keys of
// signing/pages.tsx. Every form posts to /user/settings/keys with a `type` (ssh, gpg, verify_gpg);
// deleting posts to /user/settings/keys/delete?type=ssh|gpg. The same services as the API: another
// user's key is a 404.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError, badRequest, notFound } from '../errors.js';
import {
  GpgSections,
  KEYS,
  emptyGpgForm,
  gpgKeysOf,
  postGpg,
  type GpgFormState,
  type GpgKeyFull,
  type GpgService,
} from '../signing/pages.js';
import type { UserRow } from '../users/tables.js';
import { When } from '../web/components.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import { DangerForm, Section, SettingsLayout, TextArea, USER_SETTINGS_NAV } from '../web/settings.js';
import type { SigningService } from '../signing/service.js';
import type { SshKeyService } from './service.js';
import type { PublicKeyRow } from './tables.js';

export interface KeyPagesDeps {
  sshKeys: Pick<SshKeyService, 'allUserKeys' | 'addUserKey' | 'deleteUserKey' | 'verifyUserKey'>;
  gpg: GpgService;
  /** Checks an SSH signature of the verification token (`verify_ssh`). */
  signing: Pick<SigningService, 'sshSignsToken'>;
}

type Errors = Record<string, string | undefined>;

interface SshFormState {
  title: string;
  content: string;
  /** The key a refused `verify_ssh` was posted for, and its signature. */
  fingerprint: string;
  signature: string;
  errors: Errors;
}

const emptySshForm = (): SshFormState => ({
  title: '',
  content: '',
  fingerprint: '',
  signature: '',
  errors: {},
});

function VerifySsh(props: { page: PageContext; k: PublicKeyRow; token: string; form: SshFormState }): VNode {
  const { k, form } = props;
  const mine = form.fingerprint === k.fingerprint;
  const error = mine ? form.errors['signature'] : undefined;
  const id = `f-verify-ssh-${k.id}`;
  return (
    <details open={mine}>
      <summary>Verify</summary>
      <form method="post" action={KEYS}>
        <CsrfField page={props.page} />
        <input type="hidden" name="type" value="verify_ssh" />
        <input type="hidden" name="fingerprint" value={k.fingerprint} />
        <p class="muted hint">Sign this token with the key and paste the signature:</p>
        <code class="verify-token">{props.token}</code>
        <pre class="muted">{`echo -n '${props.token}' | ssh-keygen -Y sign -n gitea -f /path/to/your/key`}</pre>
        <div class={error ? 'field invalid' : 'field'}>
          <label for={id}>SSH signature</label>
          <textarea
            id={id}
            name="signature"
            rows={5}
            required
            aria-invalid={error ? 'true' : undefined}
            aria-describedby={error ? `${id}-error` : undefined}
          >
            {mine ? form.signature : ''}
          </textarea>
          {error ? (
            <p class="field-error" id={`${id}-error`}>
              {error}
            </p>
          ) : null}
        </div>
        <button type="submit">Verify</button>
      </form>
    </details>
  );
}

function SshKeyList(props: {
  page: PageContext;
  keys: PublicKeyRow[];
  token: string;
  form: SshFormState;
}): VNode {
  if (props.keys.length === 0)
    return <p class="empty">There are no SSH keys associated with your account.</p>;
  return (
    <ul class="list credential-list">
      {props.keys.map((k) => (
        <li key={k.id}>
          <svg class="credential-icon" width="20" height="20" viewBox="0 0 16 16" aria-hidden="true">
            <path
              fill="currentColor"
              d="M10.5 0a5.5 5.5 0 1 1-1.7 10.73l-.97.97a.75.75 0 0 1-.53.22H6v1.25a.75.75 0 0 1-.75.75H4v1.25a.75.75 0 0 1-.75.75H.75A.75.75 0 0 1 0 15.25v-2.5c0-.2.08-.39.22-.53l5.05-5.05A5.5 5.5 0 0 1 10.5 0Zm1 3.5a1 1 0 1 0 0 2 1 1 0 0 0 0-2Z"
            />
          </svg>
          <div class="credential-body">
            <p class="title">
              {k.name}{' '}
              {k.verified ? (
                <span class="pill verified">Verified</span>
              ) : (
                <span class="pill">Not verified</span>
              )}
            </p>
            <p class="muted">
              <code class="fingerprint">{k.fingerprint}</code>
            </p>
            <p class="muted">
              Added on <When unix={k.created_unix} />
              {' — '}
              {k.updated_unix > k.created_unix ? (
                <>
                  Last used on <When unix={k.updated_unix} />
                </>
              ) : (
                'Never used'
              )}
            </p>
            {k.verified ? null : <VerifySsh page={props.page} k={k} token={props.token} form={props.form} />}
          </div>
          <DangerForm
            page={props.page}
            action={`${KEYS}/delete?type=ssh`}
            button="Delete"
            confirm={`Delete the SSH key "${k.name}"? It will no longer give access to your account.`}
          >
            <input type="hidden" name="id" value={String(k.id)} />
          </DangerForm>
        </li>
      ))}
    </ul>
  );
}

function KeysPage(props: {
  page: PageContext;
  ssh: PublicKeyRow[];
  gpg: GpgKeyFull[];
  token: string;
  sshForm: SshFormState;
  gpgForm: GpgFormState;
}): VNode {
  const { page, sshForm } = props;
  return (
    <SettingsLayout
      page={page}
      title="SSH / GPG keys"
      area="User settings"
      nav={USER_SETTINGS_NAV}
      active={KEYS}
    >
      <Section title="Manage SSH keys">
        <p class="muted">
          These keys let you use git over SSH as yourself. Remove the ones you no longer recognise.
        </p>
        <SshKeyList page={page} keys={props.ssh} token={props.token} form={sshForm} />
      </Section>
      <Section title="Add SSH key">
        <form method="post" action={KEYS}>
          <CsrfField page={page} />
          <input type="hidden" name="type" value="ssh" />
          <Field
            label="Key name"
            name="title"
            value={sshForm.title}
            required
            error={sshForm.errors['title']}
          />
          <TextArea
            label="Content"
            name="content"
            value={sshForm.fingerprint ? '' : sshForm.content}
            rows={5}
            required
            hint="Begins with ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256 or sk-…"
            error={sshForm.errors['content']}
          />
          <button type="submit" class="primary">
            Add key
          </button>
        </form>
      </Section>
      <GpgSections page={page} keys={props.gpg} token={props.token} form={props.gpgForm} />
    </SettingsLayout>
  );
}

/** Where a refusal of the SSH key service belongs (`title: ...` or `key: ...`). */
function sshError(err: unknown): [string, string] | undefined {
  if (!(err instanceof AppError) || err.kind !== 'invalid') return undefined;
  const m = /^(title|key|signature): (.*)$/s.exec(err.message);
  if (!m) return undefined;
  const text = `${m[2]!.replace(/^./, (c) => c.toUpperCase())}`;
  return [m[1] === 'title' ? 'title' : 'content', /[.\]]$/.test(text) ? text : `${text}.`];
}

export function keyPages(deps: KeyPagesDeps): PageRoutes {
  const show = async (
    web: Web,
    request: FastifyRequest,
    reply: FastifyReply,
    user: UserRow,
    forms: { ssh?: SshFormState; gpg?: GpgFormState } = {},
    status = 200,
  ) => {
    const [ssh, gpg] = await Promise.all([deps.sshKeys.allUserKeys(user), gpgKeysOf(deps.gpg, user)]);
    return web.send(
      reply,
      <KeysPage
        page={web.page(request)}
        ssh={ssh}
        gpg={gpg}
        token={deps.gpg.tokens(user)[0]}
        sshForm={forms.ssh ?? emptySshForm()}
        gpgForm={forms.gpg ?? emptyGpgForm()}
      />,
      status,
    );
  };

  return (app, web) => {
    app.get(KEYS, async (request, reply) => {
      const user = web.requireUser(request);
      return show(web, request, reply, user);
    });

    app.post(KEYS, async (request, reply) => {
      const user = web.requireUser(request);
      const body = request.body as Record<string, unknown> | undefined;
      const type = formText(body?.['type']);
      if (type === 'gpg' || type === 'verify_gpg') {
        const outcome = await postGpg(deps.gpg, user, type, body);
        if ('ok' in outcome) return web.redirect(reply, KEYS, { kind: 'info', text: outcome.ok });
        return show(web, request, reply, user, { gpg: outcome.form }, 422);
      }
      if (type === 'verify_ssh') {
        const form: SshFormState = {
          ...emptySshForm(),
          fingerprint: formText(body?.['fingerprint']),
          signature: formText(body?.['signature']).trim(),
        };
        if (!form.signature) form.errors['signature'] = 'The signature must not be empty.';
        else {
          try {
            const key = await deps.sshKeys.verifyUserKey(user, form.fingerprint, (k) =>
              deps.signing.sshSignsToken(user, k.fingerprint, form.signature),
            );
            return web.redirect(reply, KEYS, {
              kind: 'info',
              text: `The SSH key "${key.name}" has been verified.`,
            });
          } catch (err) {
            const at = sshError(err);
            if (!at) throw err;
            form.errors['signature'] = at[1];
          }
        }
        return show(web, request, reply, user, { ssh: form }, 422);
      }
      if (type !== 'ssh') throw badRequest(`Unknown key type "${type}".`);
      const form: SshFormState = {
        ...emptySshForm(),
        title: formText(body?.['title']),
        content: formText(body?.['content']),
      };
      if (!form.title.trim()) form.errors['title'] = 'The key name must not be empty.';
      if (!form.content.trim()) form.errors['content'] = 'The key must not be empty.';
      if (!form.errors['title'] && !form.errors['content']) {
        try {
          const key = await deps.sshKeys.addUserKey(user, form.title, form.content);
          return web.redirect(reply, KEYS, {
            kind: 'info',
            text: `The SSH key "${key.name}" has been added.`,
          });
        } catch (err) {
          const at = sshError(err);
          if (!at) throw err;
          form.errors[at[0]] = at[1];
        }
      }
      return show(web, request, reply, user, { ssh: form }, 422);
    });

    app.post(`${KEYS}/delete`, async (request, reply) => {
      const user = web.requireUser(request);
      const type = formText((request.query as Record<string, unknown>)['type']);
      const raw = formText((request.body as Record<string, unknown> | undefined)?.['id']);
      if (!/^\d{1,15}$/.test(raw)) throw notFound('The key does not exist.');
      const id = Number(raw);
      if (type === 'ssh') await deps.sshKeys.deleteUserKey(user, id);
      else if (type === 'gpg') {
        // Only the user's own keys (an administrator's settings page deletes no one else's).
        const key = await deps.gpg.getKey(user, id);
        await deps.gpg.deleteKey(user, key.id);
      } else throw badRequest(`Unknown key type "${type}".`);
      return web.redirect(reply, KEYS, { kind: 'info', text: 'The key has been removed.' });
    });
  };
}
