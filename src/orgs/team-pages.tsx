// The web pages of an organization's teams, at Forgejo's addresses: the list (/org/{org}/teams),
// a new team, a team's members and repositories (/org/{org}/teams/{team}[/repositories]) with
// their add/remove actions, edit and delete. The Owners team keeps its name and its last member.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import type { PageRoutes, Web } from '../web/plugin.js';
import {
  Checkbox,
  DangerForm,
  Section,
  Select,
  SettingsLayout,
  orgSettingsNav,
  ticked,
} from '../web/settings.js';
import type { UserRow } from '../users/tables.js';
import { REPO_UNITS, type OrgStanding, type TeamView } from './service.js';
import { AccessMode, accessModeName, type TeamRow } from './tables.js';
import {
  Avatar,
  OrgPage,
  formError,
  orgLookups,
  orgPath,
  reason,
  teamPath,
  text,
  type OrgPagesDeps,
} from './pages.js';

type Form = Record<string, string | undefined>;

const permissionLabel = (team: TeamRow) =>
  team.authorize === AccessMode.owner
    ? 'Owner access'
    : team.authorize === AccessMode.admin
      ? 'Administrator access'
      : team.authorize === AccessMode.write
        ? 'Write access'
        : 'Read access';

function TeamsPage(props: {
  page: PageContext;
  org: UserRow;
  teams: TeamRow[];
  isOwner: boolean;
  standing: OrgStanding;
}): VNode {
  const { page, org } = props;
  return (
    <OrgPage page={page} org={org} title="Teams" active="teams" standing={props.standing}>
      <div class="org-toolbar">
        <h2>
          Teams <span class="count">{props.teams.length}</span>
        </h2>
        {props.isOwner ? (
          <a class="button primary" href={`${orgPath(org)}/teams/new`}>
            New team
          </a>
        ) : null}
      </div>
      <ul class="list">
        {props.teams.map((t) => (
          <li>
            <div>
              <a href={teamPath(org, t)} class="title">
                {t.name}
              </a>
              <p class="muted">
                {permissionLabel(t)}
                {t.description ? ` · ${t.description}` : ''}
              </p>
            </div>
          </li>
        ))}
      </ul>
    </OrgPage>
  );
}

function TeamForm(props: {
  page: PageContext;
  org: UserRow;
  view?: TeamView;
  values: Form;
  errors: Form;
}): VNode {
  const { page, org, view, values, errors } = props;
  const owners = view?.team.authorize === AccessMode.owner;
  const action = view ? `${teamPath(org, view.team)}/edit` : `${orgPath(org)}/teams/new`;
  const perm = values['permission'] ?? 'read';
  return (
    <SettingsLayout
      page={page}
      title={view ? `Edit team ${view.team.name}` : 'New team'}
      area={org.name}
      nav={orgSettingsNav(org.name)}
      active=""
    >
      <Section title={view ? `Edit team ${view.team.name}` : 'New team'}>
        <form method="post" action={action}>
          <CsrfField page={page} />
          {owners ? null : (
            <Field
              label="Team name"
              name="team_name"
              value={values['team_name'] ?? ''}
              required
              error={errors['team_name']}
            />
          )}
          <Field label="Description" name="description" value={values['description'] ?? ''} />
          {owners ? null : (
            <>
              <Select
                label="Permission"
                name="permission"
                value={perm}
                error={errors['permission']}
                options={[
                  { value: 'read', label: 'Read: per-unit access below' },
                  { value: 'write', label: 'Write: per-unit access below' },
                  { value: 'admin', label: 'Administrator: full access to every unit' },
                ]}
              />
              <fieldset class="team-units">
                <legend>Access per unit (below administrator)</legend>
                {REPO_UNITS.map((u) => (
                  <Select
                    label={u.replace('repo.', '').replace('_', ' ')}
                    name={`unit_${u}`}
                    value={values[`unit_${u}`] ?? ''}
                    options={[
                      { value: '', label: 'As the permission' },
                      { value: 'none', label: 'No access' },
                      { value: 'read', label: 'Read' },
                      ...(u.includes('ext_') ? [] : [{ value: 'write', label: 'Write' }]),
                    ]}
                    error={errors[`unit_${u}`]}
                  />
                ))}
              </fieldset>
              <fieldset class="plain choices">
                <legend>Repository access</legend>
                <label>
                  <input
                    type="radio"
                    name="repo_access"
                    value="specific"
                    checked={values['repo_access'] !== 'all'}
                  />{' '}
                  Specific repositories: only the repositories added to the team
                </label>
                <label>
                  <input
                    type="radio"
                    name="repo_access"
                    value="all"
                    checked={values['repo_access'] === 'all'}
                  />{' '}
                  All repositories: every repository of the organization, including those created later
                </label>
              </fieldset>
              <Checkbox
                label="Members may create repositories in the organization"
                name="can_create_org_repo"
                checked={values['can_create_org_repo'] !== undefined}
              />
            </>
          )}
          <button type="submit" class="primary">
            {view ? 'Update team' : 'Create team'}
          </button>
        </form>
      </Section>
      {view && !owners ? (
        <Section title="Delete team" danger>
          <DangerForm
            page={page}
            action={`${teamPath(org, view.team)}/delete`}
            button="Delete team"
            confirm={`Delete the team ${view.team.name}? Its members lose its access.`}
          />
        </Section>
      ) : null}
    </SettingsLayout>
  );
}

