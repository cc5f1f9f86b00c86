/**
 * e2e tests: the e2e-spec files under test/, against the real PostgreSQL and Redis (each file makes its own
 * database and Redis key prefix). They run the service as `nest build` made it: an import of `src/` resolves
 * to `dist/src/` (`npm run test:e2e` builds it first when it is stale), the build the spawned service
 * processes run too, with the OpenAPI metadata of the Swagger CLI plugin. Only the test files are compiled
 * here, each on its own (`isolatedModules`): no TypeScript program in Jest's process, whose heap (the test
 * apps' too) then holds about 150-250 MB per file instead of 0.9-2 GB. Types are checked by `npm run typecheck`.
 */
module.exports = {
  rootDir: '..',
  testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
  testEnvironment: 'node',
  testTimeout: 60_000,
  // One file at a time, in a worker replaced once a file leaves it above 512 MB of heap: the test apps of
  // 47 files in one process grew its heap past 1 GB, and a late file's app shared its event loop with the
  // collections of that heap.
  maxWorkers: 1,
  workerIdleMemoryLimit: '512MB',
  transform: {
    '/node_modules/.+\\.js$': [
      'ts-jest',
      { diagnostics: false, tsconfig: { allowJs: true, isolatedModules: true } },
    ],
    '^.+\\.ts$': ['ts-jest', { diagnostics: false, tsconfig: { isolatedModules: true } }],
  },
  moduleNameMapper: { '^((\\.\\./)+)src/(.*)$': '<rootDir>/dist/src/$3' },
  // ES-module-only dependencies (Node 20.19+ requires them natively; Jest's loader needs them transformed).
  transformIgnorePatterns: ['/node_modules/(?!(content-disposition)/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
};
