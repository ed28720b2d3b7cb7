// The database's shape: each domain declares its own tables in its tables.ts; this is their union.
import type { UserTables } from '../users/tables.js';
import type { TokenTables } from '../tokens/tables.js';
import type { OrgTables } from '../orgs/tables.js';
import type { QuotaTables } from '../quota/tables.js';
import type { RepoTables } from '../repos/tables.js';
import type { LfsTables } from '../lfs/tables.js';
import type { ProtectionTables } from '../protection/tables.js';
import type { StatusTables } from '../statuses/tables.js';
import type { MirrorTables } from '../mirrors/tables.js';
import type { IssueTables } from '../issues/tables.js';
import type { LabelTables } from '../labels/tables.js';
import type { MilestoneTables } from '../milestones/tables.js';
import type { ProjectTables } from '../projects/tables.js';
import type { AttachmentTables } from '../attachments/tables.js';
import type { ReleaseTables } from '../releases/tables.js';
import type { NotificationTables } from '../notifications/tables.js';
import type { WebhookTables } from '../webhooks/tables.js';
import type { ActionsTables } from '../actions/tables.js';
import type { ArtifactTables } from '../artifacts/tables.js';
import type { CacheTables } from '../actions/cache-tables.js';
import type { PullTables } from '../pulls/tables.js';
import type { PackageTables } from '../packages/tables.js';
import type { SessionTables } from '../sessions/tables.js';
import type { SocialTables } from '../social/tables.js';
import type { ActivityTables } from '../activities/tables.js';
import type { PackageCleanupTables } from '../packages/cleanup/tables.js';
import type { TopicTables } from '../topics/tables.js';
import type { OAuth2Tables } from '../oauth2/tables.js';
import type { RepoMetaTables } from '../repometa/tables.js';
import type { SshTables } from '../ssh/tables.js';
import type { ContainerTables } from '../packages/container/tables.js';
import type { DebianTables } from '../packages/debian/tables.js';
import type { RpmTables } from '../packages/rpm/tables.js';
import type { ChefTables } from '../packages/chef/tables.js';
import type { AlpineTables } from '../packages/alpine/tables.js';
import type { AltTables } from '../packages/alt/tables.js';
import type { SigningTables } from '../signing/tables.js';
import type { ClusterTables } from '../cluster/tables.js';
import type { TwoFactorTables } from '../twofa/tables.js';
import type { MailTables } from '../mail/tables.js';
import type { OpsTables } from '../ops/tables.js';

export interface DB
  extends
    UserTables,
    TokenTables,
    OrgTables,
    QuotaTables,
    RepoTables,
    LfsTables,
    ProtectionTables,
    StatusTables,
    MirrorTables,
    IssueTables,
    LabelTables,
    MilestoneTables,
    ProjectTables,
    AttachmentTables,
    ReleaseTables,
    NotificationTables,
    WebhookTables,
    ActionsTables,
    ArtifactTables,
    CacheTables,
    PullTables,
    PackageTables,
    SessionTables,
    SocialTables,
    ActivityTables,
    PackageCleanupTables,
    TopicTables,
    OAuth2Tables,
    RepoMetaTables,
    SshTables,
    ContainerTables,
    DebianTables,
    RpmTables,
    ChefTables,
    AlpineTables,
    AltTables,
    SigningTables,
    ClusterTables,
    TwoFactorTables,
    MailTables,
    OpsTables {}
