// The Swift package registry at /api/packages/{owner}/swift (SE-0292, as Forgejo serves it):
// `GET {scope}/{name}[.json]` (releases, `Link: rel="latest-version"`), `GET
// {scope}/{name}/{version}[.json]` (release metadata), `GET {scope}/{name}/{version}/Package.swift
// [?swift-version=]` (a manifest; its alternates in `Link`; 303 to `Package.swift` for a Swift version
// without one), `GET {scope}/{name}/{version}.zip` (the source archive, `Digest: sha256=<hex>`), `GET
// identifiers?url=`, `PUT {scope}/{name}/{version}` (multipart: `source-archive`, optional
// `metadata`, each a file or a field) and `POST /` or `/login` (checks the credentials).
// Requests may ask only for the registry's v1 media type (`Accept`, else 400); every answer carries
// `Content-Version: 1`, errors are problem details (`application/problem+json`, {status, detail}).
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { readingClientStream } from '../../attachments/upload.js';
import { AppError, badRequest, forbidden, notFound, unauthorized } from '../../errors.js';
import { type RegistryFormat, type RegistryDeps, registry, uploader, sendPackageFile } from '../registry.js';
import type { PackageService } from '../service.js';
import type { UserRow } from '../../users/tables.js';
import { NAME_PATTERN, SCOPE_PATTERN, trimmedVersion, versionCore } from './metadata.js';
import { packageId, type SwiftService } from './service.js';

export const ACCEPT_JSON = 'application/vnd.swift.registry.v1+json';
export const ACCEPT_SWIFT = 'application/vnd.swift.registry.v1+swift';
export const ACCEPT_ZIP = 'application/vnd.swift.registry.v1+zip';
/** The most of a `source-archive` sent as a text field (a file part has no such limit). */
const MAX_FIELD = 256 << 20;
/** The most of a `metadata` part. */
const MAX_METADATA = 1 << 20;

type Params = Record<string, string | undefined>;
/** A query parameter (the first when repeated). */
const queryParam = (request: FastifyRequest, key: string): string => {
  const v = (request.query as Record<string, unknown>)[key];
  const first: unknown = Array.isArray(v) ? v[0] : v;
  return typeof first === 'string' ? first.trim() : '';
};
const errorBody = (message: string, status: number) => ({ status, detail: message });

/** Multipart forms parsed (uploads), other bodies streamed. */
const FORMAT: RegistryFormat = {
  errorBody,
  bodies: {
    multipart: {
      limits: { files: 4, fields: 8, parts: 12, fieldSize: MAX_FIELD },
      // Text fields keep their bytes (an archive may come as one): latin1 maps each to a char.
      defCharset: 'latin1',
    },
  },
};

export interface SwiftRoutesDeps extends RegistryDeps {
  packages: PackageService;
  swift: SwiftService;
}

/**
 * 400 when the client asks for another media type (or another API version) than `required`; no
 * `Accept` (or `*∕*`) is fine.
 */
function checkAccept(request: FastifyRequest, required: string): void {
  const accept = request.headers.accept;
  if (accept === undefined || accept === '' || accept === '*/*' || accept === required) return;
  throw badRequest(`Unexpected accept header. Should be '${required}'.`);
}

/** Text fields arrive as latin1 (see the multipart options): their bytes again. */
const fieldBytes = (value: string) =>
  /[\u0100-\uffff]/.test(value) ? Buffer.from(value, 'utf8') : Buffer.from(value, 'latin1');

interface PublishBody {
  archive: Buffer | undefined;
  metadata: string | undefined;
}

/**
 * The parts of a publish request. The archive is held until the body has been read, since the
 * `metadata` part may follow it (as Swift sends them); it may not pass LIMIT_SIZE_SWIFT (403).
 */
