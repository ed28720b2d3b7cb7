// A repository's settings at Forgejo's addresses, for its administrators: the options page
// (`/{owner}/{repo}/settings`, posted with `action`: update (name, description, website,
// visibility, template, default branch; a rename keeps the old address leading here), transfer,
// archive, unarchive, delete) and the units on or off with the merge styles pull requests may use
// (`/settings/units`). Every change goes
// through the services the API uses, with the API's permission checks (delete and transfer: owners).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { forbidden } from '../errors.js';
import { AccessMode } from '../orgs/tables.js';
import type { OrgService } from '../orgs/service.js';
import type { UserService } from '../users/service.js';
import { UserType } from '../users/tables.js';
import { CsrfField, type PageContext } from '../web/layout.js';
import type { PageRoutes, Web } from '../web/plugin.js';
import { Checkbox, DangerForm, Section, Select, TextArea, ticked } from '../web/settings.js';
import type { RepoService } from './service.js';
import type { RepoTransfers } from './transfers.js';
import {
  FormError,
  Input,
  RepoSettingsFrame,
  adminRepo,
  field,
  formErrors,
  type AdminRepo,
  type Form,
} from './settings-common.js';

export interface RepoSettingsPagesDeps {
  repos: Pick<RepoService, 'requireRepo' | 'edit' | 'delete'>;
  transfers: Pick<RepoTransfers, 'startTransfer'>;
  users: Pick<UserService, 'getById' | 'getByName'>;
  orgs: Pick<OrgService, 'canSee'>;
}

/** The units a repository turns on and off, with Forgejo's form field names. */
const UNITS = [
  ['enable_issues', 'has_issues', 'Issues', 'hasIssues'],
  ['enable_pulls', 'has_pull_requests', 'Pull requests', 'hasPullRequests'],
  ['enable_wiki', 'has_wiki', 'Wiki', 'hasWiki'],
  ['enable_releases', 'has_releases', 'Releases', 'hasReleases'],
  ['enable_projects', 'has_projects', 'Projects', 'hasProjects'],
  ['enable_packages', 'has_packages', 'Packages', 'hasPackages'],
  ['enable_actions', 'has_actions', 'Actions', 'hasActions'],
] as const;

/** The pull requests unit's options: Forgejo's form field, the column, the label, the edit's key. */
const PULL_OPTIONS = [
  ['pulls_allow_merge', 'allow_merge_commits', 'Allow merge commits', 'allowMergeCommits'],
  ['pulls_allow_rebase', 'allow_rebase', 'Allow rebasing', 'allowRebase'],
  [
    'pulls_allow_rebase_merge',
    'allow_rebase_explicit',
    'Allow rebasing with a merge commit',
    'allowRebaseExplicit',
  ],
  ['pulls_allow_squash', 'allow_squash_merge', 'Allow squashing', 'allowSquashMerge'],
  [
    'pulls_allow_fast_forward_only',
    'allow_fast_forward_only_merge',
    'Allow fast-forward only',
    'allowFastForwardOnlyMerge',
  ],
  [
    'pulls_allow_rebase_update',
    'allow_rebase_update',
    'Allow updating a pull request branch by rebase',
    'allowRebaseUpdate',
  ],
  [
    'default_delete_branch_after_merge',
    'default_delete_branch_after_merge',
    'Delete the head branch after merging by default',
    'defaultDeleteBranchAfterMerge',
  ],
  [
    'default_allow_maintainer_edit',
    'default_allow_maintainer_edit',
    'Allow edits from maintainers by default',
    'defaultAllowMaintainerEdit',
  ],
] as const;

/** Each merge style, its label and the option that allows it. */
const MERGE_STYLE_LABELS = [
  ['merge', 'Create merge commit', 'pulls_allow_merge'],
  ['rebase', 'Rebase then fast-forward', 'pulls_allow_rebase'],
  ['rebase-merge', 'Rebase then create merge commit', 'pulls_allow_rebase_merge'],
  ['squash', 'Squash', 'pulls_allow_squash'],
  ['fast-forward-only', 'Fast-forward only', 'pulls_allow_fast_forward_only'],
] as const;

const isUrl = (v: string) => {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
};

