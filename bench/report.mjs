// report.mjs - turn bench/run.sh's JSON lines into bench/results.md.
//   node bench/report.mjs RESULTS.jsonl MACHINE VERSIONS SECONDS
import fs from 'node:fs';

const [file, machine, versions, secs] = process.argv.slice(2);
const recs = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const out = [];
const p = (s = '') => out.push(s);
const f0 = (x) => (x == null ? '-' : Math.round(x).toLocaleString('en-US'));
const f1 = (x) => (x == null ? '-' : x.toFixed(1));
const f2 = (x) => (x == null ? '-' : x.toFixed(2));
const procsOf = [...new Set(recs.filter((r) => r.s === 'tp').map((r) => r.r.procs))].sort((a, b) => a - b);
const cell = (r) => (r ? `${f0(r.keys_per_s)} (${f0(r.us_per_key)} µs)` : '-');

function okDjc(x) {
  const r = x.r;
  if (r.errors || r.lost || r.rows_committed !== r.keys || r.jobs_left) return false;
  if (r.make === 'c') return r.keys_once === r.keys && r.keys_more === 0 && r.make_calls === r.keys;
  return x.prog_runs === r.keys && x.prog_distinct === r.keys;
}

p('# djc benchmark results');
p();
p(`Machine: ${machine}  `);
p(`Versions: ${versions}  `);
p(`Produced by \`make bench\` (bench/run.sh) in ${secs} s; every figure below comes from that one run, side by side.`);
p('Servers are the throwaway ones of scripts/ (durability off: fsync/synchronous_commit off on PostgreSQL,');
p('innodb_flush_log_at_trx_commit=2 on MariaDB; SQLite WAL with synchronous=NORMAL). The machine is shared');
p('and noisy: compare figures within a table, not across runs.');
p();

// 1
p('## 1. No-op job throughput (djc)');
p();
p('keys/s (wall time per key). A job = reserve, make, commit the row + close the job (one transaction), ');
p('`c` = make as a C callback (bench/noop.c), `prog` = make as a program (bench/prog/noop_make.c, prints `{}`), ');
p('`b50` = `jobs.reserve_batch` 50, `direct` = populate without reservation. Refresh is done (and timed) before each run.');
p();
p(`| backend | make | ${procsOf.map((x) => `${x} proc${x > 1 ? 's' : ''}`).join(' | ')} | exactly once |`);
p(`|---|---|${procsOf.map(() => '---:').join('|')}|---|`);
for (const be of ['sqlite', 'postgresql', 'mariadb']) {
  for (const v of ['direct-c', 'reserve-c', 'reserve-c-b50', 'reserve-prog', 'reserve-prog-b50']) {
    const rs = recs.filter((r) => r.s === 'tp' && r.backend === be && r.variant === v);
    if (!rs.length) continue;
    const ok = rs.every(okDjc);
    p(`| ${be} | ${v.replace('reserve-', 'reserve ').replace('-b50', ' b50').replace('direct-c', 'direct c')} | ${procsOf.map((n) => cell(rs.find((r) => r.r.procs === n)?.r)).join(' | ')} | ${ok ? `yes (${rs.length} runs)` : '**NO**'} |`);
  }
}
p();

