/**
 * What the metered platform costs per request, measured side by side on loopback:
 *   bare      a bare Fastify server (same version, logger off) answering the same POST
 *   pglite    the metered pipeline (auth, hold, capture, history row) through the billed test
 *             endpoint POST /v1/test/work on embedded PGlite
 *   postgres  the same on a fresh PostgreSQL database
 *   redis     the same on PostgreSQL with REDIS_URL set
 *
 * Every server runs in its own child process, so the load generator never shares an event loop
 * (or a core's time slice accounting) with the server it measures; the bare server is started
 * the same way so the comparison is fair.
 *
 * Each target gets a warm-up, then the measured run, both timed by autocannon. After each
 * metered target the server is stopped, the database is reopened from this process, and the
 * credits charged are checked against the 2xx answers: exactly against the server's own record
 * (history rows, ledger captures, the balance drop, the ledger recompute), and against what the
 * client received within the requests autocannon cut unanswered when a run's time was up (the
 * server may have answered and charged those; the client never learns).
 *
 * Usage: node bench/platform.ts
 * Environment:
 *   BENCH_SECONDS          measured seconds per target (default 10)
 *   BENCH_WARMUP_SECONDS   warm-up seconds per target (default 5: PGlite's WebAssembly keeps
 *                          speeding up for seconds while V8 optimises it)
 *   BENCH_CONNECTIONS      concurrent connections (default 50)
 *   BENCH_TARGETS          comma list among bare,pglite,postgres,redis (default all four)
 *   BENCH_USERS            funded users whose tokens the connections share round-robin (default 1:
 *                          every request then updates the same balance row, the worst case)
 *   BENCH_DATABASE_URL     PostgreSQL server to create throw-away databases on
 *                          (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_REDIS_URL        Redis for the `redis` target (default redis://127.0.0.1:6379)
 *   BENCH_CPU_PROF         a folder: servers run with --cpu-prof and write their profiles there
 *   BENCH_PLATFORM_BEFORE  root of another checkout of the project: each metered target is run
 *                          again from that tree (its migrations, its server), right after this
 *                          tree's, so a change is measured before and after in one run
 *   BENCH_ROUNDS           times the whole list of targets is run, in the same order (default 1)
 *   DATABASE_POOL_SIZE     passed through to the servers (the platform's pg pool size)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config.ts';
import { createPlatformServices } from '../src/services.ts';
import { freshPostgresDatabase } from '../test/support/service.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
/** The metered server, relative to a checkout's root. */
const METERED_SERVER_PATH = 'test/support/serve-test-endpoints.ts';

/** The slice of autocannon's programmatic API used here (the package ships no types). */
interface AutocannonHistogram {
  p50: number;
  p99: number;
}
interface AutocannonResult {
  latency: AutocannonHistogram;
  requests: { sent: number };
  errors: number;
  '2xx': number;
  statusCodeStats: Record<string, { count: number }>;
}
interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  on(event: 'response', listener: (client: unknown, statusCode: number) => void): this;
}
interface AutocannonClient {
  setHeaders(headers: Record<string, string>): void;
}
type Autocannon = (options: {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  duration: number;
  timeout: number;
  setupClient: (client: AutocannonClient) => void;
}) => AutocannonInstance;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

type TargetName = 'bare' | 'pglite' | 'postgres' | 'redis';
const ALL_TARGETS: TargetName[] = ['bare', 'pglite', 'postgres', 'redis'];
const LABELS: Record<TargetName, string> = {
  bare: 'bare Fastify',
  pglite: 'metered, PGlite',
  postgres: 'metered, PostgreSQL',
  redis: 'metered, PostgreSQL + Redis',
};

/** A checkout whose metered server is measured: this one, or the one BENCH_PLATFORM_BEFORE names. */
interface Tree {
  root: string;
  /** Appended to the row labels; empty for this tree. */
  suffix: string;
}
const THIS_TREE: Tree = { root: ROOT, suffix: '' };

