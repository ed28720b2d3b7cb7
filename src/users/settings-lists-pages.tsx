// The signed-in user's settings that are lists (Forgejo's /user/settings/blocked_users,
// /organization and /repos): blocking and unblocking users, leaving organizations, the user's
// repositories and, for site administrators, unadopted repository directories to adopt or delete.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import { Pager, pageNumber, When } from '../web/components.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import { DangerForm, Section, SettingsLayout, USER_SETTINGS_NAV } from '../web/settings.js';
import type { OrgService } from '../orgs/service.js';
import type { RepoService } from '../repos/service.js';
import type { UnadoptedService } from '../repos/unadopted.js';
import type { RepoRow } from '../repos/tables.js';
import type { SocialService } from '../social/service.js';
import { avatarPath } from './avatars.js';
import type { UserService } from './service.js';
import { UserType, type UserRow } from './tables.js';

export interface SettingsListsDeps {
  /** Entries on one page of each list (`[api] DEFAULT_PAGING_NUM`, as the other lists). */
  pageSize: number;
  users: Pick<UserService, 'getByName' | 'getByIds'>;
  social: Pick<SocialService, 'block' | 'unblock' | 'blocked'>;
  orgs: Pick<OrgService, 'listOrgsOfUser' | 'removeMember'>;
  repos: Pick<RepoService, 'list'>;
  /** Unadopted repository directories (administrators); absent: the section is not shown. */
  unadopted?: Pick<UnadoptedService, 'list' | 'adopt' | 'delete'> | undefined;
}

function AccountLine(props: { account: UserRow; children?: VNode | null }): VNode {
  const a = props.account;
  return (
    <li>
      <img class="avatar" src={`/${avatarPath(a)}`} alt="" width={28} height={28} loading="lazy" />
      <div class="grow">
        <a href={`/${a.name}`} class="title">
          {a.full_name ? `${a.full_name} (${a.name})` : a.name}
        </a>
      </div>
      {props.children ?? null}
    </li>
  );
}

/** Where a page of a list is: its number, size and the list's total. */
interface Paging {
  page: number;
  pageSize: number;
  total: number;
}

function BlockedPage(props: {
  page: PageContext;
  blocked: Array<{ user: UserRow; since: number }>;
  paging: Paging;
  value: string;
  error?: string | undefined;
}): VNode {
  const { page } = props;
  return (
    <SettingsLayout
      page={page}
      title="Blocked users"
      area="User settings"
      nav={USER_SETTINGS_NAV}
      active="/user/settings/blocked_users"
    >
      <Section title="Block a user">
        <p class="muted">
          A blocked user cannot follow you, star or watch your repositories, or comment on them.
        </p>
        <form method="post" action="/user/settings/blocked_users">
          <CsrfField page={page} />
          <input type="hidden" name="action" value="block" />
          <Field label="Username" name="blockee" value={props.value} required error={props.error} />
          <button type="submit" class="primary">
            Block user
          </button>
        </form>
      </Section>
      <Section title="Blocked users">
        {props.blocked.length === 0 ? <p class="empty">You have not blocked anyone.</p> : null}
        <ul class="list">
          {props.blocked.map(({ user, since }) => (
            <AccountLine key={user.id} account={user}>
              <div class="actions">
                <span class="muted">
                  Blocked <When unix={since} />
                </span>
                <form method="post" action="/user/settings/blocked_users" class="inline">
                  <CsrfField page={page} />
                  <input type="hidden" name="action" value="unblock" />
                  <input type="hidden" name="blockee" value={user.name} />
                  <button type="submit">Unblock</button>
                </form>
              </div>
            </AccountLine>
          ))}
        </ul>
        <Pager path="/user/settings/blocked_users" {...props.paging} />
      </Section>
    </SettingsLayout>
  );
}

function OrganizationsPage(props: { page: PageContext; orgs: UserRow[]; paging: Paging }): VNode {
  const { page } = props;
  return (
    <SettingsLayout
      page={page}
      title="Organizations"
      area="User settings"
      nav={USER_SETTINGS_NAV}
      active="/user/settings/organization"
    >
      <Section title="Organizations">
        <p>
          <a href="/org/create" class="button">
            New organization
          </a>
        </p>
        {props.orgs.length === 0 ? <p class="empty">You are not a member of any organization.</p> : null}
        <ul class="list">
          {props.orgs.map((o) => (
            <AccountLine key={o.id} account={o}>
              <DangerForm
                page={page}
                action="/user/settings/organization/leave"
                button="Leave"
                confirm={`Leave the organization ${o.name}?`}
              >
                <input type="hidden" name="org" value={o.name} />
              </DangerForm>
            </AccountLine>
          ))}
        </ul>
        <Pager path="/user/settings/organization" {...props.paging} />
      </Section>
    </SettingsLayout>
  );
}

