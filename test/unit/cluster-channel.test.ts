// The channel between the processes of one site is named after the site's database, so that two
// sites sharing one Redis (or one PostgreSQL server) never hear each other's messages.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { channelName } from '../../src/cluster/channel.js';
import type { Config } from '../../src/config/config.js';

const site = (database: Partial<Config['database']>) =>
  channelName({
    database: {
      type: 'sqlite3',
      path: '/data/anvil.db',
      host: '',
      name: '',
      ...database,
    } as Config['database'],
  });

describe('cluster channel name', () => {
  it('is the same for every process of one site and differs between sites, on each database', () => {
    for (const type of ['postgres', 'mysql'] as const) {
      const a = site({ type, host: '127.0.0.1:1', name: 'one' });
      assert.equal(a, site({ type, host: '127.0.0.1:1', name: 'one' }));
      assert.notEqual(a, site({ type, host: '127.0.0.1:1', name: 'two' }), `${type}: another database`);
      assert.notEqual(a, site({ type, host: '10.0.0.2:1', name: 'one' }), `${type}: another server`);
    }
    assert.notEqual(site({ path: '/a/anvil.db' }), site({ path: '/b/anvil.db' }));
    // A MariaDB site is not told apart by a SQLite path it does not use.
    assert.notEqual(
      site({ type: 'mysql', host: 'h:3306', name: 'one', path: '/data/anvil.db' }),
      site({ type: 'mysql', host: 'h:3306', name: 'two', path: '/data/anvil.db' }),
    );
    assert.match(site({}), /^anvil_[0-9a-f]{16}$/);
  });
});
