// The application context: configuration, database and the domain services, wired once and
// shared by the HTTP server and the CLI.
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { openDatabase, type Db, type Dialect } from '../db/database.js';
import { UserService } from '../users/service.js';
import { TokenService } from '../tokens/service.js';
import { OrgService } from '../orgs/service.js';
import { QuotaService } from '../quota/service.js';
import type { UsageSource } from '../quota/usage.js';
import { RepoService } from '../repos/service.js';
import { EventBus } from '../events/bus.js';
import { PushRegistry } from '../git/pushes.js';
import { Authenticator } from '../auth/identity.js';
import type { OwnedResources } from '../users/owned.js';
import type { PagingSettings } from '../http/pagination.js';
import type { ItemSources } from '../quota/service.js';
import { type Storage } from '../storage/storage.js';
import { closeStorage, openStorage } from '../storage/backends.js';
import { SWEEP_INTERVAL_MS, Sweeper, type BlobReferences } from '../storage/sweep.js';
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
import { AttachmentService } from '../attachments/service.js';
import { ReleaseService } from '../releases/service.js';
import { NotificationService } from '../notifications/service.js';
import { WebhookService } from '../webhooks/service.js';
import { DeliveryQueue } from '../webhooks/queue.js';
import { WebhookDispatcher } from '../webhooks/dispatch.js';
import { Payloads } from '../webhooks/payloads.js';
import { HookSecrets } from '../webhooks/secrets.js';
import { PullService } from '../pulls/service.js';
import { PullReviewService } from '../pulls/reviewing.js';
import { MergeabilityService } from '../pulls/mergeability.js';
import { MergeService } from '../pulls/merging.js';
import { AutoMergeService } from '../pulls/automerge.js';
import { PullPresenter } from '../pulls/present.js';
import { IssuePresenter } from '../issues/present.js';
import { ActionsService } from '../actions/service.js';
import { RunnerService } from '../actions/runners.js';
import { ArtifactService } from '../artifacts/service.js';
import { ArtifactContent } from '../artifacts/content.js';
import { ForkService } from '../repos/forks.js';
import { CHECK_MS as RECOVERY_CHECK_MS, RefRecovery, STALE_INTENT_SECONDS } from '../repos/recovery.js';
import { GenerateService } from '../repos/generate.js';
import { UnadoptedService } from '../repos/unadopted.js';
import { PackageService } from '../packages/service.js';
import { NpmService } from '../packages/npm/service.js';
import { MavenService } from '../packages/maven/service.js';
import { PypiService } from '../packages/pypi/service.js';
import { CargoService } from '../packages/cargo/service.js';
import { CondaService } from '../packages/conda/service.js';
import { ContainerService } from '../packages/container/service.js';
import { ContainerBlobs } from '../packages/container/blobs.js';
import { RegistryTokens } from '../packages/container/tokens.js';
import { SessionService } from '../sessions/service.js';
import { SignInThrottle } from '../sessions/throttle.js';
import { uploadsTempDir } from '../web/uploads.js';
import { SocialService } from '../social/service.js';
import { ActivityService } from '../activities/service.js';
import { PackageCleanup } from '../packages/cleanup/service.js';
import { OpsService } from '../ops/service.js';
import { Metrics } from '../ops/metrics.js';
import { CronService, describeSchedule } from '../cron/service.js';
import { TopicService } from '../topics/service.js';
import { AvatarService } from '../avatars/service.js';
import { OAuth2Service } from '../oauth2/service.js';
import { RepoMetaService } from '../repometa/service.js';
import { WikiService } from '../wiki/service.js';
import { nextRunIn } from '../config/config.js';
import { SshKeyService } from '../ssh/service.js';
import { setSshCloneAddress } from '../repos/schemas.js';
import { SigningService } from '../signing/service.js';
import { Cluster } from '../cluster/service.js';
import { configurePasswordHashing } from '../auth/password.js';

/**
 * What domains contribute to shared mechanisms: things an account owns (for deletion and purge),
 * sized things (for quota recalculation), the item lists of /user/quota/* and the blobs their rows
 * reference (for the sweep of orphaned blobs). A domain service adds to these in its constructor.
 */
export interface Contributions {
  owned: OwnedResources[];
  usageSources: UsageSource[];
  quotaItems: ItemSources;
  blobReferences: BlobReferences[];
}

