// Builds the HTTP server: the /api/v1 API (authenticated in one hook), its OpenAPI description at
// /swagger.v1.json and a browsable page at /api/swagger.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from './context.js';
import { registryRoutes } from './registries.js';
import type { Api } from '../http/types.js';
import { frameworkErrors, registerErrorHandling, setNotFoundPage } from '../http/errors.js';
import { registerAuth } from '../http/auth.js';
import { parseQuery, serializerCompiler, validatorCompiler } from '../http/validation.js';
import { headAsGet } from '../http/head.js';
import { transformOpenApi } from '../http/openapi.js';
import { registerOpenApi } from '../http/swagger.js';
import {
  BODY_LIMIT,
  BODY_TIMEOUTS,
  HEADERS_TIMEOUT_MS,
  guardSlowBodies,
  type BodyTimeouts,
} from '../http/limits.js';
import { VERSION } from '../version.js';
import { metaRoutes, wellKnownRoutes } from '../meta/routes.js';
import { markupRoutes } from '../markup/routes.js';
import { cronRoutes } from '../cron/routes.js';
import { topicRoutes } from '../topics/routes.js';
import { userRoutes } from '../users/routes.js';
import { tokenRoutes } from '../tokens/routes.js';
import { orgRoutes } from '../orgs/routes.js';
import { quotaRoutes } from '../quota/routes.js';
import { repoRoutes } from '../repos/routes.js';
import { repoListRoutes } from '../repos/list-routes.js';
import { repoAccessRoutes } from '../repos/access-routes.js';
import { gitHttpRoutes } from '../git/http.js';
import { gitDataRoutes } from '../git/data-routes.js';
import { forkRoutes } from '../repos/fork-routes.js';
import { unadoptedRoutes } from '../repos/unadopted-routes.js';
import { lfsRoutes } from '../lfs/routes.js';
import { protectionRoutes } from '../protection/routes.js';
import { registerBodyParsing } from '../http/bodies.js';
import { statusesRoutes } from '../statuses/routes.js';
import { mirrorsRoutes } from '../mirrors/routes.js';
import { issuesRoutes } from '../issues/routes.js';
import { issueTriageRoutes } from '../issues/triage-routes.js';
import { issueCommentRoutes } from '../issues/comment-routes.js';
import { IssuePresenter } from '../issues/present.js';
import { dependenciesRoutes } from '../issues/dependencies-routes.js';
import { timesRoutes } from '../issues/times-routes.js';
import { labelsRoutes } from '../labels/routes.js';
import { milestonesRoutes } from '../milestones/routes.js';
import { attachmentDownloadRoutes, attachmentsRoutes } from '../attachments/routes.js';
import { releasesRoutes } from '../releases/routes.js';
import { notificationsRoutes } from '../notifications/routes.js';
import { webhooksRoutes } from '../webhooks/routes.js';
import { pullsRoutes } from '../pulls/routes.js';
import { actionsRoutes, actionsRunnerRoutes } from '../actions/routes.js';
import { artifactsRoutes, artifactServiceRoutes } from '../artifacts/routes.js';
import { cacheRoutes } from '../actions/cache-routes.js';
import { packagesRoutes } from '../packages/routes.js';
import { packageCleanupRoutes } from '../packages/cleanup/routes.js';
import { socialRoutes } from '../social/routes.js';
import { activityRoutes } from '../activities/routes.js';
import cookie from '@fastify/cookie';
import { registerWeb, Web } from '../web/plugin.js';

import { avatarFileRoutes, avatarsRoutes } from '../avatars/routes.js';
import { oauth2ProviderRoutes, oauth2Routes } from '../oauth2/routes.js';
import { repoMetaRoutes } from '../repometa/routes.js';

import { registerCompression } from '../http/compression.js';

import { countRequests, opsRoutes } from '../ops/routes.js';
import { logRequests } from '../http/request-log.js';
import { authorizedKeysRoute, sshKeyRoutes } from '../ssh/routes.js';
import { sshInternalRoutes } from '../ssh/internal.js';
import { signingRoutes } from '../signing/routes.js';
import { wikiRoutes } from '../wiki/routes.js';

import { uploadsTempDir } from '../web/uploads.js';

/** The issue presenter of the issue routes. */
const issuePresenter = (ctx: AppContext) =>
  new IssuePresenter({
    rootUrl: ctx.config.server.rootUrl,
    users: ctx.users,
    repos: ctx.repos,
    issues: ctx.issues,
    labels: ctx.labels,
    milestones: ctx.milestones,
    times: ctx.times,
  });

