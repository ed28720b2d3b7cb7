// The instance's own signing key ([repository.signing]): a GPG key id in a GNUPGHOME (openpgp) or an
// SSH private key file (ssh). Its public half is served as /signing-key.gpg or /signing-key.ssh, git
// signs the merges Anvil makes with it (commit-tree -S), and commits it signed read as verified.
import fs from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Logger } from 'pino';
import type * as openpgp from 'openpgp';
import { loadOpenpgp } from './openpgp.js';
import type { SigningConfig } from '../config/config.js';
import { sshFingerprint, sshPublicKeyBlob } from './verify.js';

const run = promisify(execFile);

/** What git needs to sign a commit: -c options before the command, and environment. */
export interface CommitSigning {
  config: string[];
  env: NodeJS.ProcessEnv;
  /** The committer of signed commits (SIGNING_NAME and SIGNING_EMAIL), when both are set. */
  committer?: { name: string; email: string };
}

export class InstanceSigner {
  private gpg?: Promise<{ armored: string; keys: openpgp.PublicKey[] } | undefined>;
  private ssh?: { line: string; fingerprint: string } | null;

  constructor(
    readonly settings: SigningConfig,
    private readonly log: Logger,
  ) {}

  get enabled(): boolean {
    return this.settings.signingKey !== '';
  }

  private env(): NodeJS.ProcessEnv {
    const home = this.settings.gnupgHome || process.env['GNUPGHOME'];
    return home ? { GNUPGHOME: home } : {};
  }

  /** The armored public key and its parsed form (openpgp format only), read once. */
  publicGpg(): Promise<{ armored: string; keys: openpgp.PublicKey[] } | undefined> {
    if (!this.enabled || this.settings.format !== 'openpgp') return Promise.resolve(undefined);
    this.gpg ??= (async () => {
      try {
        const { stdout } = await run('gpg', ['--batch', '--armor', '--export', this.settings.signingKey], {
          env: { PATH: process.env['PATH'], HOME: process.env['HOME'], ...this.env() },
        });
        if (!stdout.includes('BEGIN PGP PUBLIC KEY BLOCK')) throw new Error('no such key');
        return { armored: stdout, keys: await (await loadOpenpgp()).readKeys({ armoredKeys: stdout }) };
      } catch (err) {
        this.log.warn(
          `[repository.signing] SIGNING_KEY ${this.settings.signingKey}: cannot export it (${(err as Error).message})`,
        );
        return undefined;
      }
    })();
    return this.gpg;
  }

  /** The public key in authorized_keys form and its fingerprint (ssh format only), read once. */
  publicSsh(): { line: string; fingerprint: string } | undefined {
    if (!this.enabled || this.settings.format !== 'ssh') return undefined;
    if (this.ssh === undefined) {
      try {
        const blob = sshPublicKeyBlob(fs.readFileSync(this.settings.signingKey, 'utf8'));
        if (!blob) throw new Error('not an SSH key');
        const type = blob.subarray(4, 4 + blob.readUInt32BE(0)).toString('utf8');
        this.ssh = { line: `${type} ${blob.toString('base64')}`, fingerprint: sshFingerprint(blob) };
      } catch (err) {
        this.log.warn(
          `[repository.signing] SIGNING_KEY ${this.settings.signingKey}: cannot read it (${(err as Error).message})`,
        );
        this.ssh = null;
      }
    }
    return this.ssh ?? undefined;
  }

  /** How git signs a commit with the instance key, or undefined when it does not sign. */
  async commitSigning(): Promise<CommitSigning | undefined> {
    if (!this.enabled) return undefined;
    const s = this.settings;
    const usable = s.format === 'ssh' ? this.publicSsh() : await this.publicGpg();
    if (!usable) return undefined;
    const config =
      s.format === 'ssh'
        ? ['-c', 'gpg.format=ssh', '-c', `user.signingKey=${s.signingKey}`]
        : ['-c', 'gpg.format=openpgp', '-c', 'gpg.program=gpg', '-c', `user.signingKey=${s.signingKey}`];
    return {
      config,
      env: this.env(),
      ...(s.name && s.email ? { committer: { name: s.name, email: s.email } } : {}),
    };
  }
}