export interface AppContext {
  config: Config;
  db: Db;
  dialect: Dialect;
  log: Logger;
  paging: PagingSettings;
  users: UserService;
  tokens: TokenService;
  orgs: OrgService;
  quota: QuotaService;
  repos: RepoService;
  events: EventBus;
  pushes: PushRegistry;
  auth: Authenticator;
  storage: Storage;
  contributions: Contributions;
  /** Removes leftovers of interrupted work (temporary files, git quarantines, orphaned blobs). */
  sweeper: Sweeper;
  lfs: LfsService;
  protection: ProtectionService;
  statuses: StatusService;
  mirrors: MirrorService;
  issues: IssueService;
  /** Lists of issues and the search across repositories. */
  issueLists: IssueListService;
  /** Labels, due dates, locks and pins of issues. */
  issueTriage: IssueTriageService;
  /** Comments and reactions. */
  issueComments: CommentService;
  /** Issue references of pushed commits (closing keywords). */
  commitReferences: CommitReferences;
  dependencies: DependencyService;
  times: TimeService;
  labels: LabelService;
  milestones: MilestoneService;
  attachments: AttachmentService;
  releases: ReleaseService;
  notifications: NotificationService;
  /** Webhooks: their management (and the delivery worker's start and stop). */
  webhooks: WebhookService;
  /** The durable queue of webhook deliveries and its worker. */
  webhookQueue: DeliveryQueue;
  /** The event listeners that queue webhook deliveries. */
  webhookDispatcher: WebhookDispatcher;
  /** Pull requests: proposing (create, edit, look-ups, diffs), then reviewing, mergeability and merging. */
  pulls: PullService;
  pullReviews: PullReviewService;
  pullMergeability: MergeabilityService;
  pullMerges: MergeService;
  /** Scheduled merges (merge when checks succeed). */
  autoMerge: AutoMergeService;
  /** Pull requests as Forgejo's JSON (the API and webhook payloads). */
  pullPresenter: PullPresenter;
  actions: ActionsService;
  /** Actions runners: registration, the tasks they take, their logs. */
  runners: RunnerService;
  artifacts: ArtifactService;
  /** Artifacts' content behind the signed URLs. */
  artifactContent: ArtifactContent;
  forks: ForkService;
  generator: GenerateService;
  unadopted: UnadoptedService;
  recovery: RefRecovery;
  packages: PackageService;
  /** The package formats' registries, on the packages core. */
  npmPackages: NpmService;
  mavenPackages: MavenService;
  pypiPackages: PypiService;
  cargoPackages: CargoService;
  condaPackages: CondaService;
  /** The container registry: images and manifests, blobs, /v2/token tokens. */
  containerImages: ContainerService;
  containerBlobs: ContainerBlobs;
  registryTokens: RegistryTokens;
  sessions: SessionService;
  social: SocialService;
  activities: ActivityService;
  packageCleanup: PackageCleanup;
  cron: CronService;
  topics: TopicService;
  /** Markdown rendering for the API. */
  markup: MarkupService;
  avatars: AvatarService;
  oauth2: OAuth2Service;
  /** Languages, issue templates, flags and git hooks of repositories. */
  repoMeta: RepoMetaService;
  /** Health checks and the metrics' database-backed gauges. */
  ops: OpsService;
  /** Prometheus metrics ([metrics] ENABLED; a no-op otherwise). */
  metrics: Metrics;
  /** Users' SSH keys and repositories' deploy keys. */
  sshKeys: SshKeyService;
  /** GPG keys, commit signature verification and the instance's signing key. */
  signing: SigningService;
  /** Repository wikis (their git repositories and pages). */
  wiki: WikiService;
  /** The other processes on this database: leases for background work, the channel for events. */
  cluster: Cluster;
  close(): Promise<void>;
}

