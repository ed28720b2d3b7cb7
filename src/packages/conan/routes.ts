// The Conan repository at /api/packages/{owner}/conan, Conan v1 and v2 protocols as Forgejo serves
// them: `ping` (capability `revisions`), `users/authenticate` (Basic credentials or a token
// exchanged for a registry token, which clients send back as Bearer) and `check_credentials`,
// recipe search; v1 snapshots, `digest`/`download_urls`/`upload_urls` and the file PUTs and GETs
// under `v1/files/`, recipe and package deletion, package search; v2 revisions (`latest`,
// `revisions`, files per recipe and package revision) and deletions. References come from the
// path (400 when invalid). Errors are {"message": ...}.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import type { Authenticator } from '../../auth/identity.js';
import { badRequest, notFound, unauthorized } from '../../errors.js';
import { hasScope } from '../../tokens/scopes.js';
import type { RegistryTokens } from '../container/tokens.js';
import { PackageAccessDenied, type PackageService } from '../service.js';
import { announcedLength, registry, sendPackageFile, streamOf, type RegistryDeps } from '../registry.js';
import {
  PACKAGE_FILES,
  packageLink,
  packageRef,
  RECIPE_FILES,
  recipeLink,
  recipeRef,
  type PackageRef,
  type RecipeRef,
} from './reference.js';
import type { ConanService, RevisionInfo } from './service.js';

type Params = Record<string, string | undefined>;
const errorBody = (message: string) => ({ message });
/** Forgejo's package tokens last a day. */
const TOKEN_TTL = 24 * 3600;

export interface ConanRoutesDeps extends RegistryDeps {
  packages: PackageService;
  conan: ConanService;
  tokens: Pick<RegistryTokens, 'issueToken' | 'verifyToken'>;
  rootUrl: string;
}

/** A JSON request body (at most 1 MiB; 400 when it is not JSON). */
async function readJson(body: Readable): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    size += (c as Buffer).length;
    if (size > 1 << 20) throw badRequest('the request body is too large');
    chunks.push(c as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw badRequest('the request body is not valid JSON');
  }
}

const json = (reply: FastifyReply, body: unknown) =>
  reply.code(200).type('application/json').send(JSON.stringify(body));