function ReposPage(props: {
  page: PageContext;
  repos: RepoRow[];
  paging: Paging;
  ownerName: string;
  /** Unadopted directories (administrators), paged by `unadopted_page`. */
  unadopted: { dirs: string[]; paging: Paging } | null;
}): VNode {
  const query = (param: string, other: number) => (other > 1 ? `${param}=${other}` : '');
  const { page } = props;
  return (
    <SettingsLayout
      page={page}
      title="Repositories"
      area="User settings"
      nav={USER_SETTINGS_NAV}
      active="/user/settings/repos"
    >
      <Section title={`Repositories (${props.paging.total})`}>
        {props.repos.length === 0 ? <p class="empty">You own no repository.</p> : null}
        <ul class="list">
          {props.repos.map((r) => (
            <li key={r.id}>
              <div class="grow">
                <a href={`/${props.ownerName}/${r.name}`} class="title">
                  {props.ownerName}/{r.name}
                </a>{' '}
                {r.is_private ? <span class="pill">Private</span> : null}
                {r.is_fork ? <span class="pill">Fork</span> : null}
                {r.is_mirror ? <span class="pill">Mirror</span> : null}
                {r.is_archived ? <span class="pill">Archived</span> : null}
              </div>
              <a href={`/${props.ownerName}/${r.name}/settings`}>Settings</a>
            </li>
          ))}
        </ul>
        <Pager
          path="/user/settings/repos"
          {...props.paging}
          query={query('unadopted_page', props.unadopted?.paging.page ?? 1)}
        />
      </Section>
      {props.unadopted ? (
        <Section title="Unadopted repositories">
          <p class="muted">Directories of repositories on disk that no repository of the site records.</p>
          {props.unadopted.dirs.length === 0 ? (
            <p class="empty">There are no unadopted repositories.</p>
          ) : null}
          <ul class="list">
            {props.unadopted.dirs.map((full) => (
              <li key={full}>
                <div class="grow">
                  <code>{full}</code>
                </div>
                <div class="actions">
                  <form method="post" action="/user/settings/repos/unadopted" class="inline">
                    <CsrfField page={page} />
                    <input type="hidden" name="id" value={full} />
                    <input type="hidden" name="action" value="adopt" />
                    <button type="submit">Adopt files</button>
                  </form>
                  <DangerForm
                    page={page}
                    action="/user/settings/repos/unadopted"
                    button="Delete files"
                    confirm={`Delete the files of ${full} for good?`}
                  >
                    <input type="hidden" name="id" value={full} />
                    <input type="hidden" name="action" value="delete" />
                  </DangerForm>
                </div>
              </li>
            ))}
          </ul>
          <Pager
            path="/user/settings/repos"
            {...props.unadopted.paging}
            param="unadopted_page"
            query={query('page', props.paging.page)}
          />
        </Section>
      ) : null}
    </SettingsLayout>
  );
}

export function settingsListsPages(deps: SettingsListsDeps): PageRoutes {
  return (app, web) => registerSettingsLists(app, web, deps);
}

