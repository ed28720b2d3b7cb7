// Two more pages of an organization's settings, at Forgejo's addresses: its labels
// (/org/{org}/settings/labels; forms post to /org/{org}/labels/new|edit|delete), shared by its
// repositories' issues, and the users it blocks (/org/{org}/settings/blocked_users[/block|/unblock]).
// Owners only, through the same services as the API.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../errors.js';
import { CsrfField, Field, type PageContext } from '../web/layout.js';
import type { PageRoutes, Web } from '../web/plugin.js';
import { Section, ticked, SettingsLayout, orgSettingsNav } from '../web/settings.js';
import type { LabelService } from '../labels/service.js';
import type { LabelRow } from '../labels/tables.js';
import { LabelItem, NewLabelForm } from '../labels/forms.js';
import type { SocialService } from '../social/service.js';
import type { AvatarService } from '../avatars/service.js';
import fs from 'node:fs/promises';
import { uploadsOf } from '../web/plugin.js';
import type { UserRow } from '../users/tables.js';
import type { UserService } from '../users/service.js';
import {
  Avatar,
  SettingsPage,
  formError,
  orgLookups,
  orgPath,
  reason,
  settingsValues,
  text,
  type OrgPagesDeps,
} from './pages.js';

type Form = Record<string, string | undefined>;

export interface OrgSettingsPagesDeps extends Pick<OrgPagesDeps, 'orgs'> {
  users: OrgPagesDeps['users'] & Pick<UserService, 'getByIds'>;
  labels: Pick<LabelService, 'list' | 'create' | 'edit' | 'delete' | 'requireOrgLabel'>;
  social: Pick<SocialService, 'block' | 'unblock' | 'blocked'>;
  avatars: Pick<AvatarService, 'setUser' | 'deleteUser'>;
}

const ALL = { page: 1, limit: 1000, offset: 0 };

function LabelsPage(props: {
  page: PageContext;
  org: UserRow;
  labels: LabelRow[];
  values: Form;
  errors: Form;
}): VNode {
  const { page, org, values, errors } = props;
  const base = `${orgPath(org)}/labels`;
  return (
    <SettingsLayout
      page={page}
      title="Labels"
      area={org.name}
      nav={orgSettingsNav(org.name)}
      active={`${orgPath(org)}/settings/labels`}
    >
      <Section title="New label">
        <NewLabelForm page={page} base={base} values={values} errors={errors} />
      </Section>
      <Section title={`Labels (${props.labels.length})`}>
        {props.labels.length === 0 ? <p class="empty">The organization has no labels yet.</p> : null}
        <ul class="list">
          {props.labels.map((l) => (
            <LabelItem page={page} base={base} label={l} />
          ))}
        </ul>
      </Section>
    </SettingsLayout>
  );
}

function BlockedPage(props: {
  page: PageContext;
  org: UserRow;
  blocked: UserRow[];
  typed?: string;
  error?: string | undefined;
}): VNode {
  const { page, org } = props;
  const base = `${orgPath(org)}/settings/blocked_users`;
  return (
    <SettingsLayout
      page={page}
      title="Blocked users"
      area={org.name}
      nav={orgSettingsNav(org.name)}
      active={base}
    >
      <Section title="Block a user">
        <p class="muted">
          A blocked user cannot star, watch or collaborate on the organization's repositories.
        </p>
        <form method="post" action={`${base}/block`}>
          <CsrfField page={page} />
          <Field label="Username" name="uname" value={props.typed ?? ''} required error={props.error} />
          <button type="submit" class="primary">
            Block
          </button>
        </form>
      </Section>
      <Section title={`Blocked users (${props.blocked.length})`}>
        {props.blocked.length === 0 ? <p class="empty">Nobody is blocked.</p> : null}
        <ul class="list">
          {props.blocked.map((u) => (
            <li>
              <Avatar user={u} size={32} />
              <div>
                <a href={`/${u.name}`} class="title">
                  {u.name}
                </a>
              </div>
              <div class="actions">
                <form method="post" action={`${base}/unblock`}>
                  <CsrfField page={page} />
                  <input type="hidden" name="user_id" value={String(u.id)} />
                  <button type="submit">Unblock</button>
                </form>
              </div>
            </li>
          ))}
        </ul>
      </Section>
    </SettingsLayout>
  );
}

export function orgSettingsPages(deps: OrgSettingsPagesDeps): PageRoutes {
  return (app, web) => registerSettingsPages(app, web, deps);
}

