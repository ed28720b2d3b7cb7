// OpenSSH mode: `anvil keys` is sshd's AuthorizedKeysCommand (it prints the authorized_keys line of
// a key Anvil knows, with `anvil serv` as its forced command), and `anvil serv key-<id>` runs for
// each connection: it asks the running server (internal endpoints, [security] INTERNAL_TOKEN) what
// the key may do with $SSH_ORIGINAL_COMMAND, runs git itself, and reports a push when git is done.
import { spawn } from 'node:child_process';
import { Command } from 'commander';
import { pino, destination, type Logger } from 'pino';
import { loadConfig, type Config } from '../config/config.js';
import { DataLock } from '../cluster/datalock.js';
import { gitEnv } from '../git/git.js';
import { fingerprintOf } from './keyparse.js';
import type { ServAnswer } from './internal.js';
import type { SshKeyService } from './service.js';

/** Opens the keys of the database `cfg` names (cli.ts passes the composition root's createContext). */
export type OpenSshKeys = (
  cfg: Config,
  log: Logger,
) => Promise<{ sshKeys: Pick<SshKeyService, 'byFingerprint'>; close(): Promise<void> }>;

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function configOf(opts: { config?: string }): Config {
  return loadConfig({ configPath: opts.config, env: process.env });
}

/** The forced command of a key: this program's `serv`, with the same configuration. */
function servCommandLine(cfg: Config, keyId: string): string {
  const parts = [shellQuote(process.execPath), shellQuote(process.argv[1] ?? 'anvil'), 'serv', keyId];
  if (cfg.configPath) return [...parts, '--config', shellQuote(cfg.configPath)].join(' ');
  return [`ANVIL__SERVER__APP_DATA_PATH=${shellQuote(cfg.server.appDataPath)}`, ...parts].join(' ');
}

export function keysCommand(open: OpenSshKeys): Command {
  return new Command('keys')
    .description("sshd's AuthorizedKeysCommand: print the authorized_keys line of a key Anvil knows")
    .option('-c, --config <path>', 'configuration file (default: ./data/app.ini if present)')
    .requiredOption('-e, --expected <user>', 'the system user git connects as (%u must be this)')
    .requiredOption('-u, --username <user>', 'the user sshd is authenticating (%u)')
    .option('-t, --type <type>', 'the key type (%t)')
    .requiredOption('-k, --content <base64>', 'the key, base64 (%k)')
    .action(
      async (opts: {
        config?: string;
        expected: string;
        username: string;
        type?: string;
        content: string;
      }) => {
        // Other system users are none of Anvil's business: no line, and sshd goes on.
        if (opts.username !== opts.expected) return;
        const blob = Buffer.from(opts.content, 'base64');
        if (!blob.length) return;
        const cfg = configOf(opts);
        const ctx = await open(cfg, pino({ level: 'warn' }, destination(2)));
        try {
          const found = await ctx.sshKeys.byFingerprint(fingerprintOf(blob));
          const options =
            'no-port-forwarding,no-X11-forwarding,no-agent-forwarding,no-pty,no-user-rc,restrict';
          const line = (keyId: string, content: string) =>
            `command="${servCommandLine(cfg, keyId).replace(/(["\\])/g, '\\$1')}",${options} ${content}`;
          if (found.user) console.log(line(`key-${found.user.id}`, found.user.content));
          else if (found.deploy[0])
            console.log(line(`deploy-${found.deploy[0].id}`, found.deploy[0].content));
        } finally {
          await ctx.close();
        }
      },
    );
}

/**
 * A POST to the server's internal SSH endpoint. node:http rather than fetch: loading fetch (undici,
 * and its WebAssembly parser) takes longer than the whole request, and this runs per SSH operation.
 */
async function internal<T>(cfg: Config, path: string, body: unknown): Promise<T> {
  const url = new URL(`${cfg.server.localRootUrl}api/internal/ssh/${path}`);
  const client = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const payload = JSON.stringify(body);
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: 'POST',
        // One request per connection, closed when answered: nothing holds the process once done.
        agent: false,
        headers: {
          authorization: `Bearer ${cfg.security.internalToken}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`Anvil answered ${status}: ${text.slice(0, 200)}`);
  }
}

export function servCommand(): Command {
  return new Command('serv')
    .description('the forced command of OpenSSH mode: runs $SSH_ORIGINAL_COMMAND for key <key> (key-N)')
    .option('-c, --config <path>', 'configuration file (default: ./data/app.ini if present)')
    .argument('<key>', 'key-<id>, as `anvil keys` wrote it')
    .action(async (key: string, opts: { config?: string }) => {
      const fail = (message: string) => {
        process.stderr.write(`Anvil: ${message}\n`);
        process.exitCode = 1;
      };
      const cfg = configOf(opts);
      if (!cfg.security.internalToken) return fail('the server has not started yet (no internal token)');
      let answer: ServAnswer;
      try {
        answer = await internal<ServAnswer>(cfg, 'serv', {
          key,
          command: process.env['SSH_ORIGINAL_COMMAND'] ?? '',
          protocol: process.env['GIT_PROTOCOL'],
        });
      } catch (err) {
        return fail(`cannot reach the server at ${cfg.server.localRootUrl}: ${(err as Error).message}`);
      }
      if (!answer.ok) return fail(answer.message);
      if (answer.kind === 'text') {
        process.stdout.write(answer.text);
        return;
      }
      // While git runs, its quarantine is this process's: a server starting meanwhile must see it
      // in use (cluster/datalock.ts).
      const lock = DataLock.take(cfg.server.appDataPath);
      const child = spawn('git', [answer.service, answer.dir], { env: gitEnv(answer.env), stdio: 'inherit' });
      const code = await new Promise<number>((resolve) => {
        child.on('error', () => resolve(128));
        child.on('close', (c) => resolve(c ?? 128));
      });
      if (answer.wikiOf !== undefined) {
        await internal(cfg, 'push-done', { wikiOf: answer.wikiOf }).catch((err: unknown) =>
          fail(`the wiki push could not be finished: ${(err as Error).message}`),
        );
      } else if (answer.pushId) {
        await internal(cfg, 'push-done', { pushId: answer.pushId }).catch((err: unknown) =>
          fail(`the push could not be recorded: ${(err as Error).message}`),
        );
      }
      lock.release();
      if (code !== 0) process.exitCode = code;
    });
}
