// What `anvil keys` (sshd's AuthorizedKeysCommand, run for each SSH connection in OpenSSH mode)
// opens: the database alone, and the two queries SshKeyService.byFingerprint makes, rather than the
// whole site's context. Loaded by cli.ts only when the command runs.
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { openDatabase } from '../db/database.js';
import * as store from '../ssh/store.js';
import type { OpenSshKeys } from '../ssh/serv.js';

export const openSshKeys: OpenSshKeys = async (cfg: Config, _log: Logger) => {
  // Migrated as the whole context would: a site whose server has not run yet is brought up to date.
  const database = await openDatabase(cfg);
  const { db } = database;
  return {
    sshKeys: {
      async byFingerprint(fingerprint) {
        const [user, deploy] = await Promise.all([
          store.userKeyByFingerprint(db, fingerprint),
          store.deployKeysByFingerprint(db, fingerprint),
        ]);
        return user ? { user, deploy } : { deploy };
      },
    },
    close: () => database.close(),
  };
};
