// Branch and tag protection in a repository's settings, at Forgejo's addresses and with its field
// names: `/settings/branches` (the rules), `/settings/branches/edit?rule_name=` (a new or existing
// rule with every field of the API's BranchProtection), `/settings/branches/{id}/delete`;
// `/settings/tags` (the rules and a new one), `/settings/tags/{id}` (edit), `/settings/tags/delete`.
// Allow-lists are typed as names (users, teams), separated by commas or spaces.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import type { RepoService } from '../repos/service.js';
import {
  FormError,
  Input,
  RepoSettingsFrame,
  adminRepo,
  field,
  formErrors,
  nameList,
  type AdminRepo,
  type Form,
} from '../repos/settings-common.js';
import type { UserService } from '../users/service.js';
import { UserType } from '../users/tables.js';
import { CsrfField, type PageContext } from '../web/layout.js';
import type { PageRoutes, Web } from '../web/plugin.js';
import { Checkbox, DangerForm, Section, TextArea, ticked } from '../web/settings.js';
import type { ProtectionOptions, ProtectionRule, ProtectionService, TagProtectionRule } from './service.js';

export interface ProtectionPagesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  users: Pick<UserService, 'getById'>;
  protection: Pick<
    ProtectionService,
    | 'list'
    | 'get'
    | 'create'
    | 'edit'
    | 'delete'
    | 'followRename'
    | 'listTagRules'
    | 'getTagRule'
    | 'createTagRule'
    | 'editTagRule'
    | 'deleteTagRule'
  >;
}

/** The checkboxes of a rule: Forgejo's form field, the API's field, the label. */
const FLAGS = [
  [
    'enable_merge_whitelist',
    'enable_merge_whitelist',
    'Only allow-listed users or teams may merge pull requests',
  ],
  ['enable_status_check', 'enable_status_check', 'Require status checks to pass before merging'],
  [
    'enable_approvals_whitelist',
    'enable_approvals_whitelist',
    'Only approvals of allow-listed users or teams count',
  ],
  ['block_on_rejected_reviews', 'block_on_rejected_reviews', 'Block merging on rejected reviews'],
  [
    'block_on_official_review_requests',
    'block_on_official_review_requests',
    'Block merging on official review requests',
  ],
  ['block_on_outdated_branch', 'block_on_outdated_branch', 'Block merging when the pull request is outdated'],
  [
    'dismiss_stale_approvals',
    'dismiss_stale_approvals',
    'Dismiss stale approvals when new commits are pushed',
  ],
  ['ignore_stale_approvals', 'ignore_stale_approvals', 'Ignore stale approvals (they do not count)'],
  ['require_signed_commits', 'require_signed_commits', 'Require signed commits'],
  ['apply_to_admins', 'apply_to_admins', 'Apply the rule to administrators too'],
] as const;

/** The allow-lists: Forgejo's field, the API's field, the label. */
const LISTS = [
  ['whitelist_users', 'push_whitelist_usernames', 'Users allowed to push'],
  ['whitelist_teams', 'push_whitelist_teams', 'Teams allowed to push'],
  ['merge_whitelist_users', 'merge_whitelist_usernames', 'Users allowed to merge'],
  ['merge_whitelist_teams', 'merge_whitelist_teams', 'Teams allowed to merge'],
  ['approvals_whitelist_users', 'approvals_whitelist_username', 'Users whose approvals count'],
  ['approvals_whitelist_teams', 'approvals_whitelist_teams', 'Teams whose approvals count'],
] as const;

