// Tables of repository flags (see db/migrations/0031_repo_flags.ts).
import type { Generated } from 'kysely';

export interface RepoFlagTable {
  id: Generated<number>;
  repo_id: number;
  name: string;
}

export interface RepoMetaTables {
  repo_flag: RepoFlagTable;
}