/** Credits granted to each bench user: far more than any run can spend. */
const GRANT = 1_000_000_000;
/** The same request body for every target, so they parse the same bytes. */
const BODY = JSON.stringify({ cost: 1 });

interface Settings {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  targets: TargetName[];
  users: number;
  databaseUrl: string;
  redisUrl: string;
  cpuProfDir?: string;
  before?: Tree;
  rounds: number;
}

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!(value > 0)) throw new Error(`${name} must be a positive number (got "${raw}").`);
  return value;
}

function readSettings(): Settings {
  const targets = (process.env.BENCH_TARGETS ?? ALL_TARGETS.join(','))
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  for (const t of targets) if (!ALL_TARGETS.includes(t as TargetName)) throw new Error(`BENCH_TARGETS: unknown target "${t}" (known: ${ALL_TARGETS.join(', ')}).`);
  return {
    seconds: positive('BENCH_SECONDS', 10),
    warmupSeconds: positive('BENCH_WARMUP_SECONDS', 5),
    connections: Math.round(positive('BENCH_CONNECTIONS', 50)),
    targets: targets as TargetName[],
    users: Math.round(positive('BENCH_USERS', 1)),
    databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
    redisUrl: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
    cpuProfDir: process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : undefined,
    before: process.env.BENCH_PLATFORM_BEFORE ? { root: path.resolve(process.env.BENCH_PLATFORM_BEFORE), suffix: ' (before)' } : undefined,
    rounds: Math.round(positive('BENCH_ROUNDS', 1)),
  };
}

// ---------------------------------------------------------------------------------------------
// Server processes

interface ServerProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * CPU seconds (user + system, all threads) used so far by the processes `pids` names, read from
 * /proc: on a machine shared with other work, CPU per request is steadier than requests per
 * second. Undefined where /proc is not there. Linux counts in clock ticks of 1/100 s.
 */
function cpuSeconds(pids: number[]): Map<number, number> {
  const seconds = new Map<number, number>();
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The command name (in parentheses) may hold spaces: fields are counted after it.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      seconds.set(pid, (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // No /proc, or the process ended meanwhile.
    }
  }
  return seconds;
}

/** CPU seconds the processes of `after` used since `before` (a process new in `after` counts whole). */
function cpuUsedBetween(before: Map<number, number>, after: Map<number, number>): number | undefined {
  if (after.size === 0) return undefined;
  let used = 0;
  for (const [pid, seconds] of after) used += seconds - (before.get(pid) ?? 0);
  return used;
}

/** The PostgreSQL backends serving `database` (their process titles name it). */
function backendsOf(database: string): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return pids;
  }
  for (const pid of entries) {
    try {
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (title.startsWith('postgres: ') && title.includes(` ${database} `)) pids.push(Number(pid));
    } catch {
      // The process ended meanwhile.
    }
  }
  return pids;
}

