// The form of a webhook on its settings pages, with Forgejo's field names for each type: the
// target URL (payload_url), method, content type and secret of the JSON hooks; a Slack channel;
// Discord's username and icon_url; Telegram's bot_token, chat_id and thread_id (the URL is made
// from them); Packagist's username, api_token and package_url; SourceHut's manifest_path,
// visibility, secrets and access_token; and the events, branch filter, authorization header and
// active flag every hook has. Reading it back checks what can be checked beside each field.
import type { VNode } from 'preact';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { formList, formText } from '../web/plugin.js';
import { Checkbox, Select, ticked } from '../web/settings.js';
import { CHOICES, parseSettings } from './events.js';
import { metaOf } from './schemas.js';
import type { WebhookRow } from './tables.js';
import { BUILD_VISIBILITIES, FIXED_TYPES, isValidManifestPath, isWebUrl } from './types.js';

const CHOICE_LABELS: Record<string, string> = {
  create: 'Create (branch or tag created)',
  delete: 'Delete (branch or tag deleted)',
  fork: 'Fork',
  issues: 'Issues',
  issue_assign: 'Issue assigned',
  issue_label: 'Issue labelled',
  issue_milestone: 'Issue milestoned',
  issue_comment: 'Issue comment',
  push: 'Push',
  pull_request: 'Pull request',
  pull_request_assign: 'Pull request assigned',
  pull_request_label: 'Pull request labelled',
  pull_request_milestone: 'Pull request milestoned',
  pull_request_comment: 'Pull request comment',
  pull_request_review: 'Pull request reviewed',
  pull_request_sync: 'Pull request synchronized',
  pull_request_review_request: 'Pull request review requested',
  wiki: 'Wiki',
  repository: 'Repository',
  release: 'Release',
  package: 'Package',
};

/** The type-specific fields (posted under these names, kept in the hook's meta). */
const TYPE_FIELDS = [
  'channel',
  'username',
  'icon_url',
  'color',
  'bot_token',
  'chat_id',
  'thread_id',
  'api_token',
  'package_url',
  'manifest_path',
  'visibility',
] as const;

export interface FormState {
  values: Record<string, string>;
  chosen: string[];
  errors: Record<string, string>;
}

/** Whether the type's form asks for a target URL (telegram and packagist make theirs). */
const hasPayloadUrl = (type: string) => type !== 'telegram' && type !== 'packagist';

export const emptyForm = (): FormState => ({
  values: {
    events: 'push_only',
    content_type: 'json',
    http_method: 'POST',
    active: 'on',
    manifest_path: '.build.yml',
    visibility: 'PRIVATE',
  },
  chosen: [],
  errors: {},
});

export function formOf(row: WebhookRow, authorization: string): FormState {
  const s = parseSettings(row.events);
  const meta = metaOf(row) ?? {};
  const values: Record<string, string> = {
    payload_url: row.url,
    http_method: row.http_method,
    content_type: row.content_type,
    events: s.send_everything ? 'send_everything' : s.choose_events ? 'choose_events' : 'push_only',
    branch_filter: row.branch_filter,
    authorization_header: authorization,
    active: row.is_active ? 'on' : '',
    secrets: meta['secrets'] === true ? 'on' : '',
  };
  for (const k of TYPE_FIELDS) values[k] = typeof meta[k] === 'string' ? meta[k] : '';
  return { values, chosen: CHOICES.filter((c) => s.events[c]), errors: {} };
}

