// peers.mjs - the same no-op burn-down as bench/noop.c, with graphile-worker
// and pg-boss on the same PostgreSQL server (see bench/README.md).
//
//   node bench/peers.mjs PEER URL N PROCS LABEL OPTIONS-JSON
//     PEER     graphile | pgboss
//     LABEL    a name for the report (e.g. defaults, best)
//     OPTIONS  the peer's own options, as JSON, passed through unchanged:
//              graphile: worker preset options (concurrentJobs, maxPoolSize,
//                localQueue, completeJobBatchDelay, failJobBatchDelay, ...);
//                {} = the library's defaults
//              pgboss: {"work": {...work() options...}, "boss": {...constructor
//                options...}}; {} = the library's defaults
//
// PROCS worker processes are started and wait on an empty queue; then N jobs
// are inserted in one statement and the clock runs until no job is left
// unfinished. Each worker logs the ids it ran; the driver checks that every
// id ran exactly once. Prints one JSON object (with the server's counters of
// statements, transactions and WAL syncs over the burn-down). The packages
// come from bench/peers (installed by bench/run.sh, never committed).
import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, 'peers', 'package.json'));
const pg = require('pg');
const POLL = '/* djcbench_poll */ ';
const quiet = () => new (require('graphile-worker').Logger)(() => () => {});
const loadBoss = async () => (await import(pathToFileURL(require.resolve('pg-boss')).href)).PgBoss;

// PEER_RESULT=1: the handler commits a result row per job, as a djc make
// does (bench_result, keyed by the job's id, with a foreign key to
// bench_src): graphile-worker one INSERT per job through its own pool,
// pg-boss one INSERT of the whole fetched batch.
const RESULT = process.env.PEER_RESULT === '1';
const RESULT_SQL = 'INSERT INTO bench_result (id) SELECT unnest($1::int[])';

async function child(peer, url, opts) {
  const ids = [];
  let stop;
  if (peer === 'graphile') {
    const { run } = require('graphile-worker');
    const runner = await run({
      preset: { worker: { connectionString: url, ...opts } },
      noHandleSignals: true,
      taskList: {
        noop: async (p, helpers) => {
          if (RESULT) await helpers.query(RESULT_SQL, [[p.id]]);
          ids.push(p.id);
        },
      },
      logger: quiet(),
    });
    stop = () => runner.stop();
  } else {
    const PgBoss = await loadBoss();
    const boss = new PgBoss({ connectionString: url, schedule: false, migrate: false, ...(opts.boss || {}) });
    boss.on('error', (e) => process.stderr.write(`pg-boss: ${e.message}\n`));
    await boss.start();
    const pool = RESULT ? new pg.Pool({ connectionString: url, max: 4 }) : null;
    await boss.work('noop', opts.work || {}, async (jobs) => {
      if (RESULT) await pool.query(RESULT_SQL, [jobs.map((j) => j.data.id)]);
      for (const j of jobs) ids.push(j.data.id);
    });
    stop = async () => { await boss.stop({ graceful: true, wait: true, timeout: 10000 }); if (pool) await pool.end(); };
  }
  process.stdout.write('ready\n');
  // how many jobs the handlers ran, every 20 ms while it changes: the
  // driver looks at the database only once they add up to N
  let told = 0;
  const tick = setInterval(() => { if (ids.length !== told) { told = ids.length; process.stdout.write(`n ${told}\n`); } }, 20);
  process.stdin.on('data', async () => {
    clearInterval(tick);
    await stop();
    // a pipe is written asynchronously: exit only once all the ids are out
    process.stdout.write(JSON.stringify(ids) + '\n', () => process.exit(0));
  });
}