/** Starts `node <script> <args>` and waits for its `LISTENING <url>` line. */
async function startServer(script: string, args: string[], env: Record<string, string>, settings: Settings, name: string, cwd = ROOT): Promise<ServerProcess> {
  const nodeArgs = settings.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfDir}`, `--cpu-prof-name=${name}.cpuprofile`] : [];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, script, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (line.startsWith('LISTENING ')) resolve(line.slice('LISTENING '.length).trim());
    });
    // `exited` only ever resolves (from the 'exit' event), so this chain cannot reject; and once
    // the URL is known the late reject is a no-op. Nothing to wait for.
    void exited.then((code) => reject(new Error(`the ${name} server exited with code ${code} before listening`)));
  });
  return {
    url,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0) throw new Error(`the ${name} server exited with code ${code}`);
    },
  };
}

/** The bare server, run by this same file in a child process (`node bench/platform.ts serve-bare`). */
async function serveBare(): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  app.post('/', async () => ({ ok: true, held: 1 }));
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  process.stdout.write(`LISTENING ${address}\n`);
  process.once('SIGTERM', () => {
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('closing the bare server failed:', error);
        process.exit(1);
      },
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Load

interface Measurement {
  /** Answers received. */
  requests: number;
  ok2xx: number;
  /** Requests in flight when the run's time was up: autocannon drops their connections unanswered. */
  cut: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  statusCodes: Record<string, number>;
}

/** Sends requests over `connections` for `seconds`; connection i sends tokens[i % tokens.length]. */
async function load(url: string, tokens: string[], connections: number, seconds: number): Promise<Measurement> {
  const headers = { 'content-type': 'application/json' };
  let nextClient = 0;
  const started = performance.now();
  let last = started;
  const instance = autocannon({
    url,
    method: 'POST',
    headers,
    body: BODY,
    connections,
    duration: seconds,
    timeout: 30,
    setupClient(client) {
      if (tokens.length) client.setHeaders({ ...headers, authorization: `Bearer ${tokens[nextClient++ % tokens.length]}` });
    },
  });
  instance.on('response', () => {
    last = performance.now();
  });
  const result = await instance;
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, Number(s.count)]));
  const answered = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  const elapsed = (last - started) / 1000;
  return {
    requests: answered,
    ok2xx: result['2xx'],
    cut: Math.max(0, result.requests.sent - answered - result.errors),
    seconds: elapsed,
    rps: answered / elapsed,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    statusCodes,
  };
}

/** CPU seconds so far of the server process, and of the database backends (PostgreSQL only), per process. */
type CpuProbe = () => { server: Map<number, number>; database: Map<number, number> };

interface PhasedRun {
  measured: Measurement;
  /** CPU per answer during the measured run, in µs. */
  cpu?: { server: number; database?: number };
  /** Warm-up and measured run together: what the server saw in total. */
  total: { requests: number; ok2xx: number; cut: number; errors: number; statusCodes: Record<string, number> };
}

async function warmThenMeasure(url: string, tokens: string[], settings: Settings, probe: CpuProbe): Promise<PhasedRun> {
  const warmup = await load(url, tokens, settings.connections, settings.warmupSeconds);
  const cpuBefore = probe();
  const measured = await load(url, tokens, settings.connections, settings.seconds);
  const cpuAfter = probe();
  const perAnswer = (used: number | undefined) => (used === undefined || measured.requests === 0 ? undefined : (used * 1e6) / measured.requests);
  const server = perAnswer(cpuUsedBetween(cpuBefore.server, cpuAfter.server));
  const cpu = server === undefined ? undefined : { server, database: perAnswer(cpuUsedBetween(cpuBefore.database, cpuAfter.database)) };
  const total = { requests: 0, ok2xx: 0, cut: 0, errors: 0, statusCodes: {} as Record<string, number> };
  for (const phase of [warmup, measured]) {
    total.requests += phase.requests;
    total.ok2xx += phase.ok2xx;
    total.cut += phase.cut;
    total.errors += phase.errors;
    for (const [code, n] of Object.entries(phase.statusCodes)) total.statusCodes[code] = (total.statusCodes[code] ?? 0) + n;
  }
  return { measured, cpu, total };
}

// ---------------------------------------------------------------------------------------------
// Metered targets: a database with funded users, the server, and the check afterwards

interface Verification {
  ok: boolean;
  line: string;
  /** Requests the server handled (one history row each). */
  handled: number;
}

interface TargetResult {
  name: TargetName;
  label: string;
  /** 1-based, when BENCH_ROUNDS repeats the targets. */
  round: number;
  measured: Measurement;
  /** CPU per answer in the measured run, µs: the server process, and the database's backends. */
  cpu?: PhasedRun['cpu'];
  verification?: Verification;
  /** PostgreSQL only: transactions (= statements: all run in autocommit) per request handled. */
  statementsPerRequest?: number;
}

async function runBare(settings: Settings): Promise<TargetResult> {
  const server = await startServer(SELF, ['serve-bare'], {}, settings, 'bare');
  try {
    const { measured, cpu } = await warmThenMeasure(server.url + '/', [], settings, () => ({ server: cpuSeconds([server.pid]), database: new Map() }));
    return { name: 'bare', label: LABELS.bare, round: 1, measured, cpu };
  } finally {
    await server.stop();
  }
}

async function committedTransactions(adminUrl: string, database: string): Promise<number> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    // Backends report their counters when they exit; give the last ones a moment.
    await sleep(700);
    const { rows } = await client.query('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1', [database]);
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

/**
 * Migrates the database and creates the funded users with the code of `tree`, in a child process
 * when it is another checkout (its migrations are the ones under test), and returns their tokens.
 */
async function setUp(tree: Tree, env: Record<string, string>, settings: Settings): Promise<Array<{ id: number; token: string }>> {
  if (tree.root === ROOT) {
    const setup = await createPlatformServices(loadConfig({ ...process.env, ...env }));
    try {
      const users: Array<{ id: number; token: string }> = [];
      for (let i = 0; i < settings.users; i++) {
        const user = await setup.accounts.createUser({ name: `Bench user ${i}`, email: `bench${i}@example.com` });
        await setup.ledger.grant(user.id, 'scraping', GRANT, 'bench');
        users.push(user);
      }
      return users;
    } finally {
      await setup.close();
    }
  }
  const child = spawn(process.execPath, [SELF, 'set-up', tree.root, String(settings.users)], { cwd: tree.root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`setting up the database with ${tree.root} failed (exit code ${code})`);
  return JSON.parse(output) as Array<{ id: number; token: string }>;
}

/** Child mode of setUp: the same set-up with the services of the checkout at `root`; prints the users as JSON. */
async function setUpIn(root: string, users: number): Promise<void> {
  const { loadConfig: load } = (await import(pathToFileURL(path.join(root, 'src/config.ts')).href)) as typeof import('../src/config.ts');
  const { createPlatformServices: create } = (await import(pathToFileURL(path.join(root, 'src/services.ts')).href)) as typeof import('../src/services.ts');
  const setup = await create(load(process.env));
  const created: Array<{ id: number; token: string }> = [];
  for (let i = 0; i < users; i++) {
    const user = await setup.accounts.createUser({ name: `Bench user ${i}`, email: `bench${i}@example.com` });
    await setup.ledger.grant(user.id, 'scraping', GRANT, 'bench');
    created.push({ id: user.id, token: user.token });
  }
  await setup.close();
  process.stdout.write(JSON.stringify(created));
}

async function runMetered(name: Exclude<TargetName, 'bare'>, settings: Settings, tree: Tree = THIS_TREE): Promise<TargetResult> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-bench-'));
  const database = name === 'pglite' ? null : await freshPostgresDatabase(settings.databaseUrl);
  const databaseName = database ? new URL(database.url).pathname.slice(1) : '';
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    DATABASE_URL: database?.url ?? '',
    REDIS_URL: name === 'redis' ? settings.redisUrl : '',
  };
  const config = loadConfig({ ...process.env, ...env });
  try {
    // Migrate, create the users and fund them, then hand the database over to the server.
    const users = await setUp(tree, env, settings);

    const before = database ? await committedTransactions(settings.databaseUrl, databaseName) : 0;
    const server = await startServer(path.join(tree.root, METERED_SERVER_PATH), [], env, settings, `${name}${tree.suffix ? '-before' : ''}`, tree.root);
    let run: PhasedRun;
    try {
      const probe: CpuProbe = () => ({ server: cpuSeconds([server.pid]), database: database ? cpuSeconds(backendsOf(databaseName)) : new Map() });
      run = await warmThenMeasure(`${server.url}/v1/test/work`, users.map((u) => u.token), settings, probe);
      // Requests cut at time-up may still be running on the server; the service's shutdown waits
      // for open connections only, so give them time to settle before stopping it.
      await sleep(1000 + 2 * run.measured.p99);
    } finally {
      await server.stop();
    }
    const after = database ? await committedTransactions(settings.databaseUrl, databaseName) : 0;

    const verification = await verify(config, users.map((u) => u.id), run.total);
    return {
      name,
      label: LABELS[name] + tree.suffix,
      round: 1,
      measured: run.measured,
      cpu: run.cpu,
      verification,
      statementsPerRequest: database ? (after - before) / verification.handled : undefined,
    };
  } finally {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Reopens the database the server used and checks the money against what the client saw. */
async function verify(config: ReturnType<typeof loadConfig>, userIds: number[], seen: PhasedRun['total']): Promise<Verification> {
  const services = await createPlatformServices(config, { migrate: false });
  try {
    const [balances] = await services.db.query<{ total: number }>(
      `SELECT COALESCE(sum(balance), 0)::bigint AS total FROM balances WHERE user_id = ANY($1::bigint[]) AND product = 'scraping'`,
      [userIds],
    );
    const charged = GRANT * userIds.length - Number(balances.total);
    const [ledger] = await services.db.query<{ captured: number; captures: number }>(
      // Net of refunds (requests whose client hung up while their capture committed).
      `SELECT (COALESCE(sum(charged), 0) - COALESCE(sum(delta) FILTER (WHERE kind = 'refund'), 0))::bigint AS captured,
              (count(*) FILTER (WHERE kind = 'capture') - count(*) FILTER (WHERE kind = 'refund'))::bigint AS captures
         FROM credit_ledger WHERE user_id = ANY($1::bigint[])`,
      [userIds],
    );
    const [history] = await services.db.query<{ rows: number; ok: number; credits: number }>(
      `SELECT count(*)::bigint AS rows, count(*) FILTER (WHERE status BETWEEN 200 AND 299)::bigint AS ok,
              COALESCE(sum(credits), 0)::bigint AS credits
         FROM request_history WHERE user_id = ANY($1::bigint[])`,
      [userIds],
    );
    const [holds] = await services.db.query<{ n: number }>('SELECT count(*)::bigint AS n FROM credit_holds');
    const audit = await services.ledger.recompute();
    const auditAgrees = audit.every((row) => row.stored === row.ledger);

    const captured = Number(ledger.captured);
    const okRows = Number(history.ok);
    const rows = Number(history.rows);
    const within = (n: number, low: number) => n >= low && n <= low + seen.cut;
    const checks: Array<[string, boolean]> = [
      [`charged ${charged} = 2xx answered ${okRows}`, charged === okRows],
      [`= captured ${captured} in ${Number(ledger.captures)} captures`, captured === charged && Number(ledger.captures) === okRows],
      [`= history credits ${Number(history.credits)}`, Number(history.credits) === charged],
      [`client got ${seen.ok2xx} 2xx + ${seen.cut} cut at time-up`, within(charged, seen.ok2xx)],
      [`history rows ${rows} for ${seen.requests} answers`, within(rows, seen.requests)],
      [`holds left ${Number(holds.n)}`, Number(holds.n) === 0],
      [`ledger recompute ${auditAgrees ? 'agrees' : 'DISAGREES'}`, auditAgrees],
      [`answers by status ${JSON.stringify(seen.statusCodes)}`, seen.requests === seen.ok2xx],
      [`client errors ${seen.errors}`, seen.errors === 0],
    ];
    const failed = checks.filter(([, ok]) => !ok).map(([text]) => text);
    const summary = checks.map(([text, ok]) => (ok ? text : `${text} ✗`)).join(', ');
    return { ok: failed.length === 0, line: `${failed.length === 0 ? 'OK' : 'FAILED'}: ${summary}`, handled: rows };
  } finally {
    await services.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Report

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ')).join('\n');
}

function report(results: TargetResult[], settings: Settings): void {
  // Each row is compared with the bare server of its own round.
  const bareOf = (r: TargetResult) => results.find((b) => b.name === 'bare' && b.round === r.round);
  const label = (r: TargetResult) => (settings.rounds > 1 ? `${r.label}, round ${r.round}` : r.label);
  const rows = [['target', 'req/s', 'p50 ms', 'p99 ms', 'req/s vs bare', 'p50 vs bare', 'p99 vs bare', 'stmts/req', 'server CPU µs/req', 'db CPU µs/req', 'requests', 's']];
  const times = (value: number, base: number) => (base > 0 ? `${(value / base).toFixed(1)}×` : '-');
  for (const r of results) {
    const m = r.measured;
    const bare = bareOf(r);
    rows.push([
      label(r),
      m.rps.toFixed(0),
      m.p50.toFixed(2),
      m.p99.toFixed(2),
      bare ? `${((m.rps / bare.measured.rps) * 100).toFixed(1)}%` : '-',
      bare ? times(m.p50, bare.measured.p50) : '-',
      bare ? times(m.p99, bare.measured.p99) : '-',
      r.statementsPerRequest === undefined ? '-' : r.statementsPerRequest.toFixed(2),
      r.cpu ? r.cpu.server.toFixed(0) : '-',
      r.cpu?.database === undefined ? '-' : r.cpu.database.toFixed(0),
      String(m.requests),
      m.seconds.toFixed(1),
    ]);
  }
  console.log(
    `\nPlatform overhead: ${settings.connections} connections, ${settings.users} user${settings.users === 1 ? '' : 's'}, ~${settings.seconds} s measured after ~${settings.warmupSeconds} s warm-up, ` +
      `${os.availableParallelism()} cores (load average ${os.loadavg()[0].toFixed(1)} at the end), Node ${process.versions.node}, ` +
      `DATABASE_POOL_SIZE=${process.env.DATABASE_POOL_SIZE ?? '10 (default)'}\n`,
  );
  console.log(table(rows));
  console.log('');
  for (const r of results) if (r.verification) console.log(`${label(r)}: ${r.verification.line}`);
  for (const postgres of results.filter((r) => r.name === 'postgres')) {
    const bare = bareOf(postgres);
    if (!bare) continue;
    const ratio = postgres.measured.rps / bare.measured.rps;
    console.log(`${postgres === results.find((r) => r.name === 'postgres') ? '\n' : ''}Target (${label(postgres)} ≥ 50% of bare Fastify req/s): ${(ratio * 100).toFixed(1)}% — ${ratio >= 0.5 ? 'met' : 'not met'}`);
  }
  if (settings.cpuProfDir) console.log(`\nCPU profiles of the servers: ${settings.cpuProfDir}`);
}

async function main(): Promise<void> {
  const settings = readSettings();
  const results: TargetResult[] = [];
  const trees = settings.before ? [THIS_TREE, settings.before] : [THIS_TREE];
  for (let round = 1; round <= settings.rounds; round++) {
    for (const name of settings.targets) {
      for (const tree of name === 'bare' ? [THIS_TREE] : trees) {
        process.stderr.write(`running ${LABELS[name]}${tree.suffix}${settings.rounds > 1 ? `, round ${round}` : ''}…\n`);
        const result = name === 'bare' ? await runBare(settings) : await runMetered(name, settings, tree);
        results.push({ ...result, round });
      }
    }
  }
  report(results, settings);
  if (results.some((r) => r.verification && !r.verification.ok)) process.exitCode = 1;
}

if (process.argv[2] === 'serve-bare') await serveBare();
else if (process.argv[2] === 'set-up') await setUpIn(process.argv[3], Number(process.argv[4]));
else await main();
