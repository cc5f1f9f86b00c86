// Unit tests: beside the code, src/**/*.spec.ts.
module.exports = {
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
  testEnvironment: 'node',
  transform: {
    '/content-disposition/.+\\.js$': ['ts-jest', { diagnostics: false, tsconfig: { allowJs: true } }],
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
  },
  // @fastify/static requires content-disposition 3, an ES module that Jest's CommonJS loader cannot require.
  transformIgnorePatterns: ['/node_modules/(?!content-disposition/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
};
