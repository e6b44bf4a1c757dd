/** One jest run over every package and service; each has its tests under test/. */
const tsJest = ['ts-jest', { tsconfig: '<rootDir>/../../tsconfig.test.json' }];

const project = (dir) => ({
  displayName: dir,
  rootDir: `<rootDir>/${dir}`,
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  transform: { '^.+\\.ts$': tsJest },
  testEnvironment: 'node',
});

module.exports = {
  rootDir: __dirname,
  globalSetup: '<rootDir>/packages/testkit/global-setup.js',
  globalTeardown: '<rootDir>/packages/testkit/global-teardown.js',
  maxWorkers: 2,
  testTimeout: 120_000,
  projects: [
    'packages/contracts',
    'packages/db',
    'packages/platform',
    'packages/ops',
    'packages/client',
    'services/orders-api',
    'services/bank-ingest',
    'services/matcher',
    'services/webhook-dispatcher',
    'examples/merchant-server',
    'examples/bank-adapter',
    { ...project('test/e2e'), rootDir: '<rootDir>/test/e2e', testMatch: ['<rootDir>/**/*.test.ts'], transform: { '^.+\\.ts$': tsJest } },
    // The set-up scripts' own logic (scripts/infra): plain Node, no services.
    { ...project('scripts'), transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/../tsconfig.test.json' }] } },
    // The Kubernetes manifests in deploy/k8s, rendered with kubectl and checked against the built services.
    { ...project('test/deploy'), testMatch: ['<rootDir>/*.test.ts'] },
  ].map((p) => (typeof p === 'string' ? project(p) : p)),
};
