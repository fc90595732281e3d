/**
 * SSRF with canaries: the server runs in a network namespace whose only network is loopback,
 * with private addresses on `lo` behind canary listeners and a DNS server that answers private
 * addresses for public-looking names (test/support/reliability-ssrf-sandbox.ts sets it all up).
 * Every URL encoding, IPv4-mapped and NAT64 form, userinfo trick, redirect and DNS rebinding
 * attempt goes through /v1/pdf, /v1/image and the search engines' upstream URLs; the canaries
 * must see nothing, and nothing refused is charged.
 *
 * The headless browser runs in the same namespace: `POST /v1/web` with `bypass_captcha` renders
 * pages of the fake public upstream that reach for the private addresses every way a page can
 * (test/support/reliability-ssrf-pages.ts), and Google is searched in the browser at a private
 * and at a rebinding name. Same canaries, same DNS.
 *
 * Needs root and a kernel that allows `unshare --net --mount`; skipped with the reason otherwise.
 * The browser part also needs Chromium (CHROMIUM_PATH, default /usr/bin/chromium).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { isBrowserAvailable } from '../../src/browser/index.ts';

const SANDBOX = new URL('../support/reliability-ssrf-sandbox.ts', import.meta.url).pathname;
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const PUBLIC_ADDRESS_MESSAGE = 'The url must point to a public address.';
const SEARCH_UNAVAILABLE = 'The search engine did not answer, please retry.';
/** The price of a browser page (`web_browser`, docs/web.md). */
const BROWSER_PAGE_CREDITS = 5;

function whyNot(): string | undefined {
  if (process.platform !== 'linux') return 'network namespaces are Linux only';
  if (process.getuid?.() !== 0) return 'needs root to create a network namespace (unshare --net)';
  const probe = spawnSync('unshare', ['--net', '--mount', '--', 'ip', 'link', 'set', 'lo', 'up'], { encoding: 'utf8' });
  if (probe.error) return `unshare or ip is not available: ${probe.error.message}`;
  if (probe.status !== 0) return `unshare --net --mount is refused here: ${probe.stderr.trim()}`;
  return undefined;
}

interface CanaryHit {
  protocol: 'tcp' | 'udp';
  address: string;
  port: number;
  from: string;
}
interface Result {
  name: string;
  route: string;
  part: 'fetch' | 'browser';
  control: boolean;
  expect: 'served' | 'refused' | 'either';
  status: number;
  message?: string;
  errors?: Record<string, string[]>;
  charged: number;
  canaryHits: CanaryHit[];
  guardRefusals?: number;
  reachesGuard?: boolean;
  google?: boolean;
  page?: { url: string; markers: string[] };
  ms: number;
}
interface Report {
  selfCheck: { canarySawProbe: boolean; udpCanarySawProbe: boolean; dnsAnswers: string };
  results: Result[];
  canaryHits: CanaryHit[];
  audit: unknown[];
  dnsQueries: number;
  rebindQueries: number;
  browser: boolean;
}

const skip = whyNot();
const browserSkip =
  skip ?? ((await isBrowserAvailable(CHROMIUM)) ? undefined : `Chromium is not available at ${CHROMIUM} (install the chromium package or set CHROMIUM_PATH)`);