async function setup(peer, url, n) {
  const c = new pg.Client(url); await c.connect();
  if (RESULT) {
    await c.query('DROP TABLE IF EXISTS bench_result; DROP TABLE IF EXISTS bench_src');
    await c.query('CREATE TABLE bench_src (id int PRIMARY KEY); CREATE TABLE bench_result (id int PRIMARY KEY REFERENCES bench_src (id))');
    await c.query('INSERT INTO bench_src SELECT generate_series(0, $1::int - 1)', [n]);
    await c.query('ANALYZE bench_src');
  }
  if (peer === 'graphile') {
    const { runMigrations } = require('graphile-worker');
    await runMigrations({ connectionString: url, logger: quiet() });
    await c.query('DELETE FROM graphile_worker._private_jobs');
  } else {
    const PgBoss = await loadBoss();
    const boss = new PgBoss({ connectionString: url, supervise: false, schedule: false });
    boss.on('error', () => {});
    await boss.start();
    await boss.deleteQueue('noop').catch(() => {});
    await boss.createQueue('noop');
    await boss.stop({ graceful: false, wait: true });
  }
  await c.end();
}

// The jobs are added and their table analyzed in one transaction, so the
// workers' first fetch is planned for the full queue (ANALYZE counts the
// rows its own transaction inserted). djc's refresh analyzes its jobs table
// by itself after adding many jobs; without this, a peer's fetch was planned
// for the empty table the harness's VACUUM left (bench/run.sh, settle):
// graphile-worker's get_jobs then took 25 ms per 500 jobs instead of 6.9 ms
// (30,497 against 65,694 jobs/s at 100,000 jobs, fsync off; bench/results-2026-12-04.md).
async function insert(peer, url, c, n) {
  if (peer === 'graphile') {
    // add_jobs: graphile-worker's bulk insert, one statement for all N jobs
    await c.query('BEGIN');
    await c.query("SELECT count(*) FROM graphile_worker.add_jobs(array(SELECT json_populate_record(null::graphile_worker.job_spec, " +
      "json_build_object('identifier', 'noop', 'payload', json_build_object('id', i))) FROM generate_series(0, $1::int - 1) i))", [n]);
    await c.query('ANALYZE graphile_worker._private_jobs');
    await c.query('COMMIT');
  } else {
    // boss.insert: one INSERT ... SELECT FROM json_to_recordset($1) of all N
    // jobs, here through the driver's connection (pg-boss's `db` option)
    const PgBoss = await loadBoss();
    const boss = new PgBoss({ connectionString: url, supervise: false, schedule: false, migrate: false, max: 1 });
    boss.on('error', () => {});
    await boss.start();
    const t0 = performance.now();
    await c.query('BEGIN');
    await boss.insert('noop', Array.from({ length: n }, (_, i) => ({ data: { id: i } })),
      { db: { executeSql: (text, values) => c.query(text, values) } });
    await c.query('ANALYZE pgboss.job');
    await c.query('COMMIT');
    const dt = performance.now() - t0;
    await boss.stop({ graceful: false, wait: true });
    return dt;
  }
  return null;
}

function leftSql(peer) {
  if (peer === 'graphile') return POLL + 'SELECT count(*)::int AS n FROM graphile_worker._private_jobs';
  return POLL + "SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'noop' AND state < 'completed'";
}

async function stats(c) {
  await c.query(POLL + 'SELECT pg_stat_clear_snapshot()');
  const r = await c.query(POLL + 'SELECT xact_commit + xact_rollback AS x FROM pg_stat_database WHERE datname = current_database()');
  const w = await c.query(POLL + 'SELECT wal_sync FROM pg_stat_wal').catch(() => ({ rows: [{ wal_sync: null }] }));
  let calls = null;
  try {
    const s = await c.query(POLL + "SELECT coalesce(sum(calls), 0)::bigint AS n FROM pg_stat_statements WHERE query NOT LIKE '%djcbench_poll%'");
    calls = Number(s.rows[0].n);
  } catch { /* pg_stat_statements not loaded */ }
  return { xacts: Number(r.rows[0].x), calls, walsync: w.rows[0].wal_sync == null ? null : Number(w.rows[0].wal_sync) };
}