function registerSettingsLists(app: FastifyInstance, web: Web, deps: SettingsListsDeps): void {
  const { users, social, orgs, repos, unadopted, pageSize } = deps;
  /** The page a `?name=` asks for, with its limit and offset. */
  const pageOf = (request: FastifyRequest, name = 'page') => {
    const page = pageNumber((request.query as Record<string, unknown>)[name]);
    return { page, limit: pageSize, offset: (page - 1) * pageSize };
  };
  const body = (request: FastifyRequest, name: string) =>
    formText((request.body as Record<string, unknown> | undefined)?.[name]);

  const blockedPage = async (request: FastifyRequest, reply: FastifyReply, value: string, error?: string) => {
    const user = web.requireUser(request);
    const at = pageOf(request);
    const [rows, total] = await social.blocked(user, at);
    const byId = await users.getByIds(rows.map((r) => r.block_id));
    const blocked = rows.flatMap((r) => {
      const u = byId.get(r.block_id);
      return u ? [{ user: u, since: r.created_unix }] : [];
    });
    return web.send(
      reply,
      <BlockedPage
        page={web.page(request)}
        blocked={blocked}
        paging={{ page: at.page, pageSize, total }}
        value={value}
        error={error}
      />,
      error ? 422 : 200,
    );
  };

  app.get('/user/settings/blocked_users', async (request, reply) => blockedPage(request, reply, ''));

  app.post('/user/settings/blocked_users', async (request, reply) => {
    const user = web.requireUser(request);
    const action = body(request, 'action');
    const name = body(request, 'blockee').trim();
    if (action !== 'block' && action !== 'unblock') {
      return blockedPage(request, reply, name, 'Unknown action.');
    }
    if (!name) return blockedPage(request, reply, name, 'Enter the name of a user.');
    const target = name.length <= 255 ? await users.getByName(name) : undefined;
    if (!target || target.type !== UserType.Individual) {
      return blockedPage(request, reply, name, `There is no user named ${name}.`);
    }
    if (target.id === user.id) return blockedPage(request, reply, name, 'You cannot block yourself.');
    if (action === 'block') await social.block(user, target);
    else await social.unblock(user, target);
    return web.redirect(reply, '/user/settings/blocked_users', {
      kind: 'info',
      text: action === 'block' ? `${target.name} is blocked.` : `${target.name} is no longer blocked.`,
    });
  });

  app.get('/user/settings/organization', async (request, reply) => {
    const user = web.requireUser(request);
    const at = pageOf(request);
    const [rows, total] = await orgs.listOrgsOfUser(user, request.web.viewer, at.limit, at.offset);
    return web.send(
      reply,
      <OrganizationsPage page={web.page(request)} orgs={rows} paging={{ page: at.page, pageSize, total }} />,
    );
  });

  app.post('/user/settings/organization/leave', async (request, reply) => {
    const user = web.requireUser(request);
    const name = body(request, 'org');
    const org = name && name.length <= 255 ? await users.getByName(name) : undefined;
    if (!org || org.type !== UserType.Organization) {
      throw new AppError('not_found', `The organization ${name} does not exist.`);
    }
    try {
      await orgs.removeMember(org, user);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'invalid') {
        return web.redirect(reply, '/user/settings/organization', {
          kind: 'error',
          text: `You cannot leave ${org.name}: you are its last owner.`,
        });
      }
      throw err;
    }
    return web.redirect(reply, '/user/settings/organization', {
      kind: 'info',
      text: `You left ${org.name}.`,
    });
  });

  app.get('/user/settings/repos', async (request, reply) => {
    const user = web.requireUser(request);
    const at = pageOf(request);
    const [rows, total] = await repos.list({ ownerId: user.id, orderBy: 'name' }, at.limit, at.offset);
    let dirs: { dirs: string[]; paging: Paging } | null = null;
    if (user.is_admin && unadopted) {
      const u = pageOf(request, 'unadopted_page');
      const [found, count] = await unadopted.list('', u.limit, u.offset);
      dirs = { dirs: found, paging: { page: u.page, pageSize, total: count } };
    }
    return web.send(
      reply,
      <ReposPage
        page={web.page(request)}
        repos={rows}
        paging={{ page: at.page, pageSize, total }}
        ownerName={user.name}
        unadopted={dirs}
      />,
    );
  });

  app.post('/user/settings/repos/unadopted', async (request, reply) => {
    const user = web.requireUser(request);
    if (!user.is_admin || !unadopted) {
      throw new AppError('forbidden', 'Only site administrators may adopt or delete unadopted repositories.');
    }
    const [owner, name, ...rest] = body(request, 'id').split('/');
    if (!owner || !name || rest.length) throw new AppError('not_found', 'No such unadopted repository.');
    const action = body(request, 'action');
    if (action === 'adopt') {
      await unadopted.adopt(user, owner, name);
      return web.redirect(reply, '/user/settings/repos', {
        kind: 'info',
        text: `${owner}/${name} is adopted.`,
      });
    }
    if (action === 'delete') {
      await unadopted.delete(owner, name);
      return web.redirect(reply, '/user/settings/repos', {
        kind: 'info',
        text: `The files of ${owner}/${name} are deleted.`,
      });
    }
    throw new AppError('invalid', 'Unknown action: adopt or delete.');
  });
}
