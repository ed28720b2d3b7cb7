// Forgejo's git data JSON (Branch, Tag, Commit, ContentsResponse, FileResponse, GitTreeResponse,
// GitBlobResponse, Reference, ...) and option objects as TypeBox schemas, and the conversions from
// what the git layer reads to that JSON.
import { Type, type Static, type TSchema } from 'typebox';
import { User, toUserJson } from '../users/schemas.js';
import type { Viewer, UserRow } from '../users/tables.js';
import type { CommitData, Signature } from './data.js';
import type { AnnotatedTagData, RefEntry, TagData } from './ref-lists.js';
import type { TreeEntry } from './trees.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const DateTime = Type.String({ format: 'date-time' });

// Shapes

export const PayloadUser = Type.Object(
  { name: Type.String(), email: Type.String(), username: Type.String() },
  { title: 'PayloadUser', description: 'PayloadUser represents the author or committer of a commit' },
);

export const PayloadCommitVerification = Type.Object(
  {
    verified: Type.Boolean(),
    reason: Type.String(),
    signature: Type.String(),
    signer: Nullable(PayloadUser),
    payload: Type.String(),
  },
  { title: 'PayloadCommitVerification' },
);

export const PayloadCommit = Type.Object(
  {
    id: Type.String({ description: 'sha1 hash of the commit' }),
    message: Type.String(),
    url: Type.String(),
    author: PayloadUser,
    committer: PayloadUser,
    verification: Nullable(PayloadCommitVerification),
    timestamp: DateTime,
    added: Nullable(Type.Array(Type.String())),
    removed: Nullable(Type.Array(Type.String())),
    modified: Nullable(Type.Array(Type.String())),
  },
  { title: 'PayloadCommit' },
);

export const Branch = Type.Object(
  {
    name: Type.String(),
    commit: PayloadCommit,
    protected: Type.Boolean(),
    required_approvals: Type.Integer(),
    enable_status_check: Type.Boolean(),
    status_check_contexts: Type.Array(Type.String()),
    user_can_push: Type.Boolean(),
    user_can_merge: Type.Boolean(),
    effective_branch_protection_name: Type.String(),
  },
  { title: 'Branch', description: 'Branch represents a repository branch' },
);
export type BranchJson = Static<typeof Branch>;

export const CommitMeta = Type.Object(
  { url: Type.String(), sha: Type.String(), created: DateTime },
  { title: 'CommitMeta' },
);

export const CommitUser = Type.Object(
  { name: Type.String(), email: Type.String(), date: Type.String() },
  {
    title: 'CommitUser',
    description: 'CommitUser contains information of a user in the context of a commit.',
  },
);

export const RepoCommit = Type.Object(
  {
    url: Type.String(),
    author: CommitUser,
    committer: CommitUser,
    message: Type.String(),
    tree: CommitMeta,
    verification: Nullable(PayloadCommitVerification),
  },
  { title: 'RepoCommit' },
);

export const CommitStats = Type.Object(
  { total: Type.Integer(), additions: Type.Integer(), deletions: Type.Integer() },
  { title: 'CommitStats', description: 'lines added and deleted by the commit' },
);

export const CommitAffectedFiles = Type.Object(
  {
    filename: Type.String(),
    status: Type.String({ description: 'added, modified or removed' }),
  },
  { title: 'CommitAffectedFiles', description: 'a file affected by the commit' },
);

export const Commit = Type.Object(
  {
    url: Type.String(),
    sha: Type.String(),
    created: DateTime,
    html_url: Type.String(),
    commit: RepoCommit,
    author: Nullable(User),
    committer: Nullable(User),
    parents: Type.Array(CommitMeta),
    files: Nullable(Type.Array(CommitAffectedFiles)),
    stats: Nullable(CommitStats),
  },
  { title: 'Commit', description: 'Commit contains information generated from a Git commit.' },
);
export type CommitJson = Static<typeof Commit>;

export const Compare = Type.Object(
  {
    total_commits: Type.Integer(),
    commits: Type.Array(Commit),
    files: Type.Array(CommitAffectedFiles),
  },
  { title: 'Compare', description: 'Compare represents a comparison between two commits.' },
);

export const TagArchiveDownloadCount = Type.Object(
  { zip: Type.Integer(), tar_gz: Type.Integer() },
  { title: 'TagArchiveDownloadCount' },
);

