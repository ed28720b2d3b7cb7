// The v4 artifact service (Twirp at /twirp/{vendor,github}.actions.results.api.v1.ArtifactService/*),
// its signed upload and download URLs, the REST view under /api/v1/repos/{owner}/{repo}/actions/,
// quota accounting and retention. The real @actions/artifact client runs in a child process with a
// runtime token minted for a job, exactly as a workflow step would.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { startServer, type TestServer } from '../helpers/server.js';
import { mintRuntimeToken } from '../../src/actions/runtime-token.js';
import {
  CreateArtifactRequestSchema,
  CreateArtifactResponseSchema,
  FinalizeArtifactRequestSchema,
  FinalizeArtifactResponseSchema,
  ListArtifactsRequestSchema,
  ListArtifactsResponseSchema,
  GetSignedArtifactURLRequestSchema,
  GetSignedArtifactURLResponseSchema,
  DeleteArtifactRequestSchema,
  DeleteArtifactResponseSchema,
} from '../../src/artifacts/gen/vendor/actions/results/api/v1/artifact_pb.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const GITHUB = 'github.actions.results.api.v1.ArtifactService';
const VENDOR = 'vendor.actions.results.api.v1.ArtifactService';

interface User {
  name: string;
  password: string;
  token: string;
  id: number;
}
interface Job {
  repoId: number;
  runId: number;
  jobId: number;
  token: string;
}
interface TwirpReply {
  status: number;
  json: Record<string, unknown>;
  body: Buffer;
  headers: Headers;
}
interface RestArtifact {
  id: number;
  name: string;
  size_in_bytes: number;
  url: string;
  archive_download_url: string;
  expired: boolean;
  created_at: string;
  updated_at: string;
  expires_at: string;
  workflow_run: { id: number; repository_id: number; head_sha: string };
}

/** The @actions/artifact client in a child `node`, with the environment of a workflow step. */
async function actionsClient(
  s: TestServer,
  job: Job,
  op: unknown[],
): Promise<{ code: number; result: unknown; output: string }> {
  const code = `
    import { DefaultArtifactClient } from '@actions/artifact';
    const [op, a, b, c] = JSON.parse(process.env.ARTIFACT_OP);
    const client = new DefaultArtifactClient();
    let result;
    if (op === 'upload') result = await client.uploadArtifact(a, b, c);
    else if (op === 'list') result = await client.listArtifacts();
    else if (op === 'get') result = await client.getArtifact(a);
    else if (op === 'download') result = await client.downloadArtifact(a, { path: b });
    else if (op === 'delete') result = await client.deleteArtifact(a);
    process.stdout.write('\\nRESULT ' + JSON.stringify(result) + '\\n');
  `;
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-step-'));
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      GITHUB_SERVER_URL: 'https://github.com',
      ACTIONS_RUNTIME_TOKEN: job.token,
      ACTIONS_RESULTS_URL: `${s.url}/`,
      GITHUB_WORKSPACE: workspace,
      RUNNER_TEMP: workspace,
      ARTIFACT_OP: JSON.stringify(op),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exit = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
  fs.rmSync(workspace, { recursive: true, force: true });
  const line = output.split('\n').find((l) => l.startsWith('RESULT '));
  return { code: exit, result: line ? JSON.parse(line.slice(7)) : undefined, output };
}

function sha256(data: Buffer | string): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

function sameFile(a: string, b: string): boolean {
  const sa = fs.statSync(a);
  const sb = fs.statSync(b);
  if (sa.size !== sb.size) return false;
  const fa = fs.openSync(a, 'r');
  const fb = fs.openSync(b, 'r');
  try {
    const ba = Buffer.alloc(1 << 20);
    const bb = Buffer.alloc(1 << 20);
    for (let pos = 0; pos < sa.size;) {
      const n = fs.readSync(fa, ba, 0, ba.length, pos);
      fs.readSync(fb, bb, 0, n, pos);
      if (!ba.subarray(0, n).equals(bb.subarray(0, n))) return false;
      pos += n;
    }
    return true;
  } finally {
    fs.closeSync(fa);
    fs.closeSync(fb);
  }
}

/** The blobs the artifacts store holds (keys; a composed blob is one), on either storage backend. */
async function filesUnder(s: TestServer): Promise<string[]> {
  const keys: string[] = [];
  for await (const b of s.ctx.storage.artifacts.list()) keys.push(b.key);
  return keys.sort();
}

