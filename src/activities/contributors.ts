// A repository's contributors (Forgejo's /{owner}/{repo}/activity/contributors): who wrote the
// default branch's commits, how many, with lines added and deleted, per week. One `git log
// --shortstat` over the branch, kept per head commit (a new push makes a new entry; a head seen
// before is answered from memory), authors matched to accounts by their activated e-mail addresses.
import { LRUCache } from 'lru-cache';
import type { Db } from '../db/database.js';
import { usersByEmails } from '../git/data-store.js';
import { git } from '../git/git.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';

export interface Week {
  /** The week's Sunday, 00:00 UTC, unix seconds (as Forgejo's weeks). */
  week: number;
  commits: number;
  additions: number;
  deletions: number;
}

export interface Contributor {
  name: string;
  email: string;
  /** The account whose activated address wrote the commits, if any. */
  user: UserRow | undefined;
  commits: number;
  additions: number;
  deletions: number;
  /** Weeks with commits, oldest first. */
  weeks: Week[];
}

export interface Contributors {
  /** The branch's head the numbers are of ('' for an empty repository). */
  head: string;
  total: Omit<Contributor, 'name' | 'email' | 'user'>;
  /** By commits, most first. */
  contributors: Contributor[];
}

export interface ContributorsServiceDeps {
  db: Db;
  repos: { pathOf(repo: Pick<RepoRow, 'id'>): string };
}

const WEEK = 7 * 86400;
/** Unix seconds of the Sunday (00:00 UTC) that starts the week of `t` (1970-01-01 was a Thursday). */
export const weekOf = (t: number) => Math.floor((t + 4 * 86400) / WEEK) * WEEK - 4 * 86400;

/** Parses `git log --format=%x1e%aN%x00%aE%x00%at --shortstat` output into per-author totals and weeks. */
export function tally(log: string): Omit<Contributors, 'head'> {
  type Acc = { name: string; email: string; commits: number; additions: number; deletions: number };
  const people = new Map<string, Acc & { weeks: Map<number, Week> }>();
  const all = new Map<number, Week>();
  const bump = (weeks: Map<number, Week>, week: number, add: number, del: number) => {
    const w = weeks.get(week) ?? { week, commits: 0, additions: 0, deletions: 0 };
    w.commits++;
    w.additions += add;
    w.deletions += del;
    weeks.set(week, w);
  };
  for (const rec of log.split('\x1e')) {
    if (!rec.trim()) continue;
    const [head = '', ...rest] = rec.split('\n');
    const [name = '', email = '', at = '0'] = head.split('\x00');
    const stat = rest.join(' ');
    const add = Number(/(\d+) insertions?\(\+\)/.exec(stat)?.[1] ?? 0);
    const del = Number(/(\d+) deletions?\(-\)/.exec(stat)?.[1] ?? 0);
    const key = email.toLowerCase();
    const p = people.get(key) ?? { name, email, commits: 0, additions: 0, deletions: 0, weeks: new Map() };
    p.commits++;
    p.additions += add;
    p.deletions += del;
    const week = weekOf(Number(at));
    bump(p.weeks, week, add, del);
    bump(all, week, add, del);
    people.set(key, p);
  }
  const sorted = (m: Map<number, Week>) => [...m.values()].sort((a, b) => a.week - b.week);
  const contributors = [...people.values()]
    .map((p) => ({ ...p, user: undefined, weeks: sorted(p.weeks) }))
    .sort((a, b) => b.commits - a.commits || a.name.localeCompare(b.name));
  const total = contributors.reduce(
    (t, c) => ({
      commits: t.commits + c.commits,
      additions: t.additions + c.additions,
      deletions: t.deletions + c.deletions,
    }),
    { commits: 0, additions: 0, deletions: 0 },
  );
  return { total: { ...total, weeks: sorted(all) }, contributors };
}

export class ContributorsService {
  /** By repository and head: a history never changes under a commit id. */
  private readonly cache = new LRUCache<string, Promise<Contributors>>({ max: 64 });

  constructor(private readonly deps: ContributorsServiceDeps) {}

  async contributors(repo: RepoRow): Promise<Contributors> {
    const gitDir = this.deps.repos.pathOf(repo);
    const ref = `refs/heads/${repo.default_branch}`;
    const head = repo.default_branch
      ? await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], {
          gitDir,
          okCodes: [1, 128],
        })
      : undefined;
    const oid = head?.code === 0 ? head.stdout.toString('utf8').trim() : '';
    if (!oid)
      return { head: '', total: { commits: 0, additions: 0, deletions: 0, weeks: [] }, contributors: [] };
    const key = `${repo.id}:${oid}`;
    let found = this.cache.get(key);
    if (!found) {
      found = this.compute(gitDir, oid);
      this.cache.set(key, found);
      found.catch(() => this.cache.delete(key));
    }
    // Accounts are matched on every view: an address may be added or verified meanwhile.
    const result = await found;
    const users = new Map<string, UserRow>();
    const emails = result.contributors.map((c) => c.email);
    for (let i = 0; i < emails.length; i += 500) {
      for (const [k, v] of await usersByEmails(this.deps.db, emails.slice(i, i + 500))) users.set(k, v);
    }
    return {
      ...result,
      contributors: result.contributors.map((c) => ({ ...c, user: users.get(c.email.toLowerCase()) })),
    };
  }

  private async compute(gitDir: string, oid: string): Promise<Contributors> {
    const out = await git(
      ['log', '--no-merges', '--format=%x1e%aN%x00%aE%x00%at', '--shortstat', '--end-of-options', oid, '--'],
      { gitDir },
    );
    return { head: oid, ...tally(out.stdout.toString('utf8')) };
  }
}
