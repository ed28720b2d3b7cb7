// The web pages of the site, in the order their routes are registered (server.ts registers them
// under the web plugin): each domain's pages given the services they call.
import type { AppContext } from './context.js';
import { VERSION } from '../version.js';
import { type PageRoutes } from '../web/plugin.js';
import { accountSettingsPages } from '../users/settings-pages.js';
import { settingsListsPages } from '../users/settings-lists-pages.js';
import { userPages } from '../users/pages.js';
import { twoFactorPages, twoFactorSignInStep } from '../twofa/pages.js';
import { mailPages } from '../mail/pages.js';
import { webhookPages } from '../webhooks/pages.js';
import { actionsPages } from '../actions/pages.js';
import { mirrorPages } from '../mirrors/pages.js';
import { lfsPages } from '../lfs/pages.js';
import { orgPages } from '../orgs/pages.js';
import { orgTeamPages } from '../orgs/team-pages.js';
import { orgSettingsPages } from '../orgs/settings-pages.js';
import { repoListPages } from '../repos/pages.js';
import { codePages } from '../repos/code-pages.js';
import { editorPages } from '../repos/editor-pages.js';
import { branchPages } from '../repos/branch-pages.js';
import { graphPages } from '../repos/graph-pages.js';
import { GraphService } from '../git/graph.js';
import { searchPages } from '../repos/search-pages.js';
import { socialListPages } from '../social/list-pages.js';
import { CodeSearchService } from '../git/search.js';
import { releaseForms } from '../releases/forms.js';
import { releasePages } from '../releases/pages.js';
import { issuePages } from '../issues/pages.js';
import { issueFormPages } from '../issues/form-pages.js';
import { labelPages } from '../labels/pages.js';
import { milestonePages } from '../milestones/pages.js';
import { projectPages } from '../projects/pages.js';
import { pulsePages } from '../activities/pulse-pages.js';
import { feedPages } from '../activities/feed-pages.js';
import { contributorsPages } from '../activities/contributors-pages.js';
import { ContributorsService } from '../activities/contributors.js';
import { actionState, socialPages } from '../social/pages.js';
import { pullPages } from '../pulls/pages.js';
import type { DiffLimits } from '../web/diff.js';
import { tokenPages } from '../tokens/pages.js';
import { oauth2Pages } from '../oauth2/pages.js';
import { keyPages } from '../ssh/pages.js';
import { wikiPages } from '../wiki/pages.js';
import { quotaPages } from '../quota/pages.js';
import { quotaAdminPages } from '../quota/admin-pages.js';
import { notificationPages } from '../notifications/pages.js';
import { threadsJson } from '../notifications/present.js';
import { dashboardPages } from '../issues/dashboard-pages.js';
import { repoSettingsPages } from '../repos/settings-pages.js';
import { collaborationPages } from '../repos/collaboration-pages.js';
import { protectionPages } from '../protection/pages.js';
import { deployKeyPages } from '../ssh/deploy-key-pages.js';
import { feedFor } from '../activities/pages.js';
import { opsAdminPages } from '../ops/admin-pages.js';
import { userAdminPages } from '../users/admin-pages.js';
import { repoAdminPages } from '../repos/admin-pages.js';
import { packageAdminPages } from '../packages/admin-pages.js';
import { packagePages } from '../packages/pages.js';
import { packageOwnPages } from '../packages/pages-package.js';
import { chefPages } from '../packages/chef/pages.js';
import { hookAdminPages } from '../webhooks/admin-pages.js';
import { runnerAdminPages } from '../actions/admin-pages.js';
import { runPages } from '../actions/run-pages.js';

const diffLimitsOf = ({ git }: AppContext['config']): DiffLimits => ({
  lines: git.maxDiffLines,
  lineCharacters: git.maxDiffLineCharacters,
  files: git.maxDiffFiles,
});