describe('artifacts (v4 artifact service)', () => {
  let s: TestServer;
  let alice: User;
  let bob: User;
  let carol: User;
  let repoId: number;
  let orgRepoId: number;
  let work: string;
  let nextRun = 1000;

  const newJob = (repo = repoId, runId = ++nextRun, jobId = runId * 10 + 1): Job => ({
    repoId: repo,
    runId,
    jobId,
    token: mintRuntimeToken({
      secretKey: s.config.security.secretKey,
      repoId: repo,
      runId,
      jobId,
      ttlSeconds: 3600,
    }),
  });
  const ids = (job: Job) => ({
    workflow_run_backend_id: String(job.runId),
    workflow_job_run_backend_id: String(job.jobId),
  });

  async function twirp(
    method: string,
    body: unknown,
    opts: { token?: string; service?: string; contentType?: string; raw?: string | Uint8Array } = {},
  ): Promise<TwirpReply> {
    const headers: Record<string, string> = { 'content-type': opts.contentType ?? 'application/json' };
    if (opts.token) headers['authorization'] = `Bearer ${opts.token}`;
    const res = await fetch(`${s.url}/twirp/${opts.service ?? GITHUB}/${method}`, {
      method: 'POST',
      headers,
      body: (opts.raw as Buffer<ArrayBuffer> | undefined) ?? JSON.stringify(body),
    });
    const buf = Buffer.from(await res.arrayBuffer());
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(buf.toString('utf8')) as Record<string, unknown>;
    } catch {
      // binary protobuf
    }
    return { status: res.status, json, body: buf, headers: res.headers };
  }

  /** Creates an artifact, uploads `content` with one plain PUT and finalizes it; its id. */
  async function uploadRaw(job: Job, name: string, content: Buffer): Promise<number> {
    const c = await twirp('CreateArtifact', { ...ids(job), name, version: 4 }, { token: job.token });
    assert.equal(c.status, 200, JSON.stringify(c.json));
    const put = await fetch(c.json['signed_upload_url'] as string, {
      method: 'PUT',
      body: content as Buffer<ArrayBuffer>,
    });
    assert.equal(put.status, 201, await put.text());
    const f = await twirp(
      'FinalizeArtifact',
      { ...ids(job), name, size: String(content.length), hash: `sha256:${sha256(content)}` },
      { token: job.token },
    );
    assert.equal(f.status, 200, JSON.stringify(f.json));
    assert.equal(f.json['ok'], true);
    return Number(f.json['artifact_id']);
  }

  const usage = async (token: string, org?: string) => {
    const r = await s.api<{ used: { size: { assets: { artifacts: number } } } }>(
      'GET',
      org ? `/orgs/${org}/quota` : '/user/quota',
      { token },
    );
    assert.equal(r.status, 200, r.text);
    return r.body.used.size.assets.artifacts;
  };

  before(async () => {
    s = await startServer({ ANVIL__ACTIONS__ENABLED: 'true' });
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    const r = await s.api<{ id: number }>('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'proj', private: true },
    });
    assert.equal(r.status, 201, r.text);
    repoId = r.body.id;
    const collab = await s.api('PUT', '/repos/alice/proj/collaborators/carol', {
      token: alice.token,
      body: { permission: 'read' },
    });
    assert.equal(collab.status, 204, collab.text);
    const org = await s.api('POST', '/orgs', { token: alice.token, body: { username: 'acme' } });
    assert.equal(org.status, 201, org.text);
    const or = await s.api<{ id: number }>('POST', '/orgs/acme/repos', {
      token: alice.token,
      body: { name: 'tools' },
    });
    assert.equal(or.status, 201, or.text);
    orgRepoId = or.body.id;
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-artifacts-'));
  });

  after(async () => {
    await s?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  describe('with the real @actions/artifact client', () => {
    let job: Job;
    const src = () => path.join(work, 'src');
    const sizes = { empty: 0, small: 1024, large: 64 * 1024 * 1024 };

    before(() => {
      job = newJob();
      fs.mkdirSync(src(), { recursive: true });
      fs.writeFileSync(path.join(src(), 'empty.bin'), Buffer.alloc(0));
      fs.writeFileSync(path.join(src(), 'small.bin'), crypto.randomBytes(sizes.small));
      const fd = fs.openSync(path.join(src(), 'large.bin'), 'w');
      for (let i = 0; i < sizes.large / (1 << 20); i++) fs.writeSync(fd, crypto.randomBytes(1 << 20));
      fs.closeSync(fd);
    });

    it('uploads artifacts of 0 bytes, 1 KB and 64 MB (blocks, block list, finalize)', async () => {
      for (const name of ['empty', 'small', 'large'] as const) {
        const up = await actionsClient(s, job, ['upload', name, [path.join(src(), `${name}.bin`)], src()]);
        assert.equal(up.code, 0, up.output);
        const result = up.result as { id: number; size: number; digest: string };
        assert.ok(result.id > 0);
        assert.ok(result.size > sizes[name], `${name}: the zip holds the file`);
      }
    });

    it('lists them (ListArtifacts) and finds one by name', async () => {
      const list = await actionsClient(s, job, ['list']);
      assert.equal(list.code, 0, list.output);
      const artifacts = (
        list.result as { artifacts: Array<{ name: string; id: number; size: number; createdAt: string }> }
      ).artifacts;
      assert.deepEqual(artifacts.map((a) => a.name).sort(), ['empty', 'large', 'small']);
      for (const a of artifacts) {
        assert.ok(a.size > 0);
        assert.ok(Math.abs(Date.parse(a.createdAt) - Date.now()) < 10 * 60_000);
      }
      const got = await actionsClient(s, job, ['get', 'small']);
      assert.equal(got.code, 0, got.output);
      assert.equal((got.result as { artifact: { name: string } }).artifact.name, 'small');
    });

    it('downloads each and unzips files identical byte for byte', async () => {
      const list = await actionsClient(s, job, ['list']);
      for (const a of (list.result as { artifacts: Array<{ name: string; id: number }> }).artifacts) {
        const into = path.join(work, 'out', a.name);
        fs.mkdirSync(into, { recursive: true });
        const down = await actionsClient(s, job, ['download', a.id, into]);
        assert.equal(down.code, 0, down.output);
        assert.ok(sameFile(path.join(src(), `${a.name}.bin`), path.join(into, `${a.name}.bin`)), a.name);
      }
    });

    it("counts their sizes toward the repository owner's quota", async () => {
      const list = await actionsClient(s, job, ['list']);
      const total = (list.result as { artifacts: Array<{ size: number }> }).artifacts.reduce(
        (n, a) => n + a.size,
        0,
      );
      assert.equal(await usage(alice.token), total);
      const items = await s.api<Array<{ name: string; size: number; html_url: string }>>(
        'GET',
        '/user/quota/artifacts',
        {
          token: alice.token,
        },
      );
      assert.equal(items.status, 200, items.text);
      assert.deepEqual(items.body.map((i) => i.name).sort(), ['empty', 'large', 'small']);
      assert.equal(
        items.body.reduce((n, i) => n + i.size, 0),
        total,
      );
      assert.equal(items.body[0]!.html_url, `${s.url}/alice/proj/actions/runs/${job.runId}`);
    });

    it('deletes one (DeleteArtifact): storage freed and usage subtracted', async () => {
      const before = await usage(alice.token);
      const files = (await filesUnder(s)).length;
      const list = await actionsClient(s, job, ['get', 'large']);
      const large = (list.result as { artifact: { id: number; size: number } }).artifact;
      const del = await actionsClient(s, job, ['delete', 'large']);
      assert.equal(del.code, 0, del.output);
      assert.equal((del.result as { id: number }).id, large.id);
      assert.equal(await usage(alice.token), before - large.size);
      assert.equal((await filesUnder(s)).length, files - 1);
      const after = await actionsClient(s, job, ['list']);
      assert.deepEqual(
        (after.result as { artifacts: Array<{ name: string }> }).artifacts.map((a) => a.name).sort(),
        ['empty', 'small'],
      );
    });
  });

  describe('Twirp', () => {
    it('takes JSON with proto names (snake_case) and answers with them, int64 as strings, ok spelled out', async () => {
      const job = newJob();
      const c = await twirp(
        'CreateArtifact',
        { ...ids(job), name: 'snake', version: 4, unknown_field: 1 },
        { token: job.token },
      );
      assert.equal(c.status, 200, JSON.stringify(c.json));
      assert.match(c.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(c.json['ok'], true);
      assert.match(
        c.json['signed_upload_url'] as string,
        new RegExp(`^${s.url}/api/actions/artifacts/\\d+/upload\\?`),
      );
      const content = Buffer.from('snake content');
      assert.equal(
        (await fetch(c.json['signed_upload_url'] as string, { method: 'PUT', body: content })).status,
        201,
      );
      const f = await twirp(
        'FinalizeArtifact',
        { ...ids(job), name: 'snake', size: String(content.length), hash: `sha256:${sha256(content)}` },
        { token: job.token },
      );
      assert.equal(f.status, 200);
      assert.equal(f.json['ok'], true);
      assert.equal(typeof f.json['artifact_id'], 'string');
      const l = await twirp('ListArtifacts', { ...ids(job), name_filter: 'snake' }, { token: job.token });
      const [a] = l.json['artifacts'] as Array<Record<string, unknown>>;
      assert.deepEqual(Object.keys(a!).sort(), [
        'created_at',
        'database_id',
        'name',
        'size',
        'workflow_job_run_backend_id',
        'workflow_run_backend_id',
      ]);
      assert.equal(a!['size'], String(content.length));
      assert.equal(a!['database_id'], f.json['artifact_id']);
      assert.equal(a!['workflow_run_backend_id'], String(job.runId));
      assert.equal(a!['workflow_job_run_backend_id'], String(job.jobId));
    });

    it('takes JSON with lowerCamelCase names, wrappers and int64 as numbers, under the vendor package too', async () => {
      const job = newJob();
      const content = Buffer.from('camel content');
      const c = await twirp(
        'CreateArtifact',
        {
          workflowRunBackendId: String(job.runId),
          workflowJobRunBackendId: String(job.jobId),
          name: 'camel',
          version: 4,
          expiresAt: new Date(Date.now() + 86400_000).toISOString(),
        },
        { token: job.token, service: VENDOR },
      );
      assert.equal(c.status, 200, JSON.stringify(c.json));
      await fetch(c.json['signed_upload_url'] as string, { method: 'PUT', body: content });
      const f = await twirp(
        'FinalizeArtifact',
        {
          workflowRunBackendId: String(job.runId),
          workflowJobRunBackendId: String(job.jobId),
          name: 'camel',
          size: content.length,
          hash: `sha256:${sha256(content)}`,
        },
        { token: job.token, service: VENDOR },
      );
      assert.equal(f.json['ok'], true, JSON.stringify(f.json));
      const l = await twirp(
        'ListArtifacts',
        {
          workflowRunBackendId: String(job.runId),
          workflowJobRunBackendId: String(job.jobId),
          idFilter: f.json['artifact_id'],
        },
        { token: job.token, service: VENDOR },
      );
      assert.deepEqual(
        (l.json['artifacts'] as Array<{ name: string }>).map((a) => a.name),
        ['camel'],
      );
      const rest = await s.api<RestArtifact>(
        'GET',
        `/repos/alice/proj/actions/artifacts/${String(f.json['artifact_id'])}`,
        {
          token: alice.token,
        },
      );
      const expires = Date.parse(rest.body.expires_at);
      assert.ok(Math.abs(expires - (Date.now() + 86400_000)) < 120_000, rest.body.expires_at);
    });

    it('takes binary protobuf (application/protobuf) and answers in it', async () => {
      const job = newJob();
      const proto = (m: string, bytes: Uint8Array) =>
        twirp(m, undefined, { token: job.token, contentType: 'application/protobuf', raw: bytes });
      const base = { workflowRunBackendId: String(job.runId), workflowJobRunBackendId: String(job.jobId) };
      const c = await proto(
        'CreateArtifact',
        toBinary(
          CreateArtifactRequestSchema,
          create(CreateArtifactRequestSchema, {
            ...base,
            name: 'binary',
            version: 4,
            expiresAt: timestampFromDate(new Date(Date.now() + 3600_000)),
          }),
        ),
      );
      assert.equal(c.status, 200, c.body.toString());
      assert.equal(c.headers.get('content-type'), 'application/protobuf');
      const created = fromBinary(CreateArtifactResponseSchema, c.body);
      assert.equal(created.ok, true);
      const content = crypto.randomBytes(5000);
      assert.equal((await fetch(created.signedUploadUrl, { method: 'PUT', body: content })).status, 201);
      const f = fromBinary(
        FinalizeArtifactResponseSchema,
        (
          await proto(
            'FinalizeArtifact',
            toBinary(
              FinalizeArtifactRequestSchema,
              create(FinalizeArtifactRequestSchema, {
                ...base,
                name: 'binary',
                size: BigInt(content.length),
                hash: `sha256:${sha256(content)}`,
              }),
            ),
          )
        ).body,
      );
      assert.equal(f.ok, true);
      assert.ok(f.artifactId > 0n);
      const l = fromBinary(
        ListArtifactsResponseSchema,
        (
          await proto(
            'ListArtifacts',
            toBinary(
              ListArtifactsRequestSchema,
              create(ListArtifactsRequestSchema, { ...base, idFilter: f.artifactId }),
            ),
          )
        ).body,
      );
      assert.equal(l.artifacts.length, 1);
      assert.equal(l.artifacts[0]!.name, 'binary');
      assert.equal(l.artifacts[0]!.size, BigInt(content.length));
      const g = fromBinary(
        GetSignedArtifactURLResponseSchema,
        (
          await proto(
            'GetSignedArtifactURL',
            toBinary(
              GetSignedArtifactURLRequestSchema,
              create(GetSignedArtifactURLRequestSchema, { ...base, name: 'binary' }),
            ),
          )
        ).body,
      );
      const down = await fetch(g.signedUrl);
      assert.equal(down.status, 200);
      assert.equal(down.headers.get('content-type'), 'application/zip');
      assert.ok(Buffer.from(await down.arrayBuffer()).equals(content));
      const d = fromBinary(
        DeleteArtifactResponseSchema,
        (
          await proto(
            'DeleteArtifact',
            toBinary(
              DeleteArtifactRequestSchema,
              create(DeleteArtifactRequestSchema, { ...base, name: 'binary' }),
            ),
          )
        ).body,
      );
      assert.equal(d.ok, true);
      assert.equal(d.artifactId, f.artifactId);
      assert.equal((await fetch(g.signedUrl)).status, 404);
    });

    it('a 0-byte content (plain PUT of nothing) finalizes with size 0 and downloads as 0 bytes', async () => {
      const job = newJob();
      const id = await uploadRaw(job, 'nothing', Buffer.alloc(0));
      const g = await twirp('GetSignedArtifactURL', { ...ids(job), name: 'nothing' }, { token: job.token });
      const down = await fetch(g.json['signed_url'] as string);
      assert.equal(down.status, 200);
      assert.equal(down.headers.get('content-length'), '0');
      assert.equal((await down.arrayBuffer()).byteLength, 0);
      assert.ok(id > 0);
    });

    it('FinalizeArtifact with a wrong hash or size: ok=false and nothing is kept', async () => {
      const job = newJob();
      const before = await usage(alice.token);
      for (const [name, wrong] of [
        ['wrong-hash', { hash: `sha256:${'0'.repeat(64)}` }],
        ['wrong-size', { size: '3' }],
      ] as const) {
        const filesBefore = await filesUnder(s);
        const c = await twirp('CreateArtifact', { ...ids(job), name, version: 4 }, { token: job.token });
        const url = c.json['signed_upload_url'] as string;
        const content = crypto.randomBytes(100);
        // In blocks, to see the blocks go too.
        for (const id of ['YQ==', 'Yg==']) {
          const r = await fetch(`${url}&comp=block&blockid=${encodeURIComponent(id)}`, {
            method: 'PUT',
            body: content,
          });
          assert.equal(r.status, 201);
        }
        const l = await fetch(`${url}&comp=blocklist`, {
          method: 'PUT',
          body: '<?xml version="1.0" encoding="utf-8"?><BlockList><Latest>YQ==</Latest><Latest>Yg==</Latest></BlockList>',
        });
        assert.equal(l.status, 201, await l.text());
        assert.notDeepEqual(await filesUnder(s), filesBefore);
        const whole = Buffer.concat([content, content]);
        const f = await twirp(
          'FinalizeArtifact',
          Object.assign(
            { ...ids(job), name, size: String(whole.length), hash: `sha256:${sha256(whole)}` },
            wrong,
          ),
          { token: job.token },
        );
        assert.equal(f.status, 200, JSON.stringify(f.json));
        assert.equal(f.json['ok'], false);
        assert.deepEqual(await filesUnder(s), filesBefore, 'no blob and no block is left');
        const list = await twirp('ListArtifacts', { ...ids(job), name_filter: name }, { token: job.token });
        assert.deepEqual(list.json['artifacts'], []);
        assert.equal(
          (await fetch(`${url}`, { method: 'PUT', body: 'x' })).status,
          404,
          'the upload URL leads nowhere',
        );
        // The name is free again.
        const again = await twirp('CreateArtifact', { ...ids(job), name, version: 4 }, { token: job.token });
        assert.equal(again.status, 200);
      }
      assert.equal(await usage(alice.token), before);
    });

    it('refuses requests without a valid runtime token (unauthenticated, 401)', async () => {
      const job = newJob();
      const body = { ...ids(job), name: 'x', version: 4 };
      const none = await twirp('CreateArtifact', body);
      assert.equal(none.status, 401);
      assert.equal(none.json['code'], 'unauthenticated');
      assert.equal(typeof none.json['msg'], 'string');
      const foreign = mintRuntimeToken({
        secretKey: 'another-key',
        repoId,
        runId: job.runId,
        jobId: job.jobId,
      });
      assert.equal((await twirp('CreateArtifact', body, { token: foreign })).status, 401);
      const expired = mintRuntimeToken({
        secretKey: s.config.security.secretKey,
        repoId,
        runId: job.runId,
        jobId: job.jobId,
        ttlSeconds: 1,
        now: Math.floor(Date.now() / 1000) - 3600,
      });
      const e = await twirp('CreateArtifact', body, { token: expired });
      assert.equal(e.status, 401);
      assert.match(e.json['msg'] as string, /expired/);
      const [h, p] = job.token.split('.');
      const none2 = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${p}.`;
      assert.equal((await twirp('CreateArtifact', body, { token: none2 })).status, 401);
      const tampered = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), run_id: 1 })).toString('base64url')}.${job.token.split('.')[2]}`;
      assert.equal((await twirp('CreateArtifact', body, { token: tampered })).status, 401);
    });

    it("a job sees only its own run's artifacts; creating and finalizing only for itself", async () => {
      const job = newJob();
      await uploadRaw(job, 'mine', Buffer.from('mine'));
      const other = newJob();
      // Another run's token, naming its own run: sees nothing of the first run.
      const l = await twirp('ListArtifacts', ids(other), { token: other.token });
      assert.deepEqual(l.json['artifacts'], []);
      const g = await twirp('GetSignedArtifactURL', { ...ids(other), name: 'mine' }, { token: other.token });
      assert.equal(g.status, 404);
      assert.equal(g.json['code'], 'not_found');
      const d = await twirp('DeleteArtifact', { ...ids(other), name: 'mine' }, { token: other.token });
      assert.equal(d.status, 404);
      // Another run's token naming the first run: permission_denied.
      for (const m of [
        'ListArtifacts',
        'GetSignedArtifactURL',
        'DeleteArtifact',
        'CreateArtifact',
        'FinalizeArtifact',
      ]) {
        const r = await twirp(m, { ...ids(job), name: 'mine', version: 4 }, { token: other.token });
        assert.equal(r.status, 403, m);
        assert.equal(r.json['code'], 'permission_denied', m);
      }
      // Another job of the same run: reads the run's artifacts, but cannot create as the first job.
      const sibling = newJob(repoId, job.runId, job.jobId + 1);
      const sl = await twirp('ListArtifacts', ids(sibling), { token: sibling.token });
      assert.deepEqual(
        (sl.json['artifacts'] as Array<{ name: string }>).map((a) => a.name),
        ['mine'],
      );
      const sg = await twirp('GetSignedArtifactURL', { ...ids(job), name: 'mine' }, { token: sibling.token });
      assert.equal(sg.status, 200, 'the job id of a listed artifact may be another job of the run');
      const sc = await twirp(
        'CreateArtifact',
        { ...ids(job), name: 'theirs', version: 4 },
        { token: sibling.token },
      );
      assert.equal(sc.status, 403);
      const bad = await twirp(
        'ListArtifacts',
        { workflow_run_backend_id: 'abc', workflow_job_run_backend_id: '1' },
        {
          token: job.token,
        },
      );
      assert.equal(bad.status, 400);
      assert.equal(bad.json['code'], 'invalid_argument');
    });

    it('answers bad input with Twirp errors: bad_route, malformed, invalid_argument, already_exists', async () => {
      const job = newJob();
      const unknown = await twirp('Frobnicate', {}, { token: job.token });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.json['code'], 'bad_route');
      const wrongService = await twirp('ListArtifacts', ids(job), {
        token: job.token,
        service: 'x.y.ArtifactService',
      });
      assert.equal(wrongService.json['code'], 'bad_route');
      const get = await fetch(`${s.url}/twirp/${GITHUB}/ListArtifacts`);
      assert.equal(get.status, 404);
      assert.equal(((await get.json()) as { code: string }).code, 'bad_route');
      const type = await twirp('ListArtifacts', ids(job), { token: job.token, contentType: 'text/plain' });
      assert.equal(type.status, 404);
      assert.equal(type.json['code'], 'bad_route');
      const malformed = await twirp('ListArtifacts', undefined, {
        token: job.token,
        raw: '{"workflow_run_backend_id": ',
      });
      assert.equal(malformed.status, 400);
      assert.equal(malformed.json['code'], 'malformed');
      const wrongType = await twirp(
        'FinalizeArtifact',
        { ...ids(job), name: 'a', size: 'many' },
        { token: job.token },
      );
      assert.equal(wrongType.status, 400);
      assert.equal(wrongType.json['code'], 'malformed');
      const garbage = await twirp('ListArtifacts', undefined, {
        token: job.token,
        contentType: 'application/protobuf',
        raw: Buffer.from([0xff, 0xff, 0xff]),
      });
      assert.equal(garbage.status, 400);
      for (const version of [0, 3, 8]) {
        const v = await twirp('CreateArtifact', { ...ids(job), name: 'v', version }, { token: job.token });
        assert.equal(v.status, 400, String(version));
        assert.equal(v.json['code'], 'invalid_argument');
        assert.match(v.json['msg'] as string, /version/);
      }
      const v7 = await twirp(
        'CreateArtifact',
        { ...ids(job), name: 'v7', version: 7, mime_type: 'application/zip' },
        {
          token: job.token,
        },
      );
      assert.equal(v7.status, 200, 'version 7, as @actions/artifact 6 sends it');
      for (const name of ['', 'a/b', 'a:b', 'x'.repeat(256), ' pad']) {
        const n = await twirp('CreateArtifact', { ...ids(job), name, version: 4 }, { token: job.token });
        assert.equal(n.status, 400, JSON.stringify(name));
        assert.equal(n.json['code'], 'invalid_argument');
      }
      const past = await twirp(
        'CreateArtifact',
        { ...ids(job), name: 'past', version: 4, expires_at: '2001-01-01T00:00:00Z' },
        { token: job.token },
      );
      assert.equal(past.json['code'], 'invalid_argument');
      await uploadRaw(job, 'taken', Buffer.from('one'));
      const dup = await twirp(
        'CreateArtifact',
        { ...ids(job), name: 'taken', version: 4 },
        { token: job.token },
      );
      assert.equal(dup.status, 409);
      assert.equal(dup.json['code'], 'already_exists');
      const missing = await twirp(
        'FinalizeArtifact',
        { ...ids(job), name: 'never-created', size: '1' },
        { token: job.token },
      );
      assert.equal(missing.status, 404);
      assert.equal(missing.json['code'], 'not_found');
    });

    it('a retried finalize answers the same; a retried create of an unfinished upload starts over', async () => {
      const job = newJob();
      const content = Buffer.from('retry');
      const id = await uploadRaw(job, 'retry', content);
      const again = await twirp(
        'FinalizeArtifact',
        { ...ids(job), name: 'retry', size: String(content.length), hash: `sha256:${sha256(content)}` },
        { token: job.token },
      );
      assert.equal(again.json['ok'], true);
      assert.equal(again.json['artifact_id'], String(id));
      const first = await twirp(
        'CreateArtifact',
        { ...ids(job), name: 'half', version: 4 },
        { token: job.token },
      );
      await fetch(first.json['signed_upload_url'] as string, { method: 'PUT', body: 'partial' });
      const second = await twirp(
        'CreateArtifact',
        { ...ids(job), name: 'half', version: 4 },
        { token: job.token },
      );
      assert.equal(second.status, 200);
      assert.equal(
        (await fetch(first.json['signed_upload_url'] as string, { method: 'PUT', body: 'x' })).status,
        404,
      );
    });
  });

  describe('signed URLs', () => {
    let job: Job;
    let url: string;
    let content: Buffer;
    let id: number;

    before(async () => {
      job = newJob();
      content = crypto.randomBytes(3000);
      id = await uploadRaw(job, 'signed', content);
      const g = await twirp('GetSignedArtifactURL', { ...ids(job), name: 'signed' }, { token: job.token });
      url = g.json['signed_url'] as string;
    });

    it('download: the zip with application/zip, its name, and ranges', async () => {
      const r = await fetch(url);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'application/zip');
      assert.equal(r.headers.get('content-disposition'), 'attachment; filename="signed.zip"');
      assert.ok(Buffer.from(await r.arrayBuffer()).equals(content));
      const part = await fetch(url, { headers: { range: 'bytes=10-19' } });
      assert.equal(part.status, 206);
      assert.ok(Buffer.from(await part.arrayBuffer()).equals(content.subarray(10, 20)));
      const head = await fetch(url, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-length'), String(content.length));
    });

    it('a tampered URL is refused (401)', async () => {
      const u = new URL(url);
      const sig = u.searchParams.get('sig')!;
      u.searchParams.set('sig', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
      const r = await fetch(u);
      assert.equal(r.status, 401);
      assert.equal(r.headers.get('x-ms-error-code'), 'AuthenticationFailed');
      assert.match(await r.text(), /<Error><Code>AuthenticationFailed<\/Code><Message>.*signature/);
      const later = new URL(url);
      later.searchParams.set('expires', String(Number(later.searchParams.get('expires')) + 3600));
      assert.equal((await fetch(later)).status, 401, 'a longer life is a tampered URL');
      const bare = new URL(url);
      bare.search = '';
      assert.equal((await fetch(bare)).status, 401);
    });

    it('an expired URL is refused (403)', async () => {
      const expired = s.ctx.artifacts.signedUrl('download', id, Math.floor(Date.now() / 1000) - 1);
      const r = await fetch(expired);
      assert.equal(r.status, 403);
      assert.match(await r.text(), /expired/);
    });

    it('a URL of one artifact used for another is refused (401), and an upload URL does not download', async () => {
      const otherId = await uploadRaw(job, 'signed-other', Buffer.from('other'));
      const u = new URL(url);
      u.pathname = u.pathname.replace(`/${id}/`, `/${otherId}/`);
      assert.equal((await fetch(u)).status, 401);
      const up = new URL(s.ctx.artifacts.signedUrl('upload', id, Math.floor(Date.now() / 1000) + 60));
      up.pathname = up.pathname.replace('/upload', '/download');
      assert.equal((await fetch(up)).status, 401);
      const down = new URL(url);
      down.pathname = down.pathname.replace('/download', '/upload');
      assert.equal((await fetch(down, { method: 'PUT', body: 'x' })).status, 401);
    });

    it('an upload URL takes nothing once finalized (409), and only PUT with comp block or blocklist (400)', async () => {
      const done = s.ctx.artifacts.signedUrl('upload', id, Math.floor(Date.now() / 1000) + 60);
      assert.equal((await fetch(done, { method: 'PUT', body: 'again' })).status, 409);
      const job2 = newJob();
      const c = await twirp(
        'CreateArtifact',
        { ...ids(job2), name: 'odd', version: 4 },
        { token: job2.token },
      );
      const up = c.json['signed_upload_url'] as string;
      assert.equal((await fetch(`${up}&comp=appendblock`, { method: 'PUT', body: 'x' })).status, 400);
      assert.equal((await fetch(`${up}&comp=block`, { method: 'PUT', body: 'x' })).status, 400, 'no blockid');
      assert.equal(
        (
          await fetch(`${up}&comp=block&blockid=${encodeURIComponent('not base64!')}`, {
            method: 'PUT',
            body: 'x',
          })
        ).status,
        400,
      );
      assert.equal((await fetch(up, { method: 'POST', body: 'x' })).status, 400);
      assert.equal((await fetch(up)).status, 400);
      const badXml = await fetch(`${up}&comp=blocklist`, {
        method: 'PUT',
        body: '<BlockList><Latest>YQ==</Latest>',
      });
      assert.equal(badXml.status, 400);
      const unknownBlock = await fetch(`${up}&comp=blocklist`, {
        method: 'PUT',
        body: '<BlockList><Latest>bm9wZQ==</Latest></BlockList>',
      });
      assert.equal(unknownBlock.status, 400);
      assert.equal(unknownBlock.headers.get('x-ms-error-code'), 'InvalidBlockList');
      const entity = await fetch(`${up}&comp=blocklist`, {
        method: 'PUT',
        body: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "YQ==">]><BlockList><Latest>&a;</Latest></BlockList>',
      });
      assert.equal(entity.status, 400);
    });

    it('blocks may arrive out of order and in parallel; the list decides the order', async () => {
      const job2 = newJob();
      const c = await twirp(
        'CreateArtifact',
        { ...ids(job2), name: 'blocks', version: 4 },
        { token: job2.token },
      );
      const up = c.json['signed_upload_url'] as string;
      const blocks = Array.from({ length: 8 }, (_, i) => ({
        id: Buffer.from(`block-${String(i).padStart(4, '0')}`).toString('base64'),
        data: crypto.randomBytes(100_000 + i),
      }));
      const puts = await Promise.all(
        [...blocks]
          .reverse()
          .map((b) =>
            fetch(`${up}&comp=block&blockid=${encodeURIComponent(b.id)}`, { method: 'PUT', body: b.data }),
          ),
      );
      for (const p of puts) {
        assert.equal(p.status, 201);
        assert.ok(p.headers.get('x-ms-request-id'));
        assert.ok(p.headers.get('x-ms-version'));
      }
      // An extra block that the list leaves out is discarded.
      await fetch(
        `${up}&comp=block&blockid=${encodeURIComponent(Buffer.from('block-9999').toString('base64'))}`,
        {
          method: 'PUT',
          body: 'unused',
        },
      );
      const xml = `<?xml version="1.0" encoding="utf-8"?><BlockList>${blocks.map((b) => `<Latest>${b.id}</Latest>`).join('')}</BlockList>`;
      const commit = await fetch(`${up}&comp=blocklist`, { method: 'PUT', body: xml });
      assert.equal(commit.status, 201, await commit.text());
      const whole = Buffer.concat(blocks.map((b) => b.data));
      const f = await twirp(
        'FinalizeArtifact',
        { ...ids(job2), name: 'blocks', size: String(whole.length), hash: `sha256:${sha256(whole)}` },
        { token: job2.token },
      );
      assert.equal(f.json['ok'], true);
      assert.ok(
        !(await filesUnder(s)).some((name) => name.startsWith(`blocks/${String(f.json['artifact_id'])}-`)),
      );
      const g = await twirp('GetSignedArtifactURL', { ...ids(job2), name: 'blocks' }, { token: job2.token });
      const down = Buffer.from(await (await fetch(g.json['signed_url'] as string)).arrayBuffer());
      assert.ok(down.equals(whole));
    });
  });

  describe('REST (/repos/{owner}/{repo}/actions/artifacts)', () => {
    let job: Job;
    let ids3: number[];

    before(async () => {
      job = newJob();
      ids3 = [];
      for (const name of ['rest-a', 'rest-b', 'rest-c'])
        ids3.push(await uploadRaw(job, name, Buffer.from(name)));
    });

    it('lists, newest first, with a name filter and pages', async () => {
      const all = await s.api<{ artifacts: RestArtifact[]; total_count: number }>(
        'GET',
        `/repos/alice/proj/actions/runs/${job.runId}/artifacts`,
        { token: alice.token },
      );
      assert.equal(all.status, 200, all.text);
      assert.equal(all.body.total_count, 3);
      assert.deepEqual(
        all.body.artifacts.map((a) => a.name),
        ['rest-c', 'rest-b', 'rest-a'],
      );
      const a = all.body.artifacts[2]!;
      assert.deepEqual(Object.keys(a).sort(), [
        'archive_download_url',
        'created_at',
        'expired',
        'expires_at',
        'id',
        'name',
        'size_in_bytes',
        'updated_at',
        'url',
        'workflow_run',
      ]);
      assert.equal(a.id, ids3[0]);
      assert.equal(a.size_in_bytes, 6);
      assert.equal(a.url, `${s.url}/api/v1/repos/alice/proj/actions/artifacts/${a.id}`);
      assert.equal(a.archive_download_url, `${a.url}/zip`);
      assert.equal(a.expired, false);
      assert.deepEqual(a.workflow_run, { id: job.runId, repository_id: repoId, head_sha: '' });
      const named = await s.api<{ artifacts: RestArtifact[]; total_count: number }>(
        'GET',
        '/repos/alice/proj/actions/artifacts?name=rest-b',
        { token: alice.token },
      );
      assert.deepEqual(
        named.body.artifacts.map((x) => x.id),
        [ids3[1]],
      );
      const page = await s.api<{ artifacts: RestArtifact[]; total_count: number }>(
        'GET',
        `/repos/alice/proj/actions/runs/${job.runId}/artifacts?limit=2&page=2`,
        { token: alice.token },
      );
      assert.deepEqual(
        page.body.artifacts.map((x) => x.name),
        ['rest-a'],
      );
      assert.equal(page.headers.get('x-total-count'), '3');
    });

    it('gets one and redirects its zip to a signed download URL', async () => {
      const one = await s.api<RestArtifact>('GET', `/repos/alice/proj/actions/artifacts/${ids3[0]}`, {
        token: carol.token,
      });
      assert.equal(one.status, 200, one.text);
      assert.equal(one.body.name, 'rest-a');
      const zip = await fetch(`${s.url}/api/v1/repos/alice/proj/actions/artifacts/${ids3[0]}/zip`, {
        headers: { authorization: `token ${carol.token}` },
        redirect: 'manual',
      });
      assert.equal(zip.status, 302);
      const location = zip.headers.get('location')!;
      assert.match(
        location,
        new RegExp(`^${s.url}/api/actions/artifacts/${ids3[0]}/download\\?expires=\\d+&sig=`),
      );
      const body = await fetch(location);
      assert.equal(await body.text(), 'rest-a');
    });

    it('needs read access to see and write access to delete', async () => {
      const outsider = await s.api('GET', '/repos/alice/proj/actions/artifacts', { token: bob.token });
      assert.equal(outsider.status, 404);
      const reader = await s.api('DELETE', `/repos/alice/proj/actions/artifacts/${ids3[0]}`, {
        token: carol.token,
      });
      assert.equal(reader.status, 403);
      const anonymous = await s.api('GET', `/repos/alice/proj/actions/artifacts/${ids3[0]}`);
      assert.equal(anonymous.status, 404);
      const wrongRepo = await s.api('GET', `/repos/acme/tools/actions/artifacts/${ids3[0]}`, {
        token: alice.token,
      });
      assert.equal(wrongRepo.status, 404);
    });

    it('deletes: gone from the lists, its file removed, usage subtracted', async () => {
      const before = await usage(alice.token);
      const files = (await filesUnder(s)).length;
      const del = await s.api('DELETE', `/repos/alice/proj/actions/artifacts/${ids3[0]}`, {
        token: alice.token,
      });
      assert.equal(del.status, 204, del.text);
      assert.equal(await usage(alice.token), before - 6);
      assert.equal((await filesUnder(s)).length, files - 1);
      assert.equal(
        (await s.api('GET', `/repos/alice/proj/actions/artifacts/${ids3[0]}`, { token: alice.token })).status,
        404,
      );
      const l = await twirp('ListArtifacts', { ...ids(job), name_filter: 'rest-a' }, { token: job.token });
      assert.deepEqual(l.json['artifacts'], []);
    });
  });

  describe('quota, retention and repository deletion', () => {
    it("an organization repository's artifacts count toward the organization", async () => {
      const job = newJob(orgRepoId);
      const aliceBefore = await usage(alice.token);
      await uploadRaw(job, 'org-artifact', crypto.randomBytes(4321));
      assert.equal(await usage(alice.token, 'acme'), 4321);
      assert.equal(await usage(alice.token), aliceBefore);
      const items = await s.api<Array<{ name: string; size: number; html_url: string }>>(
        'GET',
        '/orgs/acme/quota/artifacts',
        {
          token: alice.token,
        },
      );
      assert.deepEqual(items.body, [
        { name: 'org-artifact', size: 4321, html_url: `${s.url}/acme/tools/actions/runs/${job.runId}` },
      ]);
      const drift = await s.ctx.quota.recalculate();
      assert.deepEqual(
        drift.filter((d) => d.subject === 'size:assets:artifacts'),
        [],
        'the stored usage matches the artifacts',
      );
    });

    it('the retention job removes expired artifacts with their files and usage', async () => {
      const job = newJob();
      const id = await uploadRaw(job, 'short-lived', crypto.randomBytes(777));
      const before = await usage(alice.token);
      const files = (await filesUnder(s)).length;
      await s.ctx.db
        .updateTable('action_artifact')
        .set({ expires_unix: Math.floor(Date.now() / 1000) - 10 })
        .where('id', '=', id)
        .execute();
      const rest = await s.api<RestArtifact>('GET', `/repos/alice/proj/actions/artifacts/${id}`, {
        token: alice.token,
      });
      assert.equal(rest.body.expired, true);
      const zip = await s.api('GET', `/repos/alice/proj/actions/artifacts/${id}/zip`, { token: alice.token });
      assert.equal(zip.status, 410);
      const l = await twirp('ListArtifacts', ids(job), { token: job.token });
      assert.deepEqual(l.json['artifacts'], [], 'an expired artifact is no longer listed to jobs');
      const removed = await s.ctx.artifacts.sweep();
      assert.ok(removed >= 1);
      assert.equal(await usage(alice.token), before - 777);
      assert.equal((await filesUnder(s)).length, files - 1);
      assert.equal(
        (await s.api('GET', `/repos/alice/proj/actions/artifacts/${id}`, { token: alice.token })).status,
        404,
      );
    });

    it('an owner over its artifacts quota cannot create artifacts (resource_exhausted, "insufficient usage")', async () => {
      const erin = await s.createUser('erin');
      const r = await s.api<{ id: number }>('POST', '/user/repos', {
        token: erin.token,
        body: { name: 'full' },
      });
      const job = newJob(r.body.id);
      await uploadRaw(job, 'first', crypto.randomBytes(100));
      const group = await s.api('POST', '/admin/quota/groups', {
        token: s.admin.token,
        body: {
          name: 'tiny-artifacts',
          rules: [{ name: 'tiny-artifacts', limit: 50, subjects: ['size:assets:artifacts'] }],
        },
      });
      assert.equal(group.status, 201, group.text);
      const put = await s.api('PUT', '/admin/quota/groups/tiny-artifacts/users/erin', {
        token: s.admin.token,
      });
      assert.equal(put.status, 204, put.text);
      const c = await twirp(
        'CreateArtifact',
        { ...ids(job), name: 'second', version: 4 },
        { token: job.token },
      );
      assert.equal(c.status, 429);
      assert.equal(c.json['code'], 'resource_exhausted');
      assert.match(c.json['msg'] as string, /insufficient usage/);
    });

    it("transferring a repository moves its artifacts' usage to the new owner", async () => {
      const r = await s.api<{ id: number }>('POST', '/user/repos', {
        token: alice.token,
        body: { name: 'moving' },
      });
      const job = newJob(r.body.id);
      await uploadRaw(job, 'moving', crypto.randomBytes(1500));
      const aliceBefore = await usage(alice.token);
      const orgBefore = await usage(alice.token, 'acme');
      const t = await s.api('POST', '/repos/alice/moving/transfer', {
        token: alice.token,
        body: { new_owner: 'acme' },
      });
      assert.equal(t.status, 202, t.text);
      assert.equal(await usage(alice.token), aliceBefore - 1500);
      assert.equal(await usage(alice.token, 'acme'), orgBefore + 1500);
      const list = await s.api<{ total_count: number }>('GET', '/repos/acme/moving/actions/artifacts', {
        token: alice.token,
      });
      assert.equal(list.body.total_count, 1);
    });

    it('deleting a repository drops its artifacts, their files and their usage', async () => {
      const r = await s.api<{ id: number }>('POST', '/user/repos', {
        token: alice.token,
        body: { name: 'doomed' },
      });
      const job = newJob(r.body.id);
      const before = await usage(alice.token);
      const files = (await filesUnder(s)).length;
      await uploadRaw(job, 'doomed-1', crypto.randomBytes(1000));
      await uploadRaw(job, 'doomed-2', crypto.randomBytes(2000));
      const pending = await twirp(
        'CreateArtifact',
        { ...ids(job), name: 'doomed-3', version: 4 },
        { token: job.token },
      );
      await fetch(pending.json['signed_upload_url'] as string, { method: 'PUT', body: 'pending' });
      assert.equal(await usage(alice.token), before + 3000);
      const del = await s.api('DELETE', '/repos/alice/doomed', { token: alice.token });
      assert.equal(del.status, 204, del.text);
      assert.equal(await usage(alice.token), before);
      assert.equal((await filesUnder(s)).length, files);
      const c = await twirp(
        'CreateArtifact',
        { ...ids(job), name: 'late', version: 4 },
        { token: job.token },
      );
      assert.equal(c.status, 404, 'the job of a deleted repository has nowhere to upload');
    });
  });
});