/** The form's values of a rule (or of a new one). */
function ruleValues(r: ProtectionRule | undefined): Form {
  if (!r) return { enable_push: '', required_approvals: '0' };
  return {
    rule_id: String(r.id),
    rule_name: r.rule_name,
    enable_push: r.enable_push ? (r.enable_push_whitelist ? 'whitelist' : 'all') : '',
    whitelist_deploy_keys: r.push_whitelist_deploy_keys ? 'on' : undefined,
    whitelist_users: r.push.users.join(', '),
    whitelist_teams: r.push.teams.join(', '),
    merge_whitelist_users: r.merge.users.join(', '),
    merge_whitelist_teams: r.merge.teams.join(', '),
    approvals_whitelist_users: r.approvals.users.join(', '),
    approvals_whitelist_teams: r.approvals.teams.join(', '),
    status_check_contexts: r.statusCheckContexts.join('\n'),
    required_approvals: String(r.required_approvals),
    protected_file_patterns: r.protected_file_patterns,
    unprotected_file_patterns: r.unprotected_file_patterns,
    ...Object.fromEntries(FLAGS.map(([f, api]) => [f, r[api] ? 'on' : undefined])),
  };
}

function BranchesPage(props: { page: PageContext; t: AdminRepo; rules: ProtectionRule[] }): VNode {
  const { page, t } = props;
  return (
    <RepoSettingsFrame page={page} t={t} title="Branches" active="/branches">
      <Section title="Branch protection rules">
        <p class="muted">
          A rule protects the branches its name matches (a branch name, or a glob such as{' '}
          <code>release/*</code>): who may push, what a merge needs.
        </p>
        {props.rules.length ? (
          <ul class="list settings-rows">
            {props.rules.map((r) => (
              <li>
                <code class="title">{r.rule_name}</code>
                <span class="muted">
                  {r.enable_push
                    ? r.enable_push_whitelist
                      ? 'push: allow-listed'
                      : 'push: writers'
                    : 'push: nobody'}
                  {r.required_approvals ? ` · ${r.required_approvals} approvals` : ''}
                  {r.enable_status_check ? ' · status checks' : ''}
                </span>
                <a
                  class="button"
                  href={`${t.base}/branches/edit?rule_name=${encodeURIComponent(r.rule_name)}`}
                >
                  Edit
                </a>
                <DangerForm
                  page={page}
                  action={`${t.base}/branches/${r.id}/delete`}
                  button="Delete"
                  confirm={`Delete the protection rule ${r.rule_name}?`}
                />
              </li>
            ))}
          </ul>
        ) : (
          <p class="empty">No branch is protected.</p>
        )}
        <p>
          <a class="button primary" href={`${t.base}/branches/edit`}>
            Add a protection rule
          </a>
        </p>
      </Section>
    </RepoSettingsFrame>
  );
}

function RuleForm(props: { page: PageContext; t: AdminRepo; values: Form; errors: Form }): VNode {
  const { page, t, values: v, errors: e } = props;
  const org = t.owner.type === UserType.Organization;
  const listField = (name: (typeof LISTS)[number][0]) => {
    const entry = LISTS.find(([f]) => f === name)!;
    return (
      <Input
        id={`f-${name}`}
        label={entry[2]}
        name={name}
        value={v[name]}
        placeholder="names, separated by commas"
        error={e[name]}
      />
    );
  };
  const flag = (name: (typeof FLAGS)[number][0]) => (
    <Checkbox label={FLAGS.find(([f]) => f === name)![2]} name={name} checked={ticked(v[name])} />
  );
  const editing = Boolean(v['rule_id']);
  return (
    <RepoSettingsFrame page={page} t={t} title="Branch protection" active="/branches">
      <Section title={editing ? `Protection rule ${v['rule_name'] ?? ''}` : 'New protection rule'}>
        <form method="post" action={`${t.base}/branches/edit`}>
          <CsrfField page={page} />
          {editing ? <input type="hidden" name="rule_id" value={v['rule_id']} /> : null}
          <FormError error={e['form']} />
          <Input
            id="f-rule_name"
            label="Protected branch name pattern"
            name="rule_name"
            value={v['rule_name']}
            required
            maxLength={255}
            hint="A branch name or a glob ('*' within a path segment, '**' across '/')."
            error={e['rule_name']}
          />
          <fieldset class="plain">
            <legend>Push</legend>
            {(
              [
                ['', 'Disable push: nobody pushes to these branches'],
                ['all', 'Enable push: everyone with write access'],
                ['whitelist', 'Allow-listed push: only the users and teams below'],
              ] as const
            ).map(([value, label]) => (
              <div class="field check">
                <input
                  type="radio"
                  id={`f-enable_push-${value || 'none'}`}
                  name="enable_push"
                  value={value}
                  checked={(v['enable_push'] ?? '') === value}
                />
                <label for={`f-enable_push-${value || 'none'}`}>{label}</label>
              </div>
            ))}
            {listField('whitelist_users')}
            {org ? listField('whitelist_teams') : null}
            <Checkbox
              label="Deploy keys with write access may push too"
              name="whitelist_deploy_keys"
              checked={ticked(v['whitelist_deploy_keys'])}
            />
          </fieldset>
          <fieldset class="plain">
            <legend>Merging</legend>
            {flag('enable_merge_whitelist')}
            {listField('merge_whitelist_users')}
            {org ? listField('merge_whitelist_teams') : null}
            {flag('enable_status_check')}
            <TextArea
              label="Required status check contexts (one per line)"
              name="status_check_contexts"
              value={v['status_check_contexts']}
              rows={3}
              error={e['status_check_contexts']}
            />
          </fieldset>
          <fieldset class="plain">
            <legend>Reviews</legend>
            <Input
              id="f-required_approvals"
              label="Required approvals"
              name="required_approvals"
              type="number"
              value={v['required_approvals']}
              error={e['required_approvals']}
            />
            {flag('enable_approvals_whitelist')}
            {listField('approvals_whitelist_users')}
            {org ? listField('approvals_whitelist_teams') : null}
            {flag('block_on_rejected_reviews')}
            {flag('block_on_official_review_requests')}
            {flag('block_on_outdated_branch')}
            {flag('dismiss_stale_approvals')}
            {flag('ignore_stale_approvals')}
          </fieldset>
          <fieldset class="plain">
            <legend>Commits and files</legend>
            {flag('require_signed_commits')}
            <Input
              id="f-protected_file_patterns"
              label="Protected file patterns"
              name="protected_file_patterns"
              value={v['protected_file_patterns']}
              hint="Globs separated by ';': changes to these files are refused even to those who may push."
              error={e['protected_file_patterns']}
            />
            <Input
              id="f-unprotected_file_patterns"
              label="Unprotected file patterns"
              name="unprotected_file_patterns"
              value={v['unprotected_file_patterns']}
              hint="Globs separated by ';': files anyone with write access may change, even without push access."
              error={e['unprotected_file_patterns']}
            />
            {flag('apply_to_admins')}
          </fieldset>
          <button type="submit" class="primary">
            {editing ? 'Save rule' : 'Create rule'}
          </button>{' '}
          <a href={`${t.base}/branches`}>Cancel</a>
        </form>
      </Section>
    </RepoSettingsFrame>
  );
}

function TagsPage(props: {
  page: PageContext;
  t: AdminRepo;
  rules: TagProtectionRule[];
  editing: TagProtectionRule | undefined;
  values: Form;
  errors: Form;
}): VNode {
  const { page, t, values: v, errors: e } = props;
  const org = t.owner.type === UserType.Organization;
  const action = props.editing ? `${t.base}/tags/${props.editing.id}` : `${t.base}/tags`;
  return (
    <RepoSettingsFrame page={page} t={t} title="Tags" active="/tags">
      <Section title="Protected tags">
        {props.rules.length ? (
          <ul class="list settings-rows">
            {props.rules.map((r) => (
              <li>
                <code class="title">{r.name_pattern}</code>
                <span class="muted">allowed: {[...r.users, ...r.teams].join(', ') || 'nobody'}</span>
                <a class="button" href={`${t.base}/tags/${r.id}`}>
                  Edit
                </a>
                <DangerForm
                  page={page}
                  action={`${t.base}/tags/delete`}
                  button="Delete"
                  confirm={`Delete the tag protection ${r.name_pattern}?`}
                >
                  <input type="hidden" name="id" value={String(r.id)} />
                </DangerForm>
              </li>
            ))}
          </ul>
        ) : (
          <p class="empty">No tag is protected.</p>
        )}
      </Section>
      <Section title={props.editing ? `Edit ${props.editing.name_pattern}` : 'Protect tags'}>
        <form method="post" action={action}>
          <CsrfField page={page} />
          <FormError error={e['form']} />
          <Input
            id="f-name_pattern"
            label="Tag name or pattern"
            name="name_pattern"
            value={v['name_pattern']}
            required
            maxLength={255}
            hint="A tag name, a glob (v*), or a regular expression between slashes (/^v\d+$/)."
            error={e['name_pattern']}
          />
          <Input
            id="f-allowlist_users"
            label="Users allowed to create, move and delete these tags"
            name="allowlist_users"
            value={v['allowlist_users']}
            placeholder="names, separated by commas"
            error={e['allowlist_users']}
          />
          {org ? (
            <Input
              id="f-allowlist_teams"
              label="Teams allowed"
              name="allowlist_teams"
              value={v['allowlist_teams']}
              placeholder="names, separated by commas"
              error={e['allowlist_teams']}
            />
          ) : null}
          <button type="submit" class="primary">
            {props.editing ? 'Save' : 'Protect tags'}
          </button>
          {props.editing ? (
            <>
              {' '}
              <a href={`${t.base}/tags`}>Cancel</a>
            </>
          ) : null}
        </form>
      </Section>
    </RepoSettingsFrame>
  );
}

/** The rule a branch protection form asks for, in the API's terms (every field given). */
function optionsOf(body: unknown, org: boolean): { values: Form; opts: ProtectionOptions; error?: Form } {
  const values: Form = { rule_id: field(body, 'rule_id') || undefined, rule_name: field(body, 'rule_name') };
  for (const name of [
    'enable_push',
    'status_check_contexts',
    'required_approvals',
    'protected_file_patterns',
    'unprotected_file_patterns',
    ...LISTS.map(([f]) => f),
  ]) {
    values[name] = field(body, name);
  }
  for (const [f] of FLAGS) values[f] = ticked(field(body, f)) ? 'on' : undefined;
  values['whitelist_deploy_keys'] = ticked(field(body, 'whitelist_deploy_keys')) ? 'on' : undefined;
  const push = values['enable_push'];
  const approvals = values['required_approvals'] || '0';
  const opts: ProtectionOptions = {
    rule_name: values['rule_name'],
    enable_push: push === 'all' || push === 'whitelist',
    enable_push_whitelist: push === 'whitelist',
    push_whitelist_deploy_keys: push === 'whitelist' && values['whitelist_deploy_keys'] === 'on',
    status_check_contexts: (values['status_check_contexts'] ?? '')
      .split(/\r?\n/)
      .map((c) => c.trim())
      .filter(Boolean),
    required_approvals: Number(approvals),
    protected_file_patterns: values['protected_file_patterns'],
    unprotected_file_patterns: values['unprotected_file_patterns'],
    ...Object.fromEntries(FLAGS.map(([f, api]) => [api, values[f] === 'on'])),
  };
  for (const [f, api] of LISTS) {
    if (!org && api.endsWith('_teams')) continue;
    (opts as Record<string, unknown>)[api] = nameList(values[f]);
  }
  let error: Form | undefined;
  if (!values['rule_name']) error = { rule_name: 'The branch name pattern must not be empty.' };
  else if (values['rule_name']!.length > 255)
    error = { rule_name: 'The pattern must be at most 255 characters.' };
  else if (!/^\d{1,4}$/.test(approvals)) error = { required_approvals: 'Give a whole number from 0 up.' };
  return error ? { values, opts, error } : { values, opts };
}

/** Where a service's complaint about a field of the rule goes on the form. */
const RULE_FIELDS: Record<string, string> = {
  rule_name: 'rule_name',
  required_approvals: 'required_approvals',
  status_check_contexts: 'status_check_contexts',
  ...Object.fromEntries(LISTS.map(([f, api]) => [api, f])),
};

export function protectionPages(deps: ProtectionPagesDeps): PageRoutes {
  return (app, web: Web) => {
    const { repos, users, protection } = deps;
    const load = (request: FastifyRequest) => adminRepo(web, request, { repos, owners: users });

    app.get('/:owner/:repo/settings/branches', async (request, reply) => {
      const t = await load(request);
      return web.send(
        reply,
        <BranchesPage page={web.page(request)} t={t} rules={await protection.list(t.repo)} />,
      );
    });

    const showRule = (
      request: FastifyRequest,
      reply: FastifyReply,
      t: AdminRepo,
      values: Form,
      errors: Form,
    ) =>
      web.send(
        reply,
        <RuleForm page={web.page(request)} t={t} values={values} errors={errors} />,
        Object.keys(errors).length ? 422 : 200,
      );

    app.get('/:owner/:repo/settings/branches/edit', async (request, reply) => {
      const t = await load(request);
      const name = field(request.query, 'rule_name');
      const rule = name ? await protection.get(t.repo, name) : undefined;
      return showRule(request, reply, t, ruleValues(rule), {});
    });

    app.post('/:owner/:repo/settings/branches/edit', async (request, reply) => {
      const t = await load(request);
      const org = t.owner.type === UserType.Organization;
      const { values, opts, error } = optionsOf(request.body, org);
      if (error) return showRule(request, reply, t, values, error);
      const ruleName = values['rule_name']!;
      try {
        if (values['rule_id']) {
          const current = (await protection.list(t.repo)).find((r) => String(r.id) === values['rule_id']);
          if (!current) throw new AppError('not_found', 'That protection rule does not exist.');
          if (current.rule_name !== ruleName) {
            if ((await protection.list(t.repo)).some((r) => r.rule_name === ruleName)) {
              return showRule(request, reply, t, values, {
                rule_name: `A rule named ${ruleName} exists already.`,
              });
            }
          }
          // Checked in full before anything changes: the edit validates and resolves every list.
          await protection.edit(t.repo, current.rule_name, { ...opts, rule_name: undefined });
          if (current.rule_name !== ruleName)
            await protection.followRename(t.repo, current.rule_name, ruleName);
        } else {
          await protection.create(t.repo, opts);
        }
      } catch (err) {
        return showRule(request, reply, t, values, formErrors(err, RULE_FIELDS));
      }
      return web.redirect(reply, `${t.base}/branches`, {
        kind: 'info',
        text: `The protection rule ${ruleName} has been saved.`,
      });
    });

    app.post<{ Params: { id: string } }>(
      '/:owner/:repo/settings/branches/:id/delete',
      async (request, reply) => {
        const t = await load(request);
        const rule = (await protection.list(t.repo)).find((r) => String(r.id) === request.params.id);
        if (!rule) throw new AppError('not_found', 'That protection rule does not exist.');
        await protection.delete(t.repo, rule.rule_name);
        return web.redirect(reply, `${t.base}/branches`, {
          kind: 'info',
          text: `The protection rule ${rule.rule_name} was deleted.`,
        });
      },
    );

    // Tags

    const tagValues = (r: TagProtectionRule | undefined): Form =>
      r
        ? {
            name_pattern: r.name_pattern,
            allowlist_users: r.users.join(', '),
            allowlist_teams: r.teams.join(', '),
          }
        : {};

    const showTags = async (
      request: FastifyRequest,
      reply: FastifyReply,
      t: AdminRepo,
      editing: TagProtectionRule | undefined,
      values: Form,
      errors: Form,
    ) =>
      web.send(
        reply,
        <TagsPage
          page={web.page(request)}
          t={t}
          rules={await protection.listTagRules(t.repo)}
          editing={editing}
          values={values}
          errors={errors}
        />,
        Object.keys(errors).length ? 422 : 200,
      );

    const tagRuleOf = async (t: AdminRepo, id: string) => {
      if (!/^\d{1,15}$/.test(id)) throw new AppError('not_found', 'That tag protection does not exist.');
      return protection.getTagRule(t.repo, Number(id));
    };

    /** The tag form (Forgejo's allowlist_*, and the older whitelist_* names). */
    const tagForm = (body: unknown, org: boolean) => {
      const values: Form = {
        name_pattern: field(body, 'name_pattern'),
        allowlist_users: field(body, 'allowlist_users') || field(body, 'whitelist_users'),
        allowlist_teams: field(body, 'allowlist_teams') || field(body, 'whitelist_teams'),
      };
      return {
        values,
        opts: {
          name_pattern: values['name_pattern'],
          whitelist_usernames: nameList(values['allowlist_users']),
          whitelist_teams: org ? nameList(values['allowlist_teams']) : [],
        },
      };
    };
    const TAG_FIELDS = {
      name_pattern: 'name_pattern',
      whitelist_usernames: 'allowlist_users',
      whitelist_teams: 'allowlist_teams',
    };

    app.get('/:owner/:repo/settings/tags', async (request, reply) => {
      const t = await load(request);
      return showTags(request, reply, t, undefined, {}, {});
    });

    app.post('/:owner/:repo/settings/tags', async (request, reply) => {
      const t = await load(request);
      const { values, opts } = tagForm(request.body, t.owner.type === UserType.Organization);
      if (!values['name_pattern'])
        return showTags(request, reply, t, undefined, values, {
          name_pattern: 'Give a tag name or pattern.',
        });
      try {
        await protection.createTagRule(t.repo, opts);
      } catch (err) {
        return showTags(request, reply, t, undefined, values, formErrors(err, TAG_FIELDS));
      }
      return web.redirect(reply, `${t.base}/tags`, {
        kind: 'info',
        text: `Tags matching ${values['name_pattern']} are protected.`,
      });
    });

    app.get<{ Params: { id: string } }>('/:owner/:repo/settings/tags/:id', async (request, reply) => {
      const t = await load(request);
      const rule = await tagRuleOf(t, request.params.id);
      return showTags(request, reply, t, rule, tagValues(rule), {});
    });

    app.post<{ Params: { id: string } }>('/:owner/:repo/settings/tags/:id', async (request, reply) => {
      const t = await load(request);
      if (request.params.id === 'delete') {
        const rule = await tagRuleOf(t, field(request.body, 'id'));
        await protection.deleteTagRule(t.repo, rule.id);
        return web.redirect(reply, `${t.base}/tags`, {
          kind: 'info',
          text: `The tag protection ${rule.name_pattern} was deleted.`,
        });
      }
      const rule = await tagRuleOf(t, request.params.id);
      const { values, opts } = tagForm(request.body, t.owner.type === UserType.Organization);
      if (!values['name_pattern'])
        return showTags(request, reply, t, rule, values, { name_pattern: 'Give a tag name or pattern.' });
      if (!opts.whitelist_usernames.length && !opts.whitelist_teams.length) {
        return showTags(request, reply, t, rule, values, {
          allowlist_users: 'Allow at least one user or team.',
        });
      }
      try {
        await protection.editTagRule(t.repo, rule.id, opts);
      } catch (err) {
        return showTags(request, reply, t, rule, values, formErrors(err, TAG_FIELDS));
      }
      return web.redirect(reply, `${t.base}/tags`, {
        kind: 'info',
        text: `The tag protection ${values['name_pattern']} has been saved.`,
      });
    });
  };
}