async function readPublishBody(request: FastifyRequest, limit: number): Promise<PublishBody> {
  const tooLarge = () => forbidden(`the package file is larger than the limit of ${limit} bytes`);
  const out: PublishBody = { archive: undefined, metadata: undefined };
  let error: unknown;
  try {
    for await (const part of request.parts()) {
      const name = part.fieldname;
      if (part.type === 'field') {
        if (part.valueTruncated) error ??= badRequest(`the form field '${name}' is too large`);
        const bytes = fieldBytes(String(part.value as unknown));
        if (name === 'source-archive' && out.archive === undefined) {
          if (limit >= 0 && bytes.length > limit) error ??= tooLarge();
          out.archive = bytes;
        } else if (name === 'metadata' && out.metadata === undefined) {
          if (bytes.length > MAX_METADATA)
            error ??= badRequest(`metadata is larger than ${MAX_METADATA} bytes`);
          out.metadata = bytes.toString('utf8');
        }
        continue;
      }
      if (
        (name === 'source-archive' && out.archive === undefined) ||
        (name === 'metadata' && !out.metadata)
      ) {
        const chunks: Buffer[] = [];
        let size = 0;
        await readingClientStream(part.file, async () => {
          for await (const c of part.file) {
            size += (c as Buffer).length;
            if (limit >= 0 && name === 'source-archive' && size > limit) {
              error ??= tooLarge();
              continue;
            }
            if (name === 'metadata' && size > MAX_METADATA) {
              error ??= badRequest(`metadata is larger than ${MAX_METADATA} bytes`);
              continue;
            }
            if (error === undefined) chunks.push(c as Buffer);
          }
        });
        if (name === 'source-archive') out.archive = Buffer.concat(chunks);
        else out.metadata = Buffer.concat(chunks).toString('utf8');
      } else {
        part.file.resume();
        await finished(part.file).catch(() => undefined);
      }
    }
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode;
    error ??=
      err instanceof AppError || (status !== undefined && status >= 400 && status < 500)
        ? err
        : badRequest(`malformed multipart body: ${(err as Error).message}`);
  }
  if (error !== undefined) throw error;
  return out;
}

