// Repositories generated from template repositories (Forgejo's GenerateRepository): the template's
// default branch as one fresh commit (with the variables of the files its `.forgejo/template` or
// `.gitea/template` lists expanded, that file left out), and copies of its topics, labels,
// webhooks, avatar and branch protection rules, as asked. The git content is prepared in a scratch
// directory first; the repository row and every copy are then made in one transaction
// (RepoService.createPrepared).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nowUnix, type Db } from '../db/database.js';
import { forbidden, invalid, notFound } from '../errors.js';
import { git, gitText, initBare } from '../git/git.js';
import * as labelStore from '../labels/store.js';
import * as protectionStore from '../protection/store.js';
import * as topicStore from '../topics/store.js';
import * as webhookStore from '../webhooks/store.js';
import * as userStore from '../users/store.js';
import type { Viewer, UserRow } from '../users/tables.js';
import { UserType } from '../users/tables.js';
import type { OrgService } from '../orgs/service.js';
import { checkBranchName, checkRepoName } from './names.js';
import { scratchDir } from './scratch.js';
import type { RepoService } from './service.js';
import type { RepoRow } from './tables.js';
import { sshCloneUrl, type SshCloneAddress } from './schemas.js';
import {
  TEMPLATE_FILES,
  expand,
  expansionMap,
  templateMatcher,
  type ExpansionRepo,
} from './template-expand.js';

export interface GenerateInput {
  owner: string;
  name: string;
  description?: string | undefined;
  private?: boolean | undefined;
  defaultBranch?: string | undefined;
  gitContent?: boolean | undefined;
  topics?: boolean | undefined;
  gitHooks?: boolean | undefined;
  webhooks?: boolean | undefined;
  avatar?: boolean | undefined;
  labels?: boolean | undefined;
  protectedBranch?: boolean | undefined;
}

interface TreeEntry {
  mode: string;
  type: string;
  oid: string;
  path: string;
}

export interface GenerateServiceDeps {
  db: Db;
  repos: Pick<RepoService, 'canCreateIn' | 'createPrepared' | 'pathOf'>;
  orgs: Pick<OrgService, 'canSee'>;
  /** [repository] ROOT (scratch directories are made under it). */
  root: string;
  rootUrl: string;
  /** Where SSH clone URLs point (for the templates' variables). */
  ssh: SshCloneAddress;
}

export class GenerateService {
  constructor(private readonly deps: GenerateServiceDeps) {}

  /**
   * Generates `input.name` for `input.owner` from `template` (which the caller may read): 404 when
   * it is not a template or the owner does not exist (for the viewer), 422 when nothing is asked
   * or a name is invalid, 403 when the doer may not create repositories for that owner, 409 when
   * the name is taken.
   */
  async generate(doer: UserRow, viewer: Viewer, template: RepoRow, input: GenerateInput): Promise<RepoRow> {
    const { deps } = this;
    if (!template.is_template) throw notFound('repository is not a template');
    const asked =
      input.gitContent ||
      input.topics ||
      input.gitHooks ||
      input.webhooks ||
      input.avatar ||
      input.labels ||
      input.protectedBranch;
    if (!asked) throw invalid('must select at least one template item');
    checkRepoName(input.name);
    const branch = input.defaultBranch?.trim() || template.default_branch;
    checkBranchName(branch);

    let owner = doer;
    if (input.owner !== doer.name) {
      const found = await userStore.getByName(deps.db, input.owner);
      if (!found || (found.type === UserType.Organization && !(await deps.orgs.canSee(viewer, found)))) {
        throw notFound(`request owner \`${input.owner}\` does not exist`);
      }
      if (!doer.is_admin && found.type !== UserType.Organization) {
        throw forbidden('Only admin can generate repository for other user.');
      }
      if (!doer.is_admin && !(await deps.repos.canCreateIn(doer, found))) {
        throw forbidden('Given user is not allowed to create repository in organization.');
      }
      owner = found;
    }
    if (owner.type !== UserType.Individual && owner.type !== UserType.Organization) {
      throw forbidden(`${owner.name} cannot own repositories`);
    }
    const templateOwner = (await userStore.getById(deps.db, template.owner_id))!;
    const description = input.description ?? '';

    let scratch: string | undefined;
    if (input.gitContent && !template.is_empty) {
      scratch = scratchDir(deps.root, 'generate');
      try {
        await this.prepareContent(
          template,
          scratch,
          branch,
          owner,
          expansionMap(this.expansionRepo(templateOwner.name, template.name, template.description), {
            ...this.expansionRepo(owner.name, input.name, description),
          }),
        );
      } catch (err) {
        fs.rmSync(scratch, { recursive: true, force: true });
        throw err;
      }
    }
    const now = nowUnix();
    return deps.repos.createPrepared(
      doer,
      owner,
      { name: input.name, description, private: input.private ?? false, defaultBranch: branch },
      scratch,
      async (tx, id) => {
        if (input.topics) {
          const names = (await topicStore.namesOf(tx, [template.id])).get(template.id) ?? [];
          if (names.length) await topicStore.replace(tx, id, names, now);
        }
        if (input.labels) await labelStore.copyRepoLabels(tx, template.id, id, now);
        if (input.webhooks) await webhookStore.copyRepoHooks(tx, template.id, id, now);
        if (input.protectedBranch) await protectionStore.copyRules(tx, template.id, id, owner.id);
        if (input.avatar && template.avatar) {
          await tx.updateTable('repository').set({ avatar: template.avatar }).where('id', '=', id).execute();
        }
      },
    );
  }

