#!/usr/bin/env node
// The `anvil` command: `anvil web` serves Anvil; `anvil admin ...` administers it from the shell.
// This module only declares the commands: each loads what it runs (src/cli/*, a chunk of the
// bundle) when it runs, so that the commands run per SSH operation in OpenSSH mode (`anvil keys`,
// `anvil serv`) and the admin commands start without reading the whole server.
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError } from './config/config.js';
import { AppError } from './errors.js';
import { VERSION } from './version.js';
import { keysCommand, servCommand } from './ssh/serv.js';

function parseBool(value: string | undefined): boolean {
  if (value === undefined) return true;
  const v = value.toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no'].includes(v)) return false;
  throw new InvalidArgumentError(`"${value}" is not a boolean (true or false)`);
}

function parsePort(value: string): string {
  if (!/^\d+$/.test(value) || Number(value) > 65535) {
    throw new InvalidArgumentError(`"${value}" is not a port number (0 to 65535)`);
  }
  return value;
}

type AdminModule = typeof import('./cli/admin.js');
const admin_ = (): Promise<AdminModule> => import('./cli/admin.js');

const program = new Command('anvil')
  .description('Anvil: a self-hosted code-hosting service with a Forgejo-compatible API')
  .version(VERSION.anvil)
  .showHelpAfterError();

const configOption = () =>
  new Option('-c, --config <path>', 'configuration file (default: ./data/app.ini if present)');

program
  .command('web')
  .description('start the web server')
  .addOption(configOption())
  .option('-p, --port <port>', 'port to listen on (overrides [server] HTTP_PORT)', parsePort)
  .action(async (opts: { config?: string; port?: string }) => (await import('./cli/web.js')).web(opts));

const admin = program.command('admin').description('administration commands');
const user = admin.command('user').description('manage users');

user
  .command('create')
  .description('create a user')
  .addOption(configOption())
  .requiredOption('--username <name>', 'user name')
  .requiredOption('--password <password>', 'password')
  .requiredOption('--email <email>', 'e-mail address')
  .option('--admin', 'make the user a site administrator', false)
  .option(
    '--must-change-password [bool]',
    'require a password change (default: true, false for the first user)',
    parseBool,
  )
  .action(async (opts: Parameters<typeof import('./cli/users.js').userCreate>[0]) =>
    (await import('./cli/users.js')).userCreate(opts),
  );

user
  .command('list')
  .description('list users')
  .addOption(configOption())
  .option('--admin', 'list only site administrators', false)
  .action(async (opts: Parameters<AdminModule['userList']>[0]) => (await admin_()).userList(opts));

user
  .command('delete')
  .description('delete a user')
  .addOption(configOption())
  .requiredOption('--username <name>', 'user name')
  .option('--purge', 'also delete their repositories, memberships and organizations they alone own', false)
  .action(async (opts: Parameters<AdminModule['userDelete']>[0]) => (await admin_()).userDelete(opts));

user
  .command('change-password')
  .description("change a user's password")
  .addOption(configOption())
  .requiredOption('--username <name>', 'user name')
  .requiredOption('--password <password>', 'new password')
  .option('--must-change-password [bool]', 'require a password change at next sign-in', parseBool)
  .action(async (opts: Parameters<AdminModule['userChangePassword']>[0]) =>
    (await admin_()).userChangePassword(opts),
  );

user
  .command('generate-access-token')
  .description('generate an access token for a user')
  .addOption(configOption())
  .requiredOption('--username <name>', 'user name')
  .option('--token-name <name>', 'token name', 'anvil-admin')
  .option(
    '--scopes <scopes>',
    'comma-separated scopes, for example "all" or "read:user,write:repository"',
    'all',
  )
  .option('--raw', 'print only the token', false)
  .action(async (opts: Parameters<AdminModule['userGenerateAccessToken']>[0]) =>
    (await admin_()).userGenerateAccessToken(opts),
  );

const quota = admin.command('quota').description('quota engine');

quota
  .command('recalculate')
  .description(
    'measure repositories on disk and blobs in storage, correct the recorded sizes, recompute quota usage and report any drift',
  )
  .addOption(configOption())
  .option('--owner <name>', 'only this user or organization')
  .action(async (opts: Parameters<AdminModule['quotaRecalculate']>[0]) =>
    (await admin_()).quotaRecalculate(opts),
  );

program
  .command('dump')
  .description(
    'write the whole site (database rows, repositories, blobs, configuration) into one .tar.gz, consistent while the server runs',
  )
  .addOption(configOption())
  .option(
    '-f, --file <path>',
    'the archive to write',
    `anvil-dump-${new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-')}.tar.gz`,
  )
  .action(async (opts: Parameters<AdminModule['dumpSite']>[0]) => (await admin_()).dumpSite(opts));

program
  .command('restore')
  .description('restore a dump made by `anvil dump` into a new site (an empty database and repository root)')
  .addOption(configOption())
  .argument('<file>', 'the archive')
  .action(async (file: string, opts: { config?: string }) => (await admin_()).restoreSite(file, opts));

const collect = (value: string, previous: string[]) => [...previous, value];

program
  .command('doctor')
  .description(
    'check the site: repositories against their rows, unfinished changes, leftovers, rows pointing at what is gone, ' +
      'quota usage, and (with --all or --run) blobs no row references and git fsck; exit status 1 while problems remain',
  )
  .addOption(configOption())
  .option('--fix', 'correct what can be corrected', false)
  .option('--list', 'list the checks (* marks those run by default) and exit', false)
  .option('--run <name>', 'run this check (repeatable); default: the default checks', collect, [])
  .option('--all', 'run every check, the expensive ones too', false)
  .option('--full', 'git-fsck: a full fsck (every object read) rather than connectivity only', false)
  .action(async (opts: Parameters<AdminModule['doctor']>[0]) => (await admin_()).doctor(opts));

admin
  .command('storage')
  .description('blob storage')
  .command('migrate')
  .description(
    'copy every blob from one storage backend to the other (as `forgejo migrate-storage`), checking sizes; ' +
      'the server keeps reading the old one meanwhile, and a rerun copies only what is missing',
  )
  .addOption(configOption())
  .requiredOption('--from <type>', 'local or minio')
  .requiredOption('--to <type>', 'local or minio')
  .option('--type <kind>', 'lfs, attachments, artifacts, packages, avatars or all', 'all')
  .action(async (opts: Parameters<AdminModule['storageMigrate']>[0]) =>
    (await admin_()).storageMigrate(opts),
  );

// `anvil runner` (its client reads the Actions protocol's descriptors at load) is loaded unless
// another command is named (or --version): for `anvil runner ...`, and for help or an unknown name
// to list it.
const declared = new Set(program.commands.map((c) => c.name()).concat('keys', 'serv', '-V', '--version'));
if (!declared.has(process.argv[2] ?? '')) {
  program.addCommand((await import('./actions/runner-cli.js')).runnerCommand());
}
program.addCommand(keysCommand(async (cfg, log) => (await import('./cli/keys.js')).openSshKeys(cfg, log)));
program.addCommand(servCommand());

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof AppError || err instanceof ConfigError) {
    console.error(`anvil: ${err.message}`);
  } else {
    console.error('anvil:', err instanceof Error ? (err.stack ?? err.message) : err);
  }
  process.exit(1);
});
