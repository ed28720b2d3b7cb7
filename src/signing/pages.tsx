// The GPG half of a user's keys page (/user/settings/keys, rendered by ssh/pages.tsx): the list of
// GPG keys with their key ids, addresses and whether they are verified; adding an armored key (with
// a signature of the verification token when none of its addresses is one of the user's); verifying
// a key by signing the token (Forgejo's `verify_gpg`); deleting one. The same service as the API.
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import type { UserRow } from '../users/tables.js';
import { When } from '../web/components.js';
import { CsrfField, type PageContext } from '../web/layout.js';
import { formText } from '../web/plugin.js';
import { DangerForm, Section, TextArea } from '../web/settings.js';
import type { SigningService } from './service.js';

export const KEYS = '/user/settings/keys';

export type GpgService = Pick<
  SigningService,
  'listKeys' | 'getKey' | 'addKey' | 'verifyKey' | 'deleteKey' | 'tokens'
>;

/** A GPG key with its subkeys and addresses, as the service gives it. */
export type GpgKeyFull = Awaited<ReturnType<SigningService['getKey']>>;

type Errors = Record<string, string | undefined>;

/** The GPG forms after a refused post: what was typed and the messages. */
export interface GpgFormState {
  content: string;
  signature: string;
  /** The key the verify form was posted for. */
  keyId: string;
  errors: Errors;
}

export const emptyGpgForm = (): GpgFormState => ({ content: '', signature: '', keyId: '', errors: {} });

const ALL = { page: 1, limit: 1000, offset: 0 };

export async function gpgKeysOf(gpg: GpgService, user: UserRow): Promise<GpgKeyFull[]> {
  return (await gpg.listKeys(user, ALL))[0];
}

/** How to sign the token (Forgejo shows the same command). */
function SignHint(props: { token: string; keyId?: string }): VNode {
  return (
    <div class="sign-hint">
      <p class="muted hint">Sign this token with the key and paste the armored signature:</p>
      <code class="verify-token">{props.token}</code>
      <pre class="muted">{`echo "${props.token}" | gpg -a --default-key ${props.keyId || 'KEY_ID'} --detach-sig`}</pre>
    </div>
  );
}

function GpgKeyItem(props: { page: PageContext; k: GpgKeyFull; token: string; form: GpgFormState }): VNode {
  const { page, k, form } = props;
  const mine = form.keyId === k.key_id;
  return (
    <li>
      <svg class="credential-icon" width="20" height="20" viewBox="0 0 16 16" aria-hidden="true">
        <path
          fill="currentColor"
          d="M4 4a4 4 0 0 1 8 0v2h.25c.97 0 1.75.78 1.75 1.75v5.5c0 .97-.78 1.75-1.75 1.75h-8.5A1.75 1.75 0 0 1 2 13.25v-5.5C2 6.78 2.78 6 3.75 6H4Zm6.5 2V4a2.5 2.5 0 0 0-5 0v2Z"
        />
      </svg>
      <div class="credential-body">
        <p class="title">
          {k.emails.join(', ') || 'No address'}{' '}
          {k.verified ? <span class="pill verified">Verified</span> : <span class="pill">Not verified</span>}
        </p>
        <p class="muted">
          Key ID: <code>{k.key_id}</code>
          {k.subkeys.length ? (
            <>
              {' '}
              Subkeys: <code>{k.subkeys.map((s) => s.key_id).join(', ')}</code>
            </>
          ) : null}
        </p>
        <p class="muted">
          Added on <When unix={k.added_unix} />
          {k.expired_unix ? (
            <>
              {' — '}Expires on <When unix={k.expired_unix} />
            </>
          ) : null}
        </p>
        {k.verified ? null : (
          <details open={mine}>
            <summary>Verify</summary>
            <form method="post" action={KEYS}>
              <CsrfField page={page} />
              <input type="hidden" name="type" value="verify_gpg" />
              <input type="hidden" name="key_id" value={k.key_id} />
              <SignHint token={props.token} keyId={k.key_id} />
              <div class={mine && form.errors['signature'] ? 'field invalid' : 'field'}>
                <label for={`f-verify-${k.id}`}>Armored signature</label>
                <textarea
                  id={`f-verify-${k.id}`}
                  name="signature"
                  rows={5}
                  required
                  aria-invalid={mine && form.errors['signature'] ? 'true' : undefined}
                  aria-describedby={mine && form.errors['signature'] ? `f-verify-${k.id}-error` : undefined}
                >
                  {mine ? form.signature : ''}
                </textarea>
                {mine && form.errors['signature'] ? (
                  <p class="field-error" id={`f-verify-${k.id}-error`}>
                    {form.errors['signature']}
                  </p>
                ) : null}
              </div>
              <button type="submit">Verify</button>
            </form>
          </details>
        )}
      </div>
      <DangerForm
        page={page}
        action={`${KEYS}/delete?type=gpg`}
        button="Delete"
        confirm={`Delete the GPG key ${k.key_id}? Commits signed with it will no longer verify.`}
      >
        <input type="hidden" name="id" value={String(k.id)} />
      </DangerForm>
    </li>
  );
}

