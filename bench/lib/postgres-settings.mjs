import pg from 'pg';

/**
 * The server settings a deployment of this service runs with (docs/CONFIGURATION.md): autovacuum
 * on, and visiting each database every 10 s. The bench measures the service as deployed, so on a
 * server configured otherwise (this machine's CI configuration turns autovacuum off, which leaves
 * every dead row of the queue tables in their indexes for good) it sets these for the run.
 */
export const DEPLOYED_SETTINGS = { autovacuum: 'on', autovacuum_naptime: '10s' };
// Written as pg_settings shows them (setting and unit run together), so a server that already has
// them is recognised and left alone.

/**
 * Sets `settings` server-wide with ALTER SYSTEM and a reload (no restart; both are reloadable),
 * and resolves with a function that puts back what postgresql.auto.conf held before. Settings the
 * server already has are left alone. Needs a superuser connection.
 */
export async function applyServerSettings(adminUrl, settings) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const current = await client.query('SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1)', [Object.keys(settings)]);
    const change = current.rows.filter((r) => `${r.setting}${r.unit ?? ''}` !== settings[r.name]);
    if (change.length === 0) return { changed: {}, restore: async () => undefined };
    const previous = await client.query(
      "SELECT name, setting FROM pg_file_settings WHERE sourcefile LIKE '%postgresql.auto.conf' AND name = ANY($1) AND applied",
      [change.map((r) => r.name)],
    );
    const before = new Map(previous.rows.map((r) => [r.name, r.setting]));
    for (const { name } of change) await client.query(`ALTER SYSTEM SET ${name} = ${literal(settings[name])}`);
    await client.query('SELECT pg_reload_conf()');
    const changed = Object.fromEntries(change.map((r) => [r.name, { from: `${r.setting}${r.unit ?? ''}`, to: settings[r.name] }]));
    return {
      changed,
      restore: async () => {
        const undo = new pg.Client({ connectionString: adminUrl });
        await undo.connect();
        try {
          for (const { name } of change) {
            await undo.query(before.has(name) ? `ALTER SYSTEM SET ${name} = ${literal(before.get(name))}` : `ALTER SYSTEM RESET ${name}`);
          }
          await undo.query('SELECT pg_reload_conf()');
        } finally {
          await undo.end();
        }
      },
    };
  } finally {
    await client.end();
  }
}

/** A setting value as a quoted SQL literal (only values of this file and of postgresql.auto.conf get here). */
function literal(value) {
  return `'${String(value).replace(/'/g, "''")}'`;
}
