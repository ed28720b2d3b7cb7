// better-sqlite3, in the build that runs on this Node: 12.x on Node 20 (13 crashes there), 13.x
// (installed as `better-sqlite3-napi`, Node-API, prebuilt for every platform) on Node 22 and 24,
// where 12's V8 addon needs a compiler or a download, and aborts on Node 24. Both are optional
// dependencies, so `npm ci` on any supported Node installs the one it can.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
const PACKAGE = NODE_MAJOR >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

function load(): typeof BetterSqlite3 {
  try {
    return createRequire(import.meta.url)(PACKAGE) as typeof BetterSqlite3;
  } catch (err) {
    throw new Error(
      `SQLite needs the ${PACKAGE} package on Node ${process.versions.node}, which did not load ` +
        `(${(err as Error).message.split('\n')[0]}); run \`npm ci\` with this Node`,
      { cause: err },
    );
  }
}

/** The better-sqlite3 Database class. */
export const SQLite = load();
export type SqliteDb = BetterSqlite3.Database;
export type SqliteStatement = BetterSqlite3.Statement;
