// Unit tests: beside the code, src/**/*.spec.ts and the dashboard's web/src/**/*.spec.ts.
module.exports = {
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/web/src/**/*.spec.ts'],
  testEnvironment: 'node',
  transform: {
    '/node_modules/.+\\.js$': ['ts-jest', { diagnostics: false, tsconfig: { allowJs: true } }],
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
  },
  // ES-module-only dependencies (Node 20.19+ requires them natively; Jest's loader needs them transformed).
  transformIgnorePatterns: ['/node_modules/(?!(content-disposition|request-filtering-agent)/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
};
