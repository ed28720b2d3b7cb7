// `anvil admin user create`, run by operators and scripts setting up a site: the users alone, without
// the rest of the site's services. cli.ts loads this module only when the command runs.
import { pino, destination } from 'pino';
import { configurePasswordHashing } from '../auth/password.js';
import { DataLock } from '../cluster/datalock.js';
import { openDatabase } from '../db/database.js';
import { UserService } from '../users/service.js';
import { config } from './common.js';

/**
 * As withContext (admin.ts), for a command that needs the users alone: the database (migrated, as
 * the context does) and a UserService, rather than every service of the site.
 */
export async function withUsers(
  opts: { config?: string },
  fn: (users: UserService) => Promise<void>,
): Promise<void> {
  const cfg = config(opts);
  const log = pino({ level: 'warn' }, destination(2));
  const lock = DataLock.take(cfg.server.appDataPath);
  try {
    configurePasswordHashing(cfg.security.passwordHash);
    const database = await openDatabase(cfg);
    try {
      await fn(new UserService({ db: database.db, owned: [], log }));
    } finally {
      await database.close();
    }
  } finally {
    lock.release();
  }
}

export const userCreate = (opts: {
  config?: string;
  username: string;
  password: string;
  email: string;
  admin: boolean;
  mustChangePassword?: boolean;
}) =>
  withUsers(opts, async (users) => {
    const first = (await users.list({ type: 0 }, { page: 1, limit: 1, offset: 0 }))[1] === 0;
    const created = await users.create({
      username: opts.username,
      password: opts.password,
      email: opts.email,
      isAdmin: opts.admin,
      mustChangePassword: opts.mustChangePassword ?? !first,
    });
    console.log(`New user '${created.name}' has been successfully created!`);
  });