  private expansionRepo(owner: string, name: string, description: string): ExpansionRepo {
    const rootUrl = this.deps.rootUrl;
    return {
      owner,
      name,
      description,
      link: `${new URL(rootUrl).pathname.replace(/\/$/, '')}/${owner}/${name}`,
      httpsUrl: `${rootUrl}${owner}/${name}.git`,
      sshUrl: sshCloneUrl(`${owner}/${name}`, this.deps.ssh),
    };
  }

  /**
   * Writes into `scratch` a bare repository whose `branch` is one commit (by the new owner, as
   * Forgejo) holding the template's default branch tree, expanded. The template's objects are
   * borrowed while the tree is built, then the new repository is repacked on its own.
   */
  private async prepareContent(
    template: RepoRow,
    scratch: string,
    branch: string,
    owner: UserRow,
    vars: Map<string, string>,
  ): Promise<void> {
    const templateDir = this.deps.repos.pathOf(template);
    const head = await gitText(
      ['rev-parse', '--verify', '--quiet', `refs/heads/${template.default_branch}^{commit}`],
      {
        gitDir: templateDir,
      },
    );
    await initBare(scratch, branch);
    const alternates = path.join(scratch, 'objects', 'info', 'alternates');
    fs.mkdirSync(path.dirname(alternates), { recursive: true });
    fs.writeFileSync(alternates, `${path.resolve(templateDir, 'objects')}\n`);
    const listing = (
      await git(['ls-tree', '-r', '-z', '--full-tree', head], { gitDir: scratch })
    ).stdout.toString('utf8');
    let entries: TreeEntry[] = listing
      .split('\0')
      .filter(Boolean)
      .map((line) => {
        const tab = line.indexOf('\t');
        const [mode, type, oid] = line.slice(0, tab).split(' ');
        return { mode: mode!, type: type!, oid: oid!, path: line.slice(tab + 1) };
      });
    const templateFile = TEMPLATE_FILES.map((f) =>
      entries.find((e) => e.path === f && e.type === 'blob'),
    ).find(Boolean);
    if (templateFile) {
      entries = entries.filter((e) => e !== templateFile);
      const globs = (await git(['cat-file', 'blob', templateFile.oid], { gitDir: scratch })).stdout.toString(
        'utf8',
      );
      const matches = templateMatcher(globs);
      for (const e of entries) {
        if (e.type !== 'blob' || e.mode === '120000' || !matches(e.path)) continue;
        const content = (await git(['cat-file', 'blob', e.oid], { gitDir: scratch })).stdout.toString('utf8');
        e.oid = await gitText(['hash-object', '-w', '--stdin'], {
          gitDir: scratch,
          input: expand(content, vars),
        });
        const renamed = path.posix.normalize(expand(e.path, vars, true));
        if (renamed && !renamed.startsWith('../') && !path.posix.isAbsolute(renamed)) e.path = renamed;
      }
    }
    const index = path.join(scratch, 'generate.index');
    const env = { GIT_INDEX_FILE: index };
    await git(['update-index', '-z', '--add', '--index-info'], {
      gitDir: scratch,
      env,
      input: entries.map((e) => `${e.mode} ${e.oid}\t${e.path}\0`).join(''),
    });
    const tree = entries.length
      ? await gitText(['write-tree'], { gitDir: scratch, env })
      : await gitText(['mktree'], { gitDir: scratch, input: '' });
    fs.rmSync(index, { force: true });
    const name = owner.full_name || owner.name;
    const email = owner.email || `${owner.name}@${os.hostname()}`;
    const commit = await gitText(['commit-tree', tree, '-m', 'Initial commit'], {
      gitDir: scratch,
      env: {
        GIT_AUTHOR_NAME: name,
        GIT_AUTHOR_EMAIL: email,
        GIT_COMMITTER_NAME: name,
        GIT_COMMITTER_EMAIL: email,
      },
    });
    await git(['update-ref', `refs/heads/${branch}`, commit], { gitDir: scratch });
    // The new repository keeps only what its commit needs, and no tie to the template.
    await git(['repack', '-a', '-d', '-q'], { gitDir: scratch });
    fs.rmSync(alternates, { force: true });
  }
}
