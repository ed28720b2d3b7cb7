// The application context: configuration, database and the domain services, wired once and
// shared by the HTTP server and the CLI.
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { openDatabase } from '../db/database.js';
import { UserService } from '../users/service.js';
import { TokenService } from '../tokens/service.js';
import { OrgService } from '../orgs/service.js';
import { QuotaService } from '../quota/service.js';
import { RepoService } from '../repos/service.js';
import { EventBus } from '../events/bus.js';
import { PushRegistry } from '../git/pushes.js';
import { Authenticator } from '../auth/identity.js';
import { closeStorage, openStorage } from '../storage/backends.js';
import { Sweeper } from '../storage/sweep.js';
import { LfsService } from '../lfs/service.js';
import { ProtectionService } from '../protection/service.js';
import { StatusService } from '../statuses/service.js';
import { MirrorService } from '../mirrors/service.js';
import { IssueService } from '../issues/service.js';
import { IssueListService } from '../issues/lists.js';
import { IssueTriageService } from '../issues/triage.js';
import { CommentService } from '../issues/comments.js';
import { CommitReferences } from '../issues/commit-refs.js';
import { MarkupService } from '../markup/service.js';
import { DependencyService } from '../issues/dependencies.js';
import { TimeService } from '../issues/times.js';
import { LabelService } from '../labels/service.js';
import { MilestoneService } from '../milestones/service.js';
import { ProjectService } from '../projects/service.js';
import { PulseService } from '../activities/pulse.js';
import { AttachmentService } from '../attachments/service.js';
import { ReleaseService } from '../releases/service.js';
import { NotificationService } from '../notifications/service.js';
import { WebhookService } from '../webhooks/service.js';
import { DeliveryQueue } from '../webhooks/queue.js';
import { WebhookDispatcher } from '../webhooks/dispatch.js';
import { Payloads } from '../webhooks/payloads.js';
import { HookSecrets } from '../webhooks/secrets.js';
import { MailQueue } from '../mail/queue.js';
import { MailNotifier } from '../mail/notify.js';
import { AccountMail } from '../mail/service.js';
import { createSender } from '../mail/sender.js';
import { PullService } from '../pulls/service.js';
import { PullReviewService } from '../pulls/reviewing.js';
import { MergeabilityService } from '../pulls/mergeability.js';
import { MergeService } from '../pulls/merging.js';
import { AutoMergeService } from '../pulls/automerge.js';
import { PullPresenter } from '../pulls/present.js';
import { IssuePresenter } from '../issues/present.js';
import { ActionsService } from '../actions/service.js';
import { RunnerService } from '../actions/runners.js';
import { RunControl } from '../actions/run-control.js';
import { JobStatuses } from '../actions/commit-status.js';
import { ArtifactService } from '../artifacts/service.js';
import { ArtifactContent } from '../artifacts/content.js';
import { CacheService } from '../actions/cache-service.js';
import { ForkService } from '../repos/forks.js';
import { RefChanges } from '../repos/ref-changes.js';
import { RepoTransfers } from '../repos/transfers.js';
import { Collaborators } from '../repos/collaborators.js';
import { RepoPresenter } from '../repos/present.js';
import { GitDataService } from '../git/data-service.js';
import { GitRefService } from '../git/data-refs.js';
import { GitFileService } from '../git/data-files.js';
import { SshCommands } from '../ssh/command.js';
import { RefRecovery } from '../repos/recovery.js';
import { GenerateService } from '../repos/generate.js';
import { UnadoptedService } from '../repos/unadopted.js';
import { PackageService } from '../packages/service.js';
import { ContainerService } from '../packages/container/service.js';
import { createPackageFormats } from './package-formats.js';
import { ContainerBlobs } from '../packages/container/blobs.js';
import { RegistryTokens } from '../packages/container/tokens.js';
import { SessionService } from '../sessions/service.js';
import { SignInThrottle } from '../sessions/throttle.js';
import { TwoFactorService } from '../twofa/service.js';
import { uploadsTempDir } from '../web/uploads.js';
import { SocialService } from '../social/service.js';
import { ActivityService } from '../activities/service.js';
import { PackageCleanup } from '../packages/cleanup/service.js';
import { OpsService } from '../ops/service.js';
import { Metrics } from '../ops/metrics.js';
import { CronService } from '../cron/service.js';
import { registerSchedules } from './schedules.js';
import { ScheduleService } from '../actions/schedules.js';
import { NoticeType } from '../ops/tables.js';
import { TopicService } from '../topics/service.js';
import { AvatarService } from '../avatars/service.js';
import { OAuth2Service } from '../oauth2/service.js';
import { OAuth2Provider } from '../oauth2/provider.js';
import { OAuth2Tokens } from '../oauth2/issuer.js';
import { RepoMetaService } from '../repometa/service.js';
import { WikiService } from '../wiki/service.js';
import { SshKeyService } from '../ssh/service.js';
import { SigningService } from '../signing/service.js';
import { Cluster } from '../cluster/service.js';
import { configurePasswordHashing } from '../auth/password.js';

