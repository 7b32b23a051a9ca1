// peers.mjs - the same no-op burn-down as bench/noop.c, with graphile-worker
// and pg-boss on the same PostgreSQL server (see bench/README.md).
//
//   node bench/peers.mjs PEER URL N PROCS SETTINGS
//     PEER      graphile | pgboss
//     SETTINGS  basic  (library defaults, one job at a time per process)
//               batch  (their batching: graphile-worker localQueue.size=50 +
//                       completeJobBatchDelay=0; pg-boss batchSize=50)
//
// PROCS worker processes (one job at a time each, like djc's --processes)
// are started and wait on an empty queue; then N jobs are inserted in one
// statement and the clock runs until the queue is empty. Each worker logs
// the ids it ran; the driver checks that every id ran exactly once. Prints
// one JSON object. The packages come from bench/peers (installed by
// bench/run.sh, never committed).
import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, 'peers', 'package.json'));
const pg = require('pg');
const POLL = '/* djcbench_poll */ ';

async function child(peer, url, settings) {
  const ids = [];
  const batch = settings === 'batch';
  let stop;
  if (peer === 'graphile') {
    const { run } = require('graphile-worker');
    const preset = { worker: batch ? { localQueue: { size: 50 }, completeJobBatchDelay: 0 } : {} };
    const runner = await run({
      connectionString: url, concurrency: 1, noHandleSignals: true, pollInterval: 2000,
      taskList: { noop: async (p) => { ids.push(p.id); } }, preset,
      logger: new (require('graphile-worker').Logger)(() => () => {}),
    });
    stop = () => runner.stop();
  } else {
    const PgBoss = require('pg-boss');
    const boss = new PgBoss({ connectionString: url, max: 2, supervise: false, schedule: false, migrate: false });
    boss.on('error', (e) => process.stderr.write(`pg-boss: ${e.message}\n`));
    await boss.start();
    await boss.work('noop', { batchSize: batch ? 50 : 1, pollingIntervalSeconds: 0.5 },
      async (jobs) => { for (const j of jobs) ids.push(j.data.id); });
    stop = () => boss.stop({ graceful: true, wait: true, timeout: 5000 });
  }
  process.stdout.write('ready\n');
  process.stdin.on('data', async () => {
    await stop();
    process.stdout.write(JSON.stringify(ids) + '\n');
    process.exit(0);
  });
}

async function setup(peer, url) {
  if (peer === 'graphile') {
    const { runMigrations } = require('graphile-worker');
    await runMigrations({ connectionString: url, logger: new (require('graphile-worker').Logger)(() => () => {}) });
    const c = new pg.Client(url); await c.connect();
    await c.query('DELETE FROM graphile_worker._private_jobs');
    await c.end();
  } else {
    const PgBoss = require('pg-boss');
    const boss = new PgBoss({ connectionString: url, supervise: false, schedule: false });
    boss.on('error', () => {});
    await boss.start();
    await boss.createQueue('noop').catch(() => {});
    const c = new pg.Client(url); await c.connect();
    await c.query("DELETE FROM pgboss.job WHERE name = 'noop'");
    await c.end();
    await boss.stop({ graceful: false, wait: true });
  }
}

function insertSql(peer) {
  if (peer === 'graphile')
    return "SELECT count(graphile_worker.add_job('noop', json_build_object('id', i))) FROM generate_series(0, $1::int - 1) i";
  return "INSERT INTO pgboss.job (name, data) SELECT 'noop', json_build_object('id', i)::jsonb FROM generate_series(0, $1::int - 1) i";
}

function leftSql(peer) {
  if (peer === 'graphile') return POLL + 'SELECT count(*)::int AS n FROM graphile_worker._private_jobs';
  return POLL + "SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'noop' AND state < 'completed'";
}

async function stats(c) {
  const r = await c.query(POLL + 'SELECT xact_commit + xact_rollback AS x FROM pg_stat_database WHERE datname = current_database()');
  let calls = null;
  try {
    const s = await c.query(POLL + "SELECT coalesce(sum(calls), 0)::bigint AS n FROM pg_stat_statements WHERE query NOT LIKE '%djcbench_poll%'");
    calls = Number(s.rows[0].n);
  } catch { /* pg_stat_statements not loaded */ }
  return { xacts: Number(r.rows[0].x), calls };
}

async function driver(peer, url, n, procs, settings) {
  await setup(peer, url);
  const kids = [];
  for (let i = 0; i < procs; i++) {
    const k = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', peer, url, settings],
      { stdio: ['pipe', 'pipe', 'inherit'] });
    k.out = '';
    k.stdout.on('data', (d) => { k.out += d; });
    kids.push(k);
  }
  const waitFor = (pred) => new Promise((res) => { const t = setInterval(() => { if (pred()) { clearInterval(t); res(); } }, 10); });
  await waitFor(() => kids.every((k) => k.out.includes('ready\n')));
  const c = new pg.Client(url); await c.connect();
  const s0 = await stats(c);
  const t0i = performance.now();
  await c.query(insertSql(peer), [n]);
  const insertS = (performance.now() - t0i) / 1000;
  const t0 = performance.now();
  for (;;) {
    const r = await c.query(leftSql(peer));
    if (r.rows[0].n === 0) break;
    await new Promise((res) => setTimeout(res, 10));
  }
  const secs = (performance.now() - t0) / 1000;
  await new Promise((res) => setTimeout(res, 1200));   // backends flush pg_stat_database about once a second
  const s1 = await stats(c);
  await c.end();
  const exits = kids.map((k) => new Promise((res) => k.on('exit', res)));
  for (const k of kids) k.stdin.write('stop\n');
  await Promise.all(exits);
  const seen = new Map();
  let runs = 0;
  for (const k of kids) {
    const line = k.out.split('\n').filter((l) => l.startsWith('['))[0] || '[]';
    for (const id of JSON.parse(line)) { runs++; seen.set(id, (seen.get(id) || 0) + 1); }
  }
  let once = 0, more = 0;
  for (const v of seen.values()) { if (v === 1) once++; else more++; }
  const out = {
    peer, settings, procs, keys: n, secs: +secs.toFixed(4), keys_per_s: +(n / secs).toFixed(1),
    us_per_key: +(secs * 1e6 / n).toFixed(1), insert_s: +insertS.toFixed(3), runs, keys_once: once, keys_more: more,
    xacts_per_key: +((s1.xacts - s0.xacts - 1) / n).toFixed(2),
    stmts_per_key: s1.calls === null ? null : +((s1.calls - s0.calls - 1) / n).toFixed(2),
  };
  process.stdout.write(JSON.stringify(out) + '\n');
}

const a = process.argv.slice(2);
if (a[0] === '--child') await child(a[1], a[2], a[3]);
else if (a.length === 5) await driver(a[0], a[1], Number(a[2]), Number(a[3]), a[4]);
else { process.stderr.write('usage: node bench/peers.mjs graphile|pgboss URL N PROCS basic|batch\n'); process.exit(2); }