export const Tag = Type.Object(
  {
    name: Type.String(),
    message: Type.String(),
    id: Type.String(),
    commit: CommitMeta,
    zipball_url: Type.String(),
    tarball_url: Type.String(),
    archive_download_count: TagArchiveDownloadCount,
  },
  { title: 'Tag', description: 'Tag represents a repository tag' },
);
export type TagJson = Static<typeof Tag>;

export const AnnotatedTagObject = Type.Object(
  { type: Type.String(), url: Type.String(), sha: Type.String() },
  { title: 'AnnotatedTagObject' },
);

export const AnnotatedTag = Type.Object(
  {
    tag: Type.String(),
    sha: Type.String(),
    url: Type.String(),
    message: Type.String(),
    tagger: CommitUser,
    object: AnnotatedTagObject,
    verification: Nullable(PayloadCommitVerification),
    archive_download_count: TagArchiveDownloadCount,
  },
  { title: 'AnnotatedTag', description: 'AnnotatedTag represents an annotated tag' },
);

export const FileLinksResponse = Type.Object(
  { self: Nullable(Type.String()), git: Nullable(Type.String()), html: Nullable(Type.String()) },
  { title: 'FileLinksResponse' },
);

export const ContentsResponse = Type.Object(
  {
    name: Type.String(),
    path: Type.String(),
    sha: Type.String(),
    last_commit_sha: Type.String(),
    last_commit_when: DateTime,
    type: Type.String({ description: '`type` will be `file`, `dir`, `symlink`, or `submodule`' }),
    size: Type.Integer(),
    encoding: Nullable(Type.String({ description: '`encoding` is populated when `type` is `file`' })),
    content: Nullable(Type.String({ description: '`content` is populated when `type` is `file`' })),
    target: Nullable(Type.String({ description: '`target` is populated when `type` is `symlink`' })),
    url: Nullable(Type.String()),
    html_url: Nullable(Type.String()),
    git_url: Nullable(Type.String()),
    download_url: Nullable(Type.String()),
    submodule_git_url: Nullable(Type.String()),
    _links: FileLinksResponse,
  },
  {
    title: 'ContentsResponse',
    description:
      "ContentsResponse contains information about a repo's entry's (dir, file, symlink, submodule) metadata and content",
  },
);
export type ContentsJson = Static<typeof ContentsResponse>;

export const FileCommitResponse = Type.Object(
  {
    url: Type.String(),
    sha: Type.String(),
    created: DateTime,
    html_url: Type.String(),
    author: CommitUser,
    committer: CommitUser,
    parents: Type.Array(CommitMeta),
    message: Type.String(),
    tree: CommitMeta,
  },
  { title: 'FileCommitResponse' },
);

export const FileResponse = Type.Object(
  {
    content: Nullable(ContentsResponse),
    commit: FileCommitResponse,
    verification: PayloadCommitVerification,
  },
  { title: 'FileResponse', description: "FileResponse contains information about a repo's file" },
);

export const FileDeleteResponse = Type.Object(
  { content: Type.Null(), commit: FileCommitResponse, verification: PayloadCommitVerification },
  {
    title: 'FileDeleteResponse',
    description: "FileDeleteResponse contains information about a repo's file that was deleted",
  },
);

export const GitEntry = Type.Object(
  {
    path: Type.String(),
    mode: Type.String(),
    type: Type.String(),
    size: Type.Integer(),
    sha: Type.String(),
    url: Type.String(),
  },
  { title: 'GitEntry', description: 'GitEntry represents a git tree' },
);

export const GitTreeResponse = Type.Object(
  {
    sha: Type.String(),
    url: Type.String(),
    tree: Type.Array(GitEntry),
    truncated: Type.Boolean(),
    page: Type.Integer(),
    total_count: Type.Integer(),
  },
  { title: 'GitTreeResponse' },
);

export const GitBlobResponse = Type.Object(
  {
    content: Nullable(Type.String()),
    encoding: Nullable(Type.String()),
    url: Type.String(),
    sha: Type.String(),
    size: Type.Integer(),
  },
  { title: 'GitBlobResponse', description: 'GitBlobResponse represents a git blob' },
);

export const GitObject = Type.Object(
  { type: Type.String(), sha: Type.String(), url: Type.String() },
  { title: 'GitObject' },
);

export const Reference = Type.Object(
  { ref: Type.String(), url: Type.String(), object: GitObject },
  { title: 'Reference' },
);

// Options

