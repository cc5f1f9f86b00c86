/**
 * e2e tests: the e2e-spec files under test/, against the real PostgreSQL and Redis (each file makes its own
 * database and Redis key prefix). The Swagger CLI plugin runs here too, so the OpenAPI document the
 * tests read is the one `nest build` produces. Types are checked by `npm run typecheck`.
 */
module.exports = {
  rootDir: '..',
  testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
  testEnvironment: 'node',
  testTimeout: 60_000,
  transform: {
    '/node_modules/.+\\.js$': ['ts-jest', { diagnostics: false, tsconfig: { allowJs: true } }],
    '^.+\\.ts$': [
      'ts-jest',
      {
        diagnostics: false,
        astTransformers: { before: ['<rootDir>/test/support/swagger-plugin-transformer.js'] },
      },
    ],
  },
  // ES-module-only dependencies (Node 20.19+ requires them natively; Jest's loader needs them transformed).
  transformIgnorePatterns: ['/node_modules/(?!(content-disposition|request-filtering-agent)/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
};
