// The web pages of organizations, at Forgejo's addresses: creating one (/org/create), its members
// (/org/{org}/members), its teams (/org/{org}/teams...: members, repositories, edit, delete) and
// its settings (/org/{org}/settings: profile, rename, visibility, delete). Every page calls the
// same OrgService as the API, so the same owner/member checks apply (403 forbidden, 404 hidden).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ComponentChildren, VNode } from 'preact';
import { AppError } from '../errors.js';
import { CsrfField, Field, Layout, type PageContext } from '../web/layout.js';
import type { PageRoutes, Web } from '../web/plugin.js';
import {
  AvatarSection,
  Checkbox,
  DangerForm,
  Section,
  Select,
  SettingsLayout,
  TextArea,
  orgSettingsNav,
  ticked,
} from '../web/settings.js';
import { ProfileHeader } from '../users/pages.js';
import { avatarPath } from '../users/avatars.js';
import { visibilityName, type UserRow, type VisibilityName } from '../users/tables.js';
import { checkEmail, type UserService } from '../users/service.js';
import type { RepoService } from '../repos/service.js';
import type { Collaborators } from '../repos/collaborators.js';
import type { OrgService, OrgStanding } from './service.js';
import type { TeamRow } from './tables.js';

type Form = Record<string, string | undefined>;
export const text = (body: unknown, name: string): string => {
  const v = (body as Form | undefined)?.[name];
  return typeof v === 'string' ? v : '';
};

export interface OrgPagesDeps {
  orgs: Pick<
    OrgService,
    | 'create'
    | 'edit'
    | 'delete'
    | 'requireVisibleOrg'
    | 'requireOwner'
    | 'requireMember'
    | 'isOwner'
    | 'isMember'
    | 'standing'
    | 'listMembers'
    | 'publicMemberIds'
    | 'removeMember'
    | 'setPublicMembership'
    | 'listTeams'
    | 'teamViews'
    | 'createTeam'
    | 'editTeam'
    | 'deleteTeam'
    | 'requireTeamNamed'
    | 'listTeamMembers'
    | 'isTeamMember'
    | 'addTeamMember'
    | 'removeTeamMember'
  >;
  users: Pick<UserService, 'requireUser' | 'getById' | 'rename'>;
  repos: Pick<RepoService, 'requireRepo' | 'listTeamRepos'>;
  collaborators: Pick<
    Collaborators,
    'addTeamRepo' | 'removeTeamRepo' | 'addAllTeamRepos' | 'removeAllTeamRepos'
  >;
}

const VISIBILITIES: Array<{ value: VisibilityName; label: string }> = [
  { value: 'public', label: 'Public: everyone may see the organization' },
  { value: 'limited', label: 'Limited: signed-in users only' },
  { value: 'private', label: 'Private: members only' },
];

/** Forgejo posts visibility as 0/1/2; names are taken too. Undefined for anything else. */
function parseVisibility(v: string): VisibilityName | undefined {
  if (v === '0' || v === 'public') return 'public';
  if (v === '1' || v === 'limited') return 'limited';
  if (v === '2' || v === 'private') return 'private';
  return undefined;
}

/** The message of a form error without its "[Field]: " prefix. */
export const reason = (err: AppError) => err.message.replace(/^\[[^\]]*\]: /, '');
export const formError = (err: unknown): err is AppError =>
  err instanceof AppError && (err.kind === 'invalid' || err.kind === 'conflict');

export const orgPath = (org: UserRow) => `/org/${encodeURIComponent(org.name)}`;
export const teamPath = (org: UserRow, team: TeamRow) =>
  `${orgPath(org)}/teams/${encodeURIComponent(team.lower_name)}`;

export function Avatar(props: { user: UserRow; size?: number }): VNode {
  const size = props.size ?? 24;
  return (
    <img class="avatar" src={`/${avatarPath(props.user)}`} alt="" width={size} height={size} loading="lazy" />
  );
}

/**
 * The tabs under an organization's profile header: Repositories, Projects, Members (the members the viewer
 * may see), Teams (members only) and Settings (owners only), with their counts as Forgejo shows them.
 */