describe('artifacts with actions disabled (the default)', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s?.close();
  });

  it('the Twirp service, the signed URLs and the REST routes answer 404 with a message', async () => {
    const owner = await s.createUser('dora');
    const repo = await s.api<{ id: number }>('POST', '/user/repos', {
      token: owner.token,
      body: { name: 'r' },
    });
    const token = mintRuntimeToken({
      secretKey: s.config.security.secretKey,
      repoId: repo.body.id,
      runId: 1,
      jobId: 2,
    });
    const t = await fetch(`${s.url}/twirp/${GITHUB}/ListArtifacts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ workflow_run_backend_id: '1', workflow_job_run_backend_id: '2' }),
    });
    assert.equal(t.status, 404);
    const tj = (await t.json()) as { code: string; msg: string };
    assert.equal(tj.code, 'not_found');
    assert.match(tj.msg, /Actions are disabled/);
    const url = s.ctx.artifacts.signedUrl('download', 1, Math.floor(Date.now() / 1000) + 60);
    const d = await fetch(url);
    assert.equal(d.status, 404);
    assert.match(await d.text(), /Actions are disabled/);
    const u = await fetch(s.ctx.artifacts.signedUrl('upload', 1, Math.floor(Date.now() / 1000) + 60), {
      method: 'PUT',
      body: 'x',
    });
    assert.equal(u.status, 404);
    for (const p of [
      '/repos/dora/r/actions/artifacts',
      '/repos/dora/r/actions/runs/1/artifacts',
      '/repos/dora/r/actions/artifacts/1',
    ]) {
      const r = await s.api<{ message: string }>('GET', p, { token: owner.token });
      assert.equal(r.status, 404, p);
      assert.match(r.body.message, /Actions are disabled/);
    }
  });
});
