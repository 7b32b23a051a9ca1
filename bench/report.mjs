// report.mjs - turn bench/run.sh's JSON lines into bench/results.md.
//   node bench/report.mjs RESULTS.jsonl MACHINE VERSIONS SECONDS QUICK
import fs from 'node:fs';

const [file, machine, versions, secs, quick] = process.argv.slice(2);
const recs = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const out = [];
const p = (s = '') => out.push(s);
const f0 = (x) => (x == null || Number.isNaN(x) ? '-' : Math.round(x).toLocaleString('en-US'));
const f1 = (x) => (x == null || Number.isNaN(x) ? '-' : x.toFixed(1));
const f2 = (x) => (x == null || Number.isNaN(x) ? '-' : x.toFixed(2));
const procsOf = [...new Set(recs.filter((r) => r.s === 'tp').map((r) => r.r.procs))].sort((a, b) => a - b);
const cell = (r) => (r ? `${f0(r.keys_per_s)} (${f0(r.us_per_key)} µs)` : '-');
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length ? (s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2) : null; };

function okDjc(x) {
  const r = x.r;
  if (!r) return false;
  if (r.errors || r.lost || r.rows_committed !== r.keys || r.jobs_left) return false;
  if (r.make === 'c') return r.keys_once === r.keys && r.keys_more === 0 && r.make_calls === r.keys;
  return r.prog_runs === r.keys && r.prog_distinct === r.keys;
}

