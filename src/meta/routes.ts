// Server metadata: version and the settings clients read to size their requests.
import { Type } from 'typebox';
import type { Config } from '../config/config.js';
import type { Api } from '../http/types.js';
import type { PagingSettings } from '../http/pagination.js';
import type { UserService } from '../users/service.js';
import { VERSION } from '../version.js';
import { notFound } from '../errors.js';
import { GITIGNORES, LICENSES } from '../repos/templates.js';

const ServerVersion = Type.Object({ version: Type.String() }, { title: 'ServerVersion' });
const GeneralAPISettings = Type.Object(
  {
    default_paging_num: Type.Integer(),
    max_response_items: Type.Integer(),
    default_git_trees_per_page: Type.Integer(),
    default_max_blob_size: Type.Integer(),
  },
  { title: 'GeneralAPISettings' },
);

const NodeInfo = Type.Object(
  {
    version: Type.String(),
    software: Type.Object(
      { name: Type.String(), version: Type.String(), repository: Type.String(), homepage: Type.String() },
      { title: 'NodeInfoSoftware' },
    ),
    protocols: Type.Array(Type.String()),
    services: Type.Object(
      { inbound: Type.Array(Type.String()), outbound: Type.Array(Type.String()) },
      { title: 'NodeInfoServices' },
    ),
    openRegistrations: Type.Boolean(),
    usage: Type.Object(
      {
        users: Type.Object(
          { total: Type.Integer(), activeHalfyear: Type.Integer(), activeMonth: Type.Integer() },
          { title: 'NodeInfoUsageUsers' },
        ),
        localPosts: Type.Integer(),
        localComments: Type.Integer(),
      },
      { title: 'NodeInfoUsage' },
    ),
    metadata: Type.Object({}, { additionalProperties: true }),
  },
  { title: 'NodeInfo' },
);

/** How many issues and comments the site has, for NodeInfo (issues/service.ts). */
export interface SiteCounts {
  siteCounts(): Promise<{ posts: number; comments: number }>;
}

export interface MetaRoutesDeps {
  users: Pick<UserService, 'activity'>;
  issues: SiteCounts;
  rootUrl: string;
  paging: PagingSettings;
  /** [attachment], as /settings/attachment shows it. */
  attachment: Config['attachment'];
  /** [service] DISABLE_REGISTRATION (NodeInfo's openRegistrations). */
  disableRegistration: boolean;
}

/** The NodeInfo 2.1 document: what software this is and how much it is used. */
async function nodeInfo(deps: MetaRoutesDeps) {
  const [people, posts] = await Promise.all([deps.users.activity(), deps.issues.siteCounts()]);
  return {
    version: '2.1',
    software: {
      name: 'anvil',
      version: VERSION.anvil,
      repository: '',
      homepage: deps.rootUrl,
    },
    protocols: [],
    services: { inbound: [], outbound: ['rss2.0'] },
    openRegistrations: !deps.disableRegistration,
    usage: {
      users: { total: people.total, activeHalfyear: people.halfYear, activeMonth: people.month },
      localPosts: posts.posts,
      localComments: posts.comments,
    },
    metadata: {},
  };
}

