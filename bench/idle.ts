/**
 * What an idle embedded server costs, and how long a request waits behind it.
 *
 * The server runs as a child process (test/support/serve-test-endpoints.ts, embedded PGlite in a
 * temporary DATA_DIR), once per case, each case its own environment. After a warm-up and a rest,
 * with no request at all, for BENCH_IDLE_SECONDS:
 *
 *   main thread   CPU of the server's main thread (utime + stime of /proc/<pid>/task/<pid>/stat),
 *                 in ms per second: where PGlite runs every statement, and every request is served
 *   process       the same for every thread of the process (V8's helpers, the thread pool)
 *
 * Then BENCH_IDLE_REQUESTS `GET /me`, one after another with a pause of 97 ms between them (not a
 * divisor of any poll interval, so they land at every phase of the job queue's polls): p50, p99
 * and max latency. A request that arrives while a poll holds the event loop waits for it.
 *
 * Cases (BENCH_IDLE_CASES, `;`-separated, each `label` or `label:VAR=value,VAR=value`), by default:
 *   default              the server's own settings
 *   poll 0.5 s           JOB_POLL_SECONDS=0.5
 *   no job workers       JOB_CONCURRENCY=0: the floor, nothing of the job queue polls
 *
 * Usage: node bench/idle.ts
 * Environment:
 *   BENCH_IDLE_SECONDS    length of the CPU window (default 30)
 *   BENCH_IDLE_REQUESTS   GET /me requests per case (default 300)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { admin, spawnServer } from '../test/support/processes.ts';
import { percentile, positive } from './support.ts';

const windowSeconds = positive('BENCH_IDLE_SECONDS', 30);
const requests = positive('BENCH_IDLE_REQUESTS', 300);
const REST_MS = 5_000;
const PAUSE_MS = 97;
/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

const DEFAULT_CASES = 'default;poll 0.5 s:JOB_POLL_SECONDS=0.5;no job workers:JOB_CONCURRENCY=0';

interface Case {
  label: string;
  env: Record<string, string>;
}

function parseCases(spec: string): Case[] {
  return spec
    .split(';')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [label, vars = ''] = part.split(':');
      const env: Record<string, string> = {};
      for (const pair of vars.split(',').filter(Boolean)) {
        const [name, value] = pair.split('=');
        if (!name || value === undefined) throw new Error(`BENCH_IDLE_CASES: "${pair}" is not VAR=value`);
        env[name.trim()] = value.trim();
      }
      return { label: label.trim(), env };
    });
}

/** utime + stime, in ms, of a /proc stat file (fields 14 and 15; the command may hold spaces). */
function cpuMs(statPath: string): number {
  const stat = readFileSync(statPath, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

const ms = (value: number): string => `${value.toFixed(1)} ms`;

const cases = parseCases(process.env.BENCH_IDLE_CASES ?? DEFAULT_CASES);
console.log(
  `idle bench: ${windowSeconds} s of CPU, ${requests} GET /me per case; ${os.availableParallelism()} cores, ` +
    `load average ${os.loadavg().map((load) => load.toFixed(2)).join(' ')}, node ${process.version}`,
);
const rows: string[] = [];
for (const { label, env } of cases) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-bench-idle-'));
  const server = await spawnServer({ DATA_DIR: dataDir, ...env }, { startTimeoutMs: 120_000 });
  const pid = server.child.pid!;
  try {
    const user = await admin(dataDir, 'users', 'create', '--name', 'Idle bench', '--email', 'idle-bench@example.com');
    const headers = { authorization: `Bearer ${user.token}` };
    for (let i = 0; i < 20; i++) await (await fetch(`${server.url}/me`, { headers })).arrayBuffer();
    await sleep(REST_MS);

    const main = `/proc/${pid}/task/${pid}/stat`;
    const whole = `/proc/${pid}/stat`;
    const before = { main: cpuMs(main), whole: cpuMs(whole), at: performance.now() };
    await sleep(windowSeconds * 1000);
    const seconds = (performance.now() - before.at) / 1000;
    const mainPerSecond = (cpuMs(main) - before.main) / seconds;
    const wholePerSecond = (cpuMs(whole) - before.whole) / seconds;

    const latencies: number[] = [];
    for (let i = 0; i < requests; i++) {
      const started = performance.now();
      const response = await fetch(`${server.url}/me`, { headers });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`GET /me answered ${response.status}`);
      latencies.push(performance.now() - started);
      await sleep(PAUSE_MS);
    }
    const settings = Object.entries(env).map(([name, value]) => `${name}=${value}`).join(' ') || '(none)';
    rows.push(
      `${label.padEnd(22)} ${settings.padEnd(24)} ${ms(mainPerSecond).padStart(10)} ${ms(wholePerSecond).padStart(10)}` +
        `   ${ms(percentile(latencies, 50)).padStart(8)} ${ms(percentile(latencies, 99)).padStart(8)} ${ms(Math.max(...latencies)).padStart(8)}`,
    );
    console.log(rows.at(-1));
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
console.log(`\n${'case'.padEnd(22)} ${'settings'.padEnd(24)} ${'main/s'.padStart(10)} ${'process/s'.padStart(10)}   ${'/me p50'.padStart(8)} ${'p99'.padStart(8)} ${'max'.padStart(8)}`);
for (const row of rows) console.log(row);