function registerSettingsPages(app: FastifyInstance, web: Web, deps: OrgSettingsPagesDeps): void {
  const { labels, social, users, avatars } = deps;
  const { ownedOrg, userById } = orgLookups(web, deps);

  app.post('/org/:org/settings/avatar', async (request, reply) => {
    const { org } = await ownedOrg(request);
    const [file] = uploadsOf((request.body as Record<string, unknown> | undefined)?.['avatar']);
    const again = (message: string) =>
      web.send(
        reply,
        <SettingsPage
          page={web.page(request)}
          org={org}
          values={settingsValues(org)}
          errors={{ avatar: message }}
        />,
        422,
      );
    if (!file) return again('Choose a picture to upload.');
    try {
      await avatars.setUser(org, (await fs.readFile(file.path)).toString('base64'));
    } catch (err) {
      if (!formError(err)) throw err;
      return again(reason(err));
    }
    return web.redirect(reply, `${orgPath(org)}/settings`, {
      kind: 'info',
      text: 'The avatar has been updated.',
    });
  });

  app.post('/org/:org/settings/avatar/delete', async (request, reply) => {
    const { org } = await ownedOrg(request);
    await avatars.deleteUser(org);
    return web.redirect(reply, `${orgPath(org)}/settings`, {
      kind: 'info',
      text: 'The avatar has been deleted.',
    });
  });

  const labelsPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    org: UserRow,
    values: Form = {},
    errors: Form = {},
  ) => {
    const [rows] = await labels.list({ orgId: org.id }, true, ALL);
    return web.send(
      reply,
      <LabelsPage page={web.page(request)} org={org} labels={rows} values={values} errors={errors} />,
      Object.keys(errors).length ? 422 : 200,
    );
  };
  const labelInput = (body: unknown) => ({
    title: text(body, 'title').trim(),
    color: text(body, 'color').trim(),
    description: text(body, 'description'),
    exclusive: text(body, 'exclusive'),
    archived: text(body, 'archived'),
  });
  const labelErrors = (values: Form, err: AppError): Form =>
    /color/i.test(err.message) ? { color: reason(err) } : { title: reason(err) };

  app.get('/org/:org/settings/labels', async (request, reply) => {
    const { org } = await ownedOrg(request);
    return labelsPage(request, reply, org);
  });

  app.post('/org/:org/labels/new', async (request, reply) => {
    const { org } = await ownedOrg(request);
    const values = labelInput(request.body);
    if (!values.title) return labelsPage(request, reply, org, values, { title: 'Required' });
    try {
      await labels.create(
        { orgId: org.id },
        {
          name: values.title,
          color: values.color,
          description: values.description,
          exclusive: ticked(values.exclusive),
          isArchived: ticked(values.archived),
        },
      );
    } catch (err) {
      if (!formError(err)) throw err;
      return labelsPage(request, reply, org, values, labelErrors(values, err));
    }
    return web.redirect(reply, `${orgPath(org)}/settings/labels`, {
      kind: 'info',
      text: `The label ${values.title} has been created.`,
    });
  });

  const labelOf = async (request: FastifyRequest, org: UserRow) => {
    const id = Number(text(request.body, 'id'));
    if (!Number.isInteger(id)) throw new AppError('not_found', 'label does not exist');
    return labels.requireOrgLabel(org, id);
  };

  app.post('/org/:org/labels/edit', async (request, reply) => {
    const { org } = await ownedOrg(request);
    const label = await labelOf(request, org);
    const values = labelInput(request.body);
    if (!values.title) return labelsPage(request, reply, org, {}, { title: 'A label needs a name.' });
    try {
      await labels.edit(label, {
        name: values.title,
        color: values.color,
        description: values.description,
        exclusive: ticked(values.exclusive),
        isArchived: ticked(values.archived),
      });
    } catch (err) {
      if (!formError(err)) throw err;
      return labelsPage(request, reply, org, {}, labelErrors(values, err));
    }
    return web.redirect(reply, `${orgPath(org)}/settings/labels`, {
      kind: 'info',
      text: `The label ${values.title} has been updated.`,
    });
  });

  app.post('/org/:org/labels/delete', async (request, reply) => {
    const { org } = await ownedOrg(request);
    const label = await labelOf(request, org);
    await labels.delete(label);
    return web.redirect(reply, `${orgPath(org)}/settings/labels`, {
      kind: 'info',
      text: `The label ${label.name} has been deleted.`,
    });
  });

  const blockedPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    org: UserRow,
    typed?: string,
    error?: string,
  ) => {
    const [blocks] = await social.blocked(org, ALL);
    const byId = await users.getByIds(blocks.map((b) => b.block_id));
    const rows = blocks.flatMap((b) => byId.get(b.block_id) ?? []);
    return web.send(
      reply,
      <BlockedPage page={web.page(request)} org={org} blocked={rows} typed={typed ?? ''} error={error} />,
      error ? 422 : 200,
    );
  };

  app.get('/org/:org/settings/blocked_users', async (request, reply) => {
    const { org } = await ownedOrg(request);
    return blockedPage(request, reply, org);
  });

  app.post('/org/:org/settings/blocked_users/block', async (request, reply) => {
    const { org } = await ownedOrg(request);
    const uname = text(request.body, 'uname').trim();
    let u: UserRow | undefined;
    try {
      u = uname ? await users.requireUser(uname) : undefined;
    } catch (err) {
      if (!(err instanceof AppError) || err.kind !== 'not_found') throw err;
    }
    if (!u) return blockedPage(request, reply, org, uname, `The user ${uname || '(empty)'} does not exist.`);
    await social.block(org, u);
    return web.redirect(reply, `${orgPath(org)}/settings/blocked_users`, {
      kind: 'info',
      text: `${u.name} is now blocked.`,
    });
  });

  app.post('/org/:org/settings/blocked_users/unblock', async (request, reply) => {
    const { org } = await ownedOrg(request);
    const u = await userById(Number(text(request.body, 'user_id')));
    await social.unblock(org, u);
    return web.redirect(reply, `${orgPath(org)}/settings/blocked_users`, {
      kind: 'info',
      text: `${u.name} is no longer blocked.`,
    });
  });
}
