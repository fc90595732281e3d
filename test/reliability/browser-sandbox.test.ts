/**
 * The browser sandbox (issue 33 defect 5, docs/browser.md "The sandbox"). Chromium renders
 * hostile pages; without its sandbox a page that takes over its renderer holds what the service's
 * user holds, and as root the machine. Each case starts `gleaner serve` as an operator would and
 * reads its start log, then renders (or asks to render) a loopback page in browser mode:
 *
 * - as root, without BROWSER_SANDBOX: the browser pool refuses to start, says why at start, and
 *   browser requests get the documented "not configured" answer, free;
 * - as root with BROWSER_SANDBOX=off: the pool starts, says it runs without its sandbox, and the
 *   processes it starts carry `--no-sandbox`;
 * - as an unprivileged user (root drops to `nobody` with setpriv): Chromium runs in its sandbox
 *   where the kernel gives that user namespaces (its renderers in user and PID namespaces of their
 *   own), and says why not where it does not;
 * - as an unprivileged user without user namespaces (a user namespace whose user.max_user_namespaces
 *   leaves none to create, made with unshare): BROWSER_SANDBOX=on keeps the browser off and says
 *   why; `auto` runs it without its sandbox and says why.
 *
 * Cases that need root, setpriv or unshare skip, saying so, where the machine has none.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { isBrowserAvailable } from '../../src/browser/index.ts';
import { processTree } from '../../src/browser/memory.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const BIN = new URL('../../bin/gleaner', import.meta.url).pathname;
const ROOT = process.geteuid?.() === 0;
const NOT_CONFIGURED = { message: 'This endpoint is not configured.' };
const BROWSER_PAGE_CREDITS = 5;
const METRICS_TOKEN = 'sandbox-test-metrics-token';

const noChromium = (await isBrowserAvailable(CHROMIUM)) ? false : `Chromium is not available at ${CHROMIUM} (install the chromium package or set CHROMIUM_PATH)`;
const needsRoot = ROOT ? false : 'needs root: the service refuses the browser only as root (run as root, as CI does)';

/** `command` run as `nobody` where we are root (setpriv), or as ourselves; undefined when it cannot run. */
function asUnprivileged(command: string[]): string[] | undefined {
  if (!ROOT) return command;
  const probe = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, '-e', `require('fs').accessSync(${JSON.stringify(BIN)})`], { stdio: 'ignore' });
  return probe.status === 0 ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', ...command] : undefined;
}

const unprivileged = asUnprivileged([process.execPath]);
const noUnprivileged = unprivileged === undefined ? 'needs setpriv, a "nobody" user and a checkout that user can read' : false;
/** Whether that user may create user namespaces (what Chromium's sandbox needs). */
const unprivilegedUserns = unprivileged !== undefined && spawnSync(asUnprivileged(['unshare', '--user', 'true'])![0]!, asUnprivileged(['unshare', '--user', 'true'])!.slice(1), { stdio: 'ignore' }).status === 0;

/**
 * A user namespace that lets its process create no further one, entered as uid 1000: Chromium's
 * sandbox sees what it sees in a container whose seccomp profile forbids user namespaces.
 */
const WITHOUT_USERNS = ['unshare', '--user', '--map-root-user', 'sh', '-c', 'echo 1 > /proc/sys/user/max_user_namespaces && exec unshare --user --map-user=1000 --map-group=1000 "$@"', 'sh'];
const noUsernsJail =
  !ROOT
    ? 'needs root (to map another user in a user namespace)'
    : spawnSync(WITHOUT_USERNS[0]!, [...WITHOUT_USERNS.slice(1), 'sh', '-c', 'id -u | grep -qx 1000 && ! unshare --user true'], { stdio: 'ignore' }).status === 0
      ? false
      : 'needs unshare with --map-user and a writable user.max_user_namespaces in a user namespace';

interface Served {
  url: string;
  child: ChildProcess;
  stderr(): string;
  stdout(): string;
  ownerToken: string;
  stop(): Promise<void>;
}

/** A world-writable temporary folder (the unprivileged server's DATA_DIR and HOME). */
function scratch(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  chmodSync(dir, 0o777);
  return dir;
}

