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

export function RepoActions(props: {
  page: PageContext;
  base: string;
  repo: RepoRow;
  state: RepoActionState | null;
}): VNode {
  const { repo, state, page } = props;
  const form = (action: string, label: string, count: number, pressed: boolean) => (
    <form method="post" action={`${props.base}/action/${action}`} class="inline">
      <CsrfField page={page} />
      <button type="submit" aria-pressed={pressed ? 'true' : 'false'}>
        {label} <span class="count">{count}</span>
      </button>
    </form>
  );
  if (!state)
    return (
      <p class="repo-actions muted">
        ★ {repo.num_stars} stars · 👁 {repo.num_watches} watching · ⑂ {repo.num_forks} forks
      </p>
    );
  return (
    <div class="repo-actions">
      {state.watching
        ? form('unwatch', 'Unwatch', repo.num_watches, true)
        : form('watch', 'Watch', repo.num_watches, false)}
      {state.starred
        ? form('unstar', 'Unstar', repo.num_stars, true)
        : form('star', 'Star', repo.num_stars, false)}
      <a class="button" href={`/repo/fork/${repo.id}`}>
        Fork <span class="count">{repo.num_forks}</span>
      </a>
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