// 2
const peers = recs.filter((r) => r.s === 'peer').map((r) => r.r);
if (peers.length) {
  p('## 2. Same burn-down on the same PostgreSQL: djc vs graphile-worker vs pg-boss');
  p();
  p('N processes, each running one job at a time. `basic` = library defaults (pg-boss: batchSize 1, pollingIntervalSeconds 0.5, ');
  p('the minimum); `batch` = their batching (graphile-worker: localQueue.size 50 + completeJobBatchDelay 0; pg-boss: batchSize 50); ');
  p('djc `b50` = jobs.reserve_batch 50. Peers: jobs inserted in one statement while the workers wait, clock stops when the queue is empty. ');
  p('stmts/key = pg_stat_statements calls per job during the burn-down (peers; djc in section 5). pg-boss basic runs only 10 jobs ');
  p('per process: it sleeps its polling interval between fetches, so its rate is batchSize × processes / 0.5 s.');
  p();
  p(`| system | ${procsOf.map((x) => `${x} proc${x > 1 ? 's' : ''}`).join(' | ')} | stmts/key | exactly once |`);
  p(`|---|${procsOf.map(() => '---:').join('|')}|---:|---|`);
  for (const v of ['reserve-c', 'reserve-c-b50']) {
    const rs = recs.filter((r) => r.s === 'tp' && r.backend === 'postgresql' && r.variant === v);
    p(`| djc ${v === 'reserve-c' ? 'batch 1' : 'b50'} (C make) | ${procsOf.map((n) => cell(rs.find((r) => r.r.procs === n)?.r)).join(' | ')} | see §5 | ${rs.every(okDjc) ? 'yes' : '**NO**'} |`);
  }
  for (const [peer, name] of [['graphile', 'graphile-worker'], ['pgboss', 'pg-boss']]) {
    for (const st of ['basic', 'batch']) {
      const rs = peers.filter((r) => r.peer === peer && r.settings === st);
      if (!rs.length) continue;
      const ok = rs.every((r) => r.runs === r.keys && r.keys_once === r.keys && r.keys_more === 0);
      const stm = rs.map((r) => r.stmts_per_key).filter((x) => x != null);
      p(`| ${name} ${st} | ${procsOf.map((n) => cell(rs.find((r) => r.procs === n))).join(' | ')} | ${stm.length ? f2(stm.reduce((a, b) => a + b, 0) / stm.length) : '-'} | ${ok ? 'yes' : '**NO**'} |`);
    }
  }
  p();
  const best = (sel) => Math.max(...sel.map((r) => r.keys_per_s));
  const djcB = recs.filter((r) => r.s === 'tp' && r.backend === 'postgresql' && r.variant === 'reserve-c-b50').map((r) => r.r);
  const gB = peers.filter((r) => r.peer === 'graphile' && r.settings === 'batch');
  const bB = peers.filter((r) => r.peer === 'pgboss' && r.settings === 'batch');
  if (djcB.length && gB.length) {
    p(`Best batched rate: djc b50 ${f0(best(djcB))} keys/s, graphile-worker ${f0(best(gB))} (djc/graphile ${f2(best(djcB) / best(gB))}x)` +
      (bB.length ? `, pg-boss ${f0(best(bB))} (djc/pg-boss ${f2(best(djcB) / best(bB))}x).` : '.'));
    p();
  }
}

// 3
const depth = recs.filter((r) => r.s === 'depth');
if (depth.length) {
  p('## 3. Reservation cost per job vs queue depth');
  p();
  p('One process, public API djc_jobs_reserve + djc_jobs_complete (one row) one job at a time, after 20 warm-up jobs, best of 3 rounds. Pending = queue depth at the start of that round. Target: at the big queue within 1.5x of the cost at 1k.');
  p();
  p('| backend | pending (small) | µs/job | pending (big) | µs/job | ratio | target |');
  p('|---|---:|---:|---:|---:|---:|---|');
  for (const be of ['sqlite', 'postgresql', 'mariadb']) {
    const rs = depth.filter((r) => r.backend === be).sort((a, b) => a.keys - b.keys);
    if (rs.length < 2) continue;
    const bestOf = (k) => rs.filter((r) => r.keys === k).map((r) => r.r).sort((x, y) => x.us_per_job - y.us_per_job)[0];
    const [a, b] = [bestOf(rs[0].keys), bestOf(rs[rs.length - 1].keys)];
    const ratio = b.us_per_job / a.us_per_job;
    p(`| ${be} | ${f0(a.pending)} | ${f1(a.us_per_job)} | ${f0(b.pending)} | ${f1(b.us_per_job)} | ${f2(ratio)} | ${ratio <= 1.5 ? 'met' : '**not met**'} |`);
  }
  p();
}

// 4
const refr = recs.filter((r) => r.s === 'refresh');
if (refr.length) {
  p('## 4. Refresh (new keys added as pending jobs)');
  p();
  p('`djc_jobs_refresh` on a fresh jobs table, one set-based INSERT ... SELECT. Upstream rows were inserted beforehand ');
  p('(SQLite: djc_insert, 20k rows per call; PostgreSQL/MariaDB: one INSERT ... SELECT through the server\'s client) — timed separately. ');
  p('Target: under 10 s for 1M keys.');
  p();
  const sizes = [...new Set(refr.map((r) => r.keys))].sort((a, b) => a - b);
  p(`| backend | ${sizes.map((s) => `refresh ${f0(s)}`).join(' | ')} | upstream insert (largest) | djc_insert ${f0(Math.max(...sizes) / 10)} rows (C API) | target |`);
  p(`|---|${sizes.map(() => '---:').join('|')}|---:|---:|---|`);
  for (const be of ['sqlite', 'postgresql', 'mariadb']) {
    const rs = refr.filter((r) => r.backend === be);
    if (!rs.length) continue;
    const big = rs.find((r) => r.keys === Math.max(...sizes));
    const ins = recs.find((r) => r.s === 'insert' && r.backend === be);
    p(`| ${be} | ${sizes.map((s) => { const r = rs.find((x) => x.keys === s); return r ? `${f2(r.r.refresh_s)} s` : '-'; }).join(' | ')} | ${big ? f2(big.upstream_s) + ' s' : '-'} | ${ins ? f2(ins.r.insert_s) + ' s' : '-'} | ${big && big.r.refresh_s < 10 ? 'met' : '**not met**'} |`);
  }
  p();
}

