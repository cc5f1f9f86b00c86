// @ts-check
/**
 * The layers of src/, checked by `npm run lint` (dependency-cruiser). Imports run down only: a folder (or a
 * top-level file) may import the folders listed before it, here and in the layers below, and never one
 * listed after it. The README's "Architecture" section draws the same list. To add a folder, put it in the
 * layer where what it imports is below it and what imports it is above.
 */
const LAYERS = [
  // Validation helpers, shared DTOs, small utilities, types, and the configuration they read.
  { layer: 'base', folders: ['common', 'types', 'generated', 'config'] },
  // The capture's own rules (filters, verification, dedup keys, ingest rules): pure functions.
  { layer: 'rules', folders: ['ingest'] },
  // The entities and the lists of states they hold, and the database's plumbing and migrations.
  { layer: 'model', folders: ['model', 'database'] },
  // Redis, secrets, the job catalog (every queue), metrics, the outbound HTTP client, signer and mail
  // transport, and access (grants, roles, decorators).
  { layer: 'platform', folders: ['redis', 'secrets', 'jobs', 'metrics', 'outbound', 'access'] },
  // The engines: what runs behind the API and in the workers.
  {
    layer: 'engines',
    folders: [
      'audit',
      'stats',
      'notifications',
      'mail',
      'ai',
      'issues',
      'events',
      'realtime',
      'retention',
      'delivery',
    ],
  },
  // The API's features that are not engines.
  {
    layer: 'features',
    folders: ['users', 'api-keys', 'auth', 'destinations', 'endpoints', 'teams', 'health'],
  },
  // The wiring: modules of the app, its entry points and programs.
  {
    layer: 'wiring',
    folders: [
      'client',
      'dashboard',
      'app-core',
      'delivery-thread',
      'app.module',
      'openapi',
      'app.factory',
      'cli',
      'main',
    ],
  },
];

const ordered = LAYERS.flatMap(({ layer, folders }) => folders.map((folder) => ({ layer, folder })));
/** `src/<folder>/...` or the top-level file `src/<folder>.ts`. */
const pathOf = (folders) => `^src/(${folders.map((name) => name.replace('.', '\\.')).join('|')})(/|\\.ts$)`;

const layerRules = ordered.slice(0, -1).map(({ layer, folder }, index) => {
  const below = ordered.slice(0, index).map((entry) => entry.folder);
  const above = ordered.slice(index + 1).map((entry) => entry.folder);
  return {
    name: `layers: ${folder}`,
    comment:
      `src/${folder} is in the "${layer}" layer: it may import only ` +
      (below.length ? below.join(', ') : 'packages') +
      ` (.dependency-cruiser.cjs). Move what it needs down a layer, or have the upper module call down.`,
    severity: 'error',
    from: { path: pathOf([folder]) },
    to: { path: pathOf(above) },
  };
});

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'layers: every folder has one',
      comment:
        'Every folder and top-level file of src/ is in a layer of .dependency-cruiser.cjs: add this one where it belongs.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/', pathNot: pathOf(ordered.map((entry) => entry.folder)) },
    },
    {
      name: 'no circular imports',
      comment: 'These files import each other, through the others listed: break the circle.',
      severity: 'error',
      from: { path: '^src/' },
      // The entities that hold each other (an endpoint's destinations, a destination's endpoint) are one
      // model, and an entity names its repository.
      to: { circular: true, pathNot: '^src/model/' },
    },
  ],
  options: {
    includeOnly: '^src/',
    exclude: { path: '\\.spec\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
  },
};
