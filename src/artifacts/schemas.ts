// JSON shapes of artifacts in the REST API (Forgejo's ActionArtifact and ActionArtifactsResponse).
import { Type, type Static } from 'typebox';
import { PageFields } from '../http/pagination.js';
import { isoTime } from '../http/format.js';
import { nowUnix } from '../db/database.js';
import type { RunInfo } from './service.js';
import type { ArtifactRow } from './tables.js';

export const ActionArtifact = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    size_in_bytes: Type.Integer({ description: 'size of the zip, in bytes' }),
    url: Type.String({ description: 'API URL of the artifact' }),
    archive_download_url: Type.String({ description: 'API URL that redirects to a download of the zip' }),
    expired: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    expires_at: Type.String({ format: 'date-time' }),
    workflow_run: Type.Object(
      {
        id: Type.Integer({ description: 'id of the run' }),
        repository_id: Type.Integer(),
        head_sha: Type.String({ description: "the run's commit; empty when unknown" }),
      },
      { description: 'the run the artifact belongs to' },
    ),
  },
  { title: 'ActionArtifact', description: 'an artifact of an actions run' },
);
export type ActionArtifactJson = Static<typeof ActionArtifact>;

export const ActionArtifactsResponse = Type.Object(
  { artifacts: Type.Array(ActionArtifact), total_count: Type.Integer() },
  { title: 'ActionArtifactsResponse', description: 'a page of artifacts and the number of all that match' },
);

export const ArtifactListQuery = Type.Object({
  name: Type.Optional(Type.String({ description: 'only artifacts of this name' })),
  ...PageFields,
});

export function toArtifactJson(
  a: ArtifactRow,
  links: { rootUrl: string; fullName: string },
  run: RunInfo | undefined,
  now = nowUnix(),
): ActionArtifactJson {
  const url = `${links.rootUrl}api/v1/repos/${links.fullName}/actions/artifacts/${a.id}`;
  return {
    id: a.id,
    name: a.name,
    size_in_bytes: Number(a.size),
    url,
    archive_download_url: `${url}/zip`,
    expired: a.expires_unix <= now,
    created_at: isoTime(a.created_unix),
    updated_at: isoTime(a.updated_unix),
    expires_at: isoTime(a.expires_unix),
    workflow_run: { id: a.run_id, repository_id: a.repo_id, head_sha: run?.headSha ?? '' },
  };
}