/** Each domain's API routes, registered under /api/v1. */
const apiRoutes: Array<(app: Api, ctx: AppContext) => void> = [
  (api, ctx) =>
    metaRoutes(api, {
      users: ctx.users,
      issues: ctx.issues,
      rootUrl: ctx.config.server.rootUrl,
      paging: ctx.paging,
      attachment: ctx.config.attachment,
      disableRegistration: ctx.config.service.disableRegistration,
    }),
  (api, ctx) => markupRoutes(api, { markup: ctx.markup }),
  (api, ctx) => cronRoutes(api, { cron: ctx.cron, paging: ctx.paging, rootUrl: ctx.config.server.rootUrl }),
  (api, ctx) =>
    topicRoutes(api, {
      repos: ctx.repos,
      topics: ctx.topics,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    userRoutes(api, {
      users: ctx.users,
      orgs: ctx.orgs,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    tokenRoutes(api, {
      users: ctx.users,
      tokens: ctx.tokens,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    orgRoutes(api, {
      orgs: ctx.orgs,
      users: ctx.users,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    quotaRoutes(api, {
      quota: ctx.quota,
      users: ctx.users,
      orgs: ctx.orgs,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    repoRoutes(api, {
      repos: ctx.repos,
      transfers: ctx.repoTransfers,
      generator: ctx.generator,
      presenter: ctx.repoPresenter,
      users: ctx.users,
      orgs: ctx.orgs,
    }),
  (api, ctx) =>
    repoListRoutes(api, {
      repos: ctx.repos,
      presenter: ctx.repoPresenter,
      users: ctx.users,
      orgs: ctx.orgs,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    repoAccessRoutes(api, {
      repos: ctx.repos,
      collaborators: ctx.collaborators,
      presenter: ctx.repoPresenter,
      users: ctx.users,
      orgs: ctx.orgs,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    forkRoutes(api, {
      repos: ctx.repos,
      forks: ctx.forks,
      presenter: ctx.repoPresenter,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    unadoptedRoutes(api, {
      unadopted: ctx.unadopted,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    gitDataRoutes(api, {
      gitData: ctx.gitData,
      gitRefs: ctx.gitRefs,
      gitFiles: ctx.gitFiles,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) => protectionRoutes(api, { protection: ctx.protection, repos: ctx.repos }),
  (api, ctx) =>
    statusesRoutes(api, {
      statuses: ctx.statuses,
      repos: ctx.repos,
      users: ctx.users,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
      ssh: ctx.config.ssh,
    }),
  (api, ctx) =>
    mirrorsRoutes(api, {
      repos: ctx.repos,
      mirrors: ctx.mirrors,
      presenter: ctx.repoPresenter,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    issuesRoutes(api, {
      repos: ctx.repos,
      users: ctx.users,
      issues: ctx.issues,
      issueLists: ctx.issueLists,
      present: issuePresenter(ctx),
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    issueTriageRoutes(api, {
      repos: ctx.repos,
      issues: ctx.issues,
      issueTriage: ctx.issueTriage,
      labels: ctx.labels,
      present: issuePresenter(ctx),
    }),
  (api, ctx) =>
    issueCommentRoutes(api, {
      repos: ctx.repos,
      issues: ctx.issues,
      issueComments: ctx.issueComments,
      present: issuePresenter(ctx),
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    dependenciesRoutes(api, {
      repos: ctx.repos,
      issues: ctx.issues,
      dependencies: ctx.dependencies,
      present: issuePresenter(ctx),
      paging: ctx.paging,
    }),
  (api, ctx) =>
    timesRoutes(api, {
      repos: ctx.repos,
      issues: ctx.issues,
      times: ctx.times,
      present: issuePresenter(ctx),
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    labelsRoutes(api, {
      repos: ctx.repos,
      users: ctx.users,
      orgs: ctx.orgs,
      labels: ctx.labels,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    milestonesRoutes(api, {
      repos: ctx.repos,
      milestones: ctx.milestones,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    attachmentsRoutes(api, {
      repos: ctx.repos,
      issues: ctx.issues,
      attachments: ctx.attachments,
      uploadLimits: ctx.config.attachment,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    releasesRoutes(api, {
      repos: ctx.repos,
      users: ctx.users,
      releases: ctx.releases,
      attachments: ctx.attachments,
      uploadLimits: ctx.config.attachment,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    notificationsRoutes(api, {
      repos: ctx.repos,
      users: ctx.users,
      issues: ctx.issues,
      notifications: ctx.notifications,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
      ssh: ctx.config.ssh,
    }),
  (api, ctx) =>
    pullsRoutes(api, {
      pulls: ctx.pulls,
      reviews: ctx.pullReviews,
      merging: ctx.pullMerges,
      autoMerge: ctx.autoMerge,
      present: ctx.pullPresenter,
      repos: ctx.repos,
      users: ctx.users,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    webhooksRoutes(api, {
      webhooks: ctx.webhooks,
      repos: ctx.repos,
      orgs: ctx.orgs,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    actionsRoutes(api, {
      actions: ctx.actions,
      runners: ctx.runners,
      repos: ctx.repos,
      orgs: ctx.orgs,
      users: ctx.users,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    artifactsRoutes(api, {
      artifacts: ctx.artifacts,
      repos: ctx.repos,
      users: ctx.users,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    packagesRoutes(api, {
      packages: ctx.packages,
      users: ctx.users,
      repos: ctx.repos,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
      ssh: ctx.config.ssh,
    }),
  (api, ctx) =>
    packageCleanupRoutes(api, {
      packages: ctx.packages,
      cleanup: ctx.packageCleanup,
      users: ctx.users,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    socialRoutes(api, {
      repos: ctx.repos,
      users: ctx.users,
      orgs: ctx.orgs,
      social: ctx.social,
      reposJson: (rows, viewer) => ctx.repoPresenter.reposJson(rows, viewer),
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    activityRoutes(api, {
      activities: ctx.activities,
      users: ctx.users,
      orgs: ctx.orgs,
      repos: ctx.repos,
      reposJson: (rows, viewer) => ctx.repoPresenter.reposJson(rows, viewer),
      commentsJson: (rows, issues, viewer, repos) =>
        issuePresenter(ctx).commentsOf(rows, issues, viewer, repos),
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    avatarsRoutes(api, {
      avatars: ctx.avatars,
      orgs: ctx.orgs,
      repos: ctx.repos,
      picture: ctx.config.picture,
    }),
  (api, ctx) =>
    oauth2Routes(api, { oauth2: ctx.oauth2, paging: ctx.paging, rootUrl: ctx.config.server.rootUrl }),
  (api, ctx) => repoMetaRoutes(api, { repos: ctx.repos, repoMeta: ctx.repoMeta }),
  (api, ctx) =>
    sshKeyRoutes(api, {
      sshKeys: ctx.sshKeys,
      users: ctx.users,
      repos: ctx.repos,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
      ssh: ctx.config.ssh,
    }),
  (api, ctx) =>
    signingRoutes(api, {
      signing: ctx.signing,
      users: ctx.users,
      orgs: ctx.orgs,
      repos: ctx.repos,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
  (api, ctx) =>
    wikiRoutes(api, {
      wiki: ctx.wiki,
      users: ctx.users,
      paging: ctx.paging,
      rootUrl: ctx.config.server.rootUrl,
    }),
];

/** Each domain's web pages (server-rendered HTML at Forgejo's URL layout). */
/** How much of a diff the web pages show ([git] MAX_GIT_DIFF_*). */
import { webPages } from './web-pages.js';

export interface ServerOptions {
  /** How slowly a request body may arrive (tests shorten them). */
  bodyTimeouts?: BodyTimeouts;
}

/** Paths hold file paths and ref names: Fastify's 100 characters is far too short. */
const MAX_PARAM_LENGTH = 4096;

export async function buildServer(ctx: AppContext, options: ServerOptions = {}): Promise<FastifyInstance> {
  const docsUrl = `${ctx.config.server.rootUrl}api/swagger`;
  const head = headAsGet({ maxParamLength: MAX_PARAM_LENGTH });
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    // One line per request, written by logRequests (http/request-log.ts); no logger of its own per
    // request (the error handler names the request it logs).
    disableRequestLogging: true,
    childLoggerFactory: (logger) => logger,
    trustProxy: false,
    // Routes that take whole files as JSON declare a larger limit; streamed bodies are not parsed.
    bodyLimit: BODY_LIMIT,
    http: { headersTimeout: HEADERS_TIMEOUT_MS },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, querystringParser: parseQuery },
    exposeHeadRoutes: false,
    serverFactory: head.serverFactory,
    frameworkErrors: frameworkErrors(docsUrl),
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler());
  app.setSerializerCompiler(serializerCompiler());
  registerErrorHandling(app, docsUrl);
  // The OpenAPI document describes /api/v1 (its server URL); git, registries and pages are not in it.
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/v1/')) route.schema = { ...(route.schema ?? {}), hide: true };
    head.onRoute(route);
  });
  guardSlowBodies(app.server, docsUrl, options.bodyTimeouts ?? BODY_TIMEOUTS);
  countRequests(app, { metrics: ctx.metrics });
  logRequests(app, ctx.log);
  // Several nodes: an answer waits until the other nodes have been told of its writes.
  if (ctx.cluster.channel !== 'local') {
    const { cluster } = ctx;
    app.addHook('onSend', async (_request, _reply, payload) => (await cluster.announced(), payload));
  }

  registerOpenApi(
    app,
    {
      openapi: {
        openapi: '3.0.3',
        info: {
          title: 'Anvil API',
          description:
            "Anvil: a self-hosted code-hosting service. The API is compatible with Forgejo's /api/v1.",
          version: VERSION.api,
        },
        servers: [{ url: `${ctx.config.server.rootUrl}api/v1` }],
        components: {
          securitySchemes: {
            BasicAuth: { type: 'http', scheme: 'basic' },
            AuthorizationHeaderToken: {
              type: 'apiKey',
              in: 'header',
              name: 'Authorization',
              description: 'API tokens must be prepended with "token" followed by a space.',
            },
            SudoHeader: {
              type: 'apiKey',
              in: 'header',
              name: 'Sudo',
              description: 'Sudo API request as the user (admins only).',
            },
            TOTPHeader: {
              type: 'apiKey',
              in: 'header',
              name: 'X-FORGEJO-OTP',
              description:
                'Must be used in combination with BasicAuth if two-factor authentication is enabled.',
            },
          },
        },
        security: [
          { BasicAuth: [] },
          { AuthorizationHeaderToken: [] },
          { SudoHeader: [] },
          { TOTPHeader: [] },
        ],
      },
      transformObject: transformOpenApi,
    },
    '/api/swagger',
  );
  app.get('/swagger.v1.json', { schema: { hide: true } }, async () => app.swagger());

  await app.register(
    async (api) => {
      registerCompression(api);
      registerAuth(api, { auth: ctx.auth, users: ctx.users });
      registerBodyParsing(api);
      for (const routes of apiRoutes) routes(api as unknown as Api, ctx);
    },
    { prefix: '/api/v1' },
  );
  await app.register(async (scope) =>
    wellKnownRoutes(scope as unknown as Api, { rootUrl: ctx.config.server.rootUrl }),
  );
  await app.register(async (scope) => oauth2ProviderRoutes(scope, { tokens: ctx.oauth2Tokens }));
  // Health and metrics, outside /api/v1 (monitoring asks without credentials of a user).
  await app.register(async (scope) =>
    opsRoutes(scope, { ops: ctx.ops, metrics: ctx.metrics, metricsToken: ctx.config.metrics.token }),
  );
  // Attachment downloads (browser_download_url), outside /api/v1: they authenticate on their own.
  await app.register(async (files) =>
    attachmentDownloadRoutes(files, {
      auth: ctx.auth,
      users: ctx.users,
      repos: ctx.repos,
      attachments: ctx.attachments,
    }),
  );
  // Git over HTTP, outside /api/v1 and its authentication hook (git has its own 401 handshake).
  await app.register(async (gitScope) => {
    gitHttpRoutes(gitScope, {
      auth: ctx.auth,
      users: ctx.users,
      repos: ctx.repos,
      pushes: ctx.pushes,
      refChanges: ctx.refChanges,
      wiki: ctx.wiki,
      metrics: ctx.metrics,
    });
    lfsRoutes(gitScope, {
      lfs: ctx.lfs,
      auth: ctx.auth,
      users: ctx.users,
      repos: ctx.repos,
      rootUrl: ctx.config.server.rootUrl,
    });
  });
  // `anvil serv` (OpenSSH mode) asks the running server through these; /{username}.keys.
  await app.register(async (scope) => {
    sshInternalRoutes(scope, {
      sshKeys: ctx.sshKeys,
      sshCommands: ctx.sshCommands,
      internalToken: ctx.config.security.internalToken,
    });
    authorizedKeysRoute(scope, { sshKeys: ctx.sshKeys, users: ctx.users });
  });
  // Runner-facing actions endpoints and the artifact service, each in a scope of its own.
  await app.register(async (scope) =>
    actionsRunnerRoutes(scope, { runners: ctx.runners, enabled: ctx.config.actions.enabled }),
  );
  await app.register(async (scope) =>
    artifactServiceRoutes(scope, { artifacts: ctx.artifacts, content: ctx.artifactContent }),
  );
  await app.register(async (scope) => cacheRoutes(scope, { cache: ctx.actionsCache }));
  await registryRoutes(app, ctx);
  // The web interface: pages for browsers, on sessions (never accepted by the API above).
  await app.register(cookie);
  await app.register(async (scope) => avatarFileRoutes(scope, { avatars: ctx.avatars }));
  const web = new Web({
    sessions: ctx.sessions,
    session: ctx.config.session,
    uploadLimit: ctx.config.attachment.maxSize,
    rootUrl: ctx.config.server.rootUrl,
    uploadsDir: uploadsTempDir(ctx.config.server.appDataPath),
    notifications: ctx.notifications,
    codeSearch: ctx.config.indexer.repoIndexerEnabled,
    feeds: ctx.config.other.enableFeed,
  });
  await registerWeb(app, web, webPages(ctx));
  setNotFoundPage(app, (request, reply) => web.notFoundPage(request, reply));
  return app;
}
