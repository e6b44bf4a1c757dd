/**
 * The fault suite (test/faults, `pnpm test:faults`): kept out of the root jest.config.js, whose
 * projects list never names test/faults, because it restarts the machine's RabbitMQ and Redis and so
 * must run alone. Same template database set-up and ts-jest transform as the root configuration.
 */
const root = require('./jest.config.js');

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