/** Reads the posted form and checks what can be checked before the service does. */
export function readForm(body: unknown, type: string, creating: boolean): FormState {
  const b = (body ?? {}) as Record<string, unknown>;
  const t = (name: string) => formText(b[name]).trim();
  const values: Record<string, string> = {
    payload_url: t('payload_url'),
    http_method: t('http_method') || 'POST',
    content_type: t('content_type') || 'json',
    secret: formText(b['secret']),
    events: t('events') || 'push_only',
    branch_filter: t('branch_filter'),
    authorization_header: formText(b['authorization_header']),
    active: ticked(b['active']) ? 'on' : '',
    secrets: ticked(b['secrets']) ? 'on' : '',
    access_token: t('access_token'),
  };
  for (const k of TYPE_FIELDS) values[k] = t(k);
  const chosen = CHOICES.filter((c) => ticked(b[c]) || formList(b['event']).includes(c));
  const errors: Record<string, string> = {};
  const v = (k: string) => values[k] ?? '';
  if (hasPayloadUrl(type)) {
    if (!v('payload_url')) errors['payload_url'] = 'Target URL is required.';
    else if (!isWebUrl(v('payload_url'))) {
      errors['payload_url'] = 'Target URL must be a valid http:// or https:// address.';
    }
  }
  if (!['push_only', 'send_everything', 'choose_events'].includes(v('events'))) {
    errors['events'] = 'Choose which events trigger this webhook.';
  } else if (v('events') === 'choose_events' && chosen.length === 0) {
    errors['events'] = 'Choose at least one event.';
  }
  if (!FIXED_TYPES.has(type) && !['json', 'form'].includes(v('content_type'))) {
    errors['content_type'] = 'Unknown content type.';
  }
  // eslint-disable-next-line no-control-regex -- one header line
  if (/[\x00-\x1f\x7f]/.test(v('authorization_header'))) {
    errors['authorization_header'] = 'The authorization header must be a single line.';
  }
  if (v('secret').length > 255) errors['secret'] = 'The secret must be at most 255 characters.';
  const required = (k: string, label: string) => {
    if (!v(k)) errors[k] = `${label} is required.`;
  };
  switch (type) {
    case 'slack':
      if ((v('channel') === '' || v('channel') === '#') && creating) {
        errors['channel'] = 'A Slack channel is required.';
      }
      break;
    case 'discord':
      required('username', 'The username');
      if (v('username').length > 80) errors['username'] = 'The username must be at most 80 characters.';
      if (v('icon_url') && !isWebUrl(v('icon_url'))) {
        errors['icon_url'] = 'The icon URL must be a valid http:// or https:// address.';
      }
      break;
    case 'telegram':
      required('bot_token', 'The bot token');
      required('chat_id', 'The chat ID');
      break;
    case 'packagist':
      required('username', 'The Packagist username');
      required('api_token', 'The API token');
      if (!v('package_url')) errors['package_url'] = 'The package URL is required.';
      else if (!isWebUrl(v('package_url'))) {
        errors['package_url'] = 'The package URL must be a valid http:// or https:// address.';
      }
      break;
    case 'sourcehut_builds':
      if (!v('manifest_path')) errors['manifest_path'] = 'The manifest path is required.';
      else if (!isValidManifestPath(v('manifest_path'))) {
        errors['manifest_path'] = 'The manifest path must be a relative path inside the repository.';
      }
      if (!(BUILD_VISIBILITIES as readonly string[]).includes(v('visibility'))) {
        errors['visibility'] = 'Choose public, unlisted or private.';
      }
      if (creating) required('access_token', 'The access token');
      break;
  }
  return { values, chosen, errors };
}

export function eventsOf(f: FormState): string[] {
  const how = f.values['events'];
  return how === 'send_everything' ? ['*'] : how === 'choose_events' ? f.chosen : [];
}

/** The API config of the form's values. */
export function configOf(f: FormState, type: string, creating: boolean): Record<string, string> {
  const v = (k: string) => f.values[k] ?? '';
  const pick = (...keys: string[]) => Object.fromEntries(keys.map((k) => [k, v(k)]));
  switch (type) {
    case 'discord':
      return { url: v('payload_url'), ...pick('username', 'icon_url') };
    case 'telegram':
      return pick('bot_token', 'chat_id', 'thread_id');
    case 'packagist':
      return pick('username', 'api_token', 'package_url');
    case 'sourcehut_builds': {
      const config: Record<string, string> = {
        url: v('payload_url'),
        ...pick('manifest_path', 'visibility'),
        secrets: v('secrets') === 'on' ? 'true' : 'false',
      };
      // An empty access token on the edit page keeps the one stored (it is never shown).
      if (v('access_token')) config['access_token'] = v('access_token');
      return config;
    }
    case 'dingtalk':
    case 'msteams':
    case 'feishu':
    case 'wechatwork':
      return { url: v('payload_url') };
  }
  const config: Record<string, string> = {
    url: v('payload_url'),
    content_type: v('content_type'),
    http_method: type === 'matrix' && creating && v('http_method') === 'POST' ? 'PUT' : v('http_method'),
  };
  // An empty secret on the edit page keeps the one stored (it is never shown).
  if (creating || v('secret')) config['secret'] = v('secret');
  if (type === 'slack') Object.assign(config, pick('channel', 'username', 'icon_url', 'color'));
  return config;
}

/** The authorization header the form asks for (SourceHut's comes from its access token). */
export const authorizationOf = (f: FormState, type: string): string | undefined =>
  type === 'sourcehut_builds' ? undefined : f.values['authorization_header'];

