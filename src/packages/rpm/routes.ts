// The RPM repository at /api/packages/{owner}/rpm, for dnf and yum. A group is an optional path
// before each of these (`el9/stable`): `PUT {group}/upload` takes an .rpm (201); `GET
// {group}/package/{name}/{version}/{arch}` (also with `/{file}` after it, the repodata location)
// serves it and `DELETE` the same path removes it (204); `{group}/repodata/repomd.xml`, `.asc`,
// `primary.xml.gz`, `filelists.xml.gz`, `other.xml.gz` are the repodata, signed with the owner's
// key, whose public half is `repository.key`; `{group}.repo` (`rpm.repo` for the root group) is a
// dnf repository configuration. Errors are plain text, as Forgejo sends them.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import type { PackageService } from '../service.js';
import {
  announcedLength,
  type RegistryDeps,
  registry,
  streamOf,
  uploader,
  sendPackageFile,
  sendRepositoryKey,
} from '../registry.js';
import type { RpmService } from './service.js';

const errorBody = (message: string) => `${message}\n`;
const REPODATA = new Set([
  'repomd.xml',
  'repomd.xml.asc',
  'primary.xml.gz',
  'filelists.xml.gz',
  'other.xml.gz',
]);

export interface RpmRoutesDeps extends RegistryDeps {
  packages: PackageService;
  rpm: RpmService;
  rootUrl: string;
}

/** The segments of the wildcard part of the URL, decoded. */
function segments(request: FastifyRequest): string[] {
  const rest = (request.params as Record<string, string>)['*'] ?? '';
  return rest.split('/').filter((s) => s !== '');
}

/** `{group}/package/{name}/{version}/{arch}[/{file}]`: the group and the package's coordinates. */
function packagePath(parts: string[], withFile: boolean) {
  for (const n of withFile ? [4, 5] : [4]) {
    if (parts.length >= n && parts[parts.length - n] === 'package') {
      const [name, version, arch, file] = parts.slice(parts.length - n + 1);
      return {
        group: parts.slice(0, parts.length - n).join('/'),
        name: name!,
        version: version!,
        arch: arch!,
        file,
      };
    }
  }
  return undefined;
}

export function rpmRoutes(app: FastifyInstance, deps: RpmRoutesDeps): void {
  const { packages, rpm } = deps;
  const root = deps.rootUrl.replace(/\/$/, '');

  const repoConfig = (o: UserRow, group: string) => {
    const base = `${root}/api/packages/${encodeURIComponent(o.name)}/rpm`;
    const id = [o.name, ...group.split('/').filter(Boolean)].join('-');
    return (
      `[${id}]\n` +
      `name=${[o.name, group, 'Anvil'].filter(Boolean).join(' - ')}\n` +
      `baseurl=${base}${group ? `/${group}` : ''}\n` +
      'enabled=1\n' +
      'gpgcheck=1\n' +
      'repo_gpgcheck=1\n' +
      `gpgkey=${base}/repository.key\n`
    );
  };
  const sendRepo = (reply: FastifyReply, text: string) => reply.type('text/plain; charset=utf-8').send(text);

  registry(app, deps, errorBody, (scope, owner) => {
    scope.get('/:owner/rpm.repo', async (request, reply) =>
      sendRepo(reply, repoConfig(await owner(request, 'read'), '')),
    );

    scope.route({
      method: 'GET',
      url: '/:owner/rpm/*',
      // A HEAD of a package would count a download.
      exposeHeadRoute: false,
      handler: async (request, reply) => {
        const o = await owner(request, 'read');
        const parts = segments(request);
        const last = parts[parts.length - 1] ?? '';
        if (parts.length === 1 && last === 'repository.key') {
          return sendRepositoryKey(reply, await rpm.publicKey(o));
        }
        if (last.endsWith('.repo') && last.length > 5) {
          return sendRepo(reply, repoConfig(o, [...parts.slice(0, -1), last.slice(0, -5)].join('/')));
        }
        if (parts.length >= 2 && parts[parts.length - 2] === 'repodata' && REPODATA.has(last)) {
          const row = await rpm.indexFile(o, parts.slice(0, -2).join('/'), last);
          const type = last.endsWith('.gz')
            ? 'application/gzip'
            : last.endsWith('.asc')
              ? 'text/plain; charset=utf-8'
              : 'text/xml; charset=utf-8';
          return reply
            .type(type)
            .header('Last-Modified', new Date(row.created_unix * 1000).toUTCString())
            .header('Content-Length', String(row.size))
            .send(Buffer.from(row.content, 'base64'));
        }
        const p = packagePath(parts, true);
        if (!p) throw notFound('not found');
        const file = await rpm.groups.require(o, request.packageIdentity, p);
        if (p.file !== undefined && p.file !== file.name)
          throw notFound(`package file does not exist [name: ${p.file}]`);
        return sendPackageFile(reply, packages, file, 'application/x-rpm', {
          attachment: true,
          lastModified: true,
        });
      },
    });

    scope.put('/:owner/rpm/*', async (request, reply) => {
      const parts = segments(request);
      if (parts[parts.length - 1] !== 'upload') throw notFound('not found');
      const o = await owner(request, 'write');
      const identity = uploader(request);
      await rpm.upload(
        o,
        identity.user,
        parts.slice(0, -1).join('/'),
        streamOf(request),
        announcedLength(request),
      );
      return reply.code(201).send();
    });

    scope.delete('/:owner/rpm/*', async (request, reply) => {
      const p = packagePath(segments(request), false);
      if (!p) throw notFound('not found');
      const o = await owner(request, 'write');
      const identity = uploader(request);
      await rpm.groups.delete(o, identity.user, identity, p);
      return reply.code(204).send();
    });
  });
}
