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
    '/content-disposition/.+\\.js$': ['ts-jest', { diagnostics: false, tsconfig: { allowJs: true } }],
    '^.+\\.ts$': [
      'ts-jest',
      {
        diagnostics: false,
        astTransformers: { before: ['<rootDir>/test/support/swagger-plugin-transformer.js'] },
      },
    ],
  },
  // @fastify/static requires content-disposition 3, an ES module that Jest's CommonJS loader cannot require.
  transformIgnorePatterns: ['/node_modules/(?!content-disposition/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
};
