// The Maven registry driven by the real `mvn` (3.8.7, offline: plugins come from the machine's
// ~/.m2, linked into a local repository of the test's own so that nothing is written there):
// deploy-file of a release and of a SNAPSHOT twice, then consumer projects that name the registry
// and compile against what was deployed (also from a private owner, where Maven's GETs must be
// challenged). Then HTTP-level cases: HEAD headers, checksums, maven-metadata.xml, the 401
// challenge, wrong credentials, write access, bad paths, conflicts, quota, the size limit, a bad
// POM, an upload cut off half-way, and the package webhook.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed, zip } from '../helpers/archives.js';

interface Run {
  code: number;
  out: string;
}

interface FileJson {
  name: string;
  Size: number;
  sha1: string;
}

const GROUP = 'org.Anvil.test';
const GROUP_PATH = 'org/Anvil/test';
const ARTIFACT = 'Hello-Lib';
const NAME = `${GROUP}:${ARTIFACT}`;
const M2 = path.join(os.homedir(), '.m2', 'repository');

const basic = (user: string, secret: string) =>
  `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`;
const sha = (algo: string, data: Buffer | string) => crypto.createHash(algo).update(data).digest('hex');

// Each mvn is a JVM living a few seconds: the quick compiler only (C1) and the serial collector
// spend a third less CPU on such a run than the defaults.
const MAVEN_OPTS = '-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

function run(cmd: string, args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, MAVEN_OPTS } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, out }));
  });
}

/** Every file under the packages storage directory (temporary files included). */
function storedFiles(dir: string): string[] {
  const root = path.join(dir, 'packages');
  if (!fs.existsSync(root)) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(path.relative(root, p));
    }
  };
  walk(root);
  return out;
}