export const CreateBranchRepoOption = Type.Object(
  {
    new_branch_name: Type.String({ description: 'Name of the branch to create', maxLength: 255 }),
    old_branch_name: Type.Optional(
      Type.String({ description: 'Deprecated: true. Name of the old branch to create from' }),
    ),
    old_ref_name: Type.Optional(
      Type.String({ description: 'Name of the old branch/tag/commit to create from' }),
    ),
  },
  { title: 'CreateBranchRepoOption' },
);

export const CreateTagOption = Type.Object(
  {
    tag_name: Type.String({ maxLength: 100 }),
    message: Type.Optional(
      Type.String({ description: 'an annotated tag is created when a message is given' }),
    ),
    target: Type.Optional(
      Type.String({ description: 'branch, tag or commit; the default branch when absent' }),
    ),
  },
  { title: 'CreateTagOption' },
);

export const Identity = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 100 })),
    email: Type.Optional(Type.String({ maxLength: 254 })),
  },
  { title: 'Identity', description: "Identity for a person's identity like an author or committer" },
);

export const CommitDateOptions = Type.Object(
  { author: Type.Optional(DateTime), committer: Type.Optional(DateTime) },
  { title: 'CommitDateOptions' },
);

const fileOptionFields = {
  message: Type.Optional(Type.String({ description: 'the commit message; a default one when empty' })),
  branch: Type.Optional(
    Type.String({ description: 'branch to base the change on; the default branch when empty' }),
  ),
  new_branch: Type.Optional(
    Type.String({ description: 'new branch to create from `branch` and commit to; `branch` when empty' }),
  ),
  author: Type.Optional(Identity),
  committer: Type.Optional(Identity),
  dates: Type.Optional(CommitDateOptions),
  signoff: Type.Optional(Type.Boolean({ description: 'add a Signed-off-by trailer by the committer' })),
};

export const CreateFileOptions = Type.Object(
  { content: Type.String({ description: 'content of the file, base64 encoded' }), ...fileOptionFields },
  { title: 'CreateFileOptions' },
);

export const UpdateFileOptions = Type.Object(
  {
    content: Type.String({ description: 'content of the file, base64 encoded' }),
    sha: Type.String({ description: 'sha of the blob being replaced' }),
    from_path: Type.Optional(Type.String({ description: 'path of the file to move (rename) to this path' })),
    ...fileOptionFields,
  },
  { title: 'UpdateFileOptions' },
);

export const DeleteFileOptions = Type.Object(
  { sha: Type.String({ description: 'sha of the blob being deleted' }), ...fileOptionFields },
  { title: 'DeleteFileOptions' },
);

export const ChangeFileOperation = Type.Object(
  {
    operation: Type.Union([Type.Literal('create'), Type.Literal('update'), Type.Literal('delete')], {
      description: 'indicates what to do with the file',
    }),
    path: Type.String({ description: 'path to the existing or new file' }),
    content: Type.Optional(Type.String({ description: 'new or updated file content, base64 encoded' })),
    sha: Type.Optional(
      Type.String({ description: 'sha of the blob that already exists, required for update or delete' }),
    ),
    from_path: Type.Optional(Type.String({ description: 'old path of the file to move' })),
  },
  {
    title: 'ChangeFileOperation',
    description: 'ChangeFileOperation for creating, updating or deleting a file',
  },
);

export const ChangeFilesOptions = Type.Object(
  { files: Type.Array(ChangeFileOperation, { description: 'list of file operations' }), ...fileOptionFields },
  {
    title: 'ChangeFilesOptions',
    description: 'ChangeFilesOptions options for creating, updating or deleting multiple files in one commit',
  },
);

export const FilesResponse = Type.Object(
  {
    files: Type.Array(Nullable(ContentsResponse)),
    commit: FileCommitResponse,
    verification: PayloadCommitVerification,
  },
  {
    title: 'FilesResponse',
    description: 'FilesResponse contains information about multiple files from a repo',
  },
);

export const ApplyDiffPatchFileOptions = Type.Object(
  {
    content: Type.String({ description: 'the unified diff to apply (text, not base64)' }),
    sha: Type.Optional(Type.String({ description: 'the commit the branch must be at (optional)' })),
    ...fileOptionFields,
  },
  {
    title: 'ApplyDiffPatchFileOptions',
    description: 'ApplyDiffPatchFileOptions options for applying a diff patch',
  },
);

