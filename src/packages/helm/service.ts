// The Helm format: chart archives, one per version, uploaded as ChartMuseum takes them (what
// `helm cm-push` sends); the same version again replaces its chart (Forgejo overwrites it too) and
// its metadata.
// index.yaml lists every version of every chart, built per request.
import type { Readable } from 'node:stream';
import YAML from 'yaml';
import type { Db } from '../../db/database.js';
import type { UserRow } from '../../users/tables.js';
import type { PackageService } from '../service.js';
import * as pkgStore from '../store.js';
import { chartFileName, chartYamlFields, readChart, type Chart } from './chart.js';
import * as store from './store.js';

export interface HelmServiceDeps {
  db: Db;
  packages: PackageService;
  rootUrl: string;
}

export class HelmService {
  constructor(private readonly deps: HelmServiceDeps) {}

  private path(owner: UserRow): string {
    return `api/packages/${encodeURIComponent(owner.name)}/helm`;
  }

  /** Stores a chart archive (replacing the version's chart when it has one). */
  async upload(owner: UserRow, creator: UserRow, data: Readable, announced?: number): Promise<Chart> {
    let chart: Chart | undefined;
    await this.deps.packages.addFile(
      {
        owner,
        creator,
        type: 'helm',
        isLead: true,
        data,
        newVersionOnly: false,
        overwrite: true,
        describe: async (stored) => {
          chart = await readChart(stored);
          return {
            name: chart.name,
            version: chart.version,
            fileName: chartFileName(chart.name, chart.version),
            metadata: JSON.stringify(chart.metadata),
          };
        },
        // A replaced chart brings its Chart.yaml with it (index.yaml reads the version's metadata).
        inTransaction: async (tx, _pkg, version, created) => {
          if (!created) await pkgStore.updateVersionMetadata(tx, version.id, JSON.stringify(chart!.metadata));
        },
      },
      announced,
    );
    return chart!;
  }

  /** index.yaml: every version of the owner's charts with its download URL. */
  async index(owner: UserRow): Promise<string> {
    const base = `${this.deps.rootUrl}${this.path(owner)}`;
    const entries: Record<string, unknown[]> = {};
    for (const row of await store.chartFiles(this.deps.db, owner.id)) {
      const m = JSON.parse(row.metadata_json) as Record<string, unknown>;
      (entries[row.name] ??= []).push({
        ...chartYamlFields(m),
        urls: [`${base}/${encodeURIComponent(row.file_name)}`],
        created: new Date(row.created_unix * 1000).toISOString(),
        digest: row.hash_sha256,
      });
    }
    const contextPath = `${new URL(this.deps.rootUrl).pathname.replace(/\/$/, '')}/${this.path(owner)}`;
    return YAML.stringify({
      apiVersion: 'v1',
      entries,
      generated: new Date().toISOString(),
      serverInfo: { contextPath },
    });
  }

  /** The chart and version of a file name; undefined when there is none. */
  async findFile(owner: UserRow, fileName: string): Promise<{ name: string; version: string } | undefined> {
    const [row] = await store.chartFiles(this.deps.db, owner.id, fileName);
    return row && { name: row.name, version: row.version };
  }
}
