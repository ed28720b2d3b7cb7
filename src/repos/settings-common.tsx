// What the pages of a repository's settings share (repos/settings-pages.tsx, collaboration-pages.tsx,
// protection/pages.tsx, ssh/deploy-key-pages.tsx): the repository for its administrators only
// (404 when hidden, 403 when readable but not administered, as the API answers), the settings
// frame with the repository's menu, a text input with its own id, and a service's validation
// failure turned into a message beside the form's field.
import type { FastifyRequest } from 'fastify';
import type { ComponentChildren, VNode } from 'preact';
import { AppError, fieldLabel } from '../errors.js';
import type { PageContext } from '../web/layout.js';
import { SettingsLayout, repoSettingsNav } from '../web/settings.js';
import { formText, type Web } from '../web/plugin.js';
import type { UserRow } from '../users/tables.js';
import type { RepoService, RepoAccess } from './service.js';
import type { RepoRow } from './tables.js';

export type Form = Record<string, string | undefined>;

export interface AdminRepo {
  user: UserRow;
  owner: UserRow;
  repo: RepoRow;
  access: RepoAccess;
  /** `/{owner}/{repo}/settings` */
  base: string;
}

/** The repository of the path, for a signed-in administrator of it (sign-in first, 404, 403). */
export async function adminRepo(
  web: Web,
  request: FastifyRequest,
  deps: {
    repos: Pick<RepoService, 'requireRepo'>;
    owners: { getById(id: number): Promise<UserRow | undefined> };
  },
): Promise<AdminRepo> {
  const user = web.requireUser(request);
  const p = request.params as Record<string, string>;
  const { repo, access } = await deps.repos.requireRepo(
    p['owner'] ?? '',
    p['repo'] ?? '',
    request.web.viewer,
    'admin',
  );
  const owner = (await deps.owners.getById(repo.owner_id))!;
  const base = `/${encodeURIComponent(owner.name)}/${encodeURIComponent(repo.name)}/settings`;
  return { user, owner, repo, access, base };
}

/** A page of a repository's settings: the frame with the repository's menu. */
export function RepoSettingsFrame(props: {
  page: PageContext;
  t: AdminRepo;
  title: string;
  active: string;
  children: ComponentChildren;
}): VNode {
  const { t } = props;
  return (
    <SettingsLayout
      page={props.page}
      title={`${props.title} - ${t.owner.name}/${t.repo.name}`}
      area={`${t.owner.name}/${t.repo.name}`}
      nav={repoSettingsNav(t.owner.name, t.repo.name)}
      active={`${t.base}${props.active}`}
    >
      <p class="settings-back">
        <a href={`/${t.owner.name}/${t.repo.name}`}>Back to {t.repo.name}</a>
      </p>
      {props.children}
    </SettingsLayout>
  );
}

/** A labelled one-line input whose id is given (several forms of a page share field names). */
export function Input(props: {
  id: string;
  label: string;
  name: string;
  value?: string | undefined;
  type?: string;
  required?: boolean;
  maxLength?: number;
  placeholder?: string;
  hint?: string;
  error?: string | undefined;
}): VNode {
  const errId = `${props.id}-error`;
  return (
    <div class={props.error ? 'field invalid' : 'field'}>
      <label for={props.id}>{props.label}</label>
      <input
        id={props.id}
        name={props.name}
        type={(props.type ?? 'text') as 'text'}
        value={props.value ?? ''}
        required={props.required}
        maxLength={props.maxLength}
        placeholder={props.placeholder}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={props.error ? errId : undefined}
      />
      {props.hint ? <p class="muted hint">{props.hint}</p> : null}
      {props.error ? (
        <p class="field-error" id={errId}>
          {props.error}
        </p>
      ) : null}
    </div>
  );
}

/** A message for the whole form (what no single field is to blame for). */
export function FormError(props: { error: string | undefined }): VNode | null {
  return props.error ? (
    <p class="flash error" role="alert">
      {props.error}
    </p>
  ) : null;
}

const FORM_KINDS = new Set(['invalid', 'conflict', 'bad_request']);

/**
 * A service's refusal of what was typed, as `{field: message}`: "[Go name]: reason" and
 * "name: reason" messages go beside the field `fields` maps the name to (`form` otherwise).
 * Anything else (404, 403, failures) is thrown again, for the error page. `alsoForbidden` lets a
 * form show 403s of the service (a blocked recipient, say) beside its fields too.
 */
export function formErrors(err: unknown, fields: Record<string, string>, alsoForbidden = false): Form {
  if (
    !(err instanceof AppError) ||
    !(FORM_KINDS.has(err.kind) || (alsoForbidden && err.kind === 'forbidden'))
  )
    throw err;
  const go = /^\[(\w+)\]: (.*)$/s.exec(err.message);
  if (go) {
    const field = Object.entries(fields).find(([k]) => fieldLabel(k) === go[1])?.[1];
    return field ? { [field]: go[2] } : { form: go[2] };
  }
  const plain = /^(\w+): (.*)$/s.exec(err.message);
  if (plain && fields[plain[1]!]) return { [fields[plain[1]!]!]: plain[2] };
  return { form: err.message };
}

/** Names typed into one field, separated by commas, spaces or lines. */
export const nameList = (v: string | undefined): string[] => [
  ...new Set((v ?? '').split(/[\s,]+/).filter(Boolean)),
];

/** The same field as the error handling of a web form needs it: trimmed text. */
export const field = (body: unknown, name: string): string =>
  formText((body as Record<string, unknown> | undefined)?.[name]).trim();
