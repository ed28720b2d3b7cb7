// What repository lists filter and sort by (API lists, search, web pages): no queries here, so that
// routes and pages may use it; repos/store.ts turns it into SQL.

export interface ListFilter {
  ownerId?: number | undefined;
  keyword?: string | undefined;
  /** Any of these keywords in the name (and the description with `includeDescription`). */
  keywords?: string[] | undefined;
  includeDescription?: boolean | undefined;
  /** The keywords are topic names (whole) rather than parts of names. */
  topicOnly?: boolean | undefined;
  /** Only repositories of this team. */
  teamId?: number | undefined;
  /** Only repositories this user does not own but reaches as a collaborator or through a team. */
  collaboratorOf?: number | undefined;
  /** Only repositories the viewer may read; undefined means no filter (site administrators). */
  viewerId?: number | null | undefined;
  publicOnly?: boolean | undefined;
  isPrivate?: boolean | undefined;
  isFork?: boolean | undefined;
  isMirror?: boolean | undefined;
  isArchived?: boolean | undefined;
  isTemplate?: boolean | undefined;
  /** Only forks of this repository. */
  forkOf?: number | undefined;
  /** Only repositories this user owns, collaborates on, or reaches through a team. */
  memberOf?: number | undefined;
  /** Only repositories this user has starred. */
  starredBy?: number | undefined;
  /** Only repositories this user watches. */
  watchedBy?: number | undefined;
  /** The viewer (viewerId) is a restricted user: no public repositories by default. */
  restricted?: boolean | undefined;
  orderBy?: OrderBy | undefined;
}

/** Forgejo's order_by values for repository lists. */
export const ORDER_BY = {
  id: ['repository.id', 'asc'],
  reverseid: ['repository.id', 'desc'],
  name: ['repository.lower_name', 'asc'],
  newest: ['repository.created_unix', 'desc'],
  oldest: ['repository.created_unix', 'asc'],
  recentupdate: ['repository.updated_unix', 'desc'],
  leastupdate: ['repository.updated_unix', 'asc'],
  alphabetically: ['repository.lower_name', 'asc'],
  reversealphabetically: ['repository.lower_name', 'desc'],
  size: ['repository.size', 'asc'],
  reversesize: ['repository.size', 'desc'],
  gitsize: ['repository.size', 'asc'],
  reversegitsize: ['repository.size', 'desc'],
  moststars: ['repository.num_stars', 'desc'],
  feweststars: ['repository.num_stars', 'asc'],
  mostforks: ['repository.num_forks', 'desc'],
  fewestforks: ['repository.num_forks', 'asc'],
} as const;
export type OrderBy = keyof typeof ORDER_BY;
