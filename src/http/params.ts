import { Type } from 'typebox';

/** Path parameters of every route under /repos/{owner}/{repo}. */
export const RepoParams = Type.Object({ owner: Type.String(), repo: Type.String() });
