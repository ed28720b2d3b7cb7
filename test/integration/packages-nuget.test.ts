// The NuGet registry: Debian's nuget (mono's nuget.exe 2.8, a v2 client) packs, pushes with its
// API key (X-NuGet-ApiKey) and installs from Anvil's v2 feed; the v3 resources (service index,
// search, registrations, package content) and the rest of v2 are checked request by request as
// Forgejo's test does. Also raw and multipart pushes, bad packages (400, nothing kept), duplicates
// (409), a private owner (401 to strangers and other accounts), deletion, the package API, quota
// (413) and LIMIT_SIZE_NUGET (403). nuget.exe loops forever without a terminal, so it runs under
// `script` (a pseudo-terminal with 200 columns).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertNothingKept, packagesUsed, zip } from '../helpers/archives.js';

interface Run {
  code: number;
  out: string;
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

const nuspec = (id: string, version: string, extra = '') =>
  `<?xml version="1.0" encoding="utf-8"?>\n<package xmlns="http://schemas.microsoft.com/packaging/2013/05/nuspec.xsd">` +
  `<metadata><id>${id}</id><version>${version}</version><authors>Anvil Tester</authors>` +
  `<description>A package for ${id}</description><releaseNotes>first</releaseNotes>` +
  `<projectUrl>https://example.com/${id}</projectUrl>${extra}</metadata></package>`;

/** A .nupkg made in the test: a zip holding the .nuspec at its root. */
const nupkg = (id: string, version: string, extra = '') =>
  zip({ [`${id}.nuspec`]: nuspec(id, version, extra), 'content/readme.txt': `${id} ${version}` });

/**
 * A portable PDB made here: the metadata root ("BSJB", version string, stream headers) with a
 * `#Pdb` stream whose first 16 bytes are `guid` (its text form, Data1-3 little-endian).
 */
function portablePdb(guid: string, withPdbStream = true): Buffer {
  const g = Buffer.from(guid.replace(/-/g, ''), 'hex');
  const id = Buffer.concat([
    Buffer.from([g[3]!, g[2]!, g[1]!, g[0]!, g[5]!, g[4]!, g[7]!, g[6]!]),
    g.subarray(8, 16),
    Buffer.alloc(4),
  ]);
  const version = Buffer.alloc(12);
  version.write('PDB v1.0');
  const name = (n: string) => {
    const b = Buffer.alloc(Math.ceil((n.length + 1) / 4) * 4);
    b.write(n, 'latin1');
    return b;
  };
  const header = (offset: number, size: number, n: string) => {
    const h = Buffer.alloc(8);
    h.writeUInt32LE(offset, 0);
    h.writeUInt32LE(size, 4);
    return Buffer.concat([h, name(n)]);
  };
  const streams = withPdbStream
    ? [
        ['#Strings', 4],
        ['#Pdb', id.length],
      ]
    : [['#Strings', 4]];
  const fixed = 16 + version.length + 4;
  const headersLength = streams.reduce((n, [nm]) => n + 8 + name(nm as string).length, 0);
  let offset = fixed + headersLength;
  const headers: Buffer[] = [];
  const bodies: Buffer[] = [];
  for (const [nm, size] of streams as Array<[string, number]>) {
    headers.push(header(offset, size, nm));
    bodies.push(nm === '#Pdb' ? id : Buffer.alloc(size));
    offset += size;
  }
  const root = Buffer.alloc(16);
  root.writeUInt32LE(0x424a5342, 0);
  root.writeUInt16LE(1, 4);
  root.writeUInt16LE(1, 6);
  root.writeUInt32LE(version.length, 12);
  const flags = Buffer.alloc(4);
  flags.writeUInt16LE(streams.length, 2);
  return Buffer.concat([root, version, flags, ...headers, ...bodies]);
}

describe('NuGet registry (nuget)', () => {
  let s: TestServer;
  let u: { name: string; password: string; token: string };
  let other: { name: string; password: string; token: string };
  let work: string;
  let feed: string;

  function nuget(args: string[], cwd = work): Promise<Run> {
    const command = `cd ${shellQuote(cwd)}; stty cols 200; exec nuget ${args.map(shellQuote).join(' ')} -NonInteractive`;
    return new Promise((resolve, reject) => {
      const child = spawn('script', ['-qec', command, '/dev/null'], {
        cwd,
        env: {
          PATH: process.env['PATH'],
          PWD: cwd,
          HOME: path.join(work, 'home'),
          TERM: 'dumb',
          LC_ALL: 'C.UTF-8',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        // Its own process group: a client that hangs is killed with everything it started.
        detached: true,
      });
      let out = '';
      // nuget.exe can spin forever (it did without a terminal): two minutes at most.
      const timer = setTimeout(() => {
        out += '\n[killed after 120 s]';
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      }, 120_000);
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? 1, out });
      });
    });
  }

  const req = (p: string, init: RequestInit = {}) => fetch(`${s.url}/api/packages/${p}`, init);
  const put = (owner: string, body: Buffer, headers: Record<string, string> = {}) =>
    req(`${owner}/nuget/`, { method: 'PUT', headers, body: new Uint8Array(body) });
  const key = (token: string) => ({ 'X-NuGet-ApiKey': token });
  const basic = (name: string, secret: string) => ({
    authorization: `Basic ${Buffer.from(`${name}:${secret}`).toString('base64')}`,
  });

  before(async () => {
    s = await startServer();
    u = await s.createUser('u');
    other = await s.createUser('other');
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-nuget-'));
    fs.mkdirSync(path.join(work, 'home'));
    feed = `${s.url}/api/packages/u/nuget/`;
  });
  after(async () => {
    await s.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('nuget pack, nuget push with the API key and nuget install from the v2 feed', async () => {
    const dir = path.join(work, 'pack');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'hello.txt'), 'hello from anvil\n');
    fs.writeFileSync(
      path.join(dir, 'Anvil.Hello.nuspec'),
      nuspec(
        'Anvil.Hello',
        '1.2.0',
        '<dependencies><group targetFramework=".NETStandard2.0"/></dependencies>',
      ).replace('</metadata>', '</metadata><files><file src="hello.txt" target="content"/></files>'),
    );
    let r = await nuget(['pack', 'Anvil.Hello.nuspec'], dir);
    assert.equal(r.code, 0, r.out);
    // nuget.exe 2.8 under mono mangles an absolute package path: relative to the working directory.
    const file = path.join('pack', 'Anvil.Hello.1.2.0.nupkg');
    r = await nuget(['push', file, '-Source', feed, '-ApiKey', 'wrong']);
    assert.notEqual(r.code, 0, r.out);
    r = await nuget(['push', file, '-Source', feed, '-ApiKey', u.token]);
    assert.equal(r.code, 0, r.out);
    r = await nuget(['push', file, '-Source', feed, '-ApiKey', u.token]);
    assert.notEqual(r.code, 0, 'a second push of the version is refused');
    assert.match(r.out, /409|Conflict/i);

    const out = path.join(work, 'packages');
    r = await nuget([
      'install',
      'Anvil.Hello',
      '-Version',
      '1.2.0',
      '-Source',
      feed,
      '-OutputDirectory',
      out,
    ]);
    assert.equal(r.code, 0, r.out);
    assert.equal(
      fs.readFileSync(path.join(out, 'Anvil.Hello.1.2.0', 'content', 'hello.txt'), 'utf8'),
      'hello from anvil\n',
    );

    // The package's page shows the install commands.
    const page = await (await fetch(`${s.url}/u/-/packages/nuget/Anvil.Hello/1.2.0`)).text();
    assert.match(page, /dotnet add package --source anvil --version 1\.2\.0 Anvil\.Hello/);
    assert.match(page, /api\/packages\/u\/nuget\/index\.json/);

    const api = await s.api<Array<{ name: string; version: string; type: string }>>(
      'GET',
      '/packages/u?type=nuget',
      { token: u.token },
    );
    assert.equal(api.status, 200, api.text);
    assert.deepEqual(
      api.body.map((p) => [p.type, p.name, p.version]),
      [['nuget', 'Anvil.Hello', '1.2.0']],
    );
  });

  it('serves the v3 resources and the v2 feed as Forgejo (raw and multipart pushes)', async () => {
    assert.equal((await put('u', nupkg('Proto.Pkg', '1.0'), key(u.token))).status, 201);
    const form = new FormData();
    form.append('package', new Blob([new Uint8Array(nupkg('Proto.Pkg', '1.1.0-beta'))]), 'p.nupkg');
    let res = await req('u/nuget/', { method: 'PUT', headers: basic('u', u.token), body: form });
    assert.equal(res.status, 201, await res.text());

    const base = `${s.ctx.config.server.rootUrl}api/packages/u/nuget`;
    res = await req('u/nuget/index.json');
    assert.equal(res.status, 200);
    const index = (await res.json()) as {
      version: string;
      resources: Array<{ '@id': string; '@type': string }>;
    };
    assert.equal(index.version, '3.0.0');
    assert.ok(index.resources.some((r) => r['@type'] === 'PackagePublish/2.0.0' && r['@id'] === base));
    assert.ok(
      index.resources.some(
        (r) => r['@type'] === 'RegistrationsBaseUrl' && r['@id'] === `${base}/registration`,
      ),
    );

    res = await req('u/nuget/query?q=proto');
    const search = (await res.json()) as {
      totalHits: number;
      data: Array<{ id: string; version: string; versions: unknown[] }>;
    };
    assert.equal(search.totalHits, 1);
    assert.equal(search.data[0]!.id, 'Proto.Pkg');
    assert.equal(search.data[0]!.version, '1.1.0-beta');
    assert.equal(search.data[0]!.versions.length, 2);
    assert.equal(
      ((await (await req('u/nuget/query?q=nothing')).json()) as { totalHits: number }).totalHits,
      0,
    );

    res = await req('u/nuget/registration/proto.pkg/index.json');
    assert.equal(res.status, 200);
    const reg = (await res.json()) as {
      count: number;
      items: Array<{
        lower: string;
        upper: string;
        count: number;
        items: Array<{ catalogEntry: Record<string, unknown> }>;
      }>;
    };
    assert.equal(reg.count, 1);
    assert.equal(reg.items[0]!.lower, '1.0.0');
    assert.equal(reg.items[0]!.upper, '1.1.0-beta');
    assert.equal(reg.items[0]!.items[0]!.catalogEntry['description'], 'A package for Proto.Pkg');
    assert.equal(reg.items[0]!.items[0]!.catalogEntry['projectURL'], 'https://example.com/Proto.Pkg');
    res = await req('u/nuget/registration/Proto.Pkg/1.0.0.json');
    const leaf = (await res.json()) as { packageContent: string; listed: boolean };
    assert.equal(leaf.listed, true);
    assert.equal(leaf.packageContent, `${base}/package/Proto.Pkg/1.0.0/Proto.Pkg.1.0.0.nupkg`);
    assert.equal((await req('u/nuget/registration/none/index.json')).status, 404);
    assert.equal((await req('u/nuget/registration/Proto.Pkg/9.9.9.json')).status, 404);

    res = await req('u/nuget/package/proto.pkg/index.json');
    assert.deepEqual(await res.json(), { versions: ['1.0.0', '1.1.0-beta'] });
    res = await req('u/nuget/package/Proto.Pkg/1.0.0/Proto.Pkg.1.0.0.nupkg');
    assert.equal(res.status, 200);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), nupkg('Proto.Pkg', '1.0'));
    res = await req('u/nuget/package/Proto.Pkg/1.0.0/Proto.Pkg.nuspec');
    assert.equal(res.status, 200);
    assert.match(await res.text(), /<id>Proto.Pkg<\/id>/);
    assert.equal((await req('u/nuget/package/Proto.Pkg/1.0.0/other.nupkg')).status, 404);

    // v2
    res = await req('u/nuget/');
    assert.match(res.headers.get('content-type') ?? '', /application\/atom\+xml/);
    assert.match(await res.text(), /<collection href="Packages">/);
    assert.match(await (await req('u/nuget/$metadata')).text(), /FunctionImport Name="FindPackagesById"/);
    res = await req(`u/nuget/FindPackagesById()?id='Proto.Pkg'`);
    let text = await res.text();
    assert.equal((text.match(/<entry>/g) ?? []).length, 2);
    assert.match(text, /<m:count>2<\/m:count>/);
    assert.equal(await (await req(`u/nuget/FindPackagesById()/$count?id='Proto.Pkg'`)).text(), '2');
    res = await req(`u/nuget/FindPackagesById()?id='Proto.Pkg'&$top=1`);
    assert.match(
      await res.text(),
      /rel="next" href="[^"]*FindPackagesById\(\)\?id=Proto.Pkg&amp;%24skip=1&amp;%24top=1"/,
    );
    res = await req(`u/nuget/Packages(Id='Proto.Pkg',Version='1.1.0-beta')`);
    text = await res.text();
    assert.match(text, /<d:Version>1.1.0-beta<\/d:Version>/);
    assert.match(
      text,
      /<content type="application\/zip" src="[^"]*\/package\/Proto.Pkg\/1.1.0-beta\/Proto.Pkg.1.1.0-beta.nupkg"\/>/,
    );
    assert.equal((await req(`u/nuget/Packages(Id='Proto.Pkg',Version='7.0.0')`)).status, 404);
    text = await (await req(`u/nuget/Search()?searchTerm='proto'`)).text();
    assert.match(text, /<m:count>1<\/m:count>/);
    assert.match(text, /<d:Version>1.1.0-beta<\/d:Version>/);
    assert.equal(await (await req(`u/nuget/Search()/$count?searchTerm='proto'`)).text(), '1');
    const filter = encodeURIComponent(`tolower(Id) eq 'proto'`);
    assert.equal(await (await req(`u/nuget/Packages()/$count?$filter=${filter}`)).text(), '0');
    assert.equal(
      await (
        await req(
          `u/nuget/Packages()/$count?$filter=${encodeURIComponent(`substringof('proto',tolower(Id))`)}`,
        )
      ).text(),
      '1',
    );

    // Delete
    for (const h of [{}, key('nothing'), key(other.token)]) {
      res = await req('u/nuget/Proto.Pkg/1.0.0', { method: 'DELETE', headers: h });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
    }
    assert.equal(
      (await req('u/nuget/Proto.Pkg/1.0.0', { method: 'DELETE', headers: key(u.token) })).status,
      204,
    );
    assert.equal(
      (await req('u/nuget/Proto.Pkg/1.0.0', { method: 'DELETE', headers: key(u.token) })).status,
      404,
    );
    assert.deepEqual(await (await req('u/nuget/package/Proto.Pkg/index.json')).json(), {
      versions: ['1.1.0-beta'],
    });
  });

  it('refuses bad packages (400, nothing kept), duplicates (409) and strangers (401)', async () => {
    const used = await packagesUsed(s, u.token);
    const symbols = nupkg(
      'Sym.Pkg',
      '1.0.0',
      '<packageTypes><packageType name="SymbolsPackage"/></packageTypes>',
    );
    const cases: Array<[string, Buffer]> = [
      ['not a zip', Buffer.from('not a nupkg at all, certainly no zip archive')],
      ['no nuspec', zip({ 'lib/a.dll': 'x', 'sub/x.nuspec': nuspec('Sub.Pkg', '1.0.0') })],
      ['bad xml', zip({ 'Bad.nuspec': '<package><metadata><id>Bad</id>' })],
      ['bad id', zip({ 'Bad.nuspec': nuspec('bad id!', '1.0.0') })],
      ['bad version', zip({ 'Bad.nuspec': nuspec('Bad', 'one.two') })],
      ['symbols', symbols],
    ];
    for (const [what, body] of cases) {
      const res = await put('u', body, key(u.token));
      assert.equal(res.status, 400, what);
      assert.equal(typeof ((await res.json()) as { Message: string }).Message, 'string', what);
    }
    await assertNothingKept(
      s,
      cases.map((c) => c[1]),
      u.token,
      used,
    );
    const cut = Buffer.concat([
      Buffer.from('--b\r\nContent-Disposition: form-data; name="package"\r\n\r\n'),
      nupkg('Cut.Pkg', '1.0.0'),
    ]);
    const res = await put('u', cut, { ...key(u.token), 'content-type': 'multipart/form-data; boundary=b' });
    assert.equal(res.status, 400, 'a multipart body whose part does not end');
    await assertNothingKept(s, [nupkg('Cut.Pkg', '1.0.0')], u.token, used);
    const good = nupkg('Dup.Pkg', '2.0.0');
    assert.equal((await put('u', good, key(u.token))).status, 201);
    assert.equal((await put('u', nupkg('dup.pkg', '2.0.0'), key(u.token))).status, 409);
    for (const h of [{}, key('nothing'), key(other.token), basic('other', other.password)]) {
      const res = await put('u', nupkg('Else.Pkg', '1.0.0'), h);
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), 'Basic realm="Gitea Package API"');
    }
  });

  it("keeps a private owner's packages from strangers and other accounts", async () => {
    const p = await s.createUser('p');
    assert.equal((await put('p', nupkg('Secret.Pkg', '1.0.0'), key(p.token))).status, 201);
    await s.api('PATCH', '/admin/users/p', { token: s.admin.token, body: { visibility: 'private' } });
    // The service documents are served to anyone, as Forgejo's (clients read them first).
    assert.equal((await req('p/nuget/index.json')).status, 200);
    for (const url of [
      `p/nuget/FindPackagesById()?id='Secret.Pkg'`,
      'p/nuget/package/Secret.Pkg/index.json',
      'p/nuget/package/Secret.Pkg/1.0.0/Secret.Pkg.1.0.0.nupkg',
      'p/nuget/query?q=secret',
    ]) {
      for (const h of [{}, key(other.token)]) {
        const res = await req(url, { headers: h });
        assert.equal(res.status, 401, url);
      }
      assert.equal((await req(url, { headers: key(p.token) })).status, 200, url);
      assert.equal((await req(url, { headers: basic('p', p.password) })).status, 200, url);
    }
    const r = await nuget([
      'install',
      'Secret.Pkg',
      '-Source',
      `${s.url}/api/packages/p/nuget/`,
      '-OutputDirectory',
      path.join(work, 'secret'),
    ]);
    assert.notEqual(r.code, 0, r.out);
  });

  it('answers 403 over LIMIT_SIZE_NUGET (administrators exempt) and 413 over quota', async () => {
    const big = zip({ 'Big.Pkg.nuspec': nuspec('Big.Pkg', '1.0.0'), 'content/big.txt': 'x'.repeat(20000) });
    s.config.packages.limitSizeNuget = 1000;
    try {
      const res = await put('u', big, key(u.token));
      assert.equal(res.status, 403);
      assert.match(await res.text(), /limit/);
      assert.equal((await put('u', big, key(s.admin.token))).status, 201);
    } finally {
      s.config.packages.limitSizeNuget = -1;
    }
    const q = await s.createUser('q');
    await s.api('POST', '/admin/quota/rules', {
      token: s.admin.token,
      body: { name: 'nuget-tiny', limit: 10, subjects: ['size:assets:packages:all'] },
    });
    await s.api('POST', '/admin/quota/groups', {
      token: s.admin.token,
      body: { name: 'nuget-tiny', rules: [{ name: 'nuget-tiny' }] },
    });
    await s.api('PUT', '/admin/quota/groups/nuget-tiny/users/q', { token: s.admin.token });
    assert.equal((await put('q', big, key(q.token))).status, 201);
    assert.equal((await put('q', nupkg('Small.Pkg', '1.0.0'), key(q.token))).status, 413);
  });

  it('takes a symbols package for a pushed version and serves its PDBs to the symbol server', async () => {
    const guid = 'd910bb69-48bd-4c6c-b401-55bcf52c3c94';
    const id = guid.replace(/-/g, '');
    const types = '<packageTypes><packageType name="SymbolsPackage"/></packageTypes>';
    const snupkg = (pkgId: string, version: string, members: Record<string, Buffer | string>) =>
      zip({ [`${pkgId}.nuspec`]: nuspec(pkgId, version, types), ...members });
    const pdb = portablePdb(guid);
    const index = (await (await req('u/nuget/index.json')).json()) as {
      resources: Array<{ '@id': string; '@type': string }>;
    };
    assert.ok(
      index.resources.some(
        (r) =>
          r['@type'] === 'SymbolPackagePublish/4.9.0' &&
          r['@id'].endsWith('/api/packages/u/nuget/symbolpackage'),
      ),
    );
    const sym = (body: Buffer, headers: Record<string, string> = key(u.token)) =>
      req('u/nuget/symbolpackage', { method: 'PUT', headers, body: new Uint8Array(body) });
    // No such version yet: 404; bad symbols packages: 400 and nothing kept.
    assert.equal((await sym(snupkg('Sym.Lib', '1.0.0', { 'lib/Sym.Lib.pdb': pdb }))).status, 404);
    assert.equal((await put('u', nupkg('Sym.Lib', '1.0.0'), key(u.token))).status, 201);
    const used = await packagesUsed(s, u.token);
    const bad: Array<[string, Buffer]> = [
      ['a regular package', nupkg('Sym.Lib', '1.0.0', '<title>Not symbols</title>')],
      ['no PDB', snupkg('Sym.Lib', '1.0.0', {})],
      ['another file', snupkg('Sym.Lib', '1.0.0', { 'lib/Sym.Lib.pdb': pdb, 'lib/Sym.Lib.dll': 'MZ' })],
      ['not a portable PDB', snupkg('Sym.Lib', '1.0.0', { 'lib/Sym.Lib.pdb': 'Microsoft C/C++ MSF 7.00' })],
      ['no #Pdb stream', snupkg('Sym.Lib', '1.0.0', { 'lib/Sym.Lib.pdb': portablePdb(guid, false) })],
    ];
    for (const [what, body] of bad) assert.equal((await sym(body)).status, 400, what);
    await assertNothingKept(
      s,
      bad.map((b) => b[1]),
      u.token,
      used,
    );
    assert.equal((await sym(snupkg('Sym.Lib', '1.0.0', { 'lib/Sym.Lib.pdb': pdb }), {})).status, 401);
    assert.equal(
      (await sym(snupkg('Sym.Lib', '1.0.0', { 'lib/Sym.Lib.pdb': pdb }), key(other.token))).status,
      401,
    );

    const good = snupkg('Sym.Lib', '1.0.0', { 'lib/net8.0/Sym.Lib.pdb': pdb, '_rels/.rels': '<x/>' });
    assert.equal((await sym(good)).status, 201);
    assert.equal((await sym(good)).status, 409, 'a version has one symbols package');
    const files = await s.api<Array<{ name: string }>>('GET', '/packages/u/nuget/Sym.Lib/1.0.0/files', {
      token: u.token,
    });
    assert.deepEqual(files.body.map((f) => f.name).sort(), [
      'sym.lib.1.0.0.nupkg',
      'sym.lib.1.0.0.snupkg',
      'sym.lib.pdb',
    ]);

    // The symbol server: the PDB by name and id (+ "ffffffff"), the same name twice.
    const got = await req(`u/nuget/symbols/sym.lib.pdb/${id}ffffffff/sym.lib.pdb`);
    assert.equal(got.status, 200);
    assert.ok(Buffer.from(await got.arrayBuffer()).equals(pdb));
    assert.equal(
      (await req(`u/nuget/symbols/Sym.Lib.pdb/${id.toUpperCase()}FFFFFFFF/Sym.Lib.pdb`)).status,
      200,
    );
    assert.equal((await req(`u/nuget/symbols/sym.lib.pdb/${id}ffffffff/other.pdb`)).status, 400);
    assert.equal(
      (await req(`u/nuget/symbols/sym.lib.pdb/${'0'.repeat(32)}ffffffff/sym.lib.pdb`)).status,
      404,
    );
    assert.equal((await req(`u/nuget/symbols/sym.lib.pdb/${id}/sym.lib.pdb`)).status, 404);
  });
});
