// Activity in the web interface: a feed of what happened (pushes, issues, pull requests, comments,
// releases), read through the activities service with the viewer's access, as on the dashboard.
import type { VNode } from 'preact';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { ActivityService } from './service.js';
import type { Viewer } from '../users/tables.js';
import type { UserRow } from '../users/tables.js';
import { When } from '../web/components.js';
import type { ActionRow } from './tables.js';
import type { ActionEntry } from './feeds.js';

const VERBS: Record<string, string> = {
  create_repo: 'created repository',
  commit_repo: 'pushed to',
  push_tag: 'pushed tag',
  delete_tag: 'deleted tag',
  delete_branch: 'deleted branch',
  create_issue: 'opened issue',
  create_pull_request: 'opened pull request',
  close_issue: 'closed issue',
  reopen_issue: 'reopened issue',
  close_pull_request: 'closed pull request',
  reopen_pull_request: 'reopened pull request',
  merge_pull_request: 'merged pull request',
  comment_issue: 'commented on issue',
  comment_pull: 'commented on pull request',
  publish_release: 'published release',
  approve_pull_request: 'approved',
  reject_pull_request: 'requested changes on',
};

export type FeedItem = ActionEntry;

/** Where feed rows find their actors, repositories and owners. */
export interface PeopleDeps {
  repos: Pick<RepoService, 'getByIds'>;
  users: Pick<UserService, 'getByIds'>;
}

/** Feed rows with their actors, repositories and owners, in two queries (rows of a gone repository drop out). */
export async function withPeople(deps: PeopleDeps, rows: ActionRow[]): Promise<FeedItem[]> {
  const repos = await deps.repos.getByIds([...new Set(rows.map((r) => r.repo_id))]);
  const people = await deps.users.getByIds([
    ...new Set([...rows.map((r) => r.act_user_id), ...[...repos.values()].map((r) => r.owner_id)]),
  ]);
  return rows.flatMap((row) => {
    const repo = repos.get(row.repo_id);
    const owner = repo && people.get(repo.owner_id);
    return repo && owner ? [{ row, actor: people.get(row.act_user_id), repo, owner }] : [];
  });
}

export interface FeedDeps extends PeopleDeps {
  activities: Pick<ActivityService, 'userFeed'>;
}

/** The newest entries of `user`'s feed that `viewer` may see, with their people and repositories. */
export async function feedFor(
  deps: FeedDeps,
  user: UserRow,
  viewer: Viewer | null,
  limit = 20,
): Promise<FeedItem[]> {
  const [rows] = await deps.activities.userFeed(user, viewer, false, { page: { page: 1, limit, offset: 0 } });
  return withPeople(deps, rows);
}

function Target(props: { item: FeedItem }): VNode {
  const { row, repo, owner } = props.item;
  const base = `/${owner.name}/${repo.name}`;
  const [index, ...title] = row.content.split('|');
  const ref = row.ref_name.replace(/^refs\/(heads|tags)\//, '');
  if (/issue|pull/.test(row.op_type) && index && /^\d+$/.test(index)) {
    const kind = row.op_type.includes('pull') ? 'pulls' : 'issues';
    return (
      <>
        <a href={`${base}/${kind}/${index}`}>
          {owner.name}/{repo.name}#{index}
        </a>{' '}
        {title.join('|') ? <span class="muted">{title.join('|').slice(0, 120)}</span> : null}
      </>
    );
  }
  if (row.op_type === 'commit_repo')
    return (
      <>
        <code>{ref}</code> at <a href={base}>{`${owner.name}/${repo.name}`}</a>
      </>
    );
  if (row.op_type === 'push_tag' || row.op_type === 'delete_tag' || row.op_type === 'delete_branch')
    return (
      <>
        <code>{ref}</code> in <a href={base}>{`${owner.name}/${repo.name}`}</a>
      </>
    );
  if (row.op_type === 'publish_release')
    return (
      <>
        <a href={`${base}/releases/tag/${ref}`}>{row.content || ref}</a> of{' '}
        <a href={base}>{`${owner.name}/${repo.name}`}</a>
      </>
    );
  return <a href={base}>{`${owner.name}/${repo.name}`}</a>;
}

export function ActivityFeed(props: { items: FeedItem[] }): VNode {
  if (!props.items.length) return <p class="empty">No activity yet.</p>;
  return (
    <ul class="list feed">
      {props.items.map((item) => (
        <li>
          <p>
            {item.actor ? <a href={`/${item.actor.name}`}>{item.actor.name}</a> : 'Ghost'}{' '}
            {VERBS[item.row.op_type] ?? item.row.op_type} <Target item={item} />{' '}
            <span class="muted">
              <When unix={item.row.created_unix} />
            </span>
          </p>
        </li>
      ))}
    </ul>
  );
}