function TeamPage(props: {
  page: PageContext;
  org: UserRow;
  team: TeamRow;
  tab: 'members' | 'repositories';
  members: UserRow[];
  repos: Array<{ id: number; name: string }>;
  isOwner: boolean;
  standing: OrgStanding;
  isTeamMember: boolean;
  error?: string | undefined;
  typed?: string | undefined;
}): VNode {
  const { page, org, team } = props;
  const base = teamPath(org, team);
  return (
    <OrgPage page={page} org={org} title={team.name} active="teams" standing={props.standing}>
      <div class="org-toolbar">
        <h2>
          {team.name} <span class="pill">{permissionLabel(team)}</span>
        </h2>
        {props.isOwner ? (
          <a class="button" href={`${base}/edit`}>
            Edit team
          </a>
        ) : null}
      </div>
      {team.description ? <p>{team.description}</p> : null}
      <nav class="tabs" aria-label="Team">
        <a href={base} aria-current={props.tab === 'members' ? 'page' : undefined}>
          Members
        </a>
        <a href={`${base}/repositories`} aria-current={props.tab === 'repositories' ? 'page' : undefined}>
          Repositories
        </a>
      </nav>
      {props.isOwner ? (
        <form
          method="post"
          action={props.tab === 'members' ? `${base}/action/add` : `${base}/action/repo/add`}
          class="inline-add"
        >
          <CsrfField page={page} />
          <Field
            label={props.tab === 'members' ? 'Add a user (name)' : 'Add a repository (name)'}
            name={props.tab === 'members' ? 'uname' : 'repo_name'}
            value={props.typed ?? ''}
            required
            error={props.error}
          />
          <button type="submit" class="primary">
            Add
          </button>
        </form>
      ) : null}
      {props.isOwner && props.tab === 'repositories' && !team.includes_all_repositories ? (
        <div class="button-row">
          <form method="post" action={`${base}/action/repo/addall`} class="inline">
            <CsrfField page={page} />
            <button type="submit">Add all repositories</button>
          </form>
          <DangerForm
            page={page}
            action={`${base}/action/repo/removeall`}
            button="Remove all repositories"
            confirm={`Remove every repository from the team ${team.name}?`}
          />
        </div>
      ) : null}
      {props.tab === 'members' ? (
        <ul class="list">
          {props.members.map((u) => (
            <li>
              <Avatar user={u} size={32} />
              <div>
                <a href={`/${u.name}`} class="title">
                  {u.name}
                </a>
              </div>
              <div class="actions">
                {props.isOwner ? (
                  <DangerForm
                    page={page}
                    action={`${base}/action/remove`}
                    button="Remove"
                    confirm={`Remove ${u.name} from the team ${team.name}?`}
                  >
                    <input type="hidden" name="uid" value={String(u.id)} />
                  </DangerForm>
                ) : null}
              </div>
            </li>
          ))}
        </ul>
      ) : (
        <ul class="list">
          {props.repos.map((r) => (
            <li>
              <div>
                <a href={`/${org.name}/${r.name}`} class="title">
                  {org.name}/{r.name}
                </a>
              </div>
              <div class="actions">
                {props.isOwner ? (
                  <form method="post" action={`${base}/action/repo/remove`} class="inline">
                    <CsrfField page={page} />
                    <input type="hidden" name="repoid" value={String(r.id)} />
                    <input type="hidden" name="repo_name" value={r.name} />
                    <button type="submit">Remove</button>
                  </form>
                ) : null}
              </div>
            </li>
          ))}
        </ul>
      )}
      {props.isTeamMember && team.authorize !== AccessMode.owner ? (
        <DangerForm
          page={page}
          action={`${base}/action/leave`}
          button="Leave team"
          confirm={`Leave ${team.name}?`}
        />
      ) : null}
    </OrgPage>
  );
}