function OptionsPage(props: { page: PageContext; t: AdminRepo; values: Form; errors: Form }): VNode {
  const { page, t, values: v, errors: e } = props;
  const err = (action: string, name: string) => (e['action'] === action ? e[name] : undefined);
  const typed = (action: string, name: string) => (e['action'] === action ? v[name] : '');
  const isOwner = t.access.mode >= AccessMode.owner;
  return (
    <RepoSettingsFrame page={page} t={t} title="Settings" active="">
      <Section title="Repository">
        <form method="post" action={t.base}>
          <CsrfField page={page} />
          <input type="hidden" name="action" value="update" />
          <FormError error={err('update', 'form')} />
          <Input
            id="f-repo_name"
            label="Repository name"
            name="repo_name"
            value={v['repo_name']}
            required
            maxLength={100}
            error={err('update', 'repo_name')}
          />
          <TextArea
            label="Description"
            name="description"
            value={v['description']}
            rows={3}
            maxLength={2048}
            error={err('update', 'description')}
          />
          <Input
            id="f-website"
            label="Website"
            name="website"
            type="url"
            value={v['website']}
            maxLength={1024}
            error={err('update', 'website')}
          />
          <Input
            id="f-default_branch"
            label="Default branch"
            name="default_branch"
            value={v['default_branch']}
            error={err('update', 'default_branch')}
          />
          <Checkbox
            label="Make repository private"
            name="private"
            checked={ticked(v['private'])}
            hint="Only the owner and collaborators can see it."
          />
          <Checkbox label="Template repository" name="template" checked={ticked(v['template'])} />
          <button type="submit" class="primary">
            Update settings
          </button>
        </form>
      </Section>
      <Section title="Danger zone" danger>
        <div class="danger-item">
          <h3>{t.repo.is_archived ? 'Unarchive this repository' : 'Archive this repository'}</h3>
          <p class="muted">
            {t.repo.is_archived
              ? 'Issues, pull requests and pushes open again.'
              : 'An archived repository is read-only: no pushes, issues or pull requests.'}
          </p>
          <DangerForm
            page={page}
            action={t.base}
            button={t.repo.is_archived ? 'Unarchive' : 'Archive'}
            confirm={
              t.repo.is_archived
                ? `Unarchive ${t.owner.name}/${t.repo.name}?`
                : `Archive ${t.owner.name}/${t.repo.name}? It becomes read-only.`
            }
          >
            <input type="hidden" name="action" value={t.repo.is_archived ? 'unarchive' : 'archive'} />
          </DangerForm>
        </div>
        {isOwner ? (
          <>
            <div class="danger-item">
              <h3>Transfer ownership</h3>
              <p class="muted">
                Move the repository to another user or an organization. The old address keeps leading to it.
              </p>
              <DangerForm
                page={page}
                action={t.base}
                button="Transfer"
                confirm={`Transfer ${t.owner.name}/${t.repo.name} to another owner?`}
              >
                <input type="hidden" name="action" value="transfer" />
                <FormError error={err('transfer', 'form')} />
                <Input
                  id="f-transfer-new_owner_name"
                  label="New owner"
                  name="new_owner_name"
                  value={typed('transfer', 'new_owner_name')}
                  required
                  error={err('transfer', 'new_owner_name')}
                />
                <Input
                  id="f-transfer-repo_name"
                  label={`Type ${t.repo.name} to confirm`}
                  name="repo_name"
                  value={typed('transfer', 'repo_name')}
                  required
                  error={err('transfer', 'repo_name')}
                />
              </DangerForm>
            </div>
            <div class="danger-item">
              <h3>Delete this repository</h3>
              <p class="muted">
                Its code, issues, pull requests, releases and wiki are removed. This cannot be undone.
              </p>
              <DangerForm
                page={page}
                action={t.base}
                button="Delete this repository"
                confirm={`Delete ${t.owner.name}/${t.repo.name} for good?`}
              >
                <input type="hidden" name="action" value="delete" />
                <FormError error={err('delete', 'form')} />
                <Input
                  id="f-delete-repo_name"
                  label={`Type ${t.repo.name} to confirm`}
                  name="repo_name"
                  value={typed('delete', 'repo_name')}
                  required
                  error={err('delete', 'repo_name')}
                />
              </DangerForm>
            </div>
          </>
        ) : (
          <p class="muted">Only the owner can transfer or delete this repository.</p>
        )}
      </Section>
    </RepoSettingsFrame>
  );
}