export const UpdateBranchRepoOption = Type.Object(
  { name: Type.String({ description: 'New branch name', maxLength: 255 }) },
  { title: 'UpdateBranchRepoOption', description: 'UpdateBranchRepoOption options when updating a branch' },
);

export const NoteOptions = Type.Object({ message: Type.Optional(Type.String()) }, { title: 'NoteOptions' });

export const Note = Type.Object(
  { message: Type.String(), commit: Commit },
  { title: 'Note', description: 'Note contains information related to a git note' },
);

// Conversions

/** Where a repository's JSON links point, who is looking, and the accounts behind commit e-mails. */
export interface RepoLinks {
  rootUrl: string;
  /** {root}api/v1/repos/{owner}/{repo} */
  api: string;
  /** {root}{owner}/{repo} */
  html: string;
  viewer: Viewer | null;
  /** Individual users by lower-cased e-mail address. */
  users: Map<string, UserRow>;
  /** Signature verification of commits by id (signing/service.ts); absent ones read as unsigned. */
  verifications?: Map<string, Static<typeof PayloadCommitVerification>>;
}

/** Path segments escaped one by one, the slashes kept. */
export const escapePath = (p: string) => p.split('/').map(encodeURIComponent).join('/');

/** What Forgejo shows for an unsigned commit (and Anvil for a commit it did not check). */
export const UNVERIFIED = {
  verified: false,
  reason: 'gpg.error.not_signed_commit',
  signature: '',
  signer: null,
  payload: '',
};

/** What Forgejo shows for a parent's creation time, which it does not look up: Go's zero time. */
const UNKNOWN_TIME = '0001-01-01T00:00:00Z';

const commitUser = (s: Signature) => ({ name: s.name, email: s.email, date: s.date });

const commitMeta = (links: RepoLinks, sha: string, created: string) => ({
  url: `${links.api}/git/commits/${sha}`,
  sha,
  created,
});

const payloadUser = (s: Signature, links: RepoLinks) => ({
  name: s.name,
  email: s.email,
  username: links.users.get(s.email.toLowerCase())?.name ?? '',
});

export function toPayloadCommit(c: CommitData, links: RepoLinks): Static<typeof PayloadCommit> {
  return {
    id: c.oid,
    message: c.message,
    url: `${links.html}/commit/${c.oid}`,
    author: payloadUser(c.author, links),
    committer: payloadUser(c.committer, links),
    verification: links.verifications?.get(c.oid) ?? UNVERIFIED,
    timestamp: c.author.date,
    added: null,
    removed: null,
    modified: null,
  };
}

export function toBranchJson(name: string, c: CommitData, links: RepoLinks, canPush: boolean): BranchJson {
  return {
    name,
    commit: toPayloadCommit(c, links),
    protected: false,
    required_approvals: 0,
    enable_status_check: false,
    status_check_contexts: [],
    user_can_push: canPush,
    user_can_merge: canPush,
    effective_branch_protection_name: '',
  };
}

export interface CommitJsonOptions {
  stat: boolean;
  files: boolean;
  verification: boolean;
}

export function toCommitJson(c: CommitData, links: RepoLinks, opts: CommitJsonOptions): CommitJson {
  const user = (s: Signature) => {
    const u = links.users.get(s.email.toLowerCase());
    return u ? toUserJson(u, { rootUrl: links.rootUrl, viewer: links.viewer }) : null;
  };
  const stats = c.stats;
  return {
    url: `${links.api}/git/commits/${c.oid}`,
    sha: c.oid,
    created: c.committer.date,
    html_url: `${links.html}/commit/${c.oid}`,
    commit: {
      url: `${links.api}/git/commits/${c.oid}`,
      author: commitUser(c.author),
      committer: commitUser(c.committer),
      message: c.message,
      tree: { url: `${links.api}/git/trees/${c.tree}`, sha: c.tree, created: c.committer.date },
      verification: opts.verification ? (links.verifications?.get(c.oid) ?? UNVERIFIED) : null,
    },
    author: user(c.author),
    committer: user(c.committer),
    parents: c.parents.map((p) => commitMeta(links, p, UNKNOWN_TIME)),
    files: opts.files && c.files ? c.files : null,
    stats:
      opts.stat && stats
        ? { total: stats.additions + stats.deletions, additions: stats.additions, deletions: stats.deletions }
        : null,
  };
}

