// The layer rules of docs/architecture.md, checked on every `npm run lint` (and so in CI).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'No import cycle among the sources, type imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'only-the-root-knows-the-app',
      comment:
        'Only the composition root (src/app/) and the CLI that starts it (src/cli.ts, src/cli/) know the application: ' +
        'services, routes and pages receive the collaborators they name.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/app/', '^src/cli\\.ts$', '^src/cli/'] },
      to: { path: '^src/app/' },
    },
    {
      name: 'routes-and-pages-never-touch-a-store',
      comment: 'A route or page calls services; row types come from tables.ts.',
      severity: 'error',
      from: { path: '^src/.*(routes|pages)[^/]*\\.tsx?$' },
      to: { path: '^src/.*(^|/)store(s)?(\\.ts|/)' },
    },
    {
      name: 'stores-never-know-http',
      comment: 'A store is queries: no HTTP, no web, no Fastify.',
      severity: 'error',
      from: { path: '^src/.*(^|/)store\\.ts$' },
      to: { path: ['^src/http/', '^src/web/', '(^|/)node_modules/(fastify|@fastify)/'] },
    },
    {
      name: 'stores-never-call-a-service',
      comment: 'A store never imports a service (its own domain or another).',
      severity: 'error',
      from: { path: '^src/.*(^|/)store\\.ts$' },
      to: { path: '^src/.*(^|/)service\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
  },
};