const teamValues = (view: TeamView): Form => {
  const t = view.team;
  const values: Form = {
    team_name: t.name,
    description: t.description,
    permission: t.authorize >= AccessMode.admin ? 'admin' : accessModeName(t.authorize),
    repo_access: t.includes_all_repositories ? 'all' : undefined,
    can_create_org_repo: t.can_create_org_repo ? 'on' : undefined,
  };
  for (const u of REPO_UNITS) values[`unit_${u}`] = accessModeName(view.units.get(u) ?? AccessMode.none);
  return values;
};

export function orgTeamPages(deps: OrgPagesDeps): PageRoutes {
  return (app, web) => registerTeamPages(app, web, deps);
}

function registerTeamPages(app: FastifyInstance, web: Web, deps: OrgPagesDeps): void {
  const { orgs, users, repos, collaborators } = deps;
  type Params = { org: string; team?: string; action?: string };
  const { orgOf, ownedOrg, uidOf, userById } = orgLookups(web, deps);

  // Teams

  const memberOrg = async (request: FastifyRequest) => {
    web.requireUser(request);
    const found = await orgOf(request);
    await orgs.requireMember(found.org, request.web.viewer!);
    return found;
  };

  app.get('/org/:org/teams', async (request, reply) => {
    const { org, isOwner, standing } = await memberOrg(request);
    const [teams] = await orgs.listTeams(org, 500, 0);
    return web.send(
      reply,
      <TeamsPage page={web.page(request)} org={org} teams={teams} isOwner={isOwner} standing={standing} />,
    );
  });

  /** The team form's input as the service takes it, and the form errors found before calling it. */
  const teamInput = (body: unknown, values: Form) => {
    const permission = values['permission'];
    const errors: Form = {};
    if (permission !== 'read' && permission !== 'write' && permission !== 'admin') {
      errors['permission'] = 'Choose read, write or administrator.';
    }
    const unitsMap: Record<string, string> = {};
    for (const u of REPO_UNITS) {
      const v = text(body, `unit_${u}`);
      values[`unit_${u}`] = v || undefined;
      // A unit left "as the permission" gets the team's read or write access.
      const mode = v || (permission === 'write' ? 'write' : 'read');
      if (!['none', 'read', 'write'].includes(mode)) errors[`unit_${u}`] = 'Choose no access, read or write.';
      else unitsMap[u] = mode;
    }
    const input = {
      name: values['team_name'],
      description: values['description'],
      permission: errors['permission'] ? undefined : (permission as 'read' | 'write' | 'admin'),
      unitsMap: permission === 'admin' ? undefined : unitsMap,
      includesAllRepositories: values['repo_access'] === 'all',
      canCreateOrgRepo: values['can_create_org_repo'] !== undefined,
    };
    return { input, errors };
  };
  const teamFormValues = (body: unknown): Form => ({
    team_name: text(body, 'team_name').trim(),
    description: text(body, 'description'),
    permission: text(body, 'permission') || 'read',
    repo_access: text(body, 'repo_access') === 'all' ? 'all' : undefined,
    can_create_org_repo: ticked(text(body, 'can_create_org_repo')) ? 'on' : undefined,
  });

  app.get('/org/:org/teams/new', async (request, reply) => {
    const { org } = await ownedOrg(request);
    return web.send(reply, <TeamForm page={web.page(request)} org={org} values={{}} errors={{}} />);
  });

  app.post('/org/:org/teams/new', async (request, reply) => {
    const { org } = await ownedOrg(request);
    const values = teamFormValues(request.body);
    const { input, errors } = teamInput(request.body, values);
    if (!values['team_name']) errors['team_name'] = 'Required';
    if (!Object.keys(errors).length) {
      try {
        const made = await orgs.createTeam(org, input);
        return web.redirect(reply, teamPath(org, made.team), {
          kind: 'info',
          text: `The team ${made.team.name} has been created.`,
        });
      } catch (err) {
        if (!formError(err)) throw err;
        errors[/units/.test(err.message) ? 'permission' : 'team_name'] = reason(err);
      }
    }
    return web.send(
      reply,
      <TeamForm page={web.page(request)} org={org} values={values} errors={errors} />,
      422,
    );
  });

  const teamOf = async (request: FastifyRequest) => {
    web.requireUser(request);
    const found = await orgOf(request);
    const team = await orgs.requireTeamNamed(
      found.org,
      (request.params as Params).team ?? '',
      request.web.viewer!,
    );
    return { ...found, team };
  };

  const teamPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    tab: 'members' | 'repositories',
    error?: string,
    typed?: string,
  ) => {
    const { org, isOwner, team, standing } = await teamOf(request);
    const [members] = tab === 'members' ? await orgs.listTeamMembers(team, 500, 0) : [[]];
    const [repoRows] = tab === 'repositories' ? await repos.listTeamRepos(team, 500, 0) : [[]];
    const isTeamMember = await orgs.isTeamMember(team, request.web.user!.id);
    return web.send(
      reply,
      <TeamPage
        page={web.page(request)}
        org={org}
        team={team}
        tab={tab}
        members={members}
        repos={repoRows}
        isOwner={isOwner}
        standing={standing}
        isTeamMember={isTeamMember}
        error={error}
        typed={typed}
      />,
      error ? 422 : 200,
    );
  };

  app.get('/org/:org/teams/:team', (request, reply) => teamPage(request, reply, 'members'));
  app.get('/org/:org/teams/:team/repositories', (request, reply) => teamPage(request, reply, 'repositories'));

  app.post('/org/:org/teams/:team/action/:action', async (request, reply) => {
    const { org, team } = await teamOf(request);
    const viewer = request.web.viewer!;
    const action = (request.params as Params).action;
    const back = teamPath(org, team);
    if (action === 'leave') {
      try {
        await orgs.removeTeamMember(team, request.web.user!);
      } catch (err) {
        if (!formError(err)) throw err;
        return web.redirect(reply, back, { kind: 'error', text: reason(err) });
      }
      return web.redirect(reply, `${orgPath(org)}/teams`, {
        kind: 'info',
        text: `You have left ${team.name}.`,
      });
    }
    await orgs.requireOwner(org, viewer);
    if (action === 'add') {
      const uname = text(request.body, 'uname').trim();
      let u: UserRow | undefined;
      try {
        u = uname ? await users.requireUser(uname) : undefined;
      } catch (err) {
        if (!(err instanceof AppError) || err.kind !== 'not_found') throw err;
      }
      if (!u)
        return teamPage(request, reply, 'members', `The user ${uname || '(empty)'} does not exist.`, uname);
      await orgs.addTeamMember(team, u);
      return web.redirect(reply, back, { kind: 'info', text: `${u.name} has been added to ${team.name}.` });
    }
    if (action === 'remove') {
      const u = await userById(uidOf(request));
      try {
        await orgs.removeTeamMember(team, u);
      } catch (err) {
        if (!formError(err)) throw err;
        return web.redirect(reply, back, { kind: 'error', text: reason(err) });
      }
      return web.redirect(reply, back, {
        kind: 'info',
        text: `${u.name} has been removed from ${team.name}.`,
      });
    }
    throw new AppError('not_found', `unknown action ${action}`);
  });

  app.post('/org/:org/teams/:team/action/repo/:action', async (request, reply) => {
    const { org, team } = await teamOf(request);
    const viewer = request.web.viewer!;
    await orgs.requireOwner(org, viewer);
    const action = (request.params as Params).action;
    const name = text(request.body, 'repo_name').trim();
    const back = `${teamPath(org, team)}/repositories`;
    if (action === 'addall' || action === 'removeall') {
      try {
        if (action === 'addall') await collaborators.addAllTeamRepos(team);
        else await collaborators.removeAllTeamRepos(team);
      } catch (err) {
        if (!formError(err)) throw err;
        return web.redirect(reply, back, { kind: 'error', text: reason(err) });
      }
      return web.redirect(reply, back, {
        kind: 'info',
        text:
          action === 'addall'
            ? `Every repository of ${org.name} has been added to ${team.name}.`
            : `Every repository has been removed from ${team.name}.`,
      });
    }
    let found;
    try {
      found = name ? await repos.requireRepo(org.name, name, viewer) : undefined;
    } catch (err) {
      if (!(err instanceof AppError) || err.kind !== 'not_found') throw err;
    }
    if (!found) {
      return teamPage(
        request,
        reply,
        'repositories',
        `The repository ${name || '(empty)'} does not exist.`,
        name,
      );
    }
    if (action === 'add') await collaborators.addTeamRepo(team, found.repo);
    else if (action === 'remove') await collaborators.removeTeamRepo(team, found.repo);
    else throw new AppError('not_found', `unknown action ${action}`);
    return web.redirect(reply, back, {
      kind: 'info',
      text:
        action === 'add'
          ? `${name} has been added to ${team.name}.`
          : `${name} has been removed from ${team.name}.`,
    });
  });

  const editableTeam = async (request: FastifyRequest) => {
    const found = await teamOf(request);
    await orgs.requireOwner(found.org, request.web.viewer!);
    const [view] = await orgs.teamViews([found.team]);
    return { ...found, view: view! };
  };

  app.get('/org/:org/teams/:team/edit', async (request, reply) => {
    const { org, view } = await editableTeam(request);
    return web.send(
      reply,
      <TeamForm page={web.page(request)} org={org} view={view} values={teamValues(view)} errors={{}} />,
    );
  });

  app.post('/org/:org/teams/:team/edit', async (request, reply) => {
    const { org, view } = await editableTeam(request);
    const values = teamFormValues(request.body);
    const { input, errors } = teamInput(request.body, values);
    const owners = view.team.authorize === AccessMode.owner;
    if (!owners && !values['team_name']) errors['team_name'] = 'Required';
    if (!Object.keys(errors).length) {
      try {
        const edited = await orgs.editTeam(view, owners ? { description: input.description } : input);
        return web.redirect(reply, teamPath(org, edited.team), {
          kind: 'info',
          text: `The team ${edited.team.name} has been updated.`,
        });
      } catch (err) {
        if (!formError(err)) throw err;
        errors['team_name'] = reason(err);
      }
    }
    return web.send(
      reply,
      <TeamForm page={web.page(request)} org={org} view={view} values={values} errors={errors} />,
      422,
    );
  });

  app.post('/org/:org/teams/:team/delete', async (request, reply) => {
    const { org, team } = await editableTeam(request);
    try {
      await orgs.deleteTeam(team);
    } catch (err) {
      if (!formError(err)) throw err;
      return web.redirect(reply, teamPath(org, team), { kind: 'error', text: reason(err) });
    }
    return web.redirect(reply, `${orgPath(org)}/teams`, {
      kind: 'info',
      text: `The team ${team.name} has been deleted.`,
    });
  });
}
