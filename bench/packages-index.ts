// Benchmark (manual): the Debian `Packages` and RPM repodata of a repository of BENCH_PACKAGES
// (default 10,000) packages. The packages are seeded straight into the database through the
// registry's store (10,000 uploads over HTTP would take long and measure something else), with
// the file properties an upload stores (Debian: distribution, component, architecture, control;
// RPM: architecture and metadata, copied from one real rpmbuild package); then, in this process,
// through the services the server runs: a full generation of the distribution's / group's files
// (`rebuild`), and one more upload of a real package (`upload`: the stored blob, the header read,
// the rows and the rebuild that follows, as the upload route runs it). BENCH_ROUNDS rounds each,
// medians (target: under 1 s for both, for 10,000 packages). An RPM file's repodata entries are
// rendered at its upload and stored (rpm.repodata): the seeded files have none, so the first
// rebuild renders and stores them all (the "from scratch" rounds drop them again first); a rebuild
// then assembles the stored entries.
//
// Run: npm run build && node dist/bench/packages-index.js
// Settings: BENCH_PACKAGES (default 10000), BENCH_ROUNDS (default 5).
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { pino } from 'pino';
import { createContext } from '../src/app/context.js';
import { loadConfig } from '../src/config/config.js';
import { nowUnix, transaction } from '../src/db/database.js';
import * as core from '../src/packages/store.js';
import { PropertyRef } from '../src/packages/tables.js';
import type { UserRow } from '../src/users/tables.js';
import { median, timedSeconds } from './common.js';
import { control, deb } from './debs.js';

const PACKAGES = Number(process.env['BENCH_PACKAGES'] ?? 10_000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);