async function driver(peer, url, n, procs, label, opts) {
  await setup(peer, url, n);
  const kids = [];
  for (let i = 0; i < procs; i++) {
    const k = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', peer, url, JSON.stringify(opts)],
      { stdio: ['pipe', 'pipe', 'inherit'] });
    k.out = '';
    k.handled = 0;
    k.part = '';
    k.stdout.on('data', (d) => {
      k.out += d;
      const lines = (k.part + d).split('\n');
      k.part = lines.pop();
      for (const l of lines) if (l.startsWith('n ')) k.handled = Number(l.slice(2));
    });
    kids.push(k);
  }
  const waitFor = (pred) => new Promise((res) => { const t = setInterval(() => { if (pred()) { clearInterval(t); res(); } }, 10); });
  await waitFor(() => kids.every((k) => k.out.includes('ready\n')));
  const c = new pg.Client(url); await c.connect();
  const s0 = await stats(c);
  const t0i = performance.now();
  await insert(peer, url, c, n);
  const insertS = (performance.now() - t0i) / 1000;
  const t0 = performance.now();
  let polls = 0;
  // The clock stops when the database shows no job left unfinished. Until
  // the handlers have run N jobs between them it cannot, so the database
  // is asked only every 0.5 s until then (a count over the jobs table
  // every 10 ms cost djc's runs about 20% of their rate at one job per
  // transaction when they were timed that way: bench/results-2026-12-03.md)
  for (let last = -Infinity; ; await new Promise((res) => setTimeout(res, 10))) {
    const ran = kids.reduce((a, k) => a + k.handled, 0);
    if (ran < n && performance.now() - last < 500) continue;
    last = performance.now();
    polls++;
    const r = await c.query(leftSql(peer));
    if (r.rows[0].n === 0) break;
  }
  const secs = (performance.now() - t0) / 1000;
  // stop the workers first: a backend flushes its transaction counts to
  // pg_stat_database when its connection closes (an idle one only after
  // up to 10 s)
  const exits = kids.map((k) => new Promise((res) => k.on('exit', res)));
  for (const k of kids) k.stdin.write('stop\n');
  await Promise.all(exits);
  await new Promise((res) => setTimeout(res, 300));
  const s1 = await stats(c);
  const resultRows = RESULT ? Number((await c.query(POLL + 'SELECT count(*) AS n FROM bench_result')).rows[0].n) : null;
  await c.end();
  const seen = new Map();
  let runs = 0;
  for (const k of kids) {
    const line = k.out.split('\n').filter((l) => l.startsWith('['))[0] || '[]';
    for (const id of JSON.parse(line)) { runs++; seen.set(id, (seen.get(id) || 0) + 1); }
  }
  let once = 0, more = 0;
  for (const [id, v] of seen) { if (v === 1 && id >= 0 && id < n) once++; else more++; }
  const per = (a, b, fix = 0) => (a == null || b == null ? null : +((b - a - fix) / n).toFixed(3));
  const out = {
    peer, label, options: opts, procs, keys: n, secs: +secs.toFixed(4), keys_per_s: +(n / secs).toFixed(1),
    us_per_key: +(secs * 1e6 / n).toFixed(1), insert_s: +insertS.toFixed(3), runs, keys_once: once, keys_more: more,
    ...(RESULT ? { result_rows: resultRows } : {}),
    // the driver's own statements are excluded by their djcbench_poll marker,
    // its own transactions (polls, counter reads) are subtracted
    xacts_per_key: per(s0.xacts, s1.xacts, polls + 4), stmts_per_key: per(s0.calls, s1.calls), walsync_per_key: per(s0.walsync, s1.walsync),
  };
  process.stdout.write(JSON.stringify(out) + '\n');
}

const a = process.argv.slice(2);
if (a[0] === '--child') await child(a[1], a[2], JSON.parse(a[3]));
else if (a.length === 6) await driver(a[0], a[1], Number(a[2]), Number(a[3]), a[4], JSON.parse(a[5]));
else { process.stderr.write('usage: node bench/peers.mjs graphile|pgboss URL N PROCS LABEL OPTIONS-JSON\n'); process.exit(2); }