export function OrgTabs(props: {
  org: UserRow;
  active: 'repos' | 'projects' | 'members' | 'teams';
  standing: OrgStanding;
  repos?: number | undefined;
}): VNode {
  const base = orgPath(props.org);
  const { standing } = props;
  const tabs: Array<[string, string, string, number | null | undefined]> = [
    ['repos', `/${encodeURIComponent(props.org.name)}`, 'Repositories', props.repos],
    ['projects', `/${encodeURIComponent(props.org.name)}/-/projects`, 'Projects', undefined],
    ['members', `${base}/members`, 'Members', standing.members],
  ];
  if (standing.isMember) tabs.push(['teams', `${base}/teams`, 'Teams', standing.teams]);
  if (standing.isOwner) tabs.push(['settings', `${base}/settings`, 'Settings', undefined]);
  return (
    <nav class="tabs" aria-label="Organization">
      {tabs.map(([key, href, label, count]) => (
        <a href={href} aria-current={props.active === key ? 'page' : undefined}>
          {label}
          {typeof count === 'number' ? (
            <>
              {' '}
              <span class="count">{count}</span>
            </>
          ) : null}
        </a>
      ))}
    </nav>
  );
}

export function OrgPage(props: {
  page: PageContext;
  org: UserRow;
  title: string;
  active: 'repos' | 'members' | 'teams';
  standing: OrgStanding;
  children: ComponentChildren;
}): VNode {
  return (
    <Layout page={props.page} title={`${props.title} - ${props.org.name}`}>
      <ProfileHeader account={props.org} />
      <OrgTabs org={props.org} active={props.active} standing={props.standing} />
      {props.children}
    </Layout>
  );
}

function CreateOrgPage(props: { page: PageContext; values: Form; errors: Form }): VNode {
  const { values, errors } = props;
  return (
    <Layout page={props.page} title="New organization">
      <section class="narrow card">
        <h1>New organization</h1>
        <form method="post" action="/org/create">
          <CsrfField page={props.page} />
          <Field
            label="Organization name"
            name="org_name"
            value={values['org_name'] ?? ''}
            required
            autofocus
            error={errors['org_name']}
          />
          <Select
            label="Visibility"
            name="visibility"
            value={values['visibility'] ?? 'public'}
            options={VISIBILITIES}
            error={errors['visibility']}
          />
          <Checkbox
            label="Repository administrators may add and remove teams' access"
            name="repo_admin_change_team_access"
            checked={values['repo_admin_change_team_access'] !== undefined}
          />
          <button type="submit" class="primary">
            Create organization
          </button>
        </form>
      </section>
    </Layout>
  );
}

function MembersPage(props: {
  page: PageContext;
  org: UserRow;
  members: UserRow[];
  publicIds: Set<number>;
  standing: OrgStanding;
}): VNode {
  const { isMember, isOwner } = props.standing;
  const { page, org } = props;
  const me = page.user?.id;
  const action = (name: string, uid: number, label: string, danger?: string) =>
    danger ? (
      <DangerForm
        page={page}
        action={`${orgPath(org)}/members/action/${name}`}
        button={label}
        confirm={danger}
      >
        <input type="hidden" name="uid" value={String(uid)} />
      </DangerForm>
    ) : (
      <form method="post" action={`${orgPath(org)}/members/action/${name}`} class="inline">
        <CsrfField page={page} />
        <input type="hidden" name="uid" value={String(uid)} />
        <button type="submit">{label}</button>
      </form>
    );
  return (
    <OrgPage page={page} org={org} title="Members" active="members" standing={props.standing}>
      <h2>
        Members <span class="count">{props.members.length}</span>
      </h2>
      <ul class="list org-members">
        {props.members.map((u) => {
          const pub = props.publicIds.has(u.id);
          return (
            <li>
              <Avatar user={u} size={32} />
              <div>
                <a href={`/${u.name}`} class="title">
                  {u.full_name ? `${u.full_name} (${u.name})` : u.name}
                </a>
                {isMember ? <span class="pill">{pub ? 'Public' : 'Private'}</span> : null}
              </div>
              <div class="actions">
                {u.id === me
                  ? pub
                    ? action('private', u.id, 'Make private')
                    : action('public', u.id, 'Make public')
                  : null}
                {u.id === me
                  ? action('leave', u.id, 'Leave', `Leave the organization ${org.name}?`)
                  : isOwner
                    ? action('remove', u.id, 'Remove', `Remove ${u.name} from ${org.name}?`)
                    : null}
              </div>
            </li>
          );
        })}
      </ul>
    </OrgPage>
  );
}