describe('Maven package registry', () => {
  let s: TestServer;
  let alice: { name: string; password: string; token: string };
  let bob: { name: string; password: string; token: string };
  let carol: { name: string; password: string; token: string };
  let work: string;
  let startedMs: number;
  const jars: Record<string, Buffer> = {};
  const repo = (owner: string) => `${s.url}/api/packages/${owner}/maven`;
  const file = (owner: string, rest: string) => `${repo(owner)}/${rest}`;

  /**
   * A local repository of its own: a copy of the machine's ~/.m2/repository made of real
   * directories and links to its files (the plugins, as there is no network), so that whatever
   * Maven writes (downloads, `.lastUpdated` markers, resolver status) stays in the test's directory.
   */
  async function localRepo(): Promise<string> {
    const dir = path.join(fs.mkdtempSync(path.join(work, 'm2-')), 'repository');
    const r = await run('cp', ['-rs', M2, dir], work);
    assert.equal(r.code, 0, r.out);
    return dir;
  }

  function settings(user: string, secret: string): string {
    const p = path.join(work, `settings-${user}.xml`);
    fs.writeFileSync(
      p,
      `<settings><servers><server><id>anvil</id><username>${user}</username><password>${secret}</password></server></servers></settings>`,
    );
    return p;
  }

  /** A jar with one class, org.anvil.hello.Greeter, whose greet() returns `greeting`. */
  async function buildJar(greeting: string): Promise<string> {
    const dir = fs.mkdtempSync(path.join(work, 'jar-'));
    const src = path.join(dir, 'src', 'org', 'anvil', 'hello');
    fs.mkdirSync(src, { recursive: true });
    fs.writeFileSync(
      path.join(src, 'Greeter.java'),
      `package org.anvil.hello;\npublic class Greeter { public static String greet() { return ${JSON.stringify(greeting)}; } }\n`,
    );
    let r = await run('javac', ['-d', 'classes', 'src/org/anvil/hello/Greeter.java'], dir);
    assert.equal(r.code, 0, r.out);
    r = await run('jar', ['cf', 'a.jar', '-C', 'classes', '.'], dir);
    assert.equal(r.code, 0, r.out);
    const jar = path.join(dir, 'a.jar');
    jars[greeting] = fs.readFileSync(jar);
    return jar;
  }

  async function deploy(
    owner: string,
    settingsFile: string,
    jar: string,
    version: string,
    extra: string[] = [],
  ) {
    const local = await localRepo();
    return run(
      'mvn',
      [
        '-B',
        '-s',
        settingsFile,
        `-Dmaven.repo.local=${local}`,
        'org.apache.maven.plugins:maven-deploy-plugin:3.1.1:deploy-file',
        `-Durl=${repo(owner)}`,
        '-DrepositoryId=anvil',
        `-Dfile=${jar}`,
        `-DgroupId=${GROUP}`,
        `-DartifactId=${ARTIFACT}`,
        `-Dversion=${version}`,
        '-Dpackaging=jar',
        ...extra,
      ],
      work,
    );
  }

  /**
   * A project that depends on the artifact, from the owner's registry; returns the artifact's
   * directory in its local repository. The plugins are pinned: Maven 3.8.7's defaults
   * (maven-resources-plugin 2.6, maven-compiler-plugin 3.1) need artifacts that the machine's
   * ~/.m2 lacks (maven-project 2.0.6, ...), and there is no network to fetch them.
   */
  async function consume(owner: string, settingsFile: string, version: string): Promise<string> {
    const dir = fs.mkdtempSync(path.join(work, 'consumer-'));
    fs.mkdirSync(path.join(dir, 'src', 'main', 'java', 'app'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'pom.xml'),
      `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>app</groupId><artifactId>consumer</artifactId><version>1</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <build><plugins>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
  </plugins></build>
  <repositories><repository><id>anvil</id><url>${repo(owner)}</url></repository></repositories>
  <dependencies>
    <dependency><groupId>${GROUP}</groupId><artifactId>${ARTIFACT}</artifactId><version>${version}</version></dependency>
  </dependencies>
</project>
`,
    );
    fs.writeFileSync(
      path.join(dir, 'src', 'main', 'java', 'app', 'Main.java'),
      'package app;\npublic class Main { public static void main(String[] a) { System.out.println(org.anvil.hello.Greeter.greet()); } }\n',
    );
    const local = await localRepo();
    const r = await run('mvn', ['-B', '-s', settingsFile, `-Dmaven.repo.local=${local}`, 'compile'], dir);
    assert.equal(r.code, 0, r.out);
    assert.ok(fs.existsSync(path.join(dir, 'target', 'classes', 'app', 'Main.class')));
    return path.join(local, ...GROUP.split('.'), ARTIFACT);
  }

  const put = (url: string, body: Buffer | string, auth?: string) =>
    fetch(url, {
      method: 'PUT',
      body: body as string | Buffer<ArrayBuffer>,
      headers: auth ? { authorization: auth } : {},
    });

  const versionRow = (version: string) =>
    s.ctx.db
      .selectFrom('package_version')
      .innerJoin('package', 'package.id', 'package_version.package_id')
      .select(['package_version.id', 'package_version.metadata_json', 'package_version.download_count'])
      .where('package.type', '=', 'maven')
      .where('package.name', '=', NAME)
      .where('package_version.version', '=', version)
      .executeTakeFirst();

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    const r = await s.api('PATCH', '/admin/users/carol', {
      token: s.admin.token,
      body: { visibility: 'private' },
    });
    assert.equal(r.status, 200, r.text);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-maven-'));
    startedMs = Date.now();
  });
  after(async () => {
    await s.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  describe('with mvn', () => {
    it('deploys a release with its POM (metadata parsed), checksums checked, metadata generated', async () => {
      const hook = await s.api<{ id: number }>('POST', '/user/hooks', {
        token: alice.token,
        body: {
          type: 'forgejo',
          config: { url: 'http://127.0.0.1:9/hook', content_type: 'json' },
          events: ['package'],
          active: true,
        },
      });
      assert.equal(hook.status, 201, hook.text);

      const jar = await buildJar('v1');
      const pom = path.join(work, 'release.pom');
      fs.writeFileSync(
        pom,
        `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>${GROUP}</groupId><artifactId>${ARTIFACT}</artifactId><version>1.0</version>
  <name>Hello &amp; welcome</name>
  <description>Says hello</description>
  <url>https://example.com/hello</url>
  <licenses><license><name>MIT</name></license><license><name>Apache-2.0</name></license></licenses>
  <dependencies>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version><scope>test</scope></dependency>
  </dependencies>
</project>
`,
      );
      const r = await deploy('alice', settings('alice', alice.token), jar, '1.0', [`-DpomFile=${pom}`]);
      assert.equal(r.code, 0, r.out);
      assert.match(r.out, /BUILD SUCCESS/);

      const files = await s.api<FileJson[]>(
        'GET',
        `/packages/alice/maven/${encodeURIComponent(NAME)}/1.0/files`,
        { token: alice.token },
      );
      assert.equal(files.status, 200, files.text);
      // The checksum files and the artifact-level maven-metadata.xml are not stored.
      assert.deepEqual(files.body.map((f) => f.name).sort(), ['Hello-Lib-1.0.jar', 'Hello-Lib-1.0.pom']);
      const jarFile = files.body.find((f) => f.name.endsWith('.jar'))!;
      assert.equal(jarFile.sha1, sha('sha1', jars['v1']!));

      const row = await versionRow('1.0');
      assert.deepEqual(JSON.parse(row!.metadata_json), {
        group_id: GROUP,
        artifact_id: ARTIFACT,
        name: 'Hello & welcome',
        description: 'Says hello',
        project_url: 'https://example.com/hello',
        licenses: ['MIT', 'Apache-2.0'],
        dependencies: [{ group_id: 'junit', artifact_id: 'junit', version: '4.13.2' }],
      });

      // The name keeps its case in the /api/v1 view.
      const list = await s.api<Array<{ name: string; version: string; type: string }>>(
        'GET',
        '/packages/alice?type=maven',
        { token: alice.token },
      );
      assert.deepEqual(
        list.body.map((p) => [p.type, p.name, p.version]),
        [['maven', NAME, '1.0']],
      );

      // The package webhook: one delivery for the created version.
      const tasks = await s.ctx.db
        .selectFrom('hook_task')
        .select(['event_type', 'payload'])
        .where('hook_id', '=', hook.body.id)
        .execute();
      assert.equal(tasks.length, 1);
      assert.equal(tasks[0]!.event_type, 'package');
      const payload = JSON.parse(tasks[0]!.payload) as {
        action: string;
        package: { type: string; name: string; version: string };
      };
      assert.equal(payload.action, 'created');
      assert.deepEqual(
        [payload.package.type, payload.package.name, payload.package.version],
        ['maven', NAME, '1.0'],
      );
      await s.api('DELETE', `/user/hooks/${hook.body.id}`, { token: alice.token });
    });

    it('deploys a SNAPSHOT twice: timestamped builds, its maven-metadata.xml replaced', async () => {
      const cfg = settings('alice', alice.token);
      let r = await deploy('alice', cfg, await buildJar('snap-1'), '2.0-SNAPSHOT');
      assert.equal(r.code, 0, r.out);
      r = await deploy('alice', cfg, await buildJar('snap-2'), '2.0-SNAPSHOT');
      assert.equal(r.code, 0, r.out);

      const files = await s.api<FileJson[]>(
        'GET',
        `/packages/alice/maven/${encodeURIComponent(NAME)}/2.0-SNAPSHOT/files`,
        { token: alice.token },
      );
      const names = files.body.map((f) => f.name);
      assert.equal(names.filter((n) => n === 'maven-metadata.xml').length, 1, names.join());
      assert.equal(names.filter((n) => /^Hello-Lib-2\.0-\d{8}\.\d{6}-[12]\.jar$/.test(n)).length, 2);
      assert.equal(names.filter((n) => /^Hello-Lib-2\.0-\d{8}\.\d{6}-[12]\.pom$/.test(n)).length, 2);

      // The stored version-level metadata is the second deploy's (build 2).
      const meta = await fetch(file('alice', `${GROUP_PATH}/${ARTIFACT}/2.0-SNAPSHOT/maven-metadata.xml`));
      assert.equal(meta.status, 200);
      const text = await meta.text();
      assert.match(text, /<buildNumber>2<\/buildNumber>/);
      const build2 = names.find((n) => /-2\.jar$/.test(n))!;
      const dl = await fetch(file('alice', `${GROUP_PATH}/${ARTIFACT}/2.0-SNAPSHOT/${build2}`));
      assert.ok(Buffer.from(await dl.arrayBuffer()).equals(jars['snap-2']!));
      // The plain SNAPSHOT name finds the newest build.
      const plain = await fetch(
        file('alice', `${GROUP_PATH}/${ARTIFACT}/2.0-SNAPSHOT/Hello-Lib-2.0-SNAPSHOT.jar`),
      );
      assert.equal(plain.status, 200);
      assert.ok(Buffer.from(await plain.arrayBuffer()).equals(jars['snap-2']!));
      const plainSha = await fetch(
        file('alice', `${GROUP_PATH}/${ARTIFACT}/2.0-SNAPSHOT/Hello-Lib-2.0-SNAPSHOT.jar.sha1`),
      );
      assert.equal(await plainSha.text(), sha('sha1', jars['snap-2']!));

      // The artifact-level metadata lists both versions; the release is 1.0.
      const top = await (await fetch(file('alice', `${GROUP_PATH}/${ARTIFACT}/maven-metadata.xml`))).text();
      assert.match(top, /<latest>2\.0-SNAPSHOT<\/latest>/);
      assert.match(top, /<release>1\.0<\/release>/);
      assert.match(
        top,
        /<versions>\s*<version>1\.0<\/version>\s*<version>2\.0-SNAPSHOT<\/version>\s*<\/versions>/,
      );
    });

    it('resolves the release and the SNAPSHOT in consumer projects (mvn compile)', async () => {
      const before = Number((await versionRow('1.0'))!.download_count);
      const cfg = settings('alice', alice.token);
      const dir = await consume('alice', cfg, '1.0');
      assert.ok(fs.readFileSync(path.join(dir, '1.0', 'Hello-Lib-1.0.jar')).equals(jars['v1']!));
      // One download counted (the POM is the lead file, as in Forgejo).
      assert.equal(Number((await versionRow('1.0'))!.download_count), before + 1);

      const snap = await consume('alice', cfg, '2.0-SNAPSHOT');
      const got = fs.readdirSync(path.join(snap, '2.0-SNAPSHOT')).filter((n) => n.endsWith('.jar'));
      assert.ok(got.length >= 1, got.join());
      for (const n of got) {
        assert.ok(fs.readFileSync(path.join(snap, '2.0-SNAPSHOT', n)).equals(jars['snap-2']!), n);
      }
    });

    it('deploys to and resolves from a private owner, Maven answering the 401 challenges', async () => {
      const cfg = settings('carol', carol.token);
      const r = await deploy('carol', cfg, await buildJar('private'), '1.0');
      assert.equal(r.code, 0, r.out);
      const anon = await fetch(file('carol', `${GROUP_PATH}/${ARTIFACT}/1.0/Hello-Lib-1.0.jar`));
      assert.equal(anon.status, 401);
      assert.match(anon.headers.get('www-authenticate') ?? '', /^Basic realm=/);
      const meta = await fetch(file('carol', `${GROUP_PATH}/${ARTIFACT}/maven-metadata.xml`));
      assert.equal(meta.status, 401);
      const other = await fetch(file('carol', `${GROUP_PATH}/${ARTIFACT}/1.0/Hello-Lib-1.0.jar`), {
        headers: { authorization: `token ${bob.token}` },
      });
      assert.equal(other.status, 401);
      assert.equal(other.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
      const dir = await consume('carol', cfg, '1.0');
      assert.ok(fs.readFileSync(path.join(dir, '1.0', 'Hello-Lib-1.0.jar')).equals(jars['private']!));
    });
    it("leaves the machine's ~/.m2 untouched", () => {
      const changed: string[] = [];
      const walk = (d: string) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
          const p = path.join(d, e.name);
          if (e.isDirectory()) walk(p);
          else if (fs.lstatSync(p).mtimeMs >= startedMs) changed.push(p);
        }
      };
      walk(M2);
      assert.deepEqual(changed, []);
      assert.equal(fs.existsSync(path.join(M2, ...GROUP.split('.'))), false);
    });
  });

  describe('over HTTP', () => {
    const base = `${GROUP_PATH}/${ARTIFACT}`;
    const content = zip({ 'data.bin': crypto.randomBytes(5000) });
    const pomText = `<project><modelVersion>4.0.0</modelVersion><groupId>${GROUP}</groupId><artifactId>${ARTIFACT}</artifactId><version>3.0</version></project>`;

    before(async () => {
      const auth = `token ${alice.token}`;
      assert.equal((await put(file('alice', `${base}/3.0/Hello-Lib-3.0.jar`), content, auth)).status, 201);
      assert.equal((await put(file('alice', `${base}/3.0/Hello-Lib-3.0.pom`), pomText, auth)).status, 201);
    });

    it('answers HEAD and GET with Content-Length, Last-Modified, ETag and the content type', async () => {
      const before = Number((await versionRow('3.0'))!.download_count);
      for (const [name, type, size] of [
        ['Hello-Lib-3.0.jar', 'application/java-archive', content.length],
        ['Hello-Lib-3.0.pom', 'text/xml', Buffer.byteLength(pomText)],
      ] as const) {
        const head = await fetch(file('alice', `${base}/3.0/${name}`), { method: 'HEAD' });
        assert.equal(head.status, 200);
        assert.equal(head.headers.get('content-length'), String(size));
        assert.equal(head.headers.get('content-type'), type);
        assert.ok(Date.parse(head.headers.get('last-modified') ?? '') > Date.now() - 600_000);
        assert.match(head.headers.get('etag') ?? '', /^"[0-9a-f]{64}"$/);
        const get = await fetch(file('alice', `${base}/3.0/${name}`));
        assert.equal(get.status, 200);
        assert.equal(get.headers.get('content-type'), type);
        assert.equal(get.headers.get('etag'), head.headers.get('etag'));
        assert.equal((await get.arrayBuffer()).byteLength, size);
      }
      // The HEADs did not count; the POM's GET did (the jar's does not, as in Forgejo).
      assert.equal(Number((await versionRow('3.0'))!.download_count), before + 1);
      const missing = await fetch(file('alice', `${base}/3.0/nope.jar`), { method: 'HEAD' });
      assert.equal(missing.status, 404);
      const noVersion = await fetch(file('alice', `${base}/9.9/Hello-Lib-9.9.jar`));
      assert.equal(noVersion.status, 404);
    });

    it('serves checksums of files and checks uploaded ones (200 on match, 400 on mismatch)', async () => {
      for (const algo of ['md5', 'sha1', 'sha256', 'sha512']) {
        const r = await fetch(file('alice', `${base}/3.0/Hello-Lib-3.0.jar.${algo}`));
        assert.equal(r.status, 200);
        assert.equal(await r.text(), sha(algo, content));
        const ok = await put(
          file('alice', `${base}/3.0/Hello-Lib-3.0.jar.${algo}`),
          sha(algo, content),
          `token ${alice.token}`,
        );
        assert.equal(ok.status, 200, algo);
      }
      const bad = await put(
        file('alice', `${base}/3.0/Hello-Lib-3.0.jar.sha1`),
        sha('sha1', 'other'),
        `token ${alice.token}`,
      );
      assert.equal(bad.status, 400);
      assert.match(((await bad.json()) as { message: string }).message, /mismatch/);
      const missing = await put(
        file('alice', `${base}/3.0/nope.jar.sha1`),
        sha('sha1', 'x'),
        `token ${alice.token}`,
      );
      assert.equal(missing.status, 404);
      // Nothing stored for the checksums.
      const files = await s.api<FileJson[]>(
        'GET',
        `/packages/alice/maven/${encodeURIComponent(NAME)}/3.0/files`,
        {
          token: alice.token,
        },
      );
      assert.deepEqual(files.body.map((f) => f.name).sort(), ['Hello-Lib-3.0.jar', 'Hello-Lib-3.0.pom']);
    });

    it('generates maven-metadata.xml with its checksums; a PUT of it is accepted and ignored', async () => {
      const r = await fetch(file('alice', `${base}/maven-metadata.xml`));
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'text/xml');
      assert.ok(r.headers.get('last-modified'));
      const xml = Buffer.from(await r.arrayBuffer());
      assert.equal(r.headers.get('content-length'), String(xml.length));
      const text = xml.toString();
      assert.match(text, /^<\?xml version="1.0" encoding="UTF-8"\?>/);
      assert.match(text, new RegExp(`<groupId>${GROUP}</groupId>\\s*<artifactId>${ARTIFACT}</artifactId>`));
      assert.match(text, /<latest>3\.0<\/latest>/);
      assert.match(text, /<release>3\.0<\/release>/);
      assert.match(
        text,
        /<versions>\s*<version>1\.0<\/version>\s*<version>2\.0-SNAPSHOT<\/version>\s*<version>3\.0<\/version>/,
      );
      assert.match(text, /<lastUpdated>\d{14}<\/lastUpdated>/);
      for (const algo of ['md5', 'sha1', 'sha256', 'sha512']) {
        const c = await fetch(file('alice', `${base}/maven-metadata.xml.${algo}`));
        assert.equal(c.status, 200);
        assert.equal(await c.text(), sha(algo, xml));
      }
      const head = await fetch(file('alice', `${base}/maven-metadata.xml`), { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-length'), String(xml.length));
      const putMeta = await put(
        file('alice', `${base}/maven-metadata.xml`),
        '<metadata/>',
        `token ${alice.token}`,
      );
      assert.equal(putMeta.status, 200);
      assert.equal(await (await fetch(file('alice', `${base}/maven-metadata.xml`))).text(), text);
      const none = await fetch(file('alice', 'org/nothing/here/maven-metadata.xml'));
      assert.equal(none.status, 404);
    });

    it('refuses an existing release file with 409, adds new files, replaces SNAPSHOT files', async () => {
      const auth = `token ${alice.token}`;
      const again = await put(file('alice', `${base}/3.0/Hello-Lib-3.0.jar`), 'other', auth);
      assert.equal(again.status, 409);
      const sources = await put(
        file('alice', `${base}/3.0/Hello-Lib-3.0-sources.jar`),
        zip({ 'A.java': 'class A {}' }),
        auth,
      );
      assert.equal(sources.status, 201);
      // A SNAPSHOT's file may be published again; the old content (and its quota) goes.
      const url = file('alice', `${base}/4.0-SNAPSHOT/Hello-Lib-4.0-SNAPSHOT.jar`);
      const firstBuild = zip({ 'build.txt': 'first build' });
      const second = zip({ 'build.txt': 'second' });
      assert.equal((await put(url, firstBuild, auth)).status, 201);
      assert.equal((await put(url, second, auth)).status, 201);
      assert.deepEqual(Buffer.from(await (await fetch(url)).arrayBuffer()), second);
      const blobs = await s.ctx.db
        .selectFrom('package_blob')
        .select('hash_sha256')
        .where('hash_sha256', '=', sha('sha256', firstBuild))
        .execute();
      assert.deepEqual(blobs, []);
      assert.deepEqual(
        storedFiles(s.dataDir).filter((f) => f.endsWith(sha('sha256', firstBuild))),
        [],
      );
      const drift = await s.ctx.quota.recalculate();
      assert.deepEqual(
        drift.filter((d) => d.subject === 'size:assets:packages:all'),
        [],
      );
    });

    it('asks for credentials with 401 and WWW-Authenticate, refuses wrong ones and foreign writes', async () => {
      const url = file('alice', `${base}/5.0/Hello-Lib-5.0.jar`);
      let r = await put(url, 'x');
      assert.equal(r.status, 401);
      assert.match(r.headers.get('www-authenticate') ?? '', /^Basic realm=/);
      r = await put(file('alice', `${base}/maven-metadata.xml`), 'x');
      assert.equal(r.status, 401);
      r = await put(url, 'x', basic('alice', 'wrong-password'));
      assert.equal(r.status, 401);
      assert.match(r.headers.get('www-authenticate') ?? '', /^Basic realm=/);
      // Forgejo answers foreign writes and missing scopes with 401 too.
      r = await put(url, 'x', `token ${bob.token}`);
      assert.equal(r.status, 401);
      r = await put(
        file('alice', `${base}/3.0/Hello-Lib-3.0.jar.sha1`),
        sha('sha1', content),
        `token ${bob.token}`,
      );
      assert.equal(r.status, 401);
      const readOnly = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
        basic: ['alice', alice.password],
        body: { name: 'maven-ro', scopes: ['read:package'] },
      });
      r = await put(url, 'x', basic('alice', readOnly.body.sha1));
      assert.equal(r.status, 401);
      assert.equal(await versionRow('5.0'), undefined);
      // The password as basic auth writes, as Maven's settings.xml would send it.
      r = await put(url, zip({ 'x.txt': 'x' }), basic('alice', alice.password));
      assert.equal(r.status, 201);
    });

    it('answers 400 with a message for invalid paths, never 500', async () => {
      const auth = `token ${alice.token}`;
      const cases = [
        'Hello-Lib-1.0.jar', // no group, artifact, version
        'org/Hello-Lib-1.0.jar', // no version
        'lib/1.0/a.jar', // no group
        'org/x/lib/1.0/a%3Ab.jar', // ':' in the file name
        'org/x/lib/1%3F0/a.jar', // '?' in the version
        'org/x%20y/lib/1.0/a.jar', // space in the group
        'org/x/li%2Ab/1.0/a.jar', // '*' in the artifact
        'org/%2e%2e/lib/1.0/a.jar', // '..' as a group segment
        'org/x/%2e%2e/1.0/a.jar', // '..' as the artifact
        'org/x/lib/%2e%2e/a.jar', // '..' as the version
        'org/x/lib/1.0/%2e%2e', // '..' as the file
        'org/x/lib/1.0/%2e%2e%2f%2e%2e%2fetc%2fpasswd', // encoded traversal
        'org//lib/1.0/a.jar', // empty segment
        `org/x/lib/1.0/${'a'.repeat(300)}.jar`, // too long
      ];
      for (const c of cases) {
        for (const method of ['PUT', 'GET']) {
          const r = await fetch(file('alice', c), {
            method,
            headers: { authorization: auth },
            ...(method === 'PUT' ? { body: 'x' } : {}),
          });
          assert.equal(r.status, 400, `${method} ${c}: ${r.status}`);
          const body = (await r.json()) as { message: string };
          assert.ok(body.message, c);
        }
      }
      // A NUL byte is refused by the HTTP layer for every route (422), before the registry sees it.
      for (const method of ['PUT', 'GET']) {
        const r = await fetch(file('alice', 'org/x/lib/1.0/a%00.jar'), {
          method,
          headers: { authorization: auth },
          ...(method === 'PUT' ? { body: 'x' } : {}),
        });
        assert.equal(r.status, 422, method);
      }
      assert.deepEqual(
        (await s.ctx.db.selectFrom('package').select('name').where('type', '=', 'maven').execute())
          .map((p) => p.name)
          .filter((n) => n !== NAME),
        [],
      );
    });

    it('refuses a POM that is not XML with 400 and keeps nothing of it', async () => {
      const auth = `token ${alice.token}`;
      const before = storedFiles(s.dataDir);
      for (const bad of ['not xml at all <', '<notaproject/>', '<!DOCTYPE x [<!ENTITY a "b">]><project/>']) {
        const r = await put(file('alice', 'org/bad/pom/1.0/pom-1.0.pom'), bad, auth);
        assert.equal(r.status, 400, bad);
      }
      assert.deepEqual(storedFiles(s.dataDir), before);
      const pkg = await s.ctx.db
        .selectFrom('package')
        .select('id')
        .where('name', '=', 'org.bad:pom')
        .execute();
      assert.deepEqual(pkg, []);
    });

    it('refuses a Java archive that is no sound zip with 400 and keeps nothing of it', async () => {
      const auth = `token ${alice.token}`;
      const good = zip({
        'META-INF/MANIFEST.MF': 'Manifest-Version: 1.0\n',
        'A.class': crypto.randomBytes(300),
      });
      const cases: Array<[string, Buffer]> = [
        ['broken-1.0.jar', crypto.randomBytes(400)],
        ['broken-1.0.war', good.subarray(0, good.length - 30)],
        ['broken-1.0.aar', Buffer.from('x')],
      ];
      const used = await packagesUsed(s, alice.token);
      for (const [name, data] of cases) {
        const r = await put(file('alice', `org/broken/broken/1.0/${name}`), data, auth);
        const body = (await r.json()) as { message: string };
        assert.equal(r.status, 400, `${name}: ${body.message}`);
        assert.match(body.message, new RegExp(`${name.replace(/\./g, '\\.')} is not a valid zip archive`));
      }
      await assertNothingKept(
        s,
        cases.map((c) => c[1]),
        alice.token,
        used,
      );
      const pkg = await s.ctx.db
        .selectFrom('package')
        .select('id')
        .where('name', '=', 'org.broken:broken')
        .execute();
      assert.deepEqual(pkg, []);
      const ok = await put(file('alice', 'org/broken/broken/1.0/broken-1.0.jar'), good, auth);
      assert.equal(ok.status, 201);
    });

    it('leaves no row and no blob behind when an upload is cut off half-way', async () => {
      const before = storedFiles(s.dataDir);
      const url = new URL(file('alice', 'org/cut/big/1.0/big-1.0.jar'));
      await new Promise<void>((resolve) => {
        const req = http.request({
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'PUT',
          headers: { authorization: `token ${alice.token}`, 'content-length': String(10 * 1024 * 1024) },
        });
        req.on('error', () => resolve());
        req.on('response', () => resolve());
        req.write(crypto.randomBytes(1024 * 1024));
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 300);
      });
      for (let i = 0; i < 50; i++) {
        if (storedFiles(s.dataDir).length === before.length) break;
        await sleep(50);
      }
      assert.deepEqual(storedFiles(s.dataDir), before);
      const pkg = await s.ctx.db
        .selectFrom('package')
        .select('id')
        .where('name', '=', 'org.cut:big')
        .execute();
      assert.deepEqual(pkg, []);
    });

    it('answers 413 once the owner is over quota', async () => {
      const dave = await s.createUser('dave');
      let r = await s.api('POST', '/admin/quota/groups', {
        token: s.admin.token,
        body: {
          name: 'maven-tiny',
          rules: [{ name: 'pkg-1k', limit: 1000, subjects: ['size:assets:packages:all'] }],
        },
      });
      assert.equal(r.status, 201, r.text);
      r = await s.api('POST', '/admin/users/dave/quota/groups', {
        token: s.admin.token,
        body: { groups: ['maven-tiny'] },
      });
      assert.equal(r.status, 204, r.text);
      const auth = `token ${dave.token}`;
      // This upload crosses the limit and passes (as in Forgejo); the next is refused.
      assert.equal(
        (await put(file('dave', 'org/q/lib/1.0/lib-1.0.jar'), zip({ a: Buffer.alloc(1400, 1) }), auth))
          .status,
        201,
      );
      const over = await put(file('dave', 'org/q/lib/1.0/lib-1.0.pom'), pomText, auth);
      assert.equal(over.status, 413);
    });
  });
});

