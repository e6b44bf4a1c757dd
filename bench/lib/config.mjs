/**
 * What a run measures and at what size. BENCH_SCALE picks a preset (`full`, the default, or `smoke`
 * for CI); any BENCH_* variable below overrides one value of the preset.
 */

const PRESETS = {
  full: {
    orders: 100_000,
    notifications: 20_000,
    accounts: 20,
    organisations: 4,
    pushConcurrency: 32,
    fixedRate: 200,
    fixedRateSeconds: 60,
    lowRate: 20,
    lowRateSeconds: 20,
    afterBurstSeconds: 15,
    hotAccountNotifications: 5_000,
    hotAccountFixedRateSeconds: 20,
    twoMatchersNotifications: 10_000,
    apiSeconds: 10,
    apiConnections: [1, 8, 16, 32, 48, 64],
    apiFixedRate: 1500,
    apiFixedRateSeconds: 15,
    amqpMessages: 50_000,
    httpsRequests: 20_000,
    baselineDeposits: 20_000,
    statementRecords: 100_000,
    consoleHeld: 10_000,
    serverSettings: 'deployed',
  },
  smoke: {
    orders: 1_000,
    notifications: 200,
    accounts: 20,
    organisations: 4,
    pushConcurrency: 16,
    fixedRate: 200,
    fixedRateSeconds: 1,
    lowRate: 0,
    lowRateSeconds: 0,
    afterBurstSeconds: 0,
    hotAccountNotifications: 100,
    hotAccountFixedRateSeconds: 0,
    twoMatchersNotifications: 100,
    apiSeconds: 3,
    apiConnections: [1, 16],
    apiFixedRate: 100,
    apiFixedRateSeconds: 2,
    amqpMessages: 2_000,
    httpsRequests: 1_000,
    baselineDeposits: 500,
    statementRecords: 2_000,
    consoleHeld: 100,
    // CI's smoke run checks outcomes, not speed: it leaves the server's configuration alone.
    serverSettings: 'as-is',
  },
};

const ALL_PHASES = ['baseline', 'pipeline', 'api', 'statements', 'console'];

function int(env, name, fallback) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

function list(env, name, fallback) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function loadBenchConfig(env = process.env) {
  const scale = env.BENCH_SCALE ?? 'full';
  const preset = PRESETS[scale];
  if (preset === undefined) throw new Error(`BENCH_SCALE must be one of ${Object.keys(PRESETS).join(', ')}, got "${scale}"`);
  const mix = list(env, 'BENCH_MIX', ['60', '20', '20']).map(Number);
  if (mix.length !== 3 || mix.some((n) => !Number.isFinite(n) || n < 0) || mix.reduce((a, b) => a + b, 0) !== 100) {
    throw new Error('BENCH_MIX must be three percentages (confirmed,held,unmatched) adding up to 100, e.g. 60,20,20');
  }
  const phases = list(env, 'BENCH_PHASES', ALL_PHASES);
  for (const p of phases) if (!ALL_PHASES.includes(p)) throw new Error(`BENCH_PHASES: unknown phase "${p}" (known: ${ALL_PHASES.join(', ')})`);
  const config = {
    scale,
    phases,
    orders: int(env, 'BENCH_ORDERS', preset.orders),
    notifications: int(env, 'BENCH_NOTIFICATIONS', preset.notifications),
    accounts: int(env, 'BENCH_ACCOUNTS', preset.accounts),
    organisations: int(env, 'BENCH_ORGANISATIONS', preset.organisations),
    pushConcurrency: int(env, 'BENCH_PUSH_CONCURRENCY', preset.pushConcurrency),
    fixedRate: int(env, 'BENCH_FIXED_RATE', preset.fixedRate),
    fixedRateSeconds: int(env, 'BENCH_FIXED_RATE_SECONDS', preset.fixedRateSeconds),
    lowRate: int(env, 'BENCH_LOW_RATE', preset.lowRate),
    lowRateSeconds: int(env, 'BENCH_LOW_RATE_SECONDS', preset.lowRateSeconds),
    afterBurstSeconds: int(env, 'BENCH_AFTER_BURST_SECONDS', preset.afterBurstSeconds),
    hotAccountNotifications: int(env, 'BENCH_HOT_ACCOUNT_NOTIFICATIONS', preset.hotAccountNotifications),
    hotAccountFixedRateSeconds: int(env, 'BENCH_HOT_ACCOUNT_FIXED_RATE_SECONDS', preset.hotAccountFixedRateSeconds),
    twoMatchersNotifications: int(env, 'BENCH_TWO_MATCHERS_NOTIFICATIONS', preset.twoMatchersNotifications),
    apiSeconds: int(env, 'BENCH_API_SECONDS', preset.apiSeconds),
    apiConnections: list(env, 'BENCH_API_CONNECTIONS', preset.apiConnections.map(String)).map(Number),
    apiFixedRate: int(env, 'BENCH_API_FIXED_RATE', preset.apiFixedRate),
    apiFixedRateSeconds: int(env, 'BENCH_API_FIXED_RATE_SECONDS', preset.apiFixedRateSeconds),
    amqpMessages: int(env, 'BENCH_AMQP_MESSAGES', preset.amqpMessages),
    httpsRequests: int(env, 'BENCH_HTTPS_REQUESTS', preset.httpsRequests),
    baselineDeposits: int(env, 'BENCH_BASELINE_DEPOSITS', preset.baselineDeposits),
    statementRecords: int(env, 'BENCH_STATEMENT_RECORDS', preset.statementRecords),
    consoleHeld: int(env, 'BENCH_CONSOLE_HELD', preset.consoleHeld),
    mix: { confirmed: mix[0] / 100, held: mix[1] / 100, unmatched: mix[2] / 100 },
    serverSettings: env.BENCH_PG_SETTINGS ?? preset.serverSettings,
    matching: env.BENCH_MATCHING ?? 'names',
    profile: env.BENCH_PROFILE === '1',
    updateDocs: env.BENCH_UPDATE_DOCS === '1',
    keepDatabase: env.BENCH_KEEP_DB === '1',
    external: externalServices(env),
  };
  if (config.accounts < 1 || config.organisations < 1 || config.organisations > config.accounts) {
    throw new Error('BENCH_ACCOUNTS must be at least 1 and at least BENCH_ORGANISATIONS');
  }
  if (!['names', 'learning'].includes(config.matching)) {
    throw new Error(`BENCH_MATCHING must be "names" or "learning", got "${config.matching}"`);
  }
  if (!['deployed', 'as-is'].includes(config.serverSettings)) {
    throw new Error(`BENCH_PG_SETTINGS must be "deployed" or "as-is", got "${config.serverSettings}"`);
  }
  if (config.apiConnections.some((c) => !Number.isInteger(c) || c < 1 || c > 1000)) {
    throw new Error('BENCH_API_CONNECTIONS must be a comma list of integers 1..1000');
  }
  return config;
}