function UnitsPage(props: { page: PageContext; t: AdminRepo; values: Form; errors: Form }): VNode {
  const { page, t, values: v, errors: e } = props;
  return (
    <RepoSettingsFrame page={page} t={t} title="Units" active="/units">
      <Section title="Units">
        <form method="post" action={`${t.base}/units`}>
          <CsrfField page={page} />
          <fieldset class="plain">
            <legend>What this repository offers besides its code</legend>
            {UNITS.map(([name, , label]) => (
              <Checkbox label={label} name={name} checked={ticked(v[name])} />
            ))}
          </fieldset>
          <fieldset class="plain">
            <legend>Pull requests</legend>
            {PULL_OPTIONS.map(([name, , label]) => (
              <Checkbox label={label} name={name} checked={ticked(v[name])} />
            ))}
            <Select
              label="Default merge style"
              name="pulls_default_merge_style"
              value={v['pulls_default_merge_style']}
              options={MERGE_STYLE_LABELS.map(([value, label]) => ({ value, label }))}
              error={e['pulls_default_merge_style']}
            />
          </fieldset>
          <button type="submit" class="primary">
            Update settings
          </button>
        </form>
      </Section>
    </RepoSettingsFrame>
  );
}

/** The units page's values: the repository's, or what was posted. */
const unitValues = (t: AdminRepo): Form => ({
  ...Object.fromEntries(UNITS.map(([name, column]) => [name, t.repo[column] ? 'on' : undefined])),
  ...Object.fromEntries(PULL_OPTIONS.map(([name, column]) => [name, t.repo[column] ? 'on' : undefined])),
  pulls_default_merge_style: t.repo.default_merge_style,
});

const currentValues = (t: AdminRepo): Form => ({
  repo_name: t.repo.name,
  description: t.repo.description,
  website: t.repo.website,
  default_branch: t.repo.default_branch,
  private: t.repo.is_private ? 'on' : undefined,
  template: t.repo.is_template ? 'on' : undefined,
});

