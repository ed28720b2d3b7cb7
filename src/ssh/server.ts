// The built-in SSH server (ssh2): public-key sign-in with users' keys and deploy keys, then git
// (upload-pack, receive-pack, upload-archive) run on the repository with its standard streams tied
// to the channel, `git-lfs-authenticate`, or a greeting. Host keys (ed25519 and RSA) are made on
// first start under APP_DATA_PATH/ssh and kept.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import net, { type AddressInfo } from 'node:net';
import type { AuthContext, Connection, ServerChannel, Session } from 'ssh2';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { gitEnv } from '../git/git.js';
import { fingerprintOf } from './keyparse.js';
import { ssh2, type Ssh2 } from './lib.js';
import type { SshKeyService, SshPrincipal } from './service.js';
import { Refusal, type SshCommands } from './command.js';

/** Seconds a connection may take to sign in. */
const AUTH_TIMEOUT_MS = 60_000;

export interface RunningSshServer {
  /** The port it listens on (the one picked when SSH_LISTEN_PORT is 0). */
  port: number;
  close(): Promise<void>;
}

/** The server's host keys, generated into `dir` on first use (OpenSSH private key format). */
export async function hostKeys(dir: string): Promise<Buffer[]> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const out: Buffer[] = [];
  for (const [file, type] of [
    ['ssh_host_ed25519_key', 'ed25519'],
    ['ssh_host_rsa_key', 'rsa'],
  ] as const) {
    const p = path.join(dir, file);
    if (!fs.existsSync(p)) {
      const { utils } = ssh2();
      const pair = await new Promise<{ private: string; public: string }>((resolve, reject) =>
        type === 'rsa'
          ? utils.generateKeyPair('rsa', { bits: 3072 }, (err, k) => (err ? reject(err) : resolve(k)))
          : utils.generateKeyPair('ed25519', (err, k) => (err ? reject(err) : resolve(k))),
      );
      const tmp = `${p}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, pair.private, { mode: 0o600 });
      fs.writeFileSync(`${p}.pub`, `${pair.public}\n`, { mode: 0o644 });
      // Two servers starting at once: the first key stays.
      try {
        fs.linkSync(tmp, p);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      fs.rmSync(tmp, { force: true });
    }
    out.push(fs.readFileSync(p));
  }
  return out;
}

/** The key type named inside an SSH public key blob. */
function blobType(blob: Buffer): string {
  if (blob.length < 4) return '';
  const n = blob.readUInt32BE(0);
  return blob.subarray(4, 4 + n).toString('latin1');
}

export interface SshServerDeps {
  /** [server] SSH_* (the user, where to listen) and APP_DATA_PATH (the host keys). */
  config: { ssh: Config['ssh']; server: Pick<Config['server'], 'appDataPath'> };
  sshKeys: Pick<SshKeyService, 'principal' | 'markUsed'>;
  sshCommands: SshCommands;
  log: Logger;
}

export async function startSshServer(
  deps: SshServerDeps,
  opts: { host?: string; port?: number } = {},
): Promise<RunningSshServer> {
  const { config, sshKeys, log } = deps;
  const commands = deps.sshCommands;
  const keys = await hostKeys(path.join(config.server.appDataPath, 'ssh'));
  const clients = new Set<Connection>();

  // ssh2 (and its 16 MiB WebAssembly memory) loads with the first connection: until then a plain
  // TCP server listens, and hands each connection to the SSH server.
  let ssh: InstanceType<Ssh2['Server']> | undefined;
  const listener = net.createServer((socket) => (ssh ??= sshServer()).injectSocket(socket));

  const sshServer = () => {
    const { Server, utils } = ssh2();
    const server = new Server({ hostKeys: keys, ident: 'Anvil' }, (client) => {
      clients.add(client);
      let principal: SshPrincipal | undefined;
      const timer = setTimeout(() => {
        if (!principal) client.end();
      }, AUTH_TIMEOUT_MS);
      client.on('close', () => {
        clearTimeout(timer);
        clients.delete(client);
      });
      client.on('error', (err) => log.debug({ err }, 'ssh connection error'));

      client.on('authentication', (auth: AuthContext) => {
        void authenticate(auth).catch((err: unknown) => {
          log.error({ err }, 'ssh authentication failed');
          auth.reject();
        });
      });

      async function authenticate(auth: AuthContext): Promise<void> {
        if (auth.method !== 'publickey') return auth.reject(['publickey']);
        if (auth.username !== config.ssh.user) return auth.reject(['publickey']);
        const found = await sshKeys.principal(fingerprintOf(auth.key.data));
        if (!found) return auth.reject(['publickey']);
        if (found.kind === 'user' && (!found.user.is_active || found.user.prohibit_login)) {
          return auth.reject(['publickey']);
        }
        // Without a signature the client only asks whether the key would do.
        if (!auth.signature) return auth.accept();
        const parsed = utils.parseKey(`${blobType(auth.key.data)} ${auth.key.data.toString('base64')}`);
        if (parsed instanceof Error || !auth.blob) return auth.reject(['publickey']);
        if (parsed.verify(auth.blob, auth.signature, auth.hashAlgo) !== true)
          return auth.reject(['publickey']);
        principal = found;
        await sshKeys.markUsed(found);
        auth.accept();
      }

      client.on('ready', () => {
        client.on('session', (acceptSession) => {
          const session: Session = acceptSession();
          let protocol: string | undefined;
          session.on('env', (accept, _reject, info) => {
            if (info.key === 'GIT_PROTOCOL') protocol = info.val;
            accept?.();
          });
          session.on('pty', (accept) => accept?.());
          session.on('shell', (accept) => {
            const channel = accept();
            void run(channel, undefined, protocol);
          });
          session.on('exec', (accept, _reject, info) => {
            const channel = accept();
            void run(channel, info.command, protocol);
          });
        });
      });

      async function run(channel: ServerChannel, command: string | undefined, protocol?: string) {
        const end = (code: number) => {
          channel.exit(code);
          channel.end();
        };
        try {
          const prepared = await commands.prepare(principal!, command, protocol);
          if (prepared.kind === 'text') {
            channel.write(prepared.text);
            return end(0);
          }
          await runGit(channel, prepared, end);
        } catch (err) {
          const message =
            err instanceof Refusal ? err.message : 'Anvil could not run the command (see the server log)';
          if (!(err instanceof Refusal)) log.error({ err, command }, 'ssh command failed');
          channel.stderr.write(`Anvil: ${message}\n`);
          end(1);
        }
      }

      async function runGit(
        channel: ServerChannel,
        prepared: Extract<Awaited<ReturnType<SshCommands['prepare']>>, { kind: 'git' }>,
        end: (code: number) => void,
      ) {
        const child = spawn('git', [prepared.service, prepared.dir], {
          env: gitEnv(prepared.env),
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        child.stdin.on('error', () => undefined);
        channel.pipe(child.stdin);
        child.stdout.pipe(channel, { end: false });
        child.stderr.pipe(channel.stderr, { end: false });
        channel.on('close', () => {
          if (child.exitCode === null) child.kill();
        });
        const code = await new Promise<number>((resolve) => {
          child.on('error', () => resolve(128));
          child.on('close', (c) => resolve(c ?? 128));
        });
        if (prepared.wikiOf !== undefined) {
          await commands
            .finishWikiPush(prepared.wikiOf)
            .catch((err: unknown) => log.error({ err }, 'after a wiki push'));
          return end(code);
        }
        if (!prepared.pushId) return end(code);
        // The push ends for the client once the database knows what it did.
        await commands.finishPush(prepared.pushId, () => end(code));
      }
    });
    server.on('error', (err: Error) => log.error({ err }, 'ssh server error'));
    return server;
  };

  listener.on('error', (err: Error) => log.error({ err }, 'ssh server error'));
  const host = opts.host ?? config.ssh.listenHost;
  const port = opts.port ?? config.ssh.listenPort;
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(port, host, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  const actual = (listener.address() as AddressInfo).port;
  return {
    port: actual,
    close: () =>
      new Promise<void>((resolve) => {
        listener.close(() => resolve());
        for (const c of clients) c.end();
      }),
  };
}