export function toFileCommitJson(c: CommitData, links: RepoLinks): Static<typeof FileCommitResponse> {
  return {
    ...commitMeta(links, c.oid, c.committer.date),
    html_url: `${links.html}/commit/${c.oid}`,
    author: commitUser(c.author),
    committer: commitUser(c.committer),
    parents: c.parents.map((p) => commitMeta(links, p, UNKNOWN_TIME)),
    message: c.message,
    tree: { url: `${links.api}/git/trees/${c.tree}`, sha: c.tree, created: c.committer.date },
  };
}

export function toTagJson(t: TagData, links: RepoLinks): TagJson {
  const name = escapePath(t.name);
  return {
    name: t.name,
    message: t.message,
    id: t.id,
    commit: commitMeta(links, t.commit, t.created),
    zipball_url: `${links.html}/archive/${name}.zip`,
    tarball_url: `${links.html}/archive/${name}.tar.gz`,
    archive_download_count: { zip: 0, tar_gz: 0 },
  };
}

export function toAnnotatedTagJson(t: AnnotatedTagData, links: RepoLinks): Static<typeof AnnotatedTag> {
  return {
    tag: t.name,
    sha: t.oid,
    url: `${links.api}/git/tags/${t.oid}`,
    message: t.message,
    tagger: commitUser(t.tagger),
    object: {
      type: t.object.type,
      url: `${links.api}/git/${t.object.type}s/${t.object.oid}`,
      sha: t.object.oid,
    },
    verification: UNVERIFIED,
    archive_download_count: { zip: 0, tar_gz: 0 },
  };
}

/** An entry of a tree as the contents API describes it. */
export interface ContentsEntry {
  name: string;
  path: string;
  oid: string;
  type: 'file' | 'dir' | 'symlink' | 'submodule';
  size: number;
  lastCommit: { oid: string; date: string };
  /** The file's bytes (single files only; null when larger than the API shows). */
  content?: Buffer | null;
  target?: string;
  submoduleUrl?: string;
  /** The ref as asked for (links), and what it resolved to. */
  origRef: string;
  refKind: 'branch' | 'tag' | 'commit';
  refName: string;
}

export function contentsType(mode: string): ContentsEntry['type'] {
  if (mode === '040000') return 'dir';
  if (mode === '120000') return 'symlink';
  if (mode === '160000') return 'submodule';
  return 'file';
}

export function toContentsJson(e: ContentsEntry, links: RepoLinks): ContentsJson {
  const self = `${links.api}/contents/${escapePath(e.path)}?ref=${encodeURIComponent(e.origRef)}`;
  const isSubmodule = e.type === 'submodule';
  const where = `${e.refKind}/${escapePath(e.refName)}/${escapePath(e.path)}`;
  const html = isSubmodule ? null : `${links.html}/src/${where}`;
  const gitUrl = isSubmodule ? null : `${links.api}/git/blobs/${e.oid}`;
  const withContent = e.type === 'file' && e.content !== undefined;
  return {
    name: e.name,
    path: e.path,
    sha: e.oid,
    last_commit_sha: e.lastCommit.oid,
    last_commit_when: e.lastCommit.date,
    type: e.type,
    size: e.size,
    encoding: withContent ? 'base64' : null,
    content: withContent ? (e.content ? e.content.toString('base64') : null) : null,
    target: e.type === 'symlink' ? (e.target ?? '') : null,
    url: self,
    html_url: html,
    git_url: gitUrl,
    download_url: e.type === 'file' || e.type === 'symlink' ? `${links.html}/raw/${where}` : null,
    submodule_git_url: isSubmodule ? (e.submoduleUrl ?? null) : null,
    _links: { self, git: gitUrl, html },
  };
}

export function toGitEntryJson(e: TreeEntry, links: RepoLinks): Static<typeof GitEntry> {
  const url =
    e.type === 'tree'
      ? `${links.api}/git/trees/${e.oid}`
      : e.type === 'blob'
        ? `${links.api}/git/blobs/${e.oid}`
        : '';
  return { path: e.path, mode: e.mode, type: e.type, size: e.size, sha: e.oid, url };
}

export function toReferenceJson(r: RefEntry, links: RepoLinks): Static<typeof Reference> {
  return {
    ref: r.ref,
    url: `${links.api}/git/${escapePath(r.ref)}`,
    object: { type: r.type, sha: r.oid, url: `${links.api}/git/${r.type}s/${r.oid}` },
  };
}
