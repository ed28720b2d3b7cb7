// Queries of the Conda registry: the files of a channel's subdir (one query for a whole
// repodata.json, with each file's metadata property) and one file by channel, subdir and name.
// A Conda package's channel is its package property `conda.channel` ('' for none); a file's
// subdir is its composite key.
import type { Db, Tx } from '../../db/database.js';
import type { FileWithBlob } from '../tables.js';
import { PropertyRef } from '../tables.js';

type Q = Db | Tx;

export const PROP_NAME = 'conda.name';
export const PROP_CHANNEL = 'conda.channel';
export const PROP_SUBDIR = 'conda.subdir';
export const PROP_METADATA = 'conda.metadata';

function channelFiles(q: Q, ownerId: number, channel: string, subdir: string) {
  return q
    .selectFrom('package_file as f')
    .innerJoin('package_blob as b', 'b.id', 'f.blob_id')
    .innerJoin('package_version as v', 'v.id', 'f.version_id')
    .innerJoin('package as p', 'p.id', 'v.package_id')
    .innerJoin('package_property as ch', (j) =>
      j
        .onRef('ch.ref_id', '=', 'p.id')
        .on('ch.ref_type', '=', PropertyRef.package)
        .on('ch.name', '=', PROP_CHANNEL)
        .on('ch.value', '=', channel),
    )
    .where('p.owner_id', '=', ownerId)
    .where('p.type', '=', 'conda')
    .where('f.composite_key', '=', subdir);
}

export interface RepodataRow {
  file_id: number;
  name: string;
  version: string;
  package_id: number;
  repo_id: number | null;
  size: number;
  hash_md5: string;
  hash_sha256: string;
  metadata: string | null;
}

/** Every file of the subdir of the channel, by name, with its version and metadata. */
export function repodataRows(q: Q, ownerId: number, channel: string, subdir: string): Promise<RepodataRow[]> {
  return channelFiles(q, ownerId, channel, subdir)
    .leftJoin('package_property as m', (j) =>
      j
        .onRef('m.ref_id', '=', 'f.id')
        .on('m.ref_type', '=', PropertyRef.file)
        .on('m.name', '=', PROP_METADATA),
    )
    .select([
      'f.id as file_id',
      'f.name',
      'v.version',
      'p.id as package_id',
      'p.repo_id',
      'b.size',
      'b.hash_md5',
      'b.hash_sha256',
      'm.value as metadata',
    ])
    .orderBy('f.lower_name')
    .orderBy('f.id')
    .execute();
}

/** The file `lowerName` of the subdir of the channel, with its package's id and repository. */
export async function findFile(
  q: Q,
  ownerId: number,
  channel: string,
  subdir: string,
  lowerName: string,
): Promise<(FileWithBlob & { package_id: number; repo_id: number | null }) | undefined> {
  const row = await channelFiles(q, ownerId, channel, subdir)
    .selectAll('f')
    .select([
      'b.size',
      'b.hash_md5',
      'b.hash_sha1',
      'b.hash_sha256',
      'b.hash_sha512',
      'p.id as package_id',
      'p.repo_id',
    ])
    .where('f.lower_name', '=', lowerName)
    .orderBy('f.id')
    .executeTakeFirst();
  return row as (FileWithBlob & { package_id: number; repo_id: number | null }) | undefined;
}