export function repoSettingsPages(deps: RepoSettingsPagesDeps): PageRoutes {
  return (app, web: Web) => {
    const { repos, transfers, users, orgs } = deps;
    const load = (request: FastifyRequest) => adminRepo(web, request, { repos, owners: users });
    const repoUrl = (t: AdminRepo, name = t.repo.name) => `/${t.owner.name}/${name}`;

    const showOptions = (
      request: FastifyRequest,
      reply: FastifyReply,
      t: AdminRepo,
      values: Form,
      errors: Form,
    ) =>
      web.send(
        reply,
        <OptionsPage page={web.page(request)} t={t} values={values} errors={errors} />,
        errors['action'] ? 422 : 200,
      );

    app.get('/:owner/:repo/settings', async (request, reply) => {
      const t = await load(request);
      return showOptions(request, reply, t, currentValues(t), {});
    });

    app.post('/:owner/:repo/settings', async (request, reply) => {
      const t = await load(request);
      const body = request.body;
      const action = field(body, 'action');
      const fail = (errors: Form, values: Form = {}) =>
        showOptions(request, reply, t, { ...currentValues(t), ...values }, { action, ...errors });

      if (action === 'update') {
        const values: Form = {
          repo_name: field(body, 'repo_name'),
          description: field(body, 'description'),
          website: field(body, 'website'),
          default_branch: field(body, 'default_branch'),
          private: ticked(field(body, 'private')) ? 'on' : undefined,
          template: ticked(field(body, 'template')) ? 'on' : undefined,
        };
        const name = values['repo_name']!;
        if (!name) return fail({ repo_name: 'The repository name must not be empty.' }, values);
        if ((values['description'] ?? '').length > 2048)
          return fail({ description: 'The description must be at most 2048 characters.' }, values);
        const website = values['website']!;
        if (website.length > 1024)
          return fail({ website: 'The website must be at most 1024 characters.' }, values);
        if (website && !isUrl(website))
          return fail({ website: 'The website must be an http or https URL.' }, values);
        const branch = values['default_branch']!;
        try {
          const edited = await repos.edit(t.repo, {
            name: name === t.repo.name ? undefined : name,
            description: values['description'],
            website,
            private: values['private'] === 'on',
            template: values['template'] === 'on',
            defaultBranch: branch && branch !== t.repo.default_branch ? branch : undefined,
          });
          return web.redirect(reply, `${repoUrl(t, edited.name)}/settings`, {
            kind: 'info',
            text:
              edited.name !== t.repo.name
                ? `The repository was renamed to ${edited.name}; its old address leads here.`
                : 'The repository settings have been updated.',
          });
        } catch (err) {
          return fail(formErrors(err, { name: 'repo_name', default_branch: 'default_branch' }), values);
        }
      }

      if (action === 'archive' || action === 'unarchive') {
        await repos.edit(t.repo, { archived: action === 'archive' });
        return web.redirect(reply, t.base, {
          kind: 'info',
          text: action === 'archive' ? 'The repository was archived.' : 'The repository was unarchived.',
        });
      }

      if (action === 'transfer' || action === 'delete') {
        if (t.access.mode < AccessMode.owner) throw forbidden('user should be the owner of the repo');
        const confirm = field(body, 'repo_name');
        const newOwnerName = field(body, 'new_owner_name');
        const values: Form = { repo_name: confirm, new_owner_name: newOwnerName };
        if (confirm !== t.repo.name) {
          return fail(
            { repo_name: `The name you typed is not the repository's name (${t.repo.name}).` },
            values,
          );
        }
        if (action === 'delete') {
          await repos.delete(t.repo, t.user.id);
          return web.redirect(reply, `/${t.owner.name}`, {
            kind: 'info',
            text: `The repository ${t.owner.name}/${t.repo.name} was deleted.`,
          });
        }
        if (!newOwnerName) return fail({ new_owner_name: 'Name the new owner.' }, values);
        const newOwner = await users.getByName(newOwnerName);
        if (
          !newOwner ||
          (newOwner.type === UserType.Organization && !(await orgs.canSee(request.web.viewer, newOwner)))
        ) {
          return fail({ new_owner_name: `There is no user or organization ${newOwnerName}.` }, values);
        }
        if (newOwner.id === t.owner.id) {
          return fail({ new_owner_name: `${newOwner.name} already owns this repository.` }, values);
        }
        try {
          const done = await transfers.startTransfer(t.repo, t.user, newOwner);
          if (done.pending) {
            return web.redirect(reply, t.base, {
              kind: 'info',
              text: `The transfer waits for ${newOwner.name} to accept it.`,
            });
          }
          return web.redirect(reply, `/${newOwner.name}/${done.repo.name}`, {
            kind: 'info',
            text: `The repository now belongs to ${newOwner.name}.`,
          });
        } catch (err) {
          return fail(formErrors(err, { new_owner: 'new_owner_name' }, true), values);
        }
      }
      return web.errorPage(request, reply, 400, `Unknown settings action "${action}".`);
    });

    app.get('/:owner/:repo/settings/units', async (request, reply) => {
      const t = await load(request);
      return web.send(reply, <UnitsPage page={web.page(request)} t={t} values={unitValues(t)} errors={{}} />);
    });

    app.post('/:owner/:repo/settings/units', async (request, reply) => {
      const t = await load(request);
      const body = request.body;
      const values: Form = {
        ...Object.fromEntries(
          [...UNITS, ...PULL_OPTIONS].map(([name]) => [name, ticked(field(body, name)) ? 'on' : undefined]),
        ),
        pulls_default_merge_style: field(body, 'pulls_default_merge_style') || t.repo.default_merge_style,
      };
      const style = MERGE_STYLE_LABELS.find(([value]) => value === values['pulls_default_merge_style']);
      const error = !style
        ? 'Choose one of the merge styles.'
        : !values[style[2]]
          ? 'The default merge style must be one of the allowed styles.'
          : undefined;
      if (error) {
        return web.send(
          reply,
          <UnitsPage
            page={web.page(request)}
            t={t}
            values={values}
            errors={{ pulls_default_merge_style: error }}
          />,
          422,
        );
      }
      await repos.edit(t.repo, {
        ...Object.fromEntries(UNITS.map(([name, , , key]) => [key, values[name] === 'on'])),
        ...Object.fromEntries(PULL_OPTIONS.map(([name, , , key]) => [key, values[name] === 'on'])),
        defaultMergeStyle: values['pulls_default_merge_style'],
      });
      return web.redirect(reply, `${t.base}/units`, {
        kind: 'info',
        text: 'The repository units have been updated.',
      });
    });
  };
}