import type { AppContext, Contributions } from './app-context.js';
export type { AppContext, Contributions } from './app-context.js';

export async function createContext(config: Config, log: Logger): Promise<AppContext> {
  configurePasswordHashing(config.security.passwordHash);
  const storage = await openStorage(config.storage);
  const database = await openDatabase(config);
  const { db } = database;
  const cluster = new Cluster({ db, log, cluster: config.cluster, database: config.database });
  // Events with every-node listeners (caches) reach the other processes too.
  const events = new EventBus({ log, cluster });
  const repos = new RepoService({ db, root: config.repository.root, events, log });
  const refChanges = new RefChanges({ db, events, repos, node: config.cluster.nodeName });
  const contributions: Contributions = {
    owned: [repos.ownedResources()],
    usageSources: [repos.usageSource()],
    quotaItems: {},
    blobReferences: [],
  };
  const users = new UserService({ db, owned: contributions.owned, log });
  const tokens = new TokenService({ db, cluster });
  const orgs = new OrgService({ db, owned: contributions.owned });
  const quota = new QuotaService({
    db,
    settings: config.quota,
    usageSources: contributions.usageSources,
    quotaItems: contributions.quotaItems,
  });
  // One limiter of password sign-in for the web's form and Basic authentication.
  const signInThrottle = new SignInThrottle({ db, users, settings: config.security.signInThrottle });
  // Two-factor authentication: wrong passcodes count in the same limiter as wrong passwords.
  const twoFactor = new TwoFactorService({
    db,
    secretKey: config.security.secretKey,
    throttle: signInThrottle,
    issuer: `Anvil (${new URL(config.server.rootUrl).hostname})`,
  });
  const auth = new Authenticator({
    users,
    tokens,
    proxy: {
      enabled: config.service.enableReverseProxyAuthenticationApi,
      header: config.security.reverseProxyAuthenticationUser,
      trusted: config.security.reverseProxyTrustedProxies,
    },
    passwords: signInThrottle,
    secondFactor: twoFactor,
  });
  // A push the checks allowed is written down before git moves a ref (see repos/recovery.ts).
  const pushes = new PushRegistry({ intents: refChanges });
  const recovery = new RefRecovery({ db, repos, refChanges, log });
  // Domains built on the core: each registers its contributions, push checks and event listeners.
  const lfs = new LfsService({
    db,
    log,
    events,
    blobs: storage.lfs,
    quota,
    repos,
    usageSources: contributions.usageSources,
    blobReferences: contributions.blobReferences,
  });
  const protection = new ProtectionService({ db, log, pushes: pushes, repos, users });
  const statuses = new StatusService({ db, events, repos });
  const rootUrl = config.server.rootUrl;
  const forks = new ForkService({
    db,
    events,
    log,
    repos,
    refChanges,
    orgs,
    quota,
    protection: protection,
    repository: config.repository,
  });
  const repoTransfers = new RepoTransfers({ db, events, repos });
  const collaborators = new Collaborators({ db });
  const generator = new GenerateService({
    db,
    repos,
    orgs,
    root: config.repository.root,
    rootUrl,
    ssh: config.ssh,
  });
  const unadopted = new UnadoptedService({ db, repos, root: config.repository.root });
  const labels = new LabelService({ db, repos });
  const milestones = new MilestoneService({ db });
  const projects = new ProjectService({ db });
  const pulse = new PulseService({ db, repos });
  const social = new SocialService({ db });
  const times = new TimeService({ db, users });
  const issues = new IssueService({
    db,
    events,
    log,
    users,
    repos,
    social: social,
    labels: labels,
    milestones: milestones,
    times: times,
  });
  const commitReferences = new CommitReferences({ events, log, repos, users, issues: issues });
  const issueLists = new IssueListService({
    db,
    users,
    orgs,
    repos,
    labels: labels,
    milestones: milestones,
    issues: issues,
  });
  const issueTriage = new IssueTriageService({ db, events, labels: labels });
  const issueComments = new CommentService({ db, events, log, social: social, issues: issues });
  const dependencies = new DependencyService({ db, users, repos, issues: issues });
  const releases = new ReleaseService({ db, events, log, repos, refChanges, protection: protection });
  const attachments = new AttachmentService({
    db,
    log,
    blobs: storage.attachments,
    settings: config.attachment,
    rootUrl: config.server.rootUrl,
    quota,
    users,
    repos,
    issues: issues,
    releases: releases,
    usageSources: contributions.usageSources,
    quotaItems: contributions.quotaItems,
    blobReferences: contributions.blobReferences,
  });
  const notifications = new NotificationService({
    db,
    events,
    users,
    orgs,
    repos,
    issues: issues,
    social: social,
    autoWatchNewRepos: config.service.autoWatchNewRepos,
  });
  const topics = new TopicService({ db, repos });
  const markup = new MarkupService({ users, rootUrl: config.server.rootUrl });
  const avatars = new AvatarService({
    db,
    blobs: storage.avatars,
    blobReferences: contributions.blobReferences,
    picture: config.picture,
  });
  const oauth2 = new OAuth2Service({ db });
  // The OAuth2 provider: consent and codes, then tokens accepted wherever access tokens are.
  const oauth2Provider = new OAuth2Provider({ db, enabled: config.oauth2.enabled });
  const oauth2Tokens = new OAuth2Tokens({
    db,
    auth,
    orgs,
    settings: {
      enabled: config.oauth2.enabled,
      accessTokenTtl: config.oauth2.accessTokenExpirationTime,
      refreshTokenTtl: config.oauth2.refreshTokenExpirationTime * 3600,
      invalidateRefreshTokens: config.oauth2.invalidateRefreshTokens,
      jwtSecret: config.oauth2.jwtSecret,
      secretKey: config.security.secretKey,
      rootUrl,
    },
  });
  const repoMeta = new RepoMetaService({ db, events, log, repos });
  const sshKeys = new SshKeyService({
    db,
    auth,
    users,
    repos,
    minimumKeySizes: config.ssh.minimumKeySizes,
    secretKey: config.security.secretKey,
  });
  const wiki = new WikiService({ events, repos, rootUrl });
  const activities = new ActivityService({ db, events, cluster, repos, users, issues: issues });
  // SSH signatures are checked against users' SSH keys (the ssh domain).
  const signing = new SigningService({
    db,
    log,
    signing: config.repository.signing,
    secretKey: config.security.secretKey,
    cluster,
    users,
    sshKeys: {
      byFingerprint: async (fp) => {
        const { user } = await sshKeys.byFingerprint(fp);
        return user && { userId: user.owner_id, fingerprint: user.fingerprint };
      },
    },
  });
  // Verifications of commits signed with SSH keys are forgotten when users' keys change.
  sshKeys.onKeysChanged(() => signing.keysChanged());
  const repoPresenter = new RepoPresenter({
    rootUrl,
    ssh: config.ssh,
    users,
    orgs,
    repos,
    transfers: repoTransfers,
    issues: issues,
    topics: topics,
    languages: repoMeta,
    releases: releases,
  });
  const gitData = new GitDataService({ db, repos, users, signing: signing, lfs: lfs, rootUrl });
  const pullReviews = new PullReviewService({ db, events, repos, users, protection: protection });
  const pullMergeability = new MergeabilityService({
    db,
    events,
    log,
    repos,
    protection: protection,
    statuses: statuses,
    reviews: pullReviews,
  });
  const pulls = new PullService({
    db,
    events,
    repos,
    users,
    issues: issues,
    issueLists: issueLists,
    issueTriage: issueTriage,
    labels: labels,
    milestones: milestones,
    social: social,
    signing: signing,
    background: pullMergeability,
  });
  const gitRefs = new GitRefService({
    reader: gitData,
    repos: refChanges,
    protection: protection,
    quota,
    pulls: pulls,
    rootUrl,
  });
  const gitFiles = new GitFileService({ reader: gitData, refs: gitRefs });
  const pullMerges = new MergeService({
    db,
    events,
    log,
    repos,
    refChanges,
    users,
    issues: issues,
    labels: labels,
    milestones: milestones,
    protection: protection,
    signing: signing,
    mergeability: pullMergeability,
    recovery: recovery,
  });
  const autoMerge = new AutoMergeService({
    db,
    events,
    log,
    cluster,
    repos,
    users,
    mergeability: pullMergeability,
    merging: pullMerges,
  });
  const issuePresenter = new IssuePresenter({
    rootUrl: config.server.rootUrl,
    users,
    repos,
    issues: issues,
    labels: labels,
    milestones: milestones,
    times: times,
  });
  const pullPresenter = new PullPresenter({
    issues: issuePresenter,
    repos,
    users,
    repoPresenter: repoPresenter,
    pulls: pulls,
    reviews: pullReviews,
    rootUrl: config.server.rootUrl,
  });
  const sweeper = new Sweeper({
    storage,
    repoRoot: config.repository.root,
    blobReferences: contributions.blobReferences,
    log,
    temporaryDirs: { uploads: uploadsTempDir(config.server.appDataPath) },
  });
  const sessions = new SessionService({
    db,
    users,
    secretKey: config.security.secretKey,
    lifetime: config.session.lifetime,
    throttle: signInThrottle,
  });
  const ops = new OpsService({ db, storage, log });
  const metrics = new Metrics({ enabled: config.metrics.enabled, gauges: ops });
  // Webhooks: managed hooks, the listeners that turn events into deliveries, the delivery queue.
  const webhookSecrets = new HookSecrets(config.security.secretKey);
  const webhookQueue = new DeliveryQueue({
    db,
    dialect: database.dialect,
    log,
    settings: config.webhook,
    leaseSeconds: config.cluster.leaseSeconds,
    metrics: metrics,
    secrets: webhookSecrets,
    repos,
    rootUrl: config.server.rootUrl,
  });
  const webhookPayloads = new Payloads({
    db,
    repos,
    users,
    repoPresenter: repoPresenter,
    attachments: attachments,
    issues: issuePresenter,
    pulls: pullPresenter,
    rootUrl: config.server.rootUrl,
    ssh: config.ssh,
  });
  const webhookDispatcher = new WebhookDispatcher({
    db,
    events,
    repos,
    issues: issues,
    pulls: pulls,
    users,
    payloads: webhookPayloads,
    queue: webhookQueue,
    rootUrl: config.server.rootUrl,
  });
  const webhooks = new WebhookService({
    db,
    repos,
    payloads: webhookPayloads,
    queue: webhookQueue,
    secrets: webhookSecrets,
  });
  // Mail: the durable queue (its worker started by `anvil web`), notification mail from the event
  // bus, and the mail of accounts (password reset, confirmation).
  const mailQueue = new MailQueue({
    db,
    dialect: database.dialect,
    log,
    settings: config.mailer,
    leaseSeconds: config.cluster.leaseSeconds,
    sender: () => createSender(config.mailer),
  });
  const mailNotifier = new MailNotifier({
    db,
    events,
    users,
    repos,
    issues,
    queue: mailQueue,
    rootUrl: config.server.rootUrl,
  });
  const accountMail = new AccountMail({
    db,
    queue: mailQueue,
    users,
    secretKey: config.security.secretKey,
    rootUrl: config.server.rootUrl,
    siteName: 'Anvil',
    activeCodeLiveMinutes: config.service.activeCodeLiveMinutes,
    resetPasswdCodeLiveMinutes: config.service.resetPasswdCodeLiveMinutes,
  });
  // The scheduled tasks administrators list and start (/admin/cron), by Forgejo's names.
  const cron = new CronService({ log, metrics: metrics });
  // A failed background task leaves a notice for the administrators (/admin/notices).
  cron.onFailure((name, err) => {
    const message = err instanceof Error ? err.message : String(err);
    ops.addNotice(NoticeType.Task, `Background job ${name} failed: ${message}`).catch((e: unknown) => {
      log.error({ err: e }, 'recording a notice failed');
    });
  });
  const sshCommands = new SshCommands({
    sshKeys: sshKeys,
    repos,
    users,
    pushes: pushes,
    refChanges,
    wiki: wiki,
    metrics: metrics,
    log,
    rootUrl,
    localRootUrl: config.server.localRootUrl,
  });
  const mirrors = new MirrorService({
    db,
    events,
    log,
    repos,
    refChanges,
    orgs,
    forks: forks,
    cron: cron,
    leases: cluster.leases,
    mirror: config.mirror,
    migrations: config.migrations,
    root: config.repository.root,
    leaseSeconds: config.cluster.leaseSeconds,
    secretKey: config.security.secretKey,
  });
  // Actions, artifacts and packages (after the cron service: their background jobs report to it).
  const actions = new ActionsService({
    db,
    events,
    log,
    enabled: config.actions.enabled,
    secretKey: config.security.secretKey,
    rootUrl: config.server.rootUrl,
    auth,
    users,
    repos,
  });
  const runners = new RunnerService({
    db,
    log,
    cluster,
    settings: config.actions,
    secretKey: config.security.secretKey,
    rootUrl: config.server.rootUrl,
    users,
    repos,
    actions: actions,
  });
  const runControl = new RunControl({ db, actions, runners, repos });
  const workflowSchedules = new ScheduleService({ db, events, log, actions, repos, cron });
  // Commit statuses follow the jobs (told by actions.runChanged).
  const jobStatuses = new JobStatuses({
    db,
    log,
    rootUrl: config.server.rootUrl,
    statuses,
    repos,
    users,
    actions,
  });
  const artifactContent = new ArtifactContent({
    db,
    log,
    blobs: storage.artifacts,
    secretKey: config.security.secretKey,
  });
  const artifacts = new ArtifactService({
    db,
    log,
    blobs: storage.artifacts,
    settings: config.actions,
    secretKey: config.security.secretKey,
    rootUrl: config.server.rootUrl,
    quota,
    repos,
    runs: actions,
    cron: cron,
    cluster,
    usageSources: contributions.usageSources,
    quotaItems: contributions.quotaItems,
    blobReferences: contributions.blobReferences,
  });
  const actionsCache = new CacheService({
    db,
    log,
    blobs: storage.artifacts,
    settings: config.actions,
    secretKey: config.security.secretKey,
    rootUrl: config.server.rootUrl,
    scopes: {
      scopeOf: async (runId) => {
        const run = await actions.runRef(runId);
        const repo = run && (await repos.getById(run.repoId));
        return repo && { ...run!, defaultRef: `refs/heads/${repo.default_branch}` };
      },
    },
    blobReferences: contributions.blobReferences,
  });
  const packages = new PackageService({
    db,
    log,
    events,
    blobs: storage.packages,
    settings: config.packages,
    rootUrl: config.server.rootUrl,
    quota,
    users,
    orgs,
    repos,
    usageSources: contributions.usageSources,
    quotaItems: contributions.quotaItems,
    owned: contributions.owned,
    blobReferences: contributions.blobReferences,
  });
  const formats = createPackageFormats({
    db,
    packages,
    events,
    users,
    repos,
    rootUrl: config.server.rootUrl,
    paging: config.api,
  });
  const containerImages = new ContainerService({
    db,
    events,
    blobs: storage.packages,
    rootUrl: config.server.rootUrl,
    packages,
  });
  const containerBlobs = new ContainerBlobs({ db, blobs: storage.packages, packages });
  const registryTokens = new RegistryTokens({ secretKey: config.security.secretKey, users });
  const packageCleanup = new PackageCleanup({
    db,
    log,
    blobs: storage.packages,
    settings: config.cron.cleanupPackages,
    users,
    orgs,
    packages,
    cron: cron,
    cluster,
  });
  registerSchedules({
    config,
    cron,
    cluster,
    workflowSchedules,
    packageCleanup,
    mirrors,
    artifacts,
    actionsCache,
    recovery,
    sweeper,
    quota,
  });
  // Background work (started by `anvil web`) ends before the database closes. Each periodic task
  // runs under a lease (`task:<name>`, cluster/), so of several processes one runs it at a time.
  const close = async () => {
    cluster.stopSchedules();
    await recovery.stop();
    await autoMerge.stop();
    await mirrors.stop();
    await webhooks.stop();
    await mailQueue.stop();
    await artifacts.stop();
    await runners.stop();
    await workflowSchedules.stop();
    await jobStatuses.idle();
    await sweeper.stop();
    await packageCleanup.stop();
    await packages.stop();
    await cluster.close();
    await database.close();
    closeStorage(storage);
  };
  return {
    config,
    db,
    dialect: database.dialect,
    log,
    paging: config.api,
    users,
    tokens,
    orgs,
    quota,
    repos,
    refChanges,
    repoTransfers,
    collaborators,
    repoPresenter,
    gitData,
    gitRefs,
    gitFiles,
    sshCommands,
    events,
    pushes,
    auth,
    storage,
    contributions,
    sweeper,
    lfs,
    protection,
    statuses,
    mirrors,
    issues,
    issueLists,
    issueTriage,
    issueComments,
    commitReferences,
    dependencies,
    times,
    labels,
    milestones,
    projects,
    pulse,
    attachments,
    releases,
    notifications,
    webhooks,
    webhookQueue,
    webhookDispatcher,
    mailQueue,
    mailNotifier,
    accountMail,
    pulls,
    pullReviews,
    pullMergeability,
    pullMerges,
    autoMerge,
    pullPresenter,
    actions,
    runners,
    runControl,
    workflowSchedules,
    jobStatuses,
    artifacts,
    artifactContent,
    actionsCache,
    forks,
    generator,
    unadopted,
    recovery,
    packages,
    ...formats,
    containerImages,
    containerBlobs,
    registryTokens,
    sessions,
    twoFactor,
    social,
    activities,
    packageCleanup,
    cron,
    topics,
    markup,
    avatars,
    oauth2,
    oauth2Provider,
    oauth2Tokens,
    repoMeta,
    ops,
    metrics,
    sshKeys,
    signing,
    wiki,
    cluster,
    close,
  };
}
