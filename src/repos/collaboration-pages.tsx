// `/{owner}/{repo}/settings/collaboration`: a repository's collaborators (add by name, change
// their permission, remove) and, for an organization's repository, the teams given access to it
// (add by name, remove), for its administrators, with Forgejo's addresses and field names.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import type { OrgService } from '../orgs/service.js';
import { AccessMode, accessModeName, type TeamRow } from '../orgs/tables.js';
import type { UserService } from '../users/service.js';
import { UserType, type UserRow } from '../users/tables.js';
import { CsrfField, type PageContext } from '../web/layout.js';
import type { PageRoutes, Web } from '../web/plugin.js';
import { DangerForm, Section } from '../web/settings.js';
import type { Collaborators } from './collaborators.js';
import type { RepoService } from './service.js';
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

export interface CollaborationPagesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  collaborators: Pick<
    Collaborators,
    'listCollaborators' | 'setCollaborator' | 'removeCollaborator' | 'isCollaborator' | 'changeTeamAccess'
  >;
  users: Pick<UserService, 'getById' | 'getByName'>;
  orgs: Pick<OrgService, 'repoTeams' | 'repoOrgTeam' | 'requireTeamAccessChanger' | 'orgOfRepo'>;
}

type Collaborator = UserRow & { collaboration_mode: number };

const MODES = [
  ['1', 'Read'],
  ['2', 'Write'],
  ['3', 'Administrator'],
] as const;

function CollaborationPage(props: {
  page: PageContext;
  t: AdminRepo;
  people: Collaborator[];
  teams: TeamRow[] | null;
  values: Form;
  errors: Form;
}): VNode {
  const { page, t, values, errors } = props;
  const base = `${t.base}/collaboration`;
  return (
    <RepoSettingsFrame page={page} t={t} title="Collaborators" active="/collaboration">
      <Section title="Collaborators">
        {props.people.length ? (
          <ul class="list settings-rows">
            {props.people.map((u) => (
              <li>
                <a href={`/${u.name}`} class="title">
                  {u.name}
                </a>
                {u.full_name ? <span class="muted"> {u.full_name}</span> : null}
                <form method="post" action={`${base}/access_mode`} class="row-form">
                  <CsrfField page={page} />
                  <input type="hidden" name="uid" value={String(u.id)} />
                  <label for={`f-mode-${u.id}`} class="sr-only">
                    Permission of {u.name}
                  </label>
                  <select id={`f-mode-${u.id}`} name="mode">
                    {MODES.map(([value, label]) => (
                      <option value={value} selected={Number(value) === u.collaboration_mode}>
                        {label}
                      </option>
                    ))}
                  </select>
                  <button type="submit">Change</button>
                </form>
                <DangerForm
                  page={page}
                  action={`${base}/delete`}
                  button="Remove"
                  confirm={`Remove ${u.name} from the collaborators?`}
                >
                  <input type="hidden" name="id" value={String(u.id)} />
                </DangerForm>
              </li>
            ))}
          </ul>
        ) : (
          <p class="empty">No collaborators yet.</p>
        )}
        <form method="post" action={base} class="add-form">
          <CsrfField page={page} />
          <FormError error={errors['form']} />
          <Input
            id="f-collaborator"
            label="Add a collaborator"
            name="collaborator"
            value={values['collaborator']}
            required
            placeholder="user name"
            error={errors['collaborator']}
          />
          <button type="submit" class="primary">
            Add collaborator
          </button>
        </form>
      </Section>
      {props.teams ? (
        <Section title="Teams">
          {props.teams.length ? (
            <ul class="list settings-rows">
              {props.teams.map((team) => (
                <li>
                  <a href={`/org/${t.owner.name}/teams/${team.lower_name}`} class="title">
                    {team.name}
                  </a>
                  <span class="pill">{accessModeName(team.authorize)}</span>
                  {team.includes_all_repositories ? (
                    <span class="muted">has every repository of the organization</span>
                  ) : (
                    <DangerForm
                      page={page}
                      action={`${base}/team/delete`}
                      button="Remove"
                      confirm={`Take the access of team ${team.name} away?`}
                    >
                      <input type="hidden" name="id" value={String(team.id)} />
                    </DangerForm>
                  )}
                </li>
              ))}
            </ul>
          ) : (
            <p class="empty">No team has access to this repository.</p>
          )}
          <form method="post" action={`${base}/team`} class="add-form">
            <CsrfField page={page} />
            <FormError error={errors['team_form']} />
            <Input
              id="f-team"
              label="Add a team"
              name="team"
              value={values['team']}
              required
              placeholder="team name"
              error={errors['team']}
            />
            <button type="submit" class="primary">
              Add team
            </button>
          </form>
        </Section>
      ) : null}
    </RepoSettingsFrame>
  );
}