describe('Maven package registry: [packages] LIMIT_SIZE_MAVEN', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({ ANVIL__PACKAGES__LIMIT_SIZE_MAVEN: '1000' });
  });
  after(async () => s.close());

  it('refuses larger files with 403 (announced or streamed), admins exempt, other formats untouched', async () => {
    const u = await s.createUser('erin');
    const url = (v: string) => `${s.url}/api/packages/erin/maven/org/big/lib/${v}/lib-${v}.jar`;
    const put = (u2: string, body: Buffer | ReadableStream, auth: string) =>
      fetch(u2, { method: 'PUT', body, headers: { authorization: auth }, duplex: 'half' } as RequestInit);
    let r = await put(url('1'), Buffer.alloc(1001), `token ${u.token}`);
    assert.equal(r.status, 403);
    // Without Content-Length: refused while streaming.
    r = await put(url('2'), new Blob([Buffer.alloc(5000)]).stream(), `token ${u.token}`);
    assert.equal(r.status, 403);
    r = await put(url('3'), zip({ a: Buffer.alloc(900) }), `token ${u.token}`);
    assert.equal(r.status, 201);
    r = await put(url('4'), zip({ a: Buffer.alloc(5000) }), `token ${s.admin.token}`);
    assert.equal(r.status, 201);
    r = await put(`${s.url}/api/packages/erin/generic/g/1/g.bin`, Buffer.alloc(5000), `token ${u.token}`);
    assert.equal(r.status, 201);
    const versions = await s.ctx.db
      .selectFrom('package_version')
      .innerJoin('package', 'package.id', 'package_version.package_id')
      .select('package_version.version')
      .where('package.type', '=', 'maven')
      .orderBy('package_version.version')
      .execute();
    assert.deepEqual(
      versions.map((v) => v.version),
      ['3', '4'],
    );
  });
});
