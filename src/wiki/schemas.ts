// Forgejo's wiki JSON (WikiPage, WikiPageMetaData, WikiCommit, WikiCommitList) and the body of
// page writes (CreateWikiPageOptions), with the conversion from what the service reads.
import { Type, type Static } from 'typebox';
import { isoTime } from '../http/format.js';
import { CommitUser } from '../git/data-schemas.js';
import type { CommitData } from '../git/data.js';
import type { WikiPage as WikiPageData, WikiPageFile } from './service.js';

export const WikiCommit = Type.Object(
  {
    sha: Type.String(),
    author: CommitUser,
    // Forgejo's spelling.
    commiter: CommitUser,
    message: Type.String(),
  },
  { title: 'WikiCommit', description: 'WikiCommit page commit/revision' },
);

export const WikiPageMetaData = Type.Object(
  {
    title: Type.String(),
    html_url: Type.String(),
    sub_url: Type.String(),
    last_commit: Type.Optional(WikiCommit),
  },
  { title: 'WikiPageMetaData', description: 'WikiPageMetaData wiki page meta information' },
);

export const WikiPage = Type.Object(
  {
    ...WikiPageMetaData.properties,
    content_base64: Type.String({ description: 'Page content, base64 encoded' }),
    commit_count: Type.Integer(),
    sidebar: Type.String(),
    footer: Type.String(),
  },
  { title: 'WikiPage', description: 'WikiPage a wiki page' },
);

export const WikiCommitList = Type.Object(
  { commits: Type.Array(WikiCommit), count: Type.Integer() },
  { title: 'WikiCommitList', description: 'WikiCommitList commit/revision list' },
);

export const CreateWikiPageOptions = Type.Object(
  {
    content_base64: Type.Optional(Type.String({ description: 'content must be base64 encoded' })),
    message: Type.Optional(Type.String({ description: 'optional commit message summarizing the change' })),
    title: Type.Optional(Type.String({ description: 'page title. leave empty to keep unchanged' })),
  },
  { title: 'CreateWikiPageOptions', description: 'CreateWikiPageOptions form for creating wiki' },
);

export type WikiCommitJson = Static<typeof WikiCommit>;
export type WikiPageMetaDataJson = Static<typeof WikiPageMetaData>;
export type WikiPageJson = Static<typeof WikiPage>;

/** The page's web address: `<root><owner>/<repo>/wiki/<web path>`. */
export function wikiHtmlUrl(rootUrl: string, fullName: string, webPath: string): string {
  return `${rootUrl}${fullName}/wiki/${webPath}`;
}

export function toWikiCommitJson(c: CommitData): WikiCommitJson {
  return {
    sha: c.oid,
    author: { name: c.author.name, email: c.author.email, date: isoTime(c.author.unix) },
    commiter: { name: c.committer.name, email: c.committer.email, date: isoTime(c.committer.unix) },
    message: c.message,
  };
}

export function toWikiMetaJson(
  p: WikiPageFile & { lastCommit?: CommitData | undefined },
  rootUrl: string,
  fullName: string,
): WikiPageMetaDataJson {
  return {
    title: p.title,
    html_url: wikiHtmlUrl(rootUrl, fullName, p.webPath),
    sub_url: p.webPath,
    ...(p.lastCommit ? { last_commit: toWikiCommitJson(p.lastCommit) } : {}),
  };
}

export function toWikiPageJson(p: WikiPageData, rootUrl: string, fullName: string): WikiPageJson {
  return {
    ...toWikiMetaJson(p, rootUrl, fullName),
    content_base64: p.content ? p.content.toString('base64') : '',
    commit_count: p.commitCount,
    sidebar: p.sidebar ? p.sidebar.toString('base64') : '',
    footer: p.footer ? p.footer.toString('base64') : '',
  };
}

/** Go's base64.StdEncoding: padded standard alphabet (line breaks ignored); undefined when invalid. */
export function decodeBase64(s: string): Buffer | undefined {
  const clean = s.replace(/[\r\n]/g, '');
  if (clean.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) return undefined;
  return Buffer.from(clean, 'base64');
}
