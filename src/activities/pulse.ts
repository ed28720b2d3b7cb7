// A repository's activity over a period (Forgejo's /{owner}/{repo}/activity): counts from the
// database plus a summary of the default branch's commits from one `git log` process.
import type { Db } from '../db/database.js';
import { git } from '../git/git.js';
import type { RepoRow } from '../repos/tables.js';
import { pulseCounts, type PulseCounts } from './pulse-store.js';

export const PERIODS = {
  daily: 1,
  halfweekly: 3,
  weekly: 7,
  monthly: 30,
  quarterly: 91,
  semiyearly: 182,
  yearly: 365,
} as const;
export type Period = keyof typeof PERIODS;

export interface CommitSummary {
  commits: number;
  authors: number;
  filesChanged: number;
}

export interface Pulse extends PulseCounts {
  period: Period;
  since: number;
  commits: CommitSummary;
}

export interface PulseServiceDeps {
  db: Db;
  repos: { pathOf(repo: Pick<RepoRow, 'id'>): string };
}

export class PulseService {
  constructor(private readonly deps: PulseServiceDeps) {}

  async pulse(repo: RepoRow, period: Period, now = Math.floor(Date.now() / 1000)): Promise<Pulse> {
    const since = now - PERIODS[period] * 86400;
    const [counts, commits] = await Promise.all([
      pulseCounts(this.deps.db, repo.id, since),
      this.commitSummary(repo, since),
    ]);
    return { ...counts, period, since, commits };
  }

  private async commitSummary(repo: RepoRow, since: number): Promise<CommitSummary> {
    const empty = { commits: 0, authors: 0, filesChanged: 0 };
    if (!repo.default_branch) return empty;
    const out = await git(
      [
        'log',
        `--since=@${since}`,
        '--format=%x1e%aE',
        '--name-only',
        '--no-merges',
        '--end-of-options',
        `refs/heads/${repo.default_branch}`,
        '--',
      ],
      { gitDir: this.deps.repos.pathOf(repo), okCodes: [128] },
    );
    if (out.code !== 0) return empty;
    const authors = new Set<string>();
    const files = new Set<string>();
    let commits = 0;
    for (const rec of out.stdout.toString('utf8').split('\x1e')) {
      const lines = rec.split('\n').filter((l) => l !== '');
      if (lines.length === 0) continue;
      commits++;
      authors.add(lines[0]!.toLowerCase());
      for (const f of lines.slice(1)) files.add(f);
    }
    return { commits, authors: authors.size, filesChanged: files.size };
  }
}