export function swiftRoutes(app: FastifyInstance, deps: SwiftRoutesDeps): void {
  const { packages, swift } = deps;

  registry(app, deps, FORMAT, (scope, owner) => {
    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.header('Content-Version', '1');
      if (reply.statusCode >= 400) reply.header('Content-Type', 'application/problem+json');
      return payload;
    });
    const json = (reply: FastifyReply, body: unknown, headers: Record<string, string> = {}) =>
      reply.headers(headers).code(200).type('application/json').send(JSON.stringify(body));

    /** The release of the route (its version without the suffix the route strips). */
    const release = async (request: FastifyRequest, o: UserRow, version: string) => {
      const p = request.params as Params;
      return packages.requireVersion(
        o,
        'swift',
        packageId(p['scope'] ?? '', p['name'] ?? ''),
        version,
        request.packageIdentity,
      );
    };
    const releaseUrl = (o: UserRow, p: Params, version: string) =>
      `${swift.base(o)}/${p['scope'] ?? ''}/${p['name'] ?? ''}/${version}`;

    const checkLogin = async (request: FastifyRequest) => {
      if (!request.packageIdentity) throw unauthorized('authentication required');
      return {};
    };
    scope.post('/:owner/swift', checkLogin);
    scope.post('/:owner/swift/login', checkLogin);

    scope.get('/:owner/swift/identifiers', async (request, reply) => {
      const o = await owner(request, 'read');
      checkAccept(request, ACCEPT_JSON);
      const url = queryParam(request, 'url');
      if (!url) throw badRequest("the query parameter 'url' is required");
      const identifiers = await swift.identifiers(o, url, request.packageIdentity);
      if (identifiers.length === 0) throw notFound('package does not exist');
      return json(reply, { identifiers });
    });

    scope.get('/:owner/swift/:scope/:name', async (request, reply) => {
      const o = await owner(request, 'read');
      checkAccept(request, ACCEPT_JSON);
      const p = { ...(request.params as Params) };
      p['name'] = (p['name'] ?? '').replace(/\.json$/, '');
      const pkg = await packages.requirePackage(
        o,
        'swift',
        packageId(p['scope'] ?? '', p['name']),
        request.packageIdentity,
      );
      const versions = await swift.releases(pkg);
      const latest = versions[versions.length - 1];
      if (!latest) throw notFound('package does not exist');
      const releases: Record<string, { url: string }> = {};
      for (const v of versions) releases[v.version] = { url: releaseUrl(o, p, v.version) };
      return json(
        reply,
        { releases },
        { Link: `<${releaseUrl(o, p, latest.version)}>; rel="latest-version"` },
      );
    });

    scope.get('/:owner/swift/:scope/:name/:version', async (request, reply) => {
      const o = await owner(request, 'read');
      const p = request.params as Params;
      let version = p['version'] ?? '';
      if (version.endsWith('.zip')) {
        checkAccept(request, ACCEPT_ZIP);
        version = version.slice(0, -4);
        const found = await release(request, o, version);
        const file = await swift.archive(found.version);
        reply.header('Digest', `sha256=${file.hash_sha256}`);
        return sendPackageFile(reply, packages, file, 'application/zip', {
          attachment: true,
          lastModified: true,
        });
      }
      checkAccept(request, ACCEPT_JSON);
      if (version.endsWith('.json')) version = version.slice(0, -5);
      const { pkg, version: v } = await release(request, o, version);
      const m = swift.metadataOf(v);
      const file = await swift.archive(v);
      const author: Record<string, string> = { '@type': 'Person' };
      if (m.author?.givenName) author['givenName'] = m.author.givenName;
      if (m.author?.middleName) author['middleName'] = m.author.middleName;
      if (m.author?.familyName) author['familyName'] = m.author.familyName;
      return json(reply, {
        id: pkg.name,
        version: v.version,
        resources: [{ name: 'source-archive', type: 'application/zip', checksum: file.hash_sha256 }],
        metadata: {
          '@context': ['http://schema.org/'],
          '@type': 'SoftwareSourceCode',
          name: await swift.displayName(pkg, p['name'] ?? ''),
          version: v.version,
          ...(m.description ? { description: m.description } : {}),
          ...(m.keywords?.length ? { keywords: m.keywords } : {}),
          ...(m.repository_url ? { codeRepository: m.repository_url } : {}),
          ...(m.license ? { license: m.license } : {}),
          author,
          programmingLanguage: { '@type': 'ComputerLanguage', name: 'Swift', url: 'https://swift.org' },
        },
      });
    });

    scope.get('/:owner/swift/:scope/:name/:version/Package.swift', async (request, reply) => {
      const o = await owner(request, 'read');
      checkAccept(request, ACCEPT_SWIFT);
      const p = request.params as Params;
      const version = p['version'] ?? '';
      const { version: v } = await release(request, o, version);
      const manifests = swift.metadataOf(v).manifests;
      let swiftVersion = queryParam(request, 'swift-version');
      if (swiftVersion) swiftVersion = trimmedVersion(swiftVersion) ?? swiftVersion;
      const manifest = manifests[swiftVersion];
      const here = `${releaseUrl(o, p, version)}/Package.swift`;
      if (!manifest) return reply.code(303).header('Location', here).send();
      if (!swiftVersion) {
        const alternates = Object.keys(manifests)
          .filter((k) => k !== '')
          .sort((a, b) => compareSwift(a, b))
          .map((k) => {
            const tools = manifests[k]!.tools_version;
            return (
              `<${here}?swift-version=${k}>; rel="alternate"; filename="Package@swift-${k}.swift"` +
              (tools ? `; swift-tools-version="${tools}"` : '')
            );
          });
        if (alternates.length) reply.header('Link', alternates.join(', '));
      }
      const filename = swiftVersion ? `Package@swift-${swiftVersion}.swift` : 'Package.swift';
      return reply
        .code(200)
        .type('text/x-swift')
        .header('Content-Disposition', `attachment; filename="${filename}"`)
        .header('Last-Modified', new Date(v.created_unix * 1000).toUTCString())
        .send(manifest.content);
    });

    scope.put('/:owner/swift/:scope/:name/:version', async (request, reply) => {
      const o = await owner(request, 'write');
      const identity = uploader(request);
      checkAccept(request, ACCEPT_JSON);
      const p = request.params as Params;
      const s = p['scope'] ?? '';
      const n = p['name'] ?? '';
      const version = versionCore(p['version'] ?? '');
      if (!SCOPE_PATTERN.test(s)) throw badRequest(`invalid package scope: ${s}`);
      if (!NAME_PATTERN.test(n)) throw badRequest(`invalid package name: ${n}`);
      if (version === undefined) throw badRequest(`invalid package version: ${p['version'] ?? ''}`);
      if (!request.isMultipart()) throw badRequest('unable to read source-archive file');
      await packages.checkLimits(o, identity.user, 'swift');
      const body = await readPublishBody(request, packages.sizeLimit('swift', identity.user));
      if (!body.archive?.length) throw badRequest('unable to read source-archive file');
      await swift.publish({
        owner: o,
        creator: identity.user,
        scope: s,
        name: n,
        version,
        archive: Readable.from([body.archive]),
        metadata: body.metadata,
      });
      return reply
        .code(201)
        .header('Location', releaseUrl(o, p, version))
        .send();
    });
  });
}

/** Orders Swift versions (`5.6`, `5.10.1`) numerically. */
function compareSwift(a: string, b: string): number {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}
