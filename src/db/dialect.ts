// Which database Anvil runs on. Its own module so that the migrations, and migrate.ts which lists
// them, need nothing from database.ts (which runs them): no import cycle.
export type Dialect = 'sqlite' | 'postgres' | 'mysql';