export function SettingsPage(props: { page: PageContext; org: UserRow; values: Form; errors: Form }): VNode {
  const { page, org, values, errors } = props;
  const base = `${orgPath(org)}/settings`;
  return (
    <SettingsLayout
      page={page}
      title="Organization settings"
      area={org.name}
      nav={orgSettingsNav(org.name)}
      active={base}
    >
      <Section title="Organization">
        <form method="post" action={base}>
          <CsrfField page={page} />
          <Field
            label="Organization name"
            name="name"
            value={values['name'] ?? ''}
            required
            error={errors['name']}
          />
          <Field
            label="Full name"
            name="full_name"
            value={values['full_name'] ?? ''}
            error={errors['full_name']}
          />
          <Field
            label="Email"
            name="email"
            type="email"
            value={values['email'] ?? ''}
            error={errors['email']}
          />
          <TextArea label="Description" name="description" value={values['description']} rows={3} />
          <Field label="Website" name="website" value={values['website'] ?? ''} error={errors['website']} />
          <Field label="Location" name="location" value={values['location'] ?? ''} />
          <Select
            label="Visibility"
            name="visibility"
            value={values['visibility']}
            options={VISIBILITIES}
            error={errors['visibility']}
          />
          <Checkbox
            label="Repository administrators may add and remove teams' access"
            name="repo_admin_change_team_access"
            checked={values['repo_admin_change_team_access'] !== undefined}
          />
          {page.user?.is_admin ? (
            <Field
              label="Maximum number of repositories (-1 for the site's default limit)"
              name="max_repo_creation"
              type="number"
              value={values['max_repo_creation'] ?? '-1'}
              error={errors['max_repo_creation']}
            />
          ) : null}
          <button type="submit" class="primary">
            Update settings
          </button>
        </form>
      </Section>
      <AvatarSection
        page={page}
        action={`${base}/avatar`}
        src={`/${avatarPath(org)}`}
        alt={`The avatar of ${org.name}`}
        uploaded={Boolean(org.avatar)}
        confirm={`Delete the avatar of ${org.name}? The generated picture is shown again.`}
        error={errors['avatar']}
      />
      <Section title="Delete organization" danger>
        <p>Deleting an organization cannot be undone. It must own no repositories or packages.</p>
        <DangerForm
          page={page}
          action={`${base}/delete`}
          button="Delete this organization"
          confirm={`Delete the organization ${org.name} for good?`}
        >
          <Field
            label="Type the organization's name to confirm"
            name="org_name"
            required
            error={errors['org_name']}
          />
        </DangerForm>
      </Section>
    </SettingsLayout>
  );
}

export const settingsValues = (org: UserRow): Form => ({
  name: org.name,
  full_name: org.full_name,
  email: org.email,
  description: org.description,
  website: org.website,
  location: org.location,
  visibility: visibilityName(org.visibility),
  repo_admin_change_team_access: org.repo_admin_change_team_access ? 'on' : undefined,
  max_repo_creation: String(org.max_repo_creation),
});

