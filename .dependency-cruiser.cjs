/**
 * The layer rules, checked by dependency-cruiser on every import of `src/` and `scripts/`, type-only
 * and dynamic ones too (`npm run check:layers`, part of `npm run check`). The README's "Working on
 * Whetstone" says the same rules in prose; docs/layers.svg is the picture (`npm run docs:layers`).
 * `scripts/check-layers.ts` runs this and adds what an import graph cannot see: SQL outside
 * `src/adapters/`, two files of one name in different layers, and paths in comments that point nowhere.
 */

/**
 * The imports of an adapter a service still makes, each with why. A service reaches storage through
 * the ports of `src/core/ports.ts`, which `src/env.ts` fills with adapters; what is left here is not
 * storage: the MCP client, the wire to an upstream server. Add to this list only with a reason;
 * `npm run check:layers` fails on an entry no import uses any more.
 */
const SERVICE_ADAPTER_EXCEPTIONS = {
  'src/services/gateway.ts': {
    // The MCP client is the wire to an upstream server, not storage.
    'src/adapters/mcp-upstream.ts': 'UpstreamError',
  },
  'src/services/upstream-sync.ts': {
    // The MCP client is the wire to an upstream server, not storage.
    'src/adapters/mcp-upstream.ts': 'callUpstreamTool, listUpstreamTools, UpstreamError',
  },
};

const exceptionFiles = Object.keys(SERVICE_ADAPTER_EXCEPTIONS);
const escape = (path) => `^${path.replace(/[.]/g, '\\.')}$`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Files that import each other, directly or through others, cannot be understood or tested apart.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A file nothing imports and that is not an entry point is dead code.',
      from: {
        orphan: true,
        pathNot: [
          '\\.d\\.m?ts$',
          // Entry points: the Worker, the CLI, the client package, the dashboard page, and each script.
          '^src/index\\.ts$',
          '^src/cli/main\\.ts$',
          '^src/client/index\\.ts$',
          '^src/dashboard/browser/main\\.ts$',
          '^scripts/',
        ],
      },
      to: {},
    },
    {
      name: 'core-is-pure',
      severity: 'error',
      comment:
        'src/core/ imports only src/core/, src/schemas.ts, src/errors.ts and packages (no Node built-in): the rules run anywhere.',
      from: { path: '^src/core/' },
      to: { pathNot: ['^src/core/', '^src/schemas\\.ts$', '^src/errors\\.ts$', '^node_modules/'] },
    },
    {
      name: 'core-no-workers',
      severity: 'error',
      comment: 'src/core/ imports no Workers module (cloudflare:*, @cloudflare/*).',
      from: { path: '^src/core/' },
      to: { path: ['^cloudflare:', '@cloudflare/'] },
    },
    {
      name: 'api-not-adapters',
      severity: 'error',
      comment: 'src/api/ reaches storage through services and ports, never an adapter.',
      from: { path: '^src/api/' },
      to: { path: '^src/adapters/' },
    },
    {
      name: 'services-through-ports',
      severity: 'error',
      comment: 'src/services/ reach storage through the ports of src/core/ports.ts, never an adapter.',
      from: { path: '^src/services/', pathNot: exceptionFiles.map(escape) },
      to: { path: '^src/adapters/' },
    },
    ...exceptionFiles.map((file) => ({
      name: 'services-through-ports',
      severity: 'error',
      comment: `${file} may import only the adapters listed in SERVICE_ADAPTER_EXCEPTIONS.`,
      from: { path: escape(file) },
      to: { path: '^src/adapters/', pathNot: Object.keys(SERVICE_ADAPTER_EXCEPTIONS[file]).map(escape) },
    })),
    {
      name: 'services-not-api',
      severity: 'error',
      comment: 'src/services/ never imports src/api/: routes call services, not the other way.',
      from: { path: '^src/services/' },
      to: { path: '^src/api/' },
    },
    {
      name: 'adapters-below-services',
      severity: 'error',
      comment: 'src/adapters/ never import src/services/ or src/api/: adapters implement ports.',
      from: { path: '^src/adapters/' },
      to: { path: ['^src/services/', '^src/api/'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that names no file (a typo, a moved file).',
      from: {},
      // The dashboard's bundle is built (npm run build:dashboard), not written.
      to: { couldNotResolve: true, pathNot: ['\\.gen\\.ts$'] },
    },
  ],
  options: {
    // workerd's own modules: known to the runtime, not files.
    builtInModules: { add: ['cloudflare:workers', 'cloudflare:email', 'cloudflare:sockets'] },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
    // Type-only imports count: a type from an adapter ties a service to it as much as a value does.
    tsPreCompilationDeps: true,
    // The repository's own compiler settings; a small tree of the layout test has none.
    ...(require('node:fs').existsSync('tsconfig.json') ? { tsConfig: { fileName: 'tsconfig.json' } } : {}),
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    reporterOptions: {
      archi: { collapsePattern: '^(src/(core|services|adapters|api|client|cli|dashboard)|scripts|node_modules)/' },
    },
  },
};
