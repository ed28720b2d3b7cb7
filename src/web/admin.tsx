// The frame of the site administration's pages (/admin...): who may see them (administrators; a
// signed-in user who is not one is refused with 403, as Forgejo does, an anonymous visitor is sent
// to sign in), the side menu, and the table and search box the lists share.
import type { FastifyRequest } from 'fastify';
import type { ComponentChildren, VNode } from 'preact';
import { forbidden } from '../errors.js';
import type { UserRow } from '../users/tables.js';
import type { PageContext } from './layout.js';
import type { Web } from './plugin.js';
import { ADMIN_NAV, SettingsLayout } from './settings.js';

/** The signed-in administrator, a redirect to sign in, or a 403. */
export function requireAdmin(web: Web, request: FastifyRequest): UserRow {
  const user = web.requireUser(request);
  if (!user.is_admin) throw forbidden('Only site administrators may see the site administration.');
  return user;
}

/** A page of the site administration; `active` is the side menu entry it belongs to. */
export function AdminLayout(props: {
  page: PageContext;
  title: string;
  active: string;
  children: ComponentChildren;
}): VNode {
  return (
    <SettingsLayout
      page={props.page}
      title={props.title}
      area="Site administration"
      nav={ADMIN_NAV}
      active={props.active}
    >
      <h1 class="admin-title">{props.title}</h1>
      {props.children}
    </SettingsLayout>
  );
}

/** The search box of an administration list (`q`, plus hidden fields to keep, such as `sort`). */
export function AdminSearch(props: {
  action: string;
  q: string;
  label: string;
  keep?: Record<string, string>;
}): VNode {
  return (
    <form method="get" action={props.action} class="search" role="search">
      {Object.entries(props.keep ?? {}).map(([k, v]) => (
        <input key={k} type="hidden" name={k} value={v} />
      ))}
      <input type="search" name="q" value={props.q} aria-label={props.label} placeholder="Search…" />
      <button type="submit">Search</button>
    </form>
  );
}

/** A table of an administration list, scrolled sideways on small screens. */
export function AdminTable(props: { caption: string; head: string[]; children: ComponentChildren }): VNode {
  return (
    <div class="admin-table-wrap">
      <table class="admin-table">
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr>
            {props.head.map((h) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** A size in bytes as people read it (1.5 KiB, 3.2 MiB). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/** Yes/No for a flag column. */
export const yesNo = (v: number | boolean): string => (v ? 'Yes' : 'No');