/** The lookups every organization page makes, for `web` and the services of `deps`. */
export function orgLookups(web: Web, deps: Pick<OrgPagesDeps, 'orgs' | 'users'>) {
  const { orgs, users } = deps;
  type Params = { org: string };

  /** The organization of the path for the viewer (404 when hidden), with their standing in it. */
  const orgOf = async (request: FastifyRequest) => {
    const p = request.params as Params;
    const viewer = request.web.viewer;
    const org = await orgs.requireVisibleOrg(p.org, viewer);
    const standing = await orgs.standing(org, viewer);
    return { org, isMember: standing.isMember, isOwner: standing.isOwner, standing };
  };
  /** The organization of the path for its owners (403 for anyone else who may see it). */
  const ownedOrg = async (request: FastifyRequest) => {
    web.requireUser(request);
    const found = await orgOf(request);
    await orgs.requireOwner(found.org, request.web.viewer!);
    return found;
  };
  const uidOf = (request: FastifyRequest) =>
    Number(text(request.body, 'uid') || (request.query as Form)['uid'] || NaN);
  const userById = async (id: number) => {
    const u = Number.isInteger(id) ? await users.getById(id) : undefined;
    if (!u) throw new AppError('not_found', `user does not exist [id: ${id}]`);
    return u;
  };

  return { orgOf, ownedOrg, uidOf, userById };
}

export function orgPages(deps: OrgPagesDeps): PageRoutes {
  return (app, web) => registerOrgPages(app, web, deps);
}