/** The fields of `type` beside the ones every hook has. */
function TypeFields(props: { type: string; state: FormState; creating: boolean }): VNode | null {
  const { values: v, errors: e } = props.state;
  const text = (name: string, label: string, opts: { required?: boolean; type?: string } = {}) => (
    <Field
      label={label}
      name={name}
      type={opts.type}
      value={v[name] ?? ''}
      required={opts.required}
      error={e[name]}
    />
  );
  const url = text('payload_url', 'Target URL', { required: true, type: 'url' });
  switch (props.type) {
    case 'discord':
      return (
        <>
          {url}
          {text('username', 'Username', { required: true })}
          {text('icon_url', 'Icon URL', { type: 'url' })}
        </>
      );
    case 'telegram':
      return (
        <>
          {text('bot_token', 'Bot token', { required: true })}
          {text('chat_id', 'Chat ID', { required: true })}
          {text('thread_id', 'Thread ID')}
        </>
      );
    case 'packagist':
      return (
        <>
          {text('username', 'Packagist username', { required: true })}
          {text('api_token', 'API token', { required: true })}
          {text('package_url', 'Package URL', { required: true, type: 'url' })}
        </>
      );
    case 'sourcehut_builds':
      return (
        <>
          {url}
          {text('manifest_path', 'Build manifest path', { required: true })}
          <Select
            label="Visibility"
            name="visibility"
            value={v['visibility']}
            error={e['visibility']}
            options={[
              { value: 'PUBLIC', label: 'Public' },
              { value: 'UNLISTED', label: 'Unlisted' },
              { value: 'PRIVATE', label: 'Private' },
            ]}
          />
          <Checkbox
            label="Give the build access to its secrets"
            name="secrets"
            checked={v['secrets'] === 'on'}
          />
          <Field
            label={props.creating ? 'Access token' : 'Access token (leave empty to keep the current one)'}
            name="access_token"
            type="password"
            value=""
            autocomplete="off"
            required={props.creating}
            error={e['access_token']}
          />
        </>
      );
    case 'dingtalk':
    case 'msteams':
    case 'feishu':
    case 'wechatwork':
      return url;
    default:
      return null;
  }
}

/** The target URL, method, content type (and Slack's settings) of the JSON and Slack/Matrix hooks. */
function JsonFields(props: { type: string; state: FormState }): VNode {
  const { values: v, errors: e } = props.state;
  return (
    <>
      <Field
        label="Target URL"
        name="payload_url"
        type="url"
        value={v['payload_url'] ?? ''}
        required
        error={e['payload_url']}
      />
      <Select
        label="HTTP method"
        name="http_method"
        value={v['http_method']}
        options={(props.type === 'matrix' ? ['PUT', 'POST', 'GET'] : ['POST', 'GET']).map((m) => ({
          value: m,
          label: m,
        }))}
      />
      <Select
        label="POST content type"
        name="content_type"
        value={v['content_type']}
        error={e['content_type']}
        options={[
          { value: 'json', label: 'application/json' },
          { value: 'form', label: 'application/x-www-form-urlencoded' },
        ]}
      />
      {props.type === 'slack' ? (
        <>
          <Field label="Channel" name="channel" value={v['channel'] ?? ''} error={e['channel']} />
          <Field label="Username" name="username" value={v['username'] ?? ''} />
          <Field label="Icon URL" name="icon_url" value={v['icon_url'] ?? ''} />
          <Field label="Color" name="color" value={v['color'] ?? ''} />
        </>
      ) : (
        <></>
      )}
    </>
  );
}

export function HookForm(props: {
  page: PageContext;
  action: string;
  type: string;
  state: FormState;
  creating: boolean;
  formError?: string | undefined;
}): VNode {
  const { values: v, errors: e } = props.state;
  const how = v['events'];
  const fixed = FIXED_TYPES.has(props.type);
  return (
    <form method="post" action={props.action} class="hook-form">
      <CsrfField page={props.page} />
      {props.formError ? (
        <p class="flash error" role="alert">
          {props.formError}
        </p>
      ) : null}
      {fixed ? (
        <TypeFields type={props.type} state={props.state} creating={props.creating} />
      ) : (
        <JsonFields type={props.type} state={props.state} />
      )}
      {fixed ? null : (
        <Field
          label={props.creating ? 'Secret' : 'Secret (leave empty to keep the current one)'}
          name="secret"
          type="password"
          value=""
          autocomplete="new-password"
          error={e['secret']}
        />
      )}
      <fieldset class={e['events'] ? 'field invalid hook-events' : 'field hook-events'}>
        <legend>Trigger on</legend>
        {(
          [
            ['push_only', 'Push events'],
            ['send_everything', 'All events'],
            ['choose_events', 'Custom events'],
          ] as const
        ).map(([value, label]) => (
          <div class="field check" key={value}>
            <input
              id={`f-events-${value}`}
              type="radio"
              name="events"
              value={value}
              checked={how === value}
            />
            <label for={`f-events-${value}`}>{label}</label>
          </div>
        ))}
        <div class="hook-choices">
          {CHOICES.map((c) => (
            <Checkbox
              key={c}
              label={CHOICE_LABELS[c] ?? c}
              name={c}
              checked={props.state.chosen.includes(c)}
            />
          ))}
        </div>
        {e['events'] ? (
          <p class="field-error" id="f-events-error">
            {e['events']}
          </p>
        ) : null}
      </fieldset>
      <Field
        label="Branch filter"
        name="branch_filter"
        value={v['branch_filter'] ?? ''}
        error={e['branch_filter']}
      />
      {props.type === 'sourcehut_builds' ? null : (
        <Field
          label="Authorization header"
          name="authorization_header"
          value={v['authorization_header'] ?? ''}
          error={e['authorization_header']}
        />
      )}
      <Checkbox label="Active" name="active" checked={v['active'] === 'on'} />
      <button type="submit" class="primary">
        {props.creating ? 'Add webhook' : 'Update webhook'}
      </button>
    </form>
  );
}
