// The commit graph (Forgejo's /{owner}/{repo}/graph): `git log --graph` over every branch, in date
// order, read row by row into the glyphs git draws (`*` a commit, `|` `/` `\` `_` the lines between
// them) and each commit's id, author, time, refs and subject. Pages are `--skip` windows, as
// Forgejo's are; the web page draws the glyphs as SVG.
import { git } from './git.js';

export interface GraphCommit {
  oid: string;
  author: string;
  /** Unix seconds (author time). */
  when: number;
  /** Branch and tag names pointing at the commit (`refs/heads/` and `refs/tags/` dropped). */
  refs: string[];
  subject: string;
}

export interface GraphRow {
  /** git's glyphs for this row, one per column (two columns per lane). */
  glyphs: string;
  commit?: GraphCommit;
}

const SEP = '\x1f';

/** Parses `git log --graph --format=<SEP>%H<SEP>%an<SEP>%at<SEP>%D<SEP>%s` output. */
export function parseGraph(out: string): GraphRow[] {
  const rows: GraphRow[] = [];
  for (const line of out.split('\n')) {
    if (line === '') continue;
    const at = line.indexOf(SEP);
    if (at < 0) {
      rows.push({ glyphs: line.trimEnd() });
      continue;
    }
    const [oid = '', author = '', when = '0', refs = '', ...subject] = line.slice(at + 1).split(SEP);
    rows.push({
      glyphs: line.slice(0, at).trimEnd(),
      commit: {
        oid,
        author,
        when: Number(when),
        refs: refs
          .split(', ')
          .map((r) => r.replace(/^HEAD -> /, '').replace(/^tag: /, ''))
          .filter((r) => r && r !== 'HEAD')
          .map((r) => r.replace(/^refs\/(heads|tags)\//, '')),
        subject: subject.join(SEP),
      },
    });
  }
  return rows;
}

export interface GraphServiceDeps {
  repos: { pathOf(repo: { id: number }): string };
}

export class GraphService {
  constructor(private readonly deps: GraphServiceDeps) {}

  /** Commits `offset`..`offset + limit` of every branch (and tag) in date order, with their graph rows. */
  async graph(
    repo: { id: number },
    limit: number,
    offset: number,
  ): Promise<{ rows: GraphRow[]; more: boolean }> {
    const out = await git(
      [
        'log',
        '--graph',
        '--date-order',
        '--branches',
        '--tags',
        `--skip=${offset}`,
        `--max-count=${limit + 1}`,
        `--format=${SEP}%H${SEP}%an${SEP}%at${SEP}%D${SEP}%s`,
        '--decorate=full',
        '--',
      ],
      { gitDir: this.deps.repos.pathOf(repo), okCodes: [128] },
    );
    if (out.code !== 0) return { rows: [], more: false };
    const rows = parseGraph(out.stdout.toString('utf8'));
    // One commit more than the page was asked for: whether there is a next page. It and the
    // connector rows after the page's last commit are dropped.
    let seen = 0;
    let cut = rows.length;
    for (let i = 0; i < rows.length; i++) {
      if (rows[i]!.commit && ++seen > limit) {
        cut = i;
        break;
      }
    }
    return { rows: rows.slice(0, cut), more: seen > limit };
  }
}