function registerOrgPages(app: FastifyInstance, web: Web, deps: OrgPagesDeps): void {
  const { orgs, users } = deps;
  type Params = { org: string; action?: string };
  const { orgOf, ownedOrg, uidOf, userById } = orgLookups(web, deps);

  // Creating an organization

  app.get('/org/create', async (request, reply) => {
    web.requireUser(request);
    return web.send(reply, <CreateOrgPage page={web.page(request)} values={{}} errors={{}} />);
  });

  app.post('/org/create', async (request, reply) => {
    const user = web.requireUser(request);
    const values: Form = {
      org_name: text(request.body, 'org_name').trim(),
      visibility: text(request.body, 'visibility') || 'public',
      repo_admin_change_team_access: ticked(text(request.body, 'repo_admin_change_team_access'))
        ? 'on'
        : undefined,
    };
    const errors: Form = {};
    const visibility = parseVisibility(values['visibility']!);
    if (!visibility) errors['visibility'] = 'Choose public, limited or private.';
    else values['visibility'] = visibility;
    let org: UserRow | undefined;
    if (!errors['visibility']) {
      try {
        org = await orgs.create(user, {
          username: values['org_name'],
          visibility,
          repoAdminChangeTeamAccess: values['repo_admin_change_team_access'] !== undefined,
        });
      } catch (err) {
        if (!formError(err)) throw err;
        errors['org_name'] = reason(err);
      }
    }
    if (!org)
      return web.send(reply, <CreateOrgPage page={web.page(request)} values={values} errors={errors} />, 422);
    return web.redirect(reply, `/${org.name}`, {
      kind: 'info',
      text: `The organization ${org.name} has been created.`,
    });
  });

  // Members

  app.get('/org/:org/members', async (request, reply) => {
    const { org, standing } = await orgOf(request);
    const [members] = await orgs.listMembers(org, request.web.viewer, 500, 0);
    const publicIds = await orgs.publicMemberIds(org);
    return web.send(
      reply,
      <MembersPage
        page={web.page(request)}
        org={org}
        members={members}
        publicIds={publicIds}
        standing={standing}
      />,
    );
  });

  app.post('/org/:org/members/action/:action', async (request, reply) => {
    const me = web.requireUser(request);
    const viewer = request.web.viewer!;
    const { org } = await orgOf(request);
    const action = (request.params as Params).action;
    const back = `${orgPath(org)}/members`;
    const fail = (err: unknown) => {
      if (!formError(err)) throw err;
      return web.redirect(reply, back, { kind: 'error', text: reason(err) });
    };
    try {
      if (action === 'public' || action === 'private') {
        await orgs.setPublicMembership(
          org,
          await userById(uidOf(request) || me.id),
          viewer,
          action === 'public',
        );
        return web.redirect(reply, back, { kind: 'info', text: `Your membership is now ${action}.` });
      }
      if (action === 'leave') {
        await orgs.requireMember(org, viewer);
        await orgs.removeMember(org, me);
        return web.redirect(reply, '/', { kind: 'info', text: `You have left ${org.name}.` });
      }
      if (action === 'remove') {
        await orgs.requireOwner(org, viewer);
        const u = await userById(uidOf(request));
        await orgs.removeMember(org, u);
        return web.redirect(reply, back, {
          kind: 'info',
          text: `${u.name} has been removed from ${org.name}.`,
        });
      }
    } catch (err) {
      return fail(err);
    }
    throw new AppError('not_found', `unknown action ${action}`);
  });

  // Settings

  app.get('/org/:org/settings', async (request, reply) => {
    const { org } = await ownedOrg(request);
    return web.send(
      reply,
      <SettingsPage page={web.page(request)} org={org} values={settingsValues(org)} errors={{}} />,
    );
  });

  app.post('/org/:org/settings', async (request, reply) => {
    const { org } = await ownedOrg(request);
    const body = request.body;
    const values: Form = {
      name: text(body, 'name').trim(),
      full_name: text(body, 'full_name').trim(),
      email: text(body, 'email').trim(),
      description: text(body, 'description'),
      website: text(body, 'website').trim(),
      location: text(body, 'location').trim(),
      visibility: text(body, 'visibility'),
      repo_admin_change_team_access: ticked(text(body, 'repo_admin_change_team_access')) ? 'on' : undefined,
    };
    const errors: Form = {};
    // Forgejo's SettingsPost: only a site administrator changes the limit; others' posts ignore it.
    const siteAdmin = request.web.viewer?.isAdmin === true;
    let maxRepoCreation: number | undefined;
    if (siteAdmin) {
      const raw = text(body, 'max_repo_creation').trim() || String(org.max_repo_creation);
      values['max_repo_creation'] = raw;
      maxRepoCreation = /^-?\d{1,10}$/.test(raw) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(maxRepoCreation) || maxRepoCreation < -1 || maxRepoCreation > 2 ** 31 - 1) {
        errors['max_repo_creation'] = 'Enter a whole number, -1 or more.';
      }
    }
    const visibility = parseVisibility(values['visibility'] ?? '');
    if (!visibility) errors['visibility'] = 'Choose public, limited or private.';
    if (values['full_name']!.length > 100) errors['full_name'] = 'must be at most 100 characters';
    if (values['website'] && !/^https?:\/\/\S+$/i.test(values['website'])) {
      errors['website'] = 'Enter a URL starting with http:// or https://.';
    }
    if (!values['name']) errors['name'] = 'Required';
    if (!Object.keys(errors).length) {
      try {
        // Checked before anything changes: an invalid email leaves the name as it was.
        if (values['email']) checkEmail(values['email']);
      } catch (err) {
        if (!formError(err)) throw err;
        errors['email'] = reason(err);
      }
    }
    if (!Object.keys(errors).length) {
      try {
        await users.rename(org, values['name']!, 'name');
      } catch (err) {
        if (!formError(err)) throw err;
        errors['name'] = reason(err);
      }
    }
    if (Object.keys(errors).length) {
      return web.send(
        reply,
        <SettingsPage page={web.page(request)} org={org} values={values} errors={errors} />,
        422,
      );
    }
    const edited = await orgs.edit(org, {
      fullName: values['full_name'],
      email: values['email'],
      description: values['description'],
      website: values['website'],
      location: values['location'],
      visibility,
      repoAdminChangeTeamAccess: values['repo_admin_change_team_access'] !== undefined,
      maxRepoCreation,
    });
    return web.redirect(reply, `/org/${encodeURIComponent(values['name']!)}/settings`, {
      kind: 'info',
      text: `The settings of ${values['name'] ?? edited.name} have been updated.`,
    });
  });

  app.post('/org/:org/settings/delete', async (request, reply) => {
    const { org } = await ownedOrg(request);
    const typed = text(request.body, 'org_name').trim();
    const again = (message: string) =>
      web.send(
        reply,
        <SettingsPage
          page={web.page(request)}
          org={org}
          values={settingsValues(org)}
          errors={{ org_name: message }}
        />,
        422,
      );
    if (typed !== org.name) return again('The name typed is not the organization name.');
    try {
      await orgs.delete(org);
    } catch (err) {
      if (!formError(err)) throw err;
      return again(reason(err));
    }
    return web.redirect(reply, '/', { kind: 'info', text: `The organization ${org.name} has been deleted.` });
  });
}