/** One sandbox run for both tests: the browser half is in it when Chromium starts here. */
let sandbox: Promise<Report> | undefined;
function runSandbox(): Promise<Report> {
  sandbox ??= (async () => {
    const env = { ...process.env, SSRF_CHROMIUM_PATH: browserSkip === undefined ? CHROMIUM : '' };
    const child = spawn('unshare', ['--net', '--mount', '--', process.execPath, SANDBOX], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const line = stdout.split('\n').find((l) => l.startsWith('SSRF-REPORT '));
    assert.ok(line, `the sandbox reported nothing (exit ${code}):\n${stderr.slice(-3000)}`);
    return JSON.parse(line.slice('SSRF-REPORT '.length)) as Report;
  })();
  return sandbox;
}

const answered = (result: Result) => `answered ${result.status}: ${result.message ?? ''} ${JSON.stringify(result.errors ?? {})}`;

test('SSRF: the canaries on private addresses see no connection at all', { skip, timeout: 600_000 }, async (t) => {
  const report = await runSandbox();

  // Without these the test would prove nothing.
  assert.ok(report.selfCheck.canarySawProbe, 'a canary records a connection made to it');
  assert.match(report.selfCheck.dnsAnswers, /10\.0\.0\.1/, 'the fake DNS answers inside the namespace');
  const results = report.results.filter((r) => r.part === 'fetch');
  for (const control of results.filter((r) => r.control)) {
    assert.equal(control.status, 200, `${control.name}: the public upstream is reachable (${control.message})`);
  }
  assert.ok(report.rebindQueries >= 8, `the rebinding name was asked ${report.rebindQueries} times`);

  const attacks = results.filter((r) => !r.control);
  for (const attack of attacks) {
    await t.test(attack.name, () => {
      assert.deepEqual(attack.canaryHits, [], 'no connection reached a private address');
      if (attack.status === 200) {
        // Only a rebinding name caught on its public answer may be served (by the public upstream).
        assert.equal(attack.expect, 'either', answered(attack));
      } else {
        assert.ok([400, 422, 502].includes(attack.status), answered(attack));
        assert.equal(attack.charged, 0, 'a refused request costs nothing');
      }
    });
  }
  assert.deepEqual(report.canaryHits, [], 'no canary saw a connection, during or after the attacks');
  assert.deepEqual(report.audit, [], 'the ledger audit is clean');
  console.log(`# ssrf figures: ${JSON.stringify({ attacks: attacks.length, refused: attacks.filter((a) => a.status !== 200).length, canary_connections: report.canaryHits.length, dns_queries: report.dnsQueries })}`);
});

test('SSRF through the headless browser: pages and Google reach no private address', { skip: browserSkip, timeout: 600_000 }, async (t) => {
  const report = await runSandbox();
  assert.ok(report.browser, 'the sandbox ran the browser half');
  assert.ok(report.selfCheck.udpCanarySawProbe, 'a UDP canary records a datagram sent to it (WebRTC, WebTransport)');
  const results = report.results.filter((r) => r.part === 'browser');

  // The controls: public pages render in the browser inside the namespace, their scripts run, and
  // their public subresources and fetches get through the guard, which refuses nothing there.
  const controls = results.filter((r) => r.control);
  assert.ok(controls.length >= 3);
  for (const control of controls) {
    assert.equal(control.status, 200, `${control.name}: ${answered(control)}`);
    assert.match(control.page?.url ?? '', /^http:\/\/public6?\.attacker\.test\/page\/control\.html$/);
    for (const marker of ['PROBE-RAN', 'PUBLIC-FETCH-OK', 'ATTEMPTS-SETTLED']) {
      assert.ok(control.page?.markers.includes(marker), `${control.name}: the page shows ${marker} (${control.page?.markers})`);
    }
    assert.equal(control.guardRefusals, 0, `${control.name}: a public page gives the guard nothing to refuse`);
  }

  const attacks = results.filter((r) => !r.control);
  for (const attack of attacks) {
    await t.test(attack.name, () => {
      assert.deepEqual(attack.canaryHits, [], 'no connection or datagram reached a private address');
      if (attack.reachesGuard) assert.ok((attack.guardRefusals ?? 0) > 0, `the attempts reached the guard, which refused them (${attack.guardRefusals})`);
      if (attack.google) {
        // Google failed in the browser, then every other engine: nothing to answer, nothing charged.
        assert.equal(attack.status, 502, answered(attack));
        assert.equal(attack.message, SEARCH_UNAVAILABLE);
        assert.equal(attack.charged, 0, 'a failed search costs nothing');
        return;
      }
      const served = attack.status === 200;
      if (attack.expect === 'served' || (attack.expect === 'either' && served)) {
        // The main document is public: the page is answered, its private attempts simply failed.
        assert.equal(attack.status, 200, answered(attack));
        assert.match(attack.page?.url ?? '', /^http:\/\/(public|late|rebind)\.attacker\.test\//, 'the page is the public one');
        assert.equal(attack.charged, BROWSER_PAGE_CREDITS, 'a browser page costs its price');
        if (attack.expect === 'served') {
          const markers = ['PROBE-RAN', 'PUBLIC-FETCH-OK', 'ATTEMPTS-STARTED', 'ATTEMPTS-SETTLED', ...(attack.page?.url.includes('/page/websocket-') ? ['SOCKETS-DONE'] : [])];
          for (const marker of markers) {
            assert.ok(attack.page?.markers.includes(marker), `the page's scripts ran to the end: ${marker} (${attack.page?.markers})`);
          }
        }
      } else {
        // The main frame at a private address (first URL, redirect, navigation): the documented 422.
        assert.equal(attack.status, 422, answered(attack));
        assert.deepEqual(attack.errors, { url: [PUBLIC_ADDRESS_MESSAGE] });
        assert.equal(attack.charged, 0, 'a refused request costs nothing');
      }
    });
  }
  assert.deepEqual(report.canaryHits, [], 'no canary saw a connection, during or after the attacks');
  assert.deepEqual(report.audit, [], 'the ledger audit is clean');
  const workers = results.find((r) => r.name.includes('workers'));
  assert.ok(workers?.page?.markers.includes('dedicated WORKER-DONE'), 'the dedicated worker ran its attempts to the end');
  console.log(
    `# ssrf browser figures: ${JSON.stringify({
      attacks: attacks.length,
      pages_served: attacks.filter((a) => a.status === 200).length,
      refused: attacks.filter((a) => a.status !== 200).length,
      guard_refusals: results.reduce((sum, r) => sum + (r.guardRefusals ?? 0), 0),
      canary_connections: report.canaryHits.length,
      seconds: Math.round(results.reduce((sum, r) => sum + r.ms, 0) / 1000),
    })}`,
  );
});
