/**
 * The fault suite (test/faults, `pnpm test:faults`): kept out of the root jest.config.js, whose
 * projects list never names test/faults, because it restarts the machine's RabbitMQ and Redis and so
 * must run alone. It uses the root configuration's ts-jest transform and a template database of its own.
 */
module.exports = {
  rootDir: __dirname,
  displayName: 'test/faults',
  globalSetup: '<rootDir>/test/faults/global-setup.js',
  globalTeardown: '<rootDir>/test/faults/global-teardown.js',
  testMatch: ['<rootDir>/test/faults/**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }] },
  testEnvironment: 'node',
  maxWorkers: 1,
  testTimeout: 30 * 60_000,
};