export function collaborationPages(deps: CollaborationPagesDeps): PageRoutes {
  return (app, web: Web) => {
    const { repos, collaborators, users, orgs } = deps;
    const load = (request: FastifyRequest) => adminRepo(web, request, { repos, owners: users });
    const isOrgRepo = (t: AdminRepo) => t.owner.type === UserType.Organization;

    const show = async (
      request: FastifyRequest,
      reply: FastifyReply,
      t: AdminRepo,
      values: Form = {},
      errors: Form = {},
    ) => {
      const [people] = await collaborators.listCollaborators(t.repo, 1000, 0);
      const teams = isOrgRepo(t) ? await orgs.repoTeams(t.repo) : null;
      return web.send(
        reply,
        <CollaborationPage
          page={web.page(request)}
          t={t}
          people={people as Collaborator[]}
          teams={teams}
          values={values}
          errors={errors}
        />,
        Object.keys(errors).length ? 422 : 200,
      );
    };

    app.get('/:owner/:repo/settings/collaboration', async (request, reply) => {
      return show(request, reply, await load(request));
    });

    app.post('/:owner/:repo/settings/collaboration', async (request, reply) => {
      const t = await load(request);
      const name = field(request.body, 'collaborator');
      const values = { collaborator: name };
      if (!name) return show(request, reply, t, values, { collaborator: 'Name the user to add.' });
      const u = await users.getByName(name);
      if (!u || u.type !== UserType.Individual) {
        return show(request, reply, t, values, { collaborator: `There is no user ${name}.` });
      }
      if (await collaborators.isCollaborator(t.repo, u)) {
        return show(request, reply, t, values, { collaborator: `${u.name} is already a collaborator.` });
      }
      try {
        await collaborators.setCollaborator(t.repo, u, 'write');
      } catch (err) {
        return show(request, reply, t, values, formErrors(err, {}));
      }
      return web.redirect(reply, `${t.base}/collaboration`, {
        kind: 'info',
        text: `${u.name} was added as a collaborator.`,
      });
    });

    /** The collaborator named by the form's user id (404 when they are not one). */
    const collaboratorOf = async (t: AdminRepo, id: string) => {
      const u = /^\d{1,15}$/.test(id) ? await users.getById(Number(id)) : undefined;
      if (!u || !(await collaborators.isCollaborator(t.repo, u))) {
        throw new AppError('not_found', 'That user is not a collaborator of this repository.');
      }
      return u;
    };

    app.post('/:owner/:repo/settings/collaboration/access_mode', async (request, reply) => {
      const t = await load(request);
      const u = await collaboratorOf(t, field(request.body, 'uid'));
      const mode = Number(field(request.body, 'mode'));
      const name =
        mode === AccessMode.read
          ? 'read'
          : mode === AccessMode.write
            ? 'write'
            : mode === AccessMode.admin
              ? 'admin'
              : null;
      if (!name)
        return web.errorPage(request, reply, 422, 'The permission must be read (1), write (2) or admin (3).');
      await collaborators.setCollaborator(t.repo, u, name);
      return web.redirect(reply, `${t.base}/collaboration`, {
        kind: 'info',
        text: `${u.name} now has ${name} access.`,
      });
    });

    app.post('/:owner/:repo/settings/collaboration/delete', async (request, reply) => {
      const t = await load(request);
      const u = await collaboratorOf(t, field(request.body, 'id'));
      await collaborators.removeCollaborator(t.repo, u);
      return web.redirect(reply, `${t.base}/collaboration`, {
        kind: 'info',
        text: `${u.name} is no longer a collaborator.`,
      });
    });

    app.post('/:owner/:repo/settings/collaboration/team', async (request, reply) => {
      const t = await load(request);
      const org = await orgs.orgOfRepo(t.repo);
      orgs.requireTeamAccessChanger(org, t.access.mode);
      const name = field(request.body, 'team');
      const values = { team: name };
      if (!name) return show(request, reply, t, values, { team: 'Name the team to add.' });
      let team: TeamRow;
      try {
        team = (await orgs.repoOrgTeam(t.repo, name)).team;
      } catch (err) {
        if (err instanceof AppError && err.kind === 'not_found') {
          return show(request, reply, t, values, { team: `${org.name} has no team ${name}.` });
        }
        throw err;
      }
      try {
        await collaborators.changeTeamAccess(team, t.repo, true);
      } catch (err) {
        return show(request, reply, t, values, { team: formErrors(err, {})['form'] });
      }
      return web.redirect(reply, `${t.base}/collaboration`, {
        kind: 'info',
        text: `Team ${team.name} now has access to the repository.`,
      });
    });

    app.post('/:owner/:repo/settings/collaboration/team/delete', async (request, reply) => {
      const t = await load(request);
      const org = await orgs.orgOfRepo(t.repo);
      orgs.requireTeamAccessChanger(org, t.access.mode);
      const id = Number(field(request.body, 'id'));
      const team = (await orgs.repoTeams(t.repo)).find((x) => x.id === id);
      if (!team) throw new AppError('not_found', 'That team has no access to this repository.');
      try {
        await collaborators.changeTeamAccess(team, t.repo, false);
      } catch (err) {
        return show(request, reply, t, {}, { team_form: formErrors(err, {})['form'] });
      }
      return web.redirect(reply, `${t.base}/collaboration`, {
        kind: 'info',
        text: `Team ${team.name} no longer has access to the repository.`,
      });
    });
  };
}
