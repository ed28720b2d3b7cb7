// The application's parts as the composition root (context.ts) returns them: every service and the
// shared plumbing, by name.
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { Db, Dialect } from '../db/database.js';
import type { UserService } from '../users/service.js';
import type { TokenService } from '../tokens/service.js';
import type { OrgService } from '../orgs/service.js';
import type { QuotaService } from '../quota/service.js';
import type { RepoService } from '../repos/service.js';
import type { EventBus } from '../events/bus.js';
import type { PushRegistry } from '../git/pushes.js';
import type { Authenticator } from '../auth/identity.js';
import type { PagingSettings } from '../http/pagination.js';
import type { Storage } from '../storage/storage.js';
import type { Sweeper } from '../storage/sweep.js';
import type { LfsService } from '../lfs/service.js';
import type { ProtectionService } from '../protection/service.js';
import type { StatusService } from '../statuses/service.js';
import type { MirrorService } from '../mirrors/service.js';
import type { IssueService } from '../issues/service.js';
import type { IssueListService } from '../issues/lists.js';
import type { IssueTriageService } from '../issues/triage.js';
import type { CommentService } from '../issues/comments.js';
import type { CommitReferences } from '../issues/commit-refs.js';
import type { MarkupService } from '../markup/service.js';
import type { DependencyService } from '../issues/dependencies.js';
import type { TimeService } from '../issues/times.js';
import type { LabelService } from '../labels/service.js';
import type { MilestoneService } from '../milestones/service.js';
import type { ProjectService } from '../projects/service.js';
import type { PulseService } from '../activities/pulse.js';
import type { AttachmentService } from '../attachments/service.js';
import type { ReleaseService } from '../releases/service.js';
import type { NotificationService } from '../notifications/service.js';
import type { WebhookService } from '../webhooks/service.js';
import type { DeliveryQueue } from '../webhooks/queue.js';
import type { WebhookDispatcher } from '../webhooks/dispatch.js';
import type { MailQueue } from '../mail/queue.js';
import type { MailNotifier } from '../mail/notify.js';
import type { AccountMail } from '../mail/service.js';
import type { PullService } from '../pulls/service.js';
import type { PullReviewService } from '../pulls/reviewing.js';
import type { MergeabilityService } from '../pulls/mergeability.js';
import type { MergeService } from '../pulls/merging.js';
import type { AutoMergeService } from '../pulls/automerge.js';
import type { PullPresenter } from '../pulls/present.js';
import type { ActionsService } from '../actions/service.js';
import type { RunnerService } from '../actions/runners.js';
import type { RunControl } from '../actions/run-control.js';
import type { JobStatuses } from '../actions/commit-status.js';
import type { ArtifactService } from '../artifacts/service.js';
import type { ArtifactContent } from '../artifacts/content.js';
import type { CacheService } from '../actions/cache-service.js';
import type { ForkService } from '../repos/forks.js';
import type { RefChanges } from '../repos/ref-changes.js';
import type { RepoTransfers } from '../repos/transfers.js';
import type { Collaborators } from '../repos/collaborators.js';
import type { RepoPresenter } from '../repos/present.js';
import type { GitDataService } from '../git/data-service.js';
import type { GitRefService } from '../git/data-refs.js';
import type { GitFileService } from '../git/data-files.js';
import type { SshCommands } from '../ssh/command.js';
import type { RefRecovery } from '../repos/recovery.js';
import type { GenerateService } from '../repos/generate.js';
import type { UnadoptedService } from '../repos/unadopted.js';
import type { PackageService } from '../packages/service.js';
import type { NpmService } from '../packages/npm/service.js';
import type { MavenService } from '../packages/maven/service.js';
import type { PypiService } from '../packages/pypi/service.js';
import type { CargoService } from '../packages/cargo/service.js';
import type { CondaService } from '../packages/conda/service.js';
import type { GoService } from '../packages/go/service.js';
import type { ComposerService } from '../packages/composer/service.js';
import type { DebianService } from '../packages/debian/service.js';
import type { RpmService } from '../packages/rpm/service.js';
import type { AltService } from '../packages/alt/service.js';
import type { ArchService } from '../packages/arch/service.js';
import type { RubygemsService } from '../packages/rubygems/service.js';
import type { CranService } from '../packages/cran/service.js';
import type { HelmService } from '../packages/helm/service.js';
import type { ConanService } from '../packages/conan/service.js';
import type { VagrantService } from '../packages/vagrant/service.js';
import type { PubService } from '../packages/pub/service.js';
import type { ChefService } from '../packages/chef/service.js';
import type { SwiftService } from '../packages/swift/service.js';
import type { AlpineService } from '../packages/alpine/service.js';
import type { NugetService } from '../packages/nuget/service.js';
import type { ContainerService } from '../packages/container/service.js';
import type { ContainerBlobs } from '../packages/container/blobs.js';
import type { RegistryTokens } from '../packages/container/tokens.js';
import type { SessionService } from '../sessions/service.js';
import type { TwoFactorService } from '../twofa/service.js';
import type { SocialService } from '../social/service.js';
import type { ActivityService } from '../activities/service.js';
import type { PackageCleanup } from '../packages/cleanup/service.js';
import type { OpsService } from '../ops/service.js';
import type { Metrics } from '../ops/metrics.js';
import type { CronService } from '../cron/service.js';
import type { ScheduleService } from '../actions/schedules.js';
import type { TopicService } from '../topics/service.js';
import type { AvatarService } from '../avatars/service.js';
import type { OAuth2Service } from '../oauth2/service.js';
import type { OAuth2Provider } from '../oauth2/provider.js';
import type { OAuth2Tokens } from '../oauth2/issuer.js';
import type { RepoMetaService } from '../repometa/service.js';
import type { WikiService } from '../wiki/service.js';
import type { SshKeyService } from '../ssh/service.js';
import type { SigningService } from '../signing/service.js';
import type { Cluster } from '../cluster/service.js';
import type { UsageSource } from '../quota/usage.js';
import type { OwnedResources } from '../users/owned.js';
import type { ItemSources } from '../quota/service.js';
import type { BlobReferences } from '../storage/sweep.js';

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
  /** Ref changes recorded and announced (intents, push records, the `push` event). */
  refChanges: RefChanges;
  /** Pending and immediate repository transfers. */
  repoTransfers: RepoTransfers;
  /** Repositories' collaborators and team access. */
  collaborators: Collaborators;
  /** Repositories as the API's Repository JSON. */
  repoPresenter: RepoPresenter;
  /** The git data API: reading, writing refs, writing files. */
  gitData: GitDataService;
  gitRefs: GitRefService;
  gitFiles: GitFileService;
  /** What SSH sessions run (the built-in server and `anvil serv`). */
  sshCommands: SshCommands;
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
  projects: ProjectService;
  /** A repository's activity over a period (the activity page). */
  pulse: PulseService;
  attachments: AttachmentService;
  releases: ReleaseService;
  notifications: NotificationService;
  /** Webhooks: their management (and the delivery worker's start and stop). */
  webhooks: WebhookService;
  /** The durable queue of webhook deliveries and its worker. */
  webhookQueue: DeliveryQueue;
  /** The event listeners that queue webhook deliveries. */
  webhookDispatcher: WebhookDispatcher;
  /** The durable outgoing mail queue and its worker ([mailer]; started by `anvil web`). */
  mailQueue: MailQueue;
  /** The event listeners that queue notification mail. */
  mailNotifier: MailNotifier;
  /** Password reset and e-mail confirmation by mail. */
  accountMail: AccountMail;
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
  /** Cancelling and re-running runs, disabling workflows (the Actions pages). */
  runControl: RunControl;
  workflowSchedules: ScheduleService;
  /** Commit statuses of actions jobs. */
  jobStatuses: JobStatuses;
  artifacts: ArtifactService;
  /** Artifacts' content behind the signed URLs. */
  artifactContent: ArtifactContent;
  /** The actions cache (actions/cache's service). */
  actionsCache: CacheService;
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
  goPackages: GoService;
  composerPackages: ComposerService;
  debianPackages: DebianService;
  archPackages: ArchService;
  rubygemsPackages: RubygemsService;
  rpmPackages: RpmService;
  altPackages: AltService;
  cranPackages: CranService;
  helmPackages: HelmService;
  vagrantPackages: VagrantService;
  pubPackages: PubService;
  chefPackages: ChefService;
  nugetPackages: NugetService;
  conanPackages: ConanService;
  swiftPackages: SwiftService;
  alpinePackages: AlpineService;
  /** The container registry: images and manifests, blobs, /v2/token tokens. */
  containerImages: ContainerService;
  containerBlobs: ContainerBlobs;
  registryTokens: RegistryTokens;
  sessions: SessionService;
  /** Two-factor authentication (TOTP): enrolment, passcodes, the sign-in step. */
  twoFactor: TwoFactorService;
  social: SocialService;
  activities: ActivityService;
  packageCleanup: PackageCleanup;
  cron: CronService;
  topics: TopicService;
  /** Markdown rendering for the API. */
  markup: MarkupService;
  avatars: AvatarService;
  oauth2: OAuth2Service;
  /** The OAuth2 provider: authorization requests, consent, codes and the user's grants. */
  oauth2Provider: OAuth2Provider;
  /** The OAuth2 provider's tokens: issued, checked (as access tokens too), userinfo, introspection. */
  oauth2Tokens: OAuth2Tokens;
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