/** `gleaner serve` until /ready answers 200 (the pools, the browser's included, have started). */
async function serve(env: Record<string, string>, wrap: (command: string[]) => string[] = (command) => command): Promise<Served> {
  const home = scratch('gleaner-sandbox-test-');
  const command = wrap([process.execPath, BIN, 'serve']);
  const child = spawn(command[0]!, command.slice(1), {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      TMPDIR: home,
      DATA_DIR: path.join(home, 'data'),
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      METRICS_TOKEN,
      CHROMIUM_PATH: CHROMIUM,
      // One worker per pool: the start is what is looked at, on 2 shared cores.
      OCR_WORKERS: '1',
      PDF_THREADS: '1',
      WEB_FORMAT_PROCESSES: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(home, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 240_000;
    let url: string | undefined;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`gleaner serve exited (${child.exitCode ?? child.signalCode})`);
      if (Date.now() > deadline) throw new Error('gleaner serve was not ready within 240 s');
      url ??= /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stdout)?.[1];
      if (url !== undefined && (await fetch(`${url}/ready`).then((r) => r.ok, () => false))) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const ownerToken = /API token:\s+(\S+)/.exec(stdout)?.[1];
    assert.ok(ownerToken, 'the first start printed the owner token');
    return { url, child, stderr: () => stderr, stdout: () => stdout, ownerToken, stop };
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n--- stderr:\n${stderr}\n--- stdout:\n${stdout.slice(-4000)}`, { cause: error });
  }
}

async function call(served: Served, method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(served.url + route, {
    method,
    headers: { authorization: `Bearer ${served.ownerToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Renders the loopback page in browser mode: the answer, what it cost and what history says. */
async function renderInBrowser(served: Served, pageUrl: string): Promise<{ status: number; body: any; charged: number; history: { status: number; credits: number } }> {
  const granted = await call(served, 'POST', '/admin/users/1/credits', { product: 'scraping', amount: 100 });
  assert.ok(granted.status < 300, `granting credits: ${granted.status} ${JSON.stringify(granted.body)}`);
  const before = (await call(served, 'GET', '/me')).body.user.balances.scraping as number;
  const answer = await call(served, 'POST', '/v1/web', { url: pageUrl, bypass_captcha: true });
  const afterBalance = (await call(served, 'GET', '/me')).body.user.balances.scraping as number;
  const rows = (await call(served, 'GET', '/requests')).body.data as Array<{ endpoint: string; status: number; credits: number }>;
  const row = rows.find((entry) => entry.endpoint === '/v1/web');
  assert.ok(row, 'the request is in history');
  return { status: answer.status, body: answer.body, charged: before - afterBalance, history: { status: row.status, credits: row.credits } };
}

async function sandboxGauge(served: Served): Promise<string | undefined> {
  const text = await fetch(`${served.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => r.text());
  return /^gleaner_pool_sandboxed\{pool="browser"\} (\d)$/m.exec(text)?.[1];
}

/** The Chromium processes the server runs now: type, whether started with --no-sandbox, namespaces. */
function chromiumProcesses(served: Served): Array<{ type: string; noSandbox: boolean; userNs?: string; pidNs?: string }> {
  const link = (pid: number, ns: string) => {
    try {
      return readlinkSync(`/proc/${pid}/ns/${ns}`);
    } catch {
      return undefined;
    }
  };
  // Through setpriv or not, the server's process tree holds Chromium's.
  const cmdlineOf = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      return ''; // it ended meanwhile
    }
  };
  return processTree(served.child.pid!)
    .map((entry) => ({ entry, cmdline: cmdlineOf(entry.pid) }))
    .filter(({ cmdline }) => /chrom/i.test(cmdline.split(' ')[0] ?? ''))
    .map(({ entry, cmdline }) => ({
      type: /--type=(\S+)/.exec(cmdline)?.[1] ?? 'browser',
      noSandbox: /(^|\s)--no-sandbox(\s|$)/.test(cmdline),
      userNs: link(entry.pid, 'user'),
      pidNs: link(entry.pid, 'pid'),
    }));
}

const PAGE = '<!doctype html><html><body><p id="out">static</p><script>document.getElementById("out").textContent = "rendered by script";</script></body></html>';
let site: http.Server;
let pageUrl: string;

before(async () => {
  site = http.createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/page`;
});

after(() => new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve())));

describe('the browser sandbox', { skip: noChromium, timeout: 900_000 }, () => {
  test('as root without BROWSER_SANDBOX the browser pool refuses to start, says why, and browser requests are a free 503', { skip: needsRoot }, async () => {
    const served = await serve({});
    try {
      const outcome = await renderInBrowser(served, pageUrl);
      assert.deepEqual(
        { status: outcome.status, body: outcome.body, charged: outcome.charged },
        { status: 503, body: NOT_CONFIGURED, charged: 0 },
        'the documented answer when the browser is not available, free',
      );
      assert.deepEqual(outcome.history, { status: 503, credits: 0 });
      assert.deepEqual(chromiumProcesses(served), [], 'no Chromium runs');
      assert.match(served.stderr(), /gleaner: the browser pool stays off: the service runs as root \(uid 0\).*BROWSER_SANDBOX=off/);
      assert.doesNotMatch(served.stderr(), /starting the browser pool/);
      assert.match(served.stdout(), /"reason":"the service runs as root \(uid 0\)[^"]*".*"msg":"the browser pool stays off/);
      assert.equal(await sandboxGauge(served), undefined, 'no browser pool to report on');
    } finally {
      await served.stop();
    }
  });

  test('as root with BROWSER_SANDBOX=off the pool starts and says it runs Chromium without its sandbox', { skip: needsRoot }, async () => {
    const served = await serve({ BROWSER_SANDBOX: 'off' });
    try {
      assert.match(served.stderr(), /gleaner: starting the browser pool WITHOUT Chromium's sandbox: BROWSER_SANDBOX=off and the service runs as root/);
      assert.match(served.stdout(), /"sandboxed":false,"reason":"BROWSER_SANDBOX=off and the service runs as root[^"]*".*"msg":"the browser pool runs Chromium WITHOUT its sandbox/);
      const outcome = await renderInBrowser(served, pageUrl);
      assert.equal(outcome.status, 200, JSON.stringify(outcome.body));
      assert.match(outcome.body.response.content, /rendered by script/);
      assert.equal(outcome.charged, BROWSER_PAGE_CREDITS);
      const processes = chromiumProcesses(served);
      assert.ok(processes.some((entry) => entry.type === 'browser'), JSON.stringify(processes));
      assert.ok(processes.filter((entry) => entry.type === 'browser').every((entry) => entry.noSandbox), 'started with --no-sandbox');
      assert.equal(await sandboxGauge(served), '0');
    } finally {
      await served.stop();
    }
  });

  test('as an unprivileged user the pool runs Chromium in its sandbox where the kernel allows it', { skip: noUnprivileged }, async () => {
    const served = await serve({}, (command) => asUnprivileged(command)!);
    try {
      if (!unprivilegedUserns) {
        // This machine gives that user no user namespaces: the sandbox cannot start, and it is said.
        assert.match(served.stderr(), /gleaner: starting the browser pool WITHOUT Chromium's sandbox: Chromium's sandbox cannot start here: unprivileged user namespaces are not available/);
        assert.equal(await sandboxGauge(served), '0');
        return;
      }
      const outcome = await renderInBrowser(served, pageUrl);
      assert.equal(outcome.status, 200, JSON.stringify(outcome.body));
      assert.match(outcome.body.response.content, /rendered by script/);
      assert.equal(outcome.charged, BROWSER_PAGE_CREDITS);
      const processes = chromiumProcesses(served);
      const browser = processes.find((entry) => entry.type === 'browser');
      assert.ok(browser, JSON.stringify(processes));
      assert.ok(processes.every((entry) => !entry.noSandbox), `no process has --no-sandbox: ${JSON.stringify(processes)}`);
      // The sandbox at work: the zygote (and so every renderer it forks) is in user and PID
      // namespaces of its own, not the browser's.
      const sandboxed = processes.filter((entry) => entry.type === 'zygote' && entry.userNs !== browser.userNs && entry.pidNs !== browser.pidNs);
      assert.ok(sandboxed.length > 0, `a zygote in namespaces of its own: ${JSON.stringify(processes)}`);
      assert.match(served.stderr(), /gleaner: starting the browser pool \(Chromium in its sandbox\)/);
      assert.doesNotMatch(served.stderr(), /WITHOUT/);
      assert.equal(await sandboxGauge(served), '1');
    } finally {
      await served.stop();
    }
  });

  test('as an unprivileged user without user namespaces: BROWSER_SANDBOX=on keeps the browser off, auto runs it unsandboxed; both say why', { skip: noUsernsJail }, async () => {
    const jailed = (command: string[]) => [...WITHOUT_USERNS, ...command];
    const strict = await serve({ BROWSER_SANDBOX: 'on' }, jailed);
    try {
      assert.match(strict.stderr(), /gleaner: the browser pool stays off: BROWSER_SANDBOX=on, and Chromium's sandbox cannot start here: unprivileged user namespaces are not available/);
      const outcome = await renderInBrowser(strict, pageUrl);
      assert.equal(outcome.status, 503, JSON.stringify(outcome.body));
      assert.deepEqual(outcome.body, NOT_CONFIGURED);
      assert.equal(outcome.charged, 0);
    } finally {
      await strict.stop();
    }
    const lenient = await serve({}, jailed);
    try {
      assert.match(lenient.stderr(), /gleaner: starting the browser pool WITHOUT Chromium's sandbox: Chromium's sandbox cannot start here: unprivileged user namespaces are not available/);
      const outcome = await renderInBrowser(lenient, pageUrl);
      assert.equal(outcome.status, 200, JSON.stringify(outcome.body));
      assert.equal(await sandboxGauge(lenient), '0');
    } finally {
      await lenient.stop();
    }
  });
});