export function GpgSections(props: {
  page: PageContext;
  keys: GpgKeyFull[];
  token: string;
  form: GpgFormState;
}): VNode {
  const { page, form } = props;
  const adding = !form.keyId;
  return (
    <>
      <Section title="Manage GPG keys">
        {props.keys.length === 0 ? (
          <p class="empty">There are no GPG keys associated with your account.</p>
        ) : (
          <ul class="list credential-list">
            {props.keys.map((k) => (
              <GpgKeyItem key={k.id} page={page} k={k} token={props.token} form={form} />
            ))}
          </ul>
        )}
      </Section>
      <Section title="Add GPG key">
        <form method="post" action={KEYS}>
          <CsrfField page={page} />
          <input type="hidden" name="type" value="gpg" />
          <TextArea
            label="Armored public key"
            name="content"
            id="f-gpg-content"
            value={adding ? form.content : ''}
            rows={6}
            required
            hint="Begins with -----BEGIN PGP PUBLIC KEY BLOCK-----"
            error={adding ? form.errors['content'] : undefined}
          />
          <details open={adding && Boolean(form.signature || form.errors['signature'])}>
            <summary>Key without any of your email addresses</summary>
            <SignHint token={props.token} />
            <TextArea
              label="Armored signature (optional)"
              name="signature"
              value={adding ? form.signature : ''}
              rows={5}
              error={adding ? form.errors['signature'] : undefined}
            />
          </details>
          <button type="submit" class="primary">
            Add key
          </button>
        </form>
      </Section>
    </>
  );
}

/** Where a refusal of the signing service belongs on the form. */
function gpgError(err: unknown, hasSignature: boolean): [string, string] | undefined {
  if (!(err instanceof AppError)) return undefined;
  if (err.kind !== 'invalid' && err.kind !== 'not_found') return undefined;
  if (/signature/i.test(err.message) && hasSignature) return ['signature', err.message];
  return ['content', err.message.replace(/^\[[A-Za-z]+\]: /, '').replace(/^./, (c) => c.toUpperCase())];
}

export type GpgOutcome = { ok: string } | { form: GpgFormState };

/** Handles a posted `type=gpg` (add) or `type=verify_gpg` form. */
export async function postGpg(
  gpg: GpgService,
  user: UserRow,
  type: 'gpg' | 'verify_gpg',
  body: Record<string, unknown> | undefined,
): Promise<GpgOutcome> {
  const form: GpgFormState = {
    content: formText(body?.['content']),
    signature: formText(body?.['signature']).trim(),
    keyId: type === 'verify_gpg' ? formText(body?.['key_id']) : '',
    errors: {},
  };
  if (type === 'verify_gpg') {
    if (!form.signature)
      return { form: { ...form, errors: { signature: 'The signature must not be empty.' } } };
    try {
      const key = await gpg.verifyKey(user, form.keyId, form.signature);
      return { ok: `The GPG key ${key.key_id} has been verified.` };
    } catch (err) {
      if (!(err instanceof AppError) || (err.kind !== 'invalid' && err.kind !== 'not_found')) throw err;
      return { form: { ...form, errors: { signature: err.message } } };
    }
  }
  if (!form.content.trim()) return { form: { ...form, errors: { content: 'The key must not be empty.' } } };
  try {
    const key = await gpg.addKey(user, form.content, form.signature || undefined);
    return { ok: `The GPG key ${key.key_id} has been added.` };
  } catch (err) {
    const at = gpgError(err, Boolean(form.signature));
    if (!at) throw err;
    return { form: { ...form, errors: { [at[0]]: at[1] } } };
  }
}
