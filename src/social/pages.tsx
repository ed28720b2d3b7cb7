// Stars and watches in the web interface: the buttons of a repository's home (with their counts,
// and the fork button beside them) and the forms they post, as Forgejo's /{owner}/{repo}/action/*.
import type { VNode } from 'preact';
import { AppError, notFound } from '../errors.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import { CsrfField, type PageContext } from '../web/layout.js';
import type { PageRoutes } from '../web/plugin.js';
import type { NotificationService } from '../notifications/service.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { SocialService } from './service.js';

export interface RepoActionState {
  starred: boolean;
  watching: boolean;
}

/** Whether the viewer stars and watches the repository (null when signed out). */
export interface ActionStateDeps {
  social: Pick<SocialService, 'isStarred'>;
  notifications: Pick<NotificationService, 'getWatch'>;
}

export async function actionState(deps: ActionStateDeps, repo: RepoRow, user: UserRow | null) {
  if (!user) return null;
  const [starred, watch] = await Promise.all([
    deps.social.isStarred(user, repo),
    deps.notifications.getWatch(repo, user),
  ]);
  return { starred, watching: !!watch };
}

/**
 * Watch, star and fork: buttons for the signed-in, each with its count linked to the list of
 * watchers, stargazers or forks; the counts alone, linked, for others.
 */
export function RepoActions(props: {
  page: PageContext;
  base: string;
  repo: RepoRow;
  state: RepoActionState | null;
}): VNode {
  const { repo, state, page, base } = props;
  const counted = (button: VNode, count: number, list: string, noun: string) => (
    <div class="split-button">
      {button}
      <a class="count" href={`${base}/${list}`} aria-label={`${count} ${noun}`}>
        {count}
      </a>
    </div>
  );
  const form = (action: string, label: string, pressed: boolean) => (
    <form method="post" action={`${base}/action/${action}`} class="inline">
      <CsrfField page={page} />
      <button type="submit" aria-pressed={pressed ? 'true' : 'false'}>
        {label}
      </button>
    </form>
  );
  if (!state)
    return (
      <p class="repo-actions muted">
        <a href={`${base}/watchers`}>{repo.num_watches} watching</a> ·{' '}
        <a href={`${base}/stars`}>{repo.num_stars} stars</a> ·{' '}
        <a href={`${base}/forks`}>{repo.num_forks} forks</a>
      </p>
    );
  return (
    <div class="repo-actions">
      {counted(
        state.watching ? form('unwatch', 'Unwatch', true) : form('watch', 'Watch', false),
        repo.num_watches,
        'watchers',
        'watching',
      )}
      {counted(
        state.starred ? form('unstar', 'Unstar', true) : form('star', 'Star', false),
        repo.num_stars,
        'stars',
        'stars',
      )}
      {counted(
        <a class="button" href={`/repo/fork/${repo.id}`}>
          Fork
        </a>,
        repo.num_forks,
        'forks',
        'forks',
      )}
    </div>
  );
}

export interface SocialPagesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  users: Pick<UserService, 'getById'>;
  social: Pick<SocialService, 'star' | 'unstar'>;
  notifications: Pick<NotificationService, 'watch' | 'unwatch'>;
}

export function socialPages(deps: SocialPagesDeps): PageRoutes {
  const { repos, users, social, notifications } = deps;
  return (app, web) => {
    app.post('/:owner/:repo/action/:action', async (request, reply) => {
      const user = web.requireUser(request);
      const p = request.params as Record<string, string>;
      const view = await repos.requireRepo(p['owner'] ?? '', p['repo'] ?? '', request.web.viewer, 'read');
      const owner = (await users.getById(view.repo.owner_id))!;
      const back = `/${owner.name}/${view.repo.name}`;
      const run: Record<string, () => Promise<unknown>> = {
        star: () => social.star(user, view.repo),
        unstar: () => social.unstar(user, view.repo),
        watch: () => notifications.watch(view.repo, user),
        unwatch: () => notifications.unwatch(view.repo, user),
      };
      const fn = run[p['action'] ?? ''];
      if (!fn) throw notFound('unknown action');
      try {
        await fn();
      } catch (err) {
        if (err instanceof AppError && (err.kind === 'forbidden' || err.kind === 'invalid'))
          return web.redirect(reply, back, { kind: 'error', text: err.message });
        throw err;
      }
      return web.redirect(reply, back);
    });
  };
}