export const webPages = (ctx: AppContext): PageRoutes[] => [
  userPages({
    users: ctx.users,
    orgs: ctx.orgs,
    sessions: ctx.sessions,
    signInStep: twoFactorSignInStep(ctx.twoFactor),
    disableRegistration: ctx.config.service.disableRegistration,
    // As Forgejo: without mail, REGISTER_EMAIL_CONFIRM cannot be followed and is ignored.
    emailConfirm:
      ctx.config.service.registerEmailConfirm && ctx.config.mailer.enabled ? ctx.accountMail : undefined,
    pageSize: ctx.config.api.defaultPagingNum,
  }),
  twoFactorPages({ twofa: ctx.twoFactor, users: ctx.users }),
  mailPages({ accountMail: ctx.accountMail }),
  accountSettingsPages({ users: ctx.users, sessions: ctx.sessions, avatars: ctx.avatars }),
  settingsListsPages({
    users: ctx.users,
    social: ctx.social,
    orgs: ctx.orgs,
    repos: ctx.repos,
    unadopted: ctx.unadopted,
    pageSize: ctx.config.api.defaultPagingNum,
  }),
  orgPages({ orgs: ctx.orgs, users: ctx.users, repos: ctx.repos, collaborators: ctx.collaborators }),
  orgTeamPages({ orgs: ctx.orgs, users: ctx.users, repos: ctx.repos, collaborators: ctx.collaborators }),
  orgSettingsPages({
    orgs: ctx.orgs,
    users: ctx.users,
    labels: ctx.labels,
    social: ctx.social,
    avatars: ctx.avatars,
  }),
  repoListPages({
    repos: ctx.repos,
    forks: ctx.forks,
    users: ctx.users,
    orgs: ctx.orgs,
    feed: (user, viewer) => feedFor(ctx, user, viewer),
    pageSize: ctx.config.api.defaultPagingNum,
  }),
  searchPages({
    codeSearch: new CodeSearchService({ gitData: ctx.gitData, repos: ctx.repos, users: ctx.users }),
    siteSearch: ctx.config.indexer.repoIndexerEnabled,
  }),
  codePages({
    gitData: ctx.gitData,
    actionState: (repo, user) => actionState(ctx, repo, user),
    repos: ctx.repos,
    rootUrl: ctx.config.server.rootUrl,
    pageSize: ctx.config.api.defaultPagingNum,
    maxDisplayFileSize: ctx.config.ui.maxDisplayFileSize,
    diffLimits: diffLimitsOf(ctx.config),
  }),
  editorPages({ gitData: ctx.gitData, gitFiles: ctx.gitFiles }),
  branchPages({ gitData: ctx.gitData, gitRefs: ctx.gitRefs, repos: ctx.repos }),
  graphPages({ gitData: ctx.gitData, graph: new GraphService({ repos: ctx.repos }) }),
  releaseForms({ repos: ctx.repos, users: ctx.users, releases: ctx.releases, attachments: ctx.attachments }),
  releasePages({
    repos: ctx.repos,
    users: ctx.users,
    releases: ctx.releases,
    attachments: ctx.attachments,
    rootUrl: ctx.config.server.rootUrl,
  }),
  issuePages({
    repos: ctx.repos,
    users: ctx.users,
    issues: ctx.issues,
    issueLists: ctx.issueLists,
    issueComments: ctx.issueComments,
    labels: ctx.labels,
    milestones: ctx.milestones,
    projects: ctx.projects,
    orgs: ctx.orgs,
    attachments: ctx.attachments,
    repoMeta: ctx.repoMeta,
    pageSize: ctx.config.api.defaultPagingNum,
    rootUrl: ctx.config.server.rootUrl,
  }),
  issueFormPages({
    repos: ctx.repos,
    users: ctx.users,
    issues: ctx.issues,
    issueComments: ctx.issueComments,
    issueTriage: ctx.issueTriage,
    attachments: ctx.attachments,
  }),
  pullPages({
    pulls: ctx.pulls,
    reviews: ctx.pullReviews,
    mergeability: ctx.pullMergeability,
    merging: ctx.pullMerges,
    autoMerge: ctx.autoMerge,
    statuses: ctx.statuses,
    git: ctx.gitData,
    issues: ctx.issues,
    issueComments: ctx.issueComments,
    repos: ctx.repos,
    users: ctx.users,
    labels: ctx.labels,
    milestones: ctx.milestones,
    projects: ctx.projects,
    orgs: ctx.orgs,
    attachments: ctx.attachments,
    diffLimits: diffLimitsOf(ctx.config),
    rootUrl: ctx.config.server.rootUrl,
  }),
  labelPages({ repos: ctx.repos, users: ctx.users, labels: ctx.labels }),
  milestonePages({ repos: ctx.repos, users: ctx.users, milestones: ctx.milestones }),
  projectPages({
    repos: ctx.repos,
    users: ctx.users,
    orgs: ctx.orgs,
    issues: ctx.issues,
    labels: ctx.labels,
    projects: ctx.projects,
  }),
  pulsePages({ repos: ctx.repos, users: ctx.users, pulse: ctx.pulse }),
  contributorsPages({
    repos: ctx.repos,
    users: ctx.users,
    contributors: new ContributorsService({ db: ctx.db, repos: ctx.repos }),
  }),
  ...(ctx.config.other.enableFeed
    ? [
        feedPages({
          activities: ctx.activities,
          repos: ctx.repos,
          users: ctx.users,
          orgs: ctx.orgs,
          releases: ctx.releases,
          gitData: ctx.gitData,
          rootUrl: ctx.config.server.rootUrl,
        }),
      ]
    : []),
  socialPages({
    repos: ctx.repos,
    users: ctx.users,
    social: ctx.social,
    notifications: ctx.notifications,
  }),
  socialListPages({
    repos: ctx.repos,
    users: ctx.users,
    social: ctx.social,
    forks: ctx.forks,
    pageSize: ctx.config.api.defaultPagingNum,
  }),
  wikiPages({ wiki: ctx.wiki, users: ctx.users, rootUrl: ctx.config.server.rootUrl }),
  quotaPages({
    quota: ctx.quota,
    repos: ctx.repos,
    lfs: ctx.lfs,
    orgs: ctx.orgs,
    pageSize: ctx.config.api.defaultPagingNum,
  }),
  quotaAdminPages({ quota: ctx.quota, users: ctx.users, pageSize: ctx.config.api.defaultPagingNum }),
  notificationPages({
    notifications: ctx.notifications,
    threads: (rows, viewer) =>
      threadsJson(
        {
          rootUrl: ctx.config.server.rootUrl,
          ssh: ctx.config.ssh,
          repos: ctx.repos,
          users: ctx.users,
          issues: ctx.issues,
          notifications: ctx.notifications,
        },
        rows,
        viewer,
      ),
    issueLists: ctx.issueLists,
    repos: ctx.repos,
    users: ctx.users,
    pageSize: ctx.config.api.defaultPagingNum,
  }),
  dashboardPages({
    issueLists: ctx.issueLists,
    milestones: ctx.milestones,
    users: ctx.users,
    pageSize: ctx.config.api.defaultPagingNum,
  }),
  // A repository's settings (repos/settings-pages.tsx and the pages beside it).
  repoSettingsPages({ repos: ctx.repos, transfers: ctx.repoTransfers, users: ctx.users, orgs: ctx.orgs }),
  collaborationPages({
    repos: ctx.repos,
    collaborators: ctx.collaborators,
    users: ctx.users,
    orgs: ctx.orgs,
  }),
  protectionPages({ repos: ctx.repos, users: ctx.users, protection: ctx.protection }),
  deployKeyPages({ repos: ctx.repos, users: ctx.users, sshKeys: ctx.sshKeys }),
  tokenPages({ tokens: ctx.tokens, oauth2: ctx.oauth2, provider: ctx.oauth2Provider }),
  oauth2Pages({ tokens: ctx.tokens, oauth2: ctx.oauth2, provider: ctx.oauth2Provider }),
  keyPages({ sshKeys: ctx.sshKeys, gpg: ctx.signing, signing: ctx.signing }),
  // The site administration (/admin...).
  opsAdminPages({
    ops: ctx.ops,
    cron: ctx.cron,
    config: ctx.config,
    version: VERSION.api,
    pageSize: ctx.config.api.defaultPagingNum,
  }),
  userAdminPages({ users: ctx.users, pageSize: ctx.config.api.defaultPagingNum }),
  repoAdminPages({
    repos: ctx.repos,
    users: ctx.users,
    unadopted: ctx.unadopted,
    pageSize: ctx.config.api.defaultPagingNum,
  }),
  packageAdminPages({ packages: ctx.packages, users: ctx.users, pageSize: ctx.config.api.defaultPagingNum }),
  packagePages({
    packages: ctx.packages,
    rootUrl: ctx.config.server.rootUrl,
    pageSize: ctx.config.api.defaultPagingNum,
  }),
  packageOwnPages({
    packages: ctx.packages,
    repos: ctx.repos,
    users: ctx.users,
    pageSize: ctx.config.api.defaultPagingNum,
  }),
  chefPages({ chef: ctx.chefPackages }),
  hookAdminPages({ webhooks: ctx.webhooks, maxItems: ctx.config.api.maxResponseItems }),
  runnerAdminPages({ actions: ctx.actions, runners: ctx.runners, pageSize: ctx.config.api.defaultPagingNum }),
  webhookPages({ webhooks: ctx.webhooks, repos: ctx.repos, orgs: ctx.orgs }),
  actionsPages({ actions: ctx.actions, runners: ctx.runners, repos: ctx.repos, orgs: ctx.orgs }),
  runPages({
    actions: ctx.actions,
    control: ctx.runControl,
    repos: ctx.repos,
    users: ctx.users,
    artifacts: ctx.artifacts,
    pageSize: ctx.config.api.defaultPagingNum,
  }),
  mirrorPages({ mirrors: ctx.mirrors, repos: ctx.repos }),
  lfsPages({ lfs: ctx.lfs, repos: ctx.repos, pageSize: ctx.config.api.defaultPagingNum }),
];