/** A noarch .rpm of `name` 1.0-1 built by rpmbuild. */
function rpm(work: string, name: string): Buffer {
  const top = path.join(work, `rpm-${name}`);
  fs.mkdirSync(path.join(top, 'SPECS'), { recursive: true });
  const spec = path.join(top, 'SPECS', `${name}.spec`);
  fs.writeFileSync(
    spec,
    `Name: ${name}\nVersion: 1.0\nRelease: 1\nSummary: a benchmark package\nLicense: MIT\n` +
      'URL: https://example.com/bench\nBuildArch: noarch\nAutoReqProv: no\nRequires: bash\n' +
      `%description\nA benchmark package.\n%install\nmkdir -p %{buildroot}/usr/share/${name} %{buildroot}/usr/bin\n` +
      `echo '${name}' > %{buildroot}/usr/share/${name}/README\necho '${name}' > %{buildroot}/usr/bin/${name}\n` +
      `%files\n/usr/share/${name}\n/usr/bin/${name}\n%changelog\n* Sat Nov 28 2026 Bench <b@example.com> - 1.0-1\n- first\n`,
  );
  execFileSync('rpmbuild', ['-bb', '--quiet', '--define', `_topdir ${top}`, spec], { stdio: 'ignore' });
  return fs.readFileSync(path.join(top, 'RPMS', 'noarch', `${name}-1.0-1.noarch.rpm`));
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-index-'));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ANVIL__SERVER__APP_DATA_PATH: dir,
  ANVIL__SERVER__ROOT_URL: 'http://127.0.0.1:3000/',
  ANVIL__SECURITY__SECRET_KEY: 'bench-secret',
  ANVIL__LOG__LEVEL: 'warn',
  ANVIL__DATABASE__DB_TYPE: 'sqlite3',
};
const ctx = await createContext(loadConfig({ env, cwd: dir }), pino({ level: 'warn' }));
try {
  const owner: UserRow = await ctx.users.create({
    username: 'bench',
    email: 'bench@example.com',
    password: 'password-1',
  });

  /** Seeds `n` packages of `type` (one version, one file each) with the file properties `props(i)`. */
  async function seed(
    type: string,
    compositeKey: string,
    fileName: (i: number) => string,
    version: string,
    props: (i: number) => Array<[string, string]>,
  ) {
    const now = nowUnix();
    for (let start = 0; start < PACKAGES; start += 500) {
      await transaction(ctx.db, async (tx) => {
        for (let i = start; i < Math.min(PACKAGES, start + 500); i++) {
          const name = `seed${String(i).padStart(5, '0')}`;
          const pkg = await core.ensurePackage(tx, {
            owner_id: owner.id,
            repo_id: null,
            type,
            name,
            lower_name: name,
            created_unix: now,
          });
          const v = await core.insertVersion(tx, {
            package_id: pkg.id,
            creator_id: owner.id,
            version,
            lower_version: version,
            metadata_json: '{}',
            created_unix: now,
          });
          const h = (alg: string) => crypto.createHash(alg).update(`${type}${i}`).digest('hex');
          const blob = await core.ensureBlob(tx, {
            size: 2000 + i,
            hash_md5: h('md5'),
            hash_sha1: h('sha1'),
            hash_sha256: h('sha256'),
            hash_sha512: h('sha512'),
            created_unix: now,
          });
          const fileId = await core.insertFile(tx, {
            version_id: v.id,
            blob_id: blob.id,
            name: fileName(i),
            lower_name: fileName(i).toLowerCase(),
            composite_key: compositeKey,
            is_lead: 1,
            created_unix: now,
          });
          for (const [k, val] of props(i)) await core.addProperty(tx, PropertyRef.file, fileId, k, val);
        }
      });
    }
  }

  const work = path.join(dir, 'work');
  fs.mkdirSync(work);
  const results: string[] = [];
  const report = (label: string, xs: number[]) =>
    results.push(
      `${label.padEnd(58)} median ${(median(xs) * 1000).toFixed(0)} ms (min ${(Math.min(...xs) * 1000).toFixed(0)}, max ${(Math.max(...xs) * 1000).toFixed(0)})`,
    );

  // Debian: one distribution, one component, amd64.
  let t = await timedSeconds(() =>
    seed(
      'debian',
      'bench|main',
      (i) => `seed${String(i).padStart(5, '0')}_1.0_amd64.deb`,
      '1.0',
      (i) => [
        ['debian.distribution', 'bench'],
        ['debian.component', 'main'],
        ['debian.architecture', 'amd64'],
        ['debian.control', control(`seed${String(i).padStart(5, '0')}`)],
      ],
    ),
  );
  console.log(`seeded ${PACKAGES} Debian packages in ${t.toFixed(1)} s`);
  const full: number[] = [];
  for (let r = 0; r < ROUNDS; r++)
    full.push(await timedSeconds(() => ctx.debianPackages.rebuild(owner, 'bench')));
  report(`Debian, ${PACKAGES} packages: full generation`, full);
  const debs: Buffer[] = [];
  for (let r = 0; r < ROUNDS; r++) debs.push(await deb(`extra${r}`));
  const up: number[] = [];
  for (let r = 0; r < ROUNDS; r++)
    up.push(
      await timedSeconds(() =>
        ctx.debianPackages.upload(owner, owner, 'bench', 'main', Readable.from(debs[r]!)),
      ),
    );
  report(`Debian: one more upload, with the rebuild`, up);
  const packages = (await ctx.debianPackages.indexFile(owner, 'bench', 'main/binary-amd64/Packages')).content;
  const listed = (
    Buffer.from(packages, 'base64')
      .toString()
      .match(/^Package: /gm) ?? []
  ).length;
  if (listed !== PACKAGES + ROUNDS) throw new Error(`Packages lists ${listed}`);

  // RPM: one group; the metadata copied from a real package, renamed.
  const first = rpm(work, 'template');
  await ctx.rpmPackages.upload(owner, owner, 'el9', Readable.from(first));
  const template = (
    await ctx.db
      .selectFrom('package_property')
      .where('name', '=', 'rpm.metadata')
      .select('value')
      .executeTakeFirstOrThrow()
  ).value;
  t = await timedSeconds(() =>
    seed(
      'rpm',
      'el9',
      (i) => `seed${String(i).padStart(5, '0')}-1.0-1.noarch.rpm`,
      '1.0-1',
      (i) => [
        ['rpm.architecture', 'noarch'],
        ['rpm.metadata', template.replaceAll('template', `seed${String(i).padStart(5, '0')}`)],
      ],
    ),
  );
  console.log(`seeded ${PACKAGES} RPM packages in ${t.toFixed(1)} s`);
  // From scratch: without the entries a rebuild stores per file, every one is rendered again.
  const dropEntries = () =>
    ctx.db.deleteFrom('package_property').where('name', '=', 'rpm.repodata').execute();
  const rfull: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    await dropEntries();
    rfull.push(await timedSeconds(() => ctx.rpmPackages.rebuild(owner, 'el9')));
  }
  report(`RPM, ${PACKAGES} packages: full generation (from scratch)`, rfull);
  const rstored: number[] = [];
  for (let r = 0; r < ROUNDS; r++)
    rstored.push(await timedSeconds(() => ctx.rpmPackages.rebuild(owner, 'el9')));
  report(`RPM: rebuild from the stored entries`, rstored);
  const rpms: Buffer[] = [];
  for (let r = 0; r < ROUNDS; r++) rpms.push(rpm(work, `extra${r}`));
  const rup: number[] = [];
  for (let r = 0; r < ROUNDS; r++)
    rup.push(await timedSeconds(() => ctx.rpmPackages.upload(owner, owner, 'el9', Readable.from(rpms[r]!))));
  report(`RPM: one more upload, with the rebuild`, rup);
  const primary = await ctx.rpmPackages.indexFile(owner, 'el9', 'primary.xml.gz');
  const xml = zlib.gunzipSync(Buffer.from(primary.content, 'base64')).toString();
  const n = (xml.match(/<package type="rpm">/g) ?? []).length;
  if (n !== PACKAGES + ROUNDS + 1) throw new Error(`primary.xml lists ${n}`);

  console.log(`${os.cpus().length} cores, SQLite, ${ROUNDS} rounds:`);
  for (const line of results) console.log(`  ${line}`);
} finally {
  await ctx.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
