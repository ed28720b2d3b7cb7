// The ALT Linux repository at /api/packages/{owner}/alt, for apt-rpm, at Forgejo's URLs. A group
// is an optional path (`el9/stable`); the root group is named `alt` in the URLs that read it:
// `PUT {group}/upload` takes an .rpm (201); `{group|alt}.repo` is the repository configuration;
// `{group|alt}.repo/{arch}/base/{pkglist.classic[.xz], release.classic, release}` are the
// repository files (apt's sources.list line: `rpm {ROOT}api/packages/{owner}/alt/{group}.repo
// {arch} classic`); `GET|DELETE {group|alt}.repo/{arch}/RPMS.classic/{name}-{version}.{arch}.rpm`
// serves or removes a package (204). Errors are plain text, as Forgejo sends them.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, notFound } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import type { PackageService } from '../service.js';
import { announcedLength, type RegistryDeps, registry, streamOf, uploader } from '../registry.js';
import type { AltService } from './service.js';

const errorBody = (message: string) => `${message}\n`;
const REPOSITORY_FILES = new Set(['pkglist.classic', 'pkglist.classic.xz', 'release.classic', 'release']);

// Forgejo's patterns, on the path after `alt` (with its leading slash).
const CONFIG = /^(.*?)\.repo$/;
const UPLOAD = /^(.*?)\/upload$/;
const BASE = /^\/(.+?)\.repo\/([^/]+)\/base\/([^/]+)$/;
const RPMS = /^\/(.+?)\.repo\/([^/]+)\/RPMS\.([^/]+)\/(.+)-([0-9][^-]*-[^-]*)\.([^.]+)\.rpm$/;

/**
 * Tries the name and version Forgejo's pattern reads from a file name, then, when the name ends
 * in `-{digits}`, those digits as the version's epoch (`{name}-{epoch}-{version}-{release}`, the
 * name Forgejo gives a file with an epoch, which its pattern cuts in the wrong place).
 */
async function withEpoch<T>(
  name: string,
  version: string,
  fn: (name: string, version: string) => Promise<T>,
) {
  const epoch = /^(.+)-(\d+)$/.exec(name);
  try {
    return await fn(name, version);
  } catch (err) {
    if (!epoch || !(err instanceof AppError) || err.kind !== 'not_found') throw err;
    return fn(epoch[1]!, `${epoch[2]}-${version}`);
  }
}

export interface AltRoutesDeps extends RegistryDeps {
  packages: PackageService;
  alt: AltService;
  rootUrl: string;
  /** The name in the configuration's `name=` (Forgejo's APP_NAME). */
  label: string;
}

const trim = (s: string) => s.replace(/^\/+|\/+$/g, '');
/** The group a `.repo/...` URL names: `alt` is the root group. */
const groupOf = (s: string) => (trim(s) === 'alt' ? '' : trim(s));

export function altRoutes(app: FastifyInstance, deps: AltRoutesDeps): void {
  const { packages, alt } = deps;
  const root = deps.rootUrl.replace(/\/$/, '');

  /** Forgejo's configuration text, with the group as written in the URL (`alt` for the root). */
  const repoConfig = (o: UserRow, group: string) => {
    const parts = group ? group.split('/') : [];
    return (
      `[anvil-${[o.lower_name, ...parts].join('-')}]\n` +
      `name=${[o.name, deps.label, ...parts].join(' - ')}\n` +
      `baseurl=${[`${root}/api/packages/${o.name}/alt`, ...parts].join('/')}\n` +
      'enabled=1'
    );
  };
  const pathOf = (request: FastifyRequest) => `/${(request.params as Record<string, string>)['*'] ?? ''}`;

  registry(app, deps, errorBody, (scope, owner) => {
    scope.route({
      method: ['GET', 'HEAD'],
      url: '/:owner/alt/*',
      handler: async (request, reply) => {
        const o = await owner(request, 'read');
        const path = pathOf(request);
        const head = request.method === 'HEAD';
        let m = CONFIG.exec(path);
        if (m) return reply.type('text/plain; charset=utf-8').send(repoConfig(o, trim(m[1]!)));
        m = BASE.exec(path);
        if (m) {
          if (!REPOSITORY_FILES.has(m[3]!)) throw notFound(`repository file does not exist [name: ${m[3]}]`);
          const row = await alt.indexFile(o, groupOf(m[1]!), `${m[2]}/base/${m[3]}`);
          reply
            .type(m[3]!.endsWith('.xz') ? 'application/x-xz' : 'application/octet-stream')
            .header('Content-Disposition', `attachment; filename="${m[3]}"`)
            .header('Last-Modified', new Date(row.created_unix * 1000).toUTCString())
            .header('Content-Length', String(row.size));
          return head ? reply.send() : reply.send(Buffer.from(row.content, 'base64'));
        }
        m = RPMS.exec(path);
        if (!m) throw notFound('not found');
        const [group, arch] = [groupOf(m[1]!), m[6]!];
        const file = await withEpoch(m[4]!, m[5]!, (name, version) =>
          alt.groups.require(o, request.packageIdentity, { group, name, version, arch }),
        );
        reply
          .type('application/x-rpm')
          .header('Content-Length', String(file.size))
          .header('Content-Disposition', `attachment; filename="${file.name}"`)
          .header('Last-Modified', new Date(file.created_unix * 1000).toUTCString());
        // A HEAD counts no download.
        if (head) return reply.send();
        const direct = await packages.directUrl(file);
        if (direct) return reply.removeHeader('content-length').redirect(direct, 303);
        return reply.send(await packages.open(file));
      },
    });

    scope.put('/:owner/alt/*', async (request, reply) => {
      const m = UPLOAD.exec(pathOf(request));
      if (!m) throw notFound('not found');
      const o = await owner(request, 'write');
      const identity = uploader(request);
      await alt.upload(o, identity.user, trim(m[1]!), streamOf(request), announcedLength(request));
      return reply.code(201).send();
    });

    scope.delete('/:owner/alt/*', async (request, reply) => {
      const m = RPMS.exec(pathOf(request));
      if (!m) throw notFound('not found');
      const o = await owner(request, 'write');
      const identity = uploader(request);
      const [group, arch] = [groupOf(m[1]!), m[6]!];
      await withEpoch(m[4]!, m[5]!, (name, version) =>
        alt.groups.delete(o, identity.user, identity, { group, name, version, arch }),
      );
      return reply.code(204).send();
    });
  });
}