// 5
p('## 5. Worker memory and round trips');
p();
const rss = recs.filter((r) => r.s === 'rss');
const floor = (be) => recs.find((r) => r.s === 'floor' && r.backend === be);
const beName = (be) => (be === 'postgresql-scram' ? 'postgresql, SCRAM password' : be);
if (rss.length) {
  p('Peak RSS (`/usr/bin/time`, maximum resident set size). Target < 8 MiB. "postgresql" logs in as a trusted role, ');
  p('"postgresql, SCRAM password" as a role that must give its password (SCRAM-SHA-256, PostgreSQL\'s default since 14). ');
  p('The floor is `bench/prog/pq_connect`: a program that only loads libpq as djc does, connects, runs `SELECT 1` and exits; ');
  p('what a worker peaks at above it is djc\'s own.');
  p();
  p('| backend | process | peak RSS | libpq floor | worker / floor | target |');
  p('|---|---|---:|---:|---:|---|');
  for (const r of rss) {
    const fl = floor(r.backend);
    p(`| ${beName(r.backend)} | ${r.what} | ${f1(r.kb / 1024)} MiB | ${fl ? f1(fl.kb / 1024) + ' MiB' : '-'} | ${fl ? f2(r.kb / fl.kb) + 'x' : '-'} | ${r.kb < 8192 ? 'met' : '**not met**'} |`);
  }
  p();
}
const sm = recs.filter((r) => r.s === 'smaps' && r.Rss);
if (sm.length) {
  p('Where a worker\'s memory goes (`djc populate --reserve-jobs --make`, sampled mid-run from /proc/PID/smaps_rollup): ');
  p('most of the RSS is clean pages of shared libraries, shared with every other process that maps them. Every client library ');
  p('(SQLite, libpq, MariaDB Connector/C) is loaded by a process only when it opens that kind of database. Debian\'s libpq ');
  p('brings OpenSSL, GSSAPI, LDAP and GnuTLS with it, and a password login (SCRAM) starts OpenSSL 3, which alone touches ');
  p('about 2 MiB of libcrypto: no libpq client on this machine logs in with a password under 8 MiB (see the floor above). ');
  p('The worker\'s own memory is the private part.');
  p();
  p('| backend | RSS | shared clean (libraries) | private (own) | PSS | private < 8 MiB |');
  p('|---|---:|---:|---:|---:|---|');
  for (const r of sm) {
    const priv = r.Private_Clean + r.Private_Dirty;
    p(`| ${beName(r.backend)} | ${f1(r.Rss / 1024)} MiB | ${f1(r.Shared_Clean / 1024)} MiB | ${f1(priv / 1024)} MiB | ${f1(r.Pss / 1024)} MiB | ${priv < 8192 ? 'met' : '**not met**'} |`);
  }
  p();
}
const rt = recs.filter((r) => r.s === 'rt');
if (rt.length) {
  p('Statements per job from the server\'s counters over a whole burn-down (C make; includes the harness\'s few ');
  p('fixed statements: open, declare, progress). PostgreSQL: pg_stat_statements calls (BEGIN/COMMIT count as statements). ');
  p('MariaDB: SHOW GLOBAL STATUS deltas.');
  p();
  p('| backend | reserve_batch | procs | statements/job | detail |');
  p('|---|---:|---:|---:|---|');
  const parse = (s) => Object.fromEntries(s.trim().split(/\s+/).map((kv) => kv.split('=')).map(([k, v]) => [k, Number(v)]));
  for (const r of rt) {
    if (r.backend === 'postgresql') p(`| postgresql | ${r.batch} | ${r.procs} | ${f2(r.stmts / r.keys)} | pg_stat_statements calls |`);
    else {
      const a = parse(r.before), b = parse(r.after);
      const d = (k) => (b[k] - a[k]) / r.keys;
      p(`| mariadb | ${r.batch} | ${r.procs} | ${f2(d('Questions'))} | Com_stmt_execute ${f2(d('Com_stmt_execute'))}, Com_begin ${f2(d('Com_begin'))}, Com_commit ${f2(d('Com_commit'))} per job |`);
    }
  }
  p();
}
process.stdout.write(out.join('\n') + '\n');
