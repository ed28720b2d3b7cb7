// The repository a git URL's last segment names, for every transport (smart HTTP, SSH): `name`,
// `name.git`, and the wiki of `name` as `name.wiki` or `name.wiki.git` (repository names never end
// in ".wiki", so the two cannot be confused).

export interface GitRepoName {
  /** The repository's name, without ".git" and ".wiki". */
  name: string;
  /** Whether the wiki repository of `name` is meant. */
  wiki: boolean;
}

/** Splits a URL segment such as "project.wiki.git" into the repository name and whether it is the wiki. */
export function parseGitRepoName(segment: string): GitRepoName {
  const bare = segment.replace(/\.git$/i, '');
  const wiki = /\.wiki$/i.test(bare) && bare.length > 5;
  return { name: wiki ? bare.slice(0, -5) : bare, wiki };
}