export function conanRoutes(app: FastifyInstance, deps: ConanRoutesDeps): void {
  const { packages, conan, tokens } = deps;
  // Registry tokens (from users/authenticate) as Bearer, else what every registry takes.
  const auth: Pick<Authenticator, 'authenticate'> = {
    authenticate: async (c) => {
      const bearer = /^bearer\s+(.+)$/i.exec(c.authorization?.trim() ?? '');
      if (bearer) {
        const identity = await tokens.verifyToken(bearer[1]!.trim());
        if (identity !== undefined) return identity;
      }
      return deps.auth.authenticate(c);
    },
  };

  registry(app, { ...deps, auth }, errorBody, (scope, owner) => {
    const base = '/:owner/conan';
    const baseUrl = (o: { name: string }) =>
      `${deps.rootUrl}api/packages/${encodeURIComponent(o.name)}/conan`;

    const recipeOf = (request: FastifyRequest): RecipeRef => {
      const p = request.params as Params;
      return recipeRef(
        p['name'] ?? '',
        p['version'] ?? '',
        p['user'] ?? '',
        p['channel'] ?? '',
        p['rrev'] ?? '',
      );
    };
    const packageOf = (request: FastifyRequest): PackageRef =>
      packageRef(
        recipeOf(request),
        (request.params as Params)['pref'] ?? '',
        (request.params as Params)['prev'] ?? '',
      );
    /** The owner (read), then the references (400), then write access when asked. */
    const access = async (request: FastifyRequest, need: 'read' | 'write', withPackage: boolean) => {
      let o = await owner(request, 'read');
      const ref = recipeOf(request);
      const pref = withPackage ? packageOf(request) : null;
      if (need === 'write') o = await owner(request, 'write');
      return { o, ref, pref };
    };
    const doer = (request: FastifyRequest) => {
      if (!request.packageIdentity) throw unauthorized('authentication required');
      return request.packageIdentity.user;
    };

    for (const v of ['v1', 'v2']) {
      scope.get(`${base}/${v}/ping`, async (request, reply) => {
        await owner(request, 'read');
        return reply.code(200).header('X-Conan-Server-Capabilities', 'revisions').send();
      });
      scope.get(`${base}/${v}/users/authenticate`, async (request, reply) => {
        await owner(request, 'read');
        const identity = request.packageIdentity;
        if (!identity) throw badRequest('credentials are required');
        if (!hasScope(identity.scopes, 'package', 'read')) {
          throw new PackageAccessDenied(
            'token does not have at least one of required scope(s): [read:package]',
          );
        }
        return reply
          .code(200)
          .type('text/plain; charset=utf-8')
          .send(tokens.issueToken(identity, TOKEN_TTL).token);
      });
      scope.get(`${base}/${v}/users/check_credentials`, async (request, reply) => {
        await owner(request, 'read');
        if (!request.packageIdentity) throw unauthorized('authentication required');
        return reply.code(200).send();
      });
      scope.get(`${base}/${v}/conans/search`, async (request, reply) => {
        const o = await owner(request, 'read');
        const q = ((request.query as Params)['q'] ?? '').trim();
        return json(reply, { results: await conan.searchRecipes(o, q) });
      });
    }

    // v1: recipes and packages (the newest of nothing: revision 0).
    const v1 = `${base}/v1/conans/:name/:version/:user/:channel`;
    const snapshot = (withPackage: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
      const { o, ref, pref } = await access(request, 'read', withPackage);
      const files = await conan.revisionFiles(o, request.packageIdentity, ref, pref);
      return json(reply, Object.fromEntries(files.map((f) => [f.name, f.hash_md5])));
    };
    const fileUrl = (o: { name: string }, ref: RecipeRef, pref: PackageRef | null) =>
      `${baseUrl(o)}/v1/files/${recipeLink(ref)}/${pref ? `package/${packageLink(pref)}` : 'recipe'}`;
    const downloadUrls = (withPackage: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
      const { o, ref, pref } = await access(request, 'read', withPackage);
      const files = await conan.revisionFiles(o, request.packageIdentity, ref, pref);
      const url = fileUrl(o, ref, pref);
      return json(reply, Object.fromEntries(files.map((f) => [f.name, `${url}/${f.name}`])));
    };
    const uploadUrls = (withPackage: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
      const { o, ref, pref } = await access(request, 'write', withPackage);
      const body = await readJson(streamOf(request));
      if (!body || typeof body !== 'object' || Array.isArray(body)) {
        throw badRequest('the body must be an object of file names and sizes');
      }
      const allowed = withPackage ? PACKAGE_FILES : RECIPE_FILES;
      const url = fileUrl(o, ref, pref);
      const names = Object.keys(body).filter((n) => allowed.has(n));
      return json(reply, Object.fromEntries(names.map((n) => [n, `${url}/${n}`])));
    };
    scope.get(v1, snapshot(false));
    scope.get(`${v1}/digest`, downloadUrls(false));
    scope.get(`${v1}/download_urls`, downloadUrls(false));
    scope.post(`${v1}/upload_urls`, uploadUrls(false));
    scope.get(`${v1}/packages/:pref`, snapshot(true));
    scope.get(`${v1}/packages/:pref/digest`, downloadUrls(true));
    scope.get(`${v1}/packages/:pref/download_urls`, downloadUrls(true));
    scope.post(`${v1}/packages/:pref/upload_urls`, uploadUrls(true));
    scope.get(`${v1}/search`, async (request, reply) => {
      const { o, ref } = await access(request, 'read', false);
      return json(reply, await conan.searchPackages(o, request.packageIdentity, ref, true));
    });
    scope.delete(v1, async (request, reply) => {
      const { o, ref } = await access(request, 'write', false);
      await conan.deleteFiles(o, doer(request), request.packageIdentity, ref, {});
      return reply.code(200).send();
    });
    scope.post(`${v1}/packages/delete`, async (request, reply) => {
      const { o, ref } = await access(request, 'write', false);
      const body = (await readJson(streamOf(request))) as { package_ids?: unknown } | null;
      const ids = body?.package_ids ?? [];
      if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string')) {
        throw badRequest('package_ids must be a list of package references');
      }
      const refs = (ids as string[]).map((id) => packageRef(ref, id).reference);
      await conan.deletePackagesV1(o, doer(request), request.packageIdentity, ref, refs);
      return reply.code(200).send();
    });

    // Files, by the URLs download_urls and upload_urls give (v1) and by revision (v2).
    const getFile = (withPackage: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
      const { o, ref, pref } = await access(request, 'read', withPackage);
      const name = (request.params as Params)['filename'] ?? '';
      if (!(withPackage ? PACKAGE_FILES : RECIPE_FILES).has(name))
        throw badRequest(`not a Conan file: ${name}`);
      const file = await conan.file(o, request.packageIdentity, ref, pref, name);
      // Forgejo counts downloads of a recipe's conanfile.py.
      const count = file.is_lead === 1;
      return sendPackageFile(reply, packages, file, 'application/octet-stream', {}, count);
    };
    const putFile = (withPackage: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
      const { o, ref, pref } = await access(request, 'write', withPackage);
      const name = (request.params as Params)['filename'] ?? '';
      if (!(withPackage ? PACKAGE_FILES : RECIPE_FILES).has(name))
        throw badRequest(`not a Conan file: ${name}`);
      await conan.upload(o, doer(request), ref, pref, name, streamOf(request), announcedLength(request));
      return reply.code(201).send();
    };
    const files = `${base}/v1/files/:name/:version/:user/:channel/:rrev`;
    scope.route({
      method: 'GET',
      url: `${files}/recipe/:filename`,
      exposeHeadRoute: false,
      handler: getFile(false),
    });
    scope.put(`${files}/recipe/:filename`, putFile(false));
    scope.route({
      method: 'GET',
      url: `${files}/package/:pref/:prev/:filename`,
      exposeHeadRoute: false,
      handler: getFile(true),
    });
    scope.put(`${files}/package/:pref/:prev/:filename`, putFile(true));

    // v2: revisions.
    const v2 = `${base}/v2/conans/:name/:version/:user/:channel`;
    const rrev = `${v2}/revisions/:rrev`;
    const pkg = `${rrev}/packages/:pref`;
    const prev = `${pkg}/revisions/:prev`;
    const revisionsOf = async (request: FastifyRequest, withPackage: boolean): Promise<RevisionInfo[]> => {
      const { o, ref, pref } = await access(request, 'read', withPackage);
      const list = pref
        ? await conan.packageRevisions(o, request.packageIdentity, pref)
        : await conan.recipeRevisions(o, request.packageIdentity, ref);
      if (list.length === 0) throw notFound(`${pref ? 'package' : 'recipe'} reference does not exist`);
      return list;
    };
    const revisionList = (withPackage: boolean) => async (request: FastifyRequest, reply: FastifyReply) =>
      json(reply, { revisions: await revisionsOf(request, withPackage) });
    const latest = (withPackage: boolean) => async (request: FastifyRequest, reply: FastifyReply) =>
      json(reply, (await revisionsOf(request, withPackage))[0]);
    const fileList = (withPackage: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
      const { o, ref, pref } = await access(request, 'read', withPackage);
      const list = await conan.revisionFiles(o, request.packageIdentity, ref, pref);
      return json(reply, { files: Object.fromEntries(list.map((f) => [f.name, null])) });
    };
    const search = async (request: FastifyRequest, reply: FastifyReply) => {
      const { o, ref } = await access(request, 'read', false);
      return json(reply, await conan.searchPackages(o, request.packageIdentity, ref, false));
    };
    const deleteRecipe = async (request: FastifyRequest, reply: FastifyReply) => {
      const { o, ref } = await access(request, 'write', false);
      await conan.deleteFiles(o, doer(request), request.packageIdentity, ref, {
        ...(ref.revision ? { recipeRevision: ref.revision } : {}),
      });
      return reply.code(200).send();
    };
    const deletePackages = (withPackage: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
      const { o, ref, pref } = await access(request, 'write', withPackage);
      await conan.deleteFiles(o, doer(request), request.packageIdentity, ref, {
        recipeRevision: ref.revision,
        packages: true,
        ...(pref ? { packageReference: pref.reference } : {}),
        ...(pref?.revision ? { packageRevision: pref.revision } : {}),
      });
      return reply.code(200).send();
    };
    scope.delete(v2, deleteRecipe);
    scope.get(`${v2}/search`, search);
    scope.get(`${v2}/latest`, latest(false));
    scope.get(`${v2}/revisions`, revisionList(false));
    scope.delete(rrev, deleteRecipe);
    scope.get(`${rrev}/search`, search);
    scope.get(`${rrev}/files`, fileList(false));
    scope.route({
      method: 'GET',
      url: `${rrev}/files/:filename`,
      exposeHeadRoute: false,
      handler: getFile(false),
    });
    scope.put(`${rrev}/files/:filename`, putFile(false));
    scope.delete(`${rrev}/packages`, deletePackages(false));
    scope.delete(pkg, deletePackages(true));
    scope.get(`${pkg}/latest`, latest(true));
    scope.get(`${pkg}/revisions`, revisionList(true));
    scope.delete(prev, deletePackages(true));
    scope.get(`${prev}/files`, fileList(true));
    scope.route({
      method: 'GET',
      url: `${prev}/files/:filename`,
      exposeHeadRoute: false,
      handler: getFile(true),
    });
    scope.put(`${prev}/files/:filename`, putFile(true));
  });
}