// ------------------------------------------------------------ part A helpers
const A = recs.filter((r) => r.s === 'A');
const NAME = { djc: 'djc', graphile: 'graphile-worker', pgboss: 'pg-boss', pgbench: 'pgbench', commit_loop: 'commit loop (bench/prog/commit_loop.c)', datajoint: 'DataJoint for Python' };
function ok(x) {
  const r = x.r;
  if (!r) return false;
  switch (x.sys) {
    case 'djc': return okDjc(x);
    case 'graphile': case 'pgboss': return r.runs === r.keys && r.keys_once === r.keys && r.keys_more === 0 && (r.result_rows == null || r.result_rows === r.keys);
    case 'datajoint': return r.rows === r.keys && r.make_calls === r.keys && r.keys_once === r.keys && !r.keys_more && !r.errors && !r.jobs_left;
    case 'pgbench': return r.commits > 0 && r.commits === r.rows_sum;
    case 'commit_loop': return r.commits > 0;   // the program checks the rows itself
  }
  return false;
}
const rate = (x) => (x.r ? (x.sys === 'pgbench' || x.sys === 'commit_loop' ? x.r.tps : x.r.keys_per_s) : null);
const jobsOf = (x) => (x.sys === 'pgbench' || x.sys === 'commit_loop' ? x.r?.commits : x.r?.keys);
// per job (or per commit-loop transaction) from the server's counters
function perJob(x) {
  const n = jobsOf(x);
  if (!n) return {};
  if (x.sys === 'graphile' || x.sys === 'pgboss') return { stmts: x.r.stmts_per_key, commits: x.r.xacts_per_key, flushes: x.r.walsync_per_key };
  const a = x.before, b = x.after;
  if (!a || !b) return {};
  const d = (k) => (b[k] - a[k]) / n;
  if (x.backend === 'postgresql') return { stmts: d('calls'), commits: d('xacts'), flushes: d('walsync') };
  return { stmts: d('Questions'), commits: d('Com_commit'), flushes: d('Innodb_data_fsyncs'), exec: d('Com_stmt_execute'), begin: d('Com_begin'), hcommit: d('Handler_commit') };
}
// the configurations of a part/backend/n, in first-seen order, with the median over rounds
function groups(sel) {
  const m = new Map();
  for (const x of sel) {
    const k = [x.sys, x.label, x.procs, x.n].join('|');
    if (!m.has(k)) m.set(k, []);
    m.get(k).push(x);
  }
  return [...m.values()].map((xs) => {
    const pj = xs.map(perJob);
    const med = (f) => median(pj.map(f).filter((v) => v != null && !Number.isNaN(v)));
    const rates = xs.map(rate).filter((v) => v != null);
    return {
      x: xs[0], xs, rate: median(rates), min: Math.min(...rates), max: Math.max(...rates), ok: xs.every(ok), n: xs.length,
      stmts: med((q) => q.stmts), commits: med((q) => q.commits), flushes: med((q) => q.flushes),
      exec: med((q) => q.exec), begin: med((q) => q.begin), hcommit: med((q) => q.hcommit),
    };
  });
}
function settings(x) {
  if (x.sys === 'djc') {
    if (String(x.arg).startsWith('prog:')) return `make program (fork+exec per key), jobs.reserve_batch ${x.arg.slice(5)}`;
    if (String(x.arg).startsWith('separate:')) return `C make, jobs.reserve_batch ${x.arg.slice(9)}, DJC_MYSQL_COMPOUND=0 (the statements one by one, as on MySQL)`;
    return `C make, jobs.reserve_batch ${x.arg}`;
  }
  if (x.sys === 'graphile' || x.sys === 'pgboss') return x.arg === '{}' ? 'library defaults' : '`' + x.arg + '`';
  if (x.sys === 'pgbench') return x.arg === 'own' ? '`UPDATE ... WHERE id = :client_id` (a row per client)' : '`UPDATE ... WHERE id = 0` (one row for all)';
  if (x.sys === 'commit_loop') return x.arg === 'own' ? 'autocommit `UPDATE ... WHERE id = client` (a row per client)' : 'autocommit `UPDATE ... WHERE id = 0` (one row for all)';
  if (x.sys === 'datajoint') return '`Noop.populate(reserve_jobs=True)` in each of N independent processes';
  return '';
}
const range = (g) => (g.n > 1 ? ` (${f0(g.min)}–${f0(g.max)})` : '');
function table(gs, counters = 'postgresql') {
  if (counters === 'postgresql') {
    p('| system | settings | procs | jobs | jobs/s, median (range) | statements/job | transactions/job | WAL flushes/job | exactly once |');
    p('|---|---|---:|---:|---:|---:|---:|---:|---|');
  } else {
    p('| system | settings | procs | jobs | jobs/s, median (range) | statements/job | of them COM_STMT_EXECUTE | BEGIN | COMMIT | Handler_commit | InnoDB fsyncs/job | exactly once |');
    p('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  }
  for (const g of gs) {
    const x = g.x;
    const isLoop = x.sys === 'pgbench' || x.sys === 'commit_loop';
    const nj = isLoop ? `${x.r ? f0(median(g.xs.map((y) => y.r?.commits ?? 0))) + ' tx' : '-'}` : f0(x.n);
    const lost = g.xs.filter((y) => !y.r).length;
    const okc = g.ok ? `yes (${g.n} run${g.n > 1 ? 's' : ''})`
      : lost && g.xs.filter((y) => y.r).every(ok) ? `**${lost} of ${g.n} runs gave no result** (the others: yes)` : '**NO**';
    const label = `${NAME[x.sys]}${x.sys === 'djc' || isLoop || x.sys === 'datajoint' ? '' : ' ' + x.label}`;
    if (counters === 'postgresql')
      p(`| ${label} | ${settings(x)} | ${x.procs} | ${nj} | ${f0(g.rate)}${range(g)}${isLoop ? ' tx/s' : ''} | ${f2(g.stmts)} | ${f2(g.commits)} | ${f2(g.flushes)} | ${okc} |`);
    else
      p(`| ${label} | ${settings(x)} | ${x.procs} | ${nj} | ${f0(g.rate)}${range(g)}${isLoop ? ' tx/s' : ''} | ${f2(g.stmts)} | ${f2(g.exec)} | ${f2(g.begin)} | ${f2(g.commits)} | ${f2(g.hcommit)} | ${f2(g.flushes)} | ${okc} |`);
  }
  p();
}
const find = (gs, sys, pred = () => true) => gs.filter((g) => g.x.sys === sys && pred(g));
const best = (gs) => gs.filter((g) => g.rate != null).sort((a, b) => b.rate - a.rate)[0];
const tgt = (v, t) => (v == null ? '-' : v >= t ? 'met' : '**not met**');
const describe = (g) => (g ? `${NAME[g.x.sys]} ${g.x.sys === 'djc' ? settings(g.x).replace('C make, ', '') : g.x.label}, ${g.x.procs} proc${g.x.procs > 1 ? 's' : ''}` : '-');

// ------------------------------------------------------------ header
p('# djc benchmark results');
p();
p(`Machine: ${machine}  `);
p(`Versions: ${versions}  `);
p(`Produced by \`${quick === '1' ? 'BENCH_QUICK=1 bench/run.sh' : 'make bench'}\` (bench/run.sh) in ${secs} s; every figure below comes from that one run, side by side.`);
p('The machine is shared and was loaded by other work during the run: compare figures within a table and the ratios');
p('of one run, not absolute rates across runs.');
if (process.env.BENCH_NOTE) { p(); p(process.env.BENCH_NOTE); }
p();
const dur = (part) => recs.find((r) => r.s === 'durability' && r.part === part)?.text;

// ------------------------------------------------------------ A
p('# Part A: servers with their default durability');
p();
p(`Settings as read from the servers: ${dur('A') || '-'}. (MariaDB\'s binary log is off, as in its default configuration, so sync_binlog does not apply.)`);
p();
p('Every job system burns down the same no-op jobs on the same server: djc through its public C API (bench/noop.c, a make that commits one row ');
p('holding the key), graphile-worker and pg-boss through bench/peers.mjs (a handler that records the id). djc\'s jobs are added by a refresh before the ');
p('clock starts; the peers\' are inserted in one statement while their workers wait, and their clock stops when no job is left unfinished. ');
p(`The configurations of a table run one after the other, ${recs.filter((r) => r.s === 'A' && r.part === 'A').length ? Math.max(...A.filter((r) => r.part === 'A').map((r) => r.round)) : 0} round${Math.max(...A.map((r) => r.round)) > 1 ? 's' : ''}, the order rotated each round; figures are medians over rounds (range in brackets). `);
p('Statements/job (pg_stat_statements calls; BEGIN and COMMIT count), transactions/job (pg_stat_database xact_commit + xact_rollback) and WAL flushes/job ');
p('(pg_stat_wal.wal_sync: what a durable commit waits for; concurrent commits can share one) come from the server over the whole run, so ');
p('the harness\'s few fixed statements (connect, declare, progress) are included. "exactly once": every job ran exactly once, counted outside the database, ');
p('and for djc also one committed row per key, no error, no lost reservation, no job left; for pgbench the rows add up to the transactions it counted.');
p();
const A1 = groups(A.filter((x) => x.part === 'A' && x.t === 'A1'));
const A2 = groups(A.filter((x) => x.part === 'A' && x.t === 'A2'));
const nH = Math.max(0, ...find(A1, 'djc', (g) => g.x.arg !== '1').map((g) => g.x.n));
const nHB = A2.length ? A2[0].x.n : null;
if (A1.length) {
  p('## A1. PostgreSQL');
  p();
  table(A1);
  const bossDef = find(A1, 'pgboss', (g) => g.x.label === 'defaults')[0];
  if (bossDef) {
    p(`pg-boss with its defaults (batchSize 1, pollingIntervalSeconds 2, no burst) fetches one job per worker every 2 s, so it ran only ${bossDef.x.n} `);
    p('jobs. "one job per fetch, burst" keeps batchSize 1 but fetches again at once while its cached ready count (refreshed every second here, ');
    p('every 60 s by default) shows a backlog; "best" fetches 500 jobs at a time, again at once while fetches come back full, with two fetch loops per process. ');
    p('graphile-worker "best" is the configuration of its own performance page (concurrentJobs 24, localQueue 500, completion batching on); ');
    p('for pg-boss and graphile-worker the processes given were the fastest of 1, 2 and 4 in trial runs on this machine (bench/README.md).');
    p();
  }
}
if (A2.length) {
  p(`## A2. PostgreSQL, ${f0(nHB)} jobs, batched configurations`);
  p();
  table(A2);
}
const A5 = groups(A.filter((x) => x.part === 'A' && x.t === 'A5'));
if (A5.length) {
  p(`## A5. PostgreSQL, ${f0(A5[0].x.n)} jobs, the same work: every job commits a result row`);
  p();
  p('The peers\' handlers here commit one row per job, keyed by the job\'s id, with a foreign key to a table of the keys (PEER_RESULT=1 of ');
  p('bench/peers.mjs), as djc\'s make does in every table of part A: graphile-worker one INSERT per job through its pool (a transaction ');
  p('of its own: graphile-worker completes jobs in transactions of its own), pg-boss one INSERT of the rows of its whole fetch. ');
  p('"exactly once" also checks that the result table holds one row per job.');
  p();
  table(A5);
}
const A3 = groups(A.filter((x) => x.part === 'A' && x.t === 'A3'));
if (A3.length) {
  p('## A3. MariaDB');
  p();
  p('Statements/job = `Questions` (statements the clients sent, a prepared statement\'s execution included); COMMIT = `Com_commit` (explicit ');
  p('COMMIT statements; an autocommitted write commits without one); Handler_commit = `Handler_commit` (commits inside the server, autocommitted ');
  p('statements included); InnoDB fsyncs = `Innodb_data_fsyncs` (redo log and data files: what durable commits wait for; concurrent commits can ');
  p('share one). All from SHOW GLOBAL STATUS over the whole run. djc on MariaDB sends a commit and its next claim as one compound ');
  p('statement (BEGIN NOT ATOMIC ... END, docs/jobs.md): `Questions` counts it once, while the server runs START TRANSACTION, the fenced ');
  p('DELETE, the INSERT, the claim\'s locking SELECT and UPDATE, and COMMIT inside it (BEGIN and COMMIT count those inner ones). ');
  p('"separate statements": the same with DJC_MYSQL_COMPOUND=0, each statement its own round trip, as on MySQL.');
  p();
  table(A3, 'mariadb');
}
// A4
const A4 = A.filter((x) => x.part === 'A' && x.t === 'A4');
if (A4.length) {
  const nDJ = A4[0].n;
  p(`## A4. DataJoint\'s own populate protocol, ${f0(nDJ)} keys, ${A4[0].procs} workers`);
  p();
  p('DataJoint for Python itself (not an emulation), from a source checkout, on the same pipeline: `Noop.populate(reserve_jobs=True, refresh=False)` in ');
  p(`each of ${A4[0].procs} independent processes started together (as a cluster runs it; its jobs table was refreshed before the clock). Per key a DataJoint `);
  p('worker issues its reserve UPDATE (autocommit), then BEGIN, a SELECT of the key, the INSERT, COMMIT, then the DELETE of the job (autocommit), and ');
  p('every worker tries every key in the same order, so a key costs one UPDATE per worker. djc: `djc_populate` with reservation and the same number ');
  p('of processes, with a C make and with a make program (bench/prog/noop_make.c, one process per key).');
  p();
  for (const be of ['postgresql', 'mariadb']) {
    const gs = groups(A4.filter((x) => x.backend === be));
    if (!gs.length) continue;
    p(`### ${be === 'postgresql' ? 'PostgreSQL' : 'MariaDB'}`);
    p();
    table(gs, be);
  }
}

// ------------------------------------------------------------ headline (placed at the top)
const H = [];
const h = (s = '') => H.push(s);
{
  h('## Headline (part A: default durability, same run)');
  h();
  h('| figure | djc | reference | ratio | target (issue 17) |');
  h('|---|---:|---:|---:|---|');
  const djc1 = find(A1, 'djc', (g) => g.x.arg === '1' && g.x.procs === 4)[0];
  const gDef = find(A1, 'graphile', (g) => g.x.label === 'defaults')[0];
  const bOne = find(A1, 'pgboss', (g) => g.x.label !== 'defaults' && g.x.label !== 'best')[0];
  const pgOwn = find(A1, 'pgbench', (g) => g.x.arg === 'own')[0];
  const pgSame = find(A1, 'pgbench', (g) => g.x.arg === 'same')[0];
  const row = (what, a, b, t, unit = 'jobs/s') => h(`| ${what} | ${a ? f0(a.rate) : '-'} | ${b ? f0(b.rate) + (unit ? '' : '') : '-'} | ${a && b ? f2(a.rate / b.rate) + 'x' : '-'} | ${t == null ? '-' : `≥ ${t}x: ${tgt(a && b ? a.rate / b.rate : null, t)}`} |`);
  row(`PostgreSQL, 4 processes, one job per transaction, ${djc1 ? f0(djc1.x.n) : '-'} jobs: djc batch 1 vs graphile-worker defaults (4 x 1)`, djc1, gDef, 2.0);
  row('the same vs pg-boss, one job per fetch with burst (4 processes)', djc1, bOne, null);
  row('the same vs pgbench single-row UPDATE, 4 clients, a row per client (tx/s): the commit limit', djc1, pgOwn, 0.5);
  row('the same vs pgbench single-row UPDATE, 4 clients, all on one row (tx/s)', djc1, pgSame, null);
  for (const [gs, n] of [[A1, nH], [A2, nHB]]) {
    if (!gs.length) continue;
    const dj = best(find(gs, 'djc', (g) => g.x.arg !== '1'));
    const gb = best(find(gs, 'graphile', (g) => g.x.label !== 'defaults'));
    const bb = best(find(gs, 'pgboss', (g) => g.x.label === 'best'));
    const peer = best([gb, bb].filter(Boolean));
    if (!dj) continue;
    h(`| PostgreSQL, ${f0(n)} jobs, batched: djc best (${describe(dj)}) vs best peer (${describe(peer)}) | ${f0(dj.rate)} | ${peer ? f0(peer.rate) : '-'} | ${peer ? f2(dj.rate / peer.rate) + 'x' : '-'} | ≥ 1.5x: ${tgt(peer ? dj.rate / peer.rate : null, 1.5)} |`);
    for (const g of [gb, bb].filter(Boolean)) if (g !== peer) row(`  the same vs ${describe(g)}`, dj, g, null);
  }
  const my1 = find(A3, 'djc', (g) => g.x.arg === '1' && g.x.procs === 4)[0];
  const myOwn = find(A3, 'commit_loop', (g) => g.x.arg === 'own')[0];
  const mySame = find(A3, 'commit_loop', (g) => g.x.arg === 'same')[0];
  row('MariaDB, 4 processes, batch 1 vs a single-row UPDATE commit loop, 4 clients, a row per client (tx/s)', my1, myOwn, 0.5);
  row('the same vs the commit loop with all clients on one row (tx/s)', my1, mySame, null);
  const myS = find(A3, 'djc', (g) => g.x.arg === 'separate:1' && g.x.procs === 4)[0];
  if (myS) row('MariaDB, the same with DJC_MYSQL_COMPOUND=0 (separate statements, as on MySQL) vs the commit loop (tx/s)', myS, myOwn, null);
  if (myS) h(`| MariaDB, batch 1 with DJC_MYSQL_COMPOUND=0: statements per job (Questions) / COMMIT statements per job | ${f2(myS.stmts)} / ${f2(myS.commits)} | - | - | - |`);
  if (my1) h(`| MariaDB, batch 1: statements per job (Questions) / COMMIT statements per job / Handler_commit per job / InnoDB fsyncs per job | ${f2(my1.stmts)} / ${f2(my1.commits)} / ${f2(my1.hcommit)} / ${f2(my1.flushes)} | - | - | ≤ 4 statements: ${my1.stmts == null ? '-' : my1.stmts <= 4 ? 'met' : '**not met**'}; one commit: ${my1.commits == null ? '-' : my1.commits <= 1.05 ? 'met' : '**not met**'} |`);
  if (djc1) h(`| PostgreSQL, batch 1: statements per job / transactions per job / WAL flushes per job | ${f2(djc1.stmts)} / ${f2(djc1.commits)} / ${f2(djc1.flushes)} | - | - | one commit per job: ${djc1.commits == null ? '-' : djc1.commits <= 1.05 ? 'met' : '**not met**'} |`);
  for (const be of ['postgresql', 'mariadb']) {
    const gs = groups(A4.filter((x) => x.backend === be));
    const dj = find(gs, 'datajoint')[0];
    for (const g of find(gs, 'djc')) row(`${be === 'postgresql' ? 'PostgreSQL' : 'MariaDB'}, ${g.x.procs} workers, ${f0(g.x.n)} keys: djc ${String(g.x.arg).startsWith('prog') ? 'make program' : 'C make'} vs DataJoint populate (keys/s)`, g, dj, null);
  }
  const allA = A.filter((x) => x.part === 'A');
  h();
  const noRes = allA.filter((x) => !x.r).length, bad = allA.filter((x) => x.r && !ok(x)).length;
  h(`Exactly once: ${allA.filter(ok).length} of ${allA.length} runs of part A proved every job ran exactly once` +
    (bad ? `; **${bad} showed a job run twice, missed or failed, see the tables**` : '') +
    (noRes ? `; **${noRes} gave no result** (the run failed; nothing was checked)` : '') + '.');
  h();
}

// ------------------------------------------------------------ B
p('# Part B: durability off');
p();
p(`Settings as read from the servers: ${dur('B') || '-'}; SQLite in WAL mode with synchronous=NORMAL. Absolute rates are higher than on a durable `);
p('server; the comparison between systems on the same server is still fair.');
p();
const B0 = recs.filter((r) => r.s === 'A' && r.t === 'B0');
if (B0.length) {
  p('## B0. The headline comparison with durability off (one round)');
  p();
  table(groups(B0.filter((x) => x.backend === 'postgresql')));
  const m = groups(B0.filter((x) => x.backend === 'mariadb'));
  if (m.length) table(m, 'mariadb');
}
// 1
p("## B1. No-op job throughput (djc)");
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

// process creation
const sp = recs.filter((r) => r.s === 'spawn').map((r) => r.r);
if (sp.length) {
  p('## B2. Process creation, and djc\'s share of a make-program key');
  p();
  p(`\`bench/prog/spawn\`: from a process shaped like a djc worker (libpq loaded, 2 MiB of its own memory touched; RSS ${f1(sp[0].rss_kb / 1024)} MiB), start a program with `);
  p('its stdin and stdout on pipes, read its output and wait for it, by three means; best of three rounds of the count given. djc starts a make program with fork+exec today.');
  p();
  p('| program | processes | fork + exec | vfork + exec | posix_spawn |');
  p('|---|---:|---:|---:|---:|');
  for (const r of sp) p(`| ${r.program.replace(/.*\//, '')} | ${f0(r.n)} | ${f0(r.fork_exec_us)} µs | ${f0(r.vfork_exec_us)} µs | ${f0(r.posix_spawn_us)} µs |`);
  p();
  const tru = sp.find((r) => r.program === '/bin/true') || sp[0];
  const nm = sp.find((r) => r.program !== '/bin/true');
  const rows = recs.filter((r) => r.s === 'tp' && r.r.make === 'program' && r.r.procs === Math.min(...procsOf));
  if (rows.length) {
    p(`djc\'s own share of a make-program key (section B1, ${Math.min(...procsOf)} process${Math.min(...procsOf) > 1 ? 'es, so processes overlap and this is only indicative' : ''}): the time per key minus the cost of creating the make process, `);
    p('counted against fork+exec of /bin/true (what djc does now) and against posix_spawn of /bin/true (the cheapest way found here)' + (nm ? ', and against fork+exec of the no-op make program itself (its own start-up included)' : '') + '.');
    p();
    p(`| backend | make | µs per key | minus fork+exec /bin/true | minus posix_spawn /bin/true${nm ? ' | minus fork+exec noop_make' : ''} |`);
    p(`|---|---|---:|---:|---:|${nm ? '---:|' : ''}`);
    for (const r of rows) {
      const us = r.r.us_per_key;
      p(`| ${r.backend} | ${r.variant.replace('reserve-prog-b50', 'reserve, batch 50').replace('reserve-prog', 'reserve, batch 1')} | ${f0(us)} | ${f0(us - tru.fork_exec_us)} | ${f0(us - tru.posix_spawn_us)}${nm ? ' | ' + f0(us - nm.fork_exec_us) : ''} |`);
    }
    p();
  }
}

// 3
const depth = recs.filter((r) => r.s === 'depth');
if (depth.length) {
  p('## B3. Reservation cost per job vs queue depth');
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
  p('## B4. Refresh (new keys added as pending jobs)');
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
p('## B5. Worker memory');
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
out.splice(out.indexOf('# Part A: servers with their default durability'), 0, ...H);
process.stdout.write(out.join('\n') + '\n');