export function metaRoutes(app: Api, deps: MetaRoutesDeps): void {
  app.get(
    '/nodeinfo',
    {
      schema: {
        tags: ['miscellaneous'],
        operationId: 'getNodeInfo',
        summary: 'Returns the nodeinfo of the Anvil application',
        response: { 200: NodeInfo },
      },
    },
    async () => nodeInfo(deps),
  );

  app.get(
    '/version',
    {
      schema: {
        tags: ['miscellaneous'],
        summary: 'Returns the version of the running application',
        response: { 200: ServerVersion },
      },
    },
    async () => ({ version: VERSION.api }),
  );

  app.get(
    '/settings/api',
    {
      schema: {
        tags: ['settings'],
        summary: "Get instance's global settings for api",
        response: { 200: GeneralAPISettings },
      },
    },
    async () => ({
      default_paging_num: deps.paging.defaultPagingNum,
      max_response_items: deps.paging.maxResponseItems,
      default_git_trees_per_page: 1000,
      default_max_blob_size: 10485760,
    }),
  );

  app.get(
    '/settings/repository',
    {
      schema: {
        tags: ['settings'],
        summary: "Get instance's global settings for repositories",
        response: {
          200: Type.Object(
            {
              mirrors_disabled: Type.Boolean(),
              http_git_disabled: Type.Boolean(),
              migrations_disabled: Type.Boolean(),
              stars_disabled: Type.Boolean(),
              time_tracking_disabled: Type.Boolean(),
              lfs_disabled: Type.Boolean(),
              forks_disabled: Type.Boolean(),
            },
            { title: 'GeneralRepoSettings' },
          ),
        },
      },
    },
    async () => ({
      mirrors_disabled: false,
      http_git_disabled: false,
      migrations_disabled: false,
      stars_disabled: false,
      time_tracking_disabled: false,
      lfs_disabled: false,
      forks_disabled: false,
    }),
  );

  app.get(
    '/settings/ui',
    {
      schema: {
        tags: ['settings'],
        summary: "Get instance's global settings for ui",
        response: {
          200: Type.Object(
            {
              default_theme: Type.String(),
              allowed_reactions: Type.Array(Type.String()),
              custom_emojis: Type.Array(Type.String()),
            },
            { title: 'GeneralUISettings' },
          ),
        },
      },
    },
    async () => ({
      default_theme: 'forgejo-auto',
      allowed_reactions: ['+1', '-1', 'laugh', 'hooray', 'confused', 'heart', 'rocket', 'eyes'],
      custom_emojis: [],
    }),
  );

  app.get(
    '/settings/attachment',
    {
      schema: {
        tags: ['settings'],
        operationId: 'getGeneralAttachmentSettings',
        summary: "Get instance's global settings for Attachment",
        response: {
          200: Type.Object(
            {
              enabled: Type.Boolean(),
              allowed_types: Type.String(),
              max_size: Type.Integer({ description: 'MiB' }),
              max_files: Type.Integer(),
            },
            { title: 'GeneralAttachmentSettings' },
          ),
        },
      },
    },
    async () => {
      const a = deps.attachment;
      return {
        enabled: a.enabled,
        allowed_types: a.allowedTypes.join(','),
        max_size: Math.floor(a.maxSize / (1024 * 1024)),
        max_files: a.maxFiles,
      };
    },
  );

  const GitignoreTemplateInfo = Type.Object(
    { name: Type.String(), source: Type.String() },
    { title: 'GitignoreTemplateInfo' },
  );
  app.get(
    '/gitignore/templates',
    {
      schema: {
        tags: ['miscellaneous'],
        summary: 'Returns a list of all gitignore templates',
        response: { 200: Type.Array(Type.String()) },
      },
    },
    async () => Object.keys(GITIGNORES).sort(),
  );
  app.get(
    '/gitignore/templates/:name',
    {
      schema: {
        tags: ['miscellaneous'],
        summary: 'Returns information about a gitignore template',
        params: Type.Object({ name: Type.String() }),
        response: { 200: GitignoreTemplateInfo },
      },
    },
    async (request) => {
      const source = GITIGNORES[request.params.name];
      if (source === undefined)
        throw notFound(`gitignore template does not exist [name: ${request.params.name}]`);
      return { name: request.params.name, source };
    },
  );

  const licenseUrl = (key: string) => `${deps.rootUrl}api/v1/licenses/${encodeURIComponent(key)}`;
  app.get(
    '/licenses',
    {
      schema: {
        tags: ['miscellaneous'],
        summary: 'Returns a list of all license templates',
        response: {
          200: Type.Array(
            Type.Object(
              { key: Type.String(), name: Type.String(), url: Type.String() },
              { title: 'LicensesTemplateListEntry' },
            ),
          ),
        },
      },
    },
    async () =>
      Object.keys(LICENSES)
        .sort()
        .map((key) => ({ key, name: key, url: licenseUrl(key) })),
  );
  app.get(
    '/licenses/:name',
    {
      schema: {
        tags: ['miscellaneous'],
        summary: 'Returns information about a license template',
        params: Type.Object({ name: Type.String() }),
        response: {
          200: Type.Object(
            {
              key: Type.String(),
              name: Type.String(),
              url: Type.String(),
              body: Type.String(),
              implementation: Type.String(),
            },
            { title: 'LicenseTemplateInfo' },
          ),
        },
      },
    },
    async (request) => {
      const key = request.params.name;
      const text = LICENSES[key];
      if (!text) throw notFound(`license template does not exist [name: ${key}]`);
      return { key, name: key, url: licenseUrl(key), body: text('<copyright holders>'), implementation: '' };
    },
  );
}

/**
 * Routes outside /api/v1: /.well-known/nodeinfo (where the NodeInfo document is) and Forgejo's own
 * API's version (/api/forgejo/v1/version: the same string as /api/v1/version, as in Forgejo).
 */
export interface WellKnownRoutesDeps {
  rootUrl: string;
}

export function wellKnownRoutes(app: Api, deps: WellKnownRoutesDeps): void {
  app.get(
    '/api/forgejo/v1/version',
    {
      // Forgejo's second API, not part of the /api/v1 description.
      schema: { hide: true, response: { 200: ServerVersion } },
    },
    async () => ({ version: VERSION.api }),
  );
  app.get('/.well-known/nodeinfo', { schema: { hide: true } }, async () => ({
    links: [
      {
        rel: 'http://nodeinfo.diaspora.software/ns/schema/2.1',
        href: `${deps.rootUrl}api/v1/nodeinfo`,
      },
    ],
  }));
}