export async function createContext(config: Config, log: Logger): Promise<AppContext> {
  configurePasswordHashing(config.security.passwordHash);
  const storage = await openStorage(config.storage);
  const database = await openDatabase(config);
  const { db } = database;
  const cluster = new Cluster({ db, log, cluster: config.cluster, database: config.database });
  // Events with every-node listeners (caches) reach the other processes too.
  const events = new EventBus({ log, cluster });
  const repos = new RepoService(db, config.repository.root, events, log);
  repos.node = config.cluster.nodeName;
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
  const auth = new Authenticator({
    users,
    tokens,
    proxy: {
      enabled: config.service.enableReverseProxyAuthenticationApi,
      header: config.security.reverseProxyAuthenticationUser,
      trusted: config.security.reverseProxyTrustedProxies,
    },
    passwords: signInThrottle,
  });
  const ctx = {
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
    events,
    pushes: new PushRegistry(),
    recovery: new RefRecovery(db, repos, log),
    auth,
    storage,
    contributions,
    cluster,
    close: () => database.close(),
  } as AppContext;
  // A push the checks allowed is written down before git moves a ref (see repos/recovery.ts).
  ctx.pushes.onAllowed = (p) => repos.beginIntent(p.repo.id, p.pusher.id, p.updates);
  // Domains built on the core: each registers its contributions, push checks and event listeners.
  ctx.lfs = new LfsService({
    db,
    log,
    events,
    blobs: storage.lfs,
    quota,
    repos,
    usageSources: contributions.usageSources,
    blobReferences: contributions.blobReferences,
  });
  ctx.protection = new ProtectionService({ db, log, pushes: ctx.pushes, repos, users });
  ctx.statuses = new StatusService({ db, events, repos });
  ctx.forks = new ForkService(ctx);
  ctx.generator = new GenerateService(ctx);
  ctx.unadopted = new UnadoptedService(ctx);
  ctx.mirrors = new MirrorService(ctx);
  ctx.labels = new LabelService({ db, repos });
  ctx.milestones = new MilestoneService({ db });
  ctx.social = new SocialService({ db });
  ctx.times = new TimeService({ db, users });
  ctx.issues = new IssueService({
    db,
    events,
    log,
    users,
    repos,
    social: ctx.social,
    labels: ctx.labels,
    milestones: ctx.milestones,
    times: ctx.times,
  });
  ctx.commitReferences = new CommitReferences({ events, log, repos, users, issues: ctx.issues });
  ctx.issueLists = new IssueListService({
    db,
    users,
    orgs,
    repos,
    labels: ctx.labels,
    milestones: ctx.milestones,
    issues: ctx.issues,
  });
  ctx.issueTriage = new IssueTriageService({ db, events, labels: ctx.labels });
  ctx.issueComments = new CommentService({ db, events, log, social: ctx.social, issues: ctx.issues });
  ctx.dependencies = new DependencyService({ db, users, repos, issues: ctx.issues });
  ctx.releases = new ReleaseService({ db, events, log, repos, protection: ctx.protection });
  ctx.attachments = new AttachmentService({
    db,
    log,
    blobs: storage.attachments,
    settings: config.attachment,
    rootUrl: config.server.rootUrl,
    quota,
    users,
    repos,
    issues: ctx.issues,
    releases: ctx.releases,
    usageSources: contributions.usageSources,
    quotaItems: contributions.quotaItems,
    blobReferences: contributions.blobReferences,
  });
  ctx.notifications = new NotificationService({
    db,
    events,
    users,
    orgs,
    repos,
    issues: ctx.issues,
    social: ctx.social,
    autoWatchNewRepos: config.service.autoWatchNewRepos,
  });
  ctx.topics = new TopicService({ db, repos });
  ctx.markup = new MarkupService({ users, rootUrl: config.server.rootUrl });
  ctx.avatars = new AvatarService(ctx);
  ctx.oauth2 = new OAuth2Service({ db });
  ctx.repoMeta = new RepoMetaService(ctx);
  ctx.sshKeys = new SshKeyService(ctx);
  setSshCloneAddress({ user: config.ssh.user, domain: config.ssh.domain, port: config.ssh.port });
  ctx.wiki = new WikiService(ctx);
  ctx.activities = new ActivityService({ db, events, cluster, repos, users, issues: ctx.issues });
  // SSH signatures are checked against users' SSH keys (the ssh domain).
  ctx.signing = new SigningService({
    db,
    log,
    signing: config.repository.signing,
    secretKey: config.security.secretKey,
    cluster,
    users,
    sshKeys: {
      byFingerprint: async (fp) => {
        const { user } = await ctx.sshKeys.byFingerprint(fp);
        return user && { userId: user.owner_id, fingerprint: user.fingerprint };
      },
    },
  });
  ctx.pullReviews = new PullReviewService({ db, events, repos, users, protection: ctx.protection });
  ctx.pullMergeability = new MergeabilityService({
    db,
    events,
    log,
    repos,
    protection: ctx.protection,
    statuses: ctx.statuses,
    reviews: ctx.pullReviews,
  });
  ctx.pulls = new PullService({
    db,
    events,
    repos,
    users,
    issues: ctx.issues,
    issueLists: ctx.issueLists,
    issueTriage: ctx.issueTriage,
    labels: ctx.labels,
    milestones: ctx.milestones,
    social: ctx.social,
    signing: ctx.signing,
    background: ctx.pullMergeability,
  });
  ctx.pullMerges = new MergeService({
    db,
    events,
    log,
    repos,
    users,
    issues: ctx.issues,
    labels: ctx.labels,
    milestones: ctx.milestones,
    protection: ctx.protection,
    signing: ctx.signing,
    mergeability: ctx.pullMergeability,
    recovery: ctx.recovery,
  });
  ctx.autoMerge = new AutoMergeService({
    db,
    events,
    log,
    cluster,
    repos,
    users,
    mergeability: ctx.pullMergeability,
    merging: ctx.pullMerges,
  });
  const issuePresenter = new IssuePresenter({
    rootUrl: config.server.rootUrl,
    users,
    repos,
    issues: ctx.issues,
    labels: ctx.labels,
    milestones: ctx.milestones,
    times: ctx.times,
  });
  ctx.pullPresenter = new PullPresenter({
    issues: issuePresenter,
    repos,
    users,
    forks: ctx.forks,
    pulls: ctx.pulls,
    reviews: ctx.pullReviews,
    rootUrl: config.server.rootUrl,
  });
  ctx.sweeper = new Sweeper({
    storage,
    repoRoot: config.repository.root,
    blobReferences: contributions.blobReferences,
    log,
    temporaryDirs: { uploads: uploadsTempDir(config.server.appDataPath) },
  });
  ctx.sessions = new SessionService({
    db,
    users,
    secretKey: config.security.secretKey,
    lifetime: config.session.lifetime,
    throttle: signInThrottle,
  });
  ctx.ops = new OpsService({ db, storage, log });
  ctx.metrics = new Metrics({ enabled: config.metrics.enabled, gauges: ctx.ops });
  // Webhooks: managed hooks, the listeners that turn events into deliveries, the delivery queue.
  const webhookSecrets = new HookSecrets(config.security.secretKey);
  ctx.webhookQueue = new DeliveryQueue({
    db,
    dialect: database.dialect,
    log,
    settings: config.webhook,
    leaseSeconds: config.cluster.leaseSeconds,
    metrics: ctx.metrics,
    secrets: webhookSecrets,
  });
  const webhookPayloads = new Payloads({
    db,
    repos,
    users,
    forks: ctx.forks,
    attachments: ctx.attachments,
    issues: issuePresenter,
    pulls: ctx.pullPresenter,
    rootUrl: config.server.rootUrl,
  });
  ctx.webhookDispatcher = new WebhookDispatcher({
    db,
    events,
    repos,
    issues: ctx.issues,
    pulls: ctx.pulls,
    users,
    payloads: webhookPayloads,
    queue: ctx.webhookQueue,
    rootUrl: config.server.rootUrl,
  });
  ctx.webhooks = new WebhookService({
    db,
    repos,
    payloads: webhookPayloads,
    queue: ctx.webhookQueue,
    secrets: webhookSecrets,
  });
  // The scheduled tasks administrators list and start (/admin/cron), by Forgejo's names.
  ctx.cron = new CronService({ log, metrics: ctx.metrics });
  // Actions, artifacts and packages (after the cron service: their background jobs report to it).
  ctx.actions = new ActionsService({
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
  ctx.runners = new RunnerService({
    db,
    log,
    cluster,
    settings: config.actions,
    secretKey: config.security.secretKey,
    rootUrl: config.server.rootUrl,
    users,
    repos,
    actions: ctx.actions,
  });
  ctx.artifactContent = new ArtifactContent({
    db,
    log,
    blobs: storage.artifacts,
    secretKey: config.security.secretKey,
  });
  ctx.artifacts = new ArtifactService({
    db,
    log,
    blobs: storage.artifacts,
    settings: config.actions,
    secretKey: config.security.secretKey,
    rootUrl: config.server.rootUrl,
    quota,
    repos,
    runs: ctx.actions,
    cron: ctx.cron,
    cluster,
    usageSources: contributions.usageSources,
    quotaItems: contributions.quotaItems,
    blobReferences: contributions.blobReferences,
  });
  ctx.packages = new PackageService({
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
  const packages = ctx.packages;
  ctx.npmPackages = new NpmService({ packages, rootUrl: config.server.rootUrl });
  ctx.mavenPackages = new MavenService({ db, packages });
  ctx.pypiPackages = new PypiService({ db, packages, rootUrl: config.server.rootUrl });
  ctx.cargoPackages = new CargoService({ packages, rootUrl: config.server.rootUrl });
  ctx.condaPackages = new CondaService({ db, packages, repos });
  ctx.containerImages = new ContainerService({
    db,
    events,
    blobs: storage.packages,
    rootUrl: config.server.rootUrl,
    packages,
  });
  ctx.containerBlobs = new ContainerBlobs({ db, blobs: storage.packages, packages });
  ctx.registryTokens = new RegistryTokens({ secretKey: config.security.secretKey, users });
  ctx.packageCleanup = new PackageCleanup({
    db,
    log,
    blobs: storage.packages,
    settings: config.cron.cleanupPackages,
    users,
    orgs,
    packages,
    cron: ctx.cron,
    cluster,
  });
  const cleanup = config.cron.cleanupPackages;
  if (cleanup.enabled) {
    ctx.cron.register({
      name: 'cleanup_packages',
      schedule: describeSchedule(cleanup.schedule),
      nextIn: () => nextRunIn(cleanup.schedule),
      run: () => ctx.cluster.leases.run('task:cleanup_packages', () => ctx.packageCleanup.run()),
    });
  }
  if (config.mirror.enabled) {
    ctx.cron.register({
      name: 'update_mirrors',
      schedule: '@every 60s',
      nextIn: () => ctx.cron.nextOfEvery(60_000),
      run: () => ctx.mirrors.tick(),
    });
  }
  ctx.cron.register({
    name: 'cleanup_actions',
    schedule: '@every 3600s',
    nextIn: () => ctx.cron.nextOfEvery(3_600_000),
    run: () => ctx.cluster.leases.run('task:cleanup_actions', () => ctx.artifacts.sweep()),
  });
  // Changes interrupted by a crash (git and database out of step), completed once they are stale.
  ctx.cron.register({
    name: 'recover_unfinished_changes',
    schedule: `@every ${RECOVERY_CHECK_MS / 1000}s`,
    nextIn: () => ctx.cron.nextOfEvery(RECOVERY_CHECK_MS),
    run: () =>
      ctx.cluster.leases.run('task:recover_unfinished_changes', () =>
        ctx.recovery.recover(Math.floor(Date.now() / 1000) - STALE_INTENT_SECONDS),
      ),
  });
  // Blobs and directories no row refers to any more (after their grace period).
  ctx.cron.register({
    name: 'sweep_leftovers',
    schedule: `@every ${SWEEP_INTERVAL_MS / 1000}s`,
    nextIn: () => ctx.cron.nextOfEvery(SWEEP_INTERVAL_MS),
    run: () => ctx.cluster.leases.run('task:sweep_leftovers', () => ctx.sweeper.sweep()),
  });
  // Background work (started by `anvil web`) ends before the database closes. Each periodic task
  // runs under a lease (`task:<name>`, cluster/), so of several processes one runs it at a time.
  ctx.close = async () => {
    ctx.cluster.stopSchedules();
    await ctx.recovery.stop();
    await ctx.autoMerge.stop();
    await ctx.mirrors.stop();
    await ctx.webhooks.stop();
    await ctx.artifacts.stop();
    await ctx.runners.stop();
    await ctx.sweeper.stop();
    await ctx.packageCleanup.stop();
    await ctx.packages.stop();
    await ctx.cluster.close();
    await database.close();
    closeStorage(ctx.storage);
  };
  return ctx;
}