/** Services already running somewhere on this machine: the bench then starts none of its own. */
function externalServices(env) {
  const given = ['BENCH_API_URL', 'BENCH_INGEST_URL', 'BENCH_DATABASE_URL'].filter((n) => env[n]);
  if (given.length === 0) return undefined;
  if (given.length !== 3) {
    throw new Error('to use running services set all of BENCH_API_URL, BENCH_INGEST_URL and BENCH_DATABASE_URL (the database they use)');
  }
  for (const name of ['BENCH_API_URL', 'BENCH_INGEST_URL']) {
    const host = new URL(env[name]).hostname;
    if (!['127.0.0.1', 'localhost', '[::1]', '::1'].includes(host)) {
      throw new Error(`${name} must point at this machine (127.0.0.1, localhost or [::1]): the bench sends load only to loopback`);
    }
  }
  return { apiUrl: env.BENCH_API_URL.replace(/\/$/, ''), ingestUrl: env.BENCH_INGEST_URL.replace(/\/$/, ''), databaseUrl: env.BENCH_DATABASE_URL };
}

/**
 * The pipeline's runs in the order they go, with how many notifications each sends. The paced runs
 * go first, on a warm system at rest, so they measure a sustained rate; the burst as fast as
 * accepted follows, then the fixed rate once more at once, for how long the burst's after-effects
 * (its backlog just drained, autovacuum of the rows it wrote) keep latency up. Then the hot
 * account (every deposit into one bank account) as a burst and paced; last, with a second matcher
 * started, the burst over every account and over the one account again.
 */
export function runSizes(config) {
  const paced = (rate, seconds) => (rate ?? 0) * (seconds ?? 0);
  return {
    fixedRate: paced(config.fixedRate, config.fixedRateSeconds),
    lowRate: paced(config.lowRate, config.lowRateSeconds),
    throughput: config.notifications,
    afterBurst: paced(config.fixedRate, config.afterBurstSeconds),
    hotAccount: config.hotAccountNotifications ?? 0,
    hotAccountFixedRate: paced(config.fixedRate, config.hotAccountFixedRateSeconds),
    twoMatchersThroughput: config.twoMatchersNotifications ?? 0,
    twoMatchersHotAccount: config.hotAccountNotifications ?? 0,
  };
}

/** The runs whose deposits all go into one bank account. */
export const HOT_ACCOUNT_RUNS = new Set(['hotAccount', 'hotAccountFixedRate', 'twoMatchersHotAccount']);

/** The runs made with a second matcher running. */
export const TWO_MATCHER_RUNS = new Set(['twoMatchersThroughput', 'twoMatchersHotAccount']);
