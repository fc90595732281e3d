/**
 * SSRF with canaries: the server runs in a network namespace whose only network is loopback,
 * with private addresses on `lo` behind canary listeners and a DNS server that answers private
 * addresses for public-looking names (test/support/reliability-ssrf-sandbox.ts sets it all up).
 * Every URL encoding, IPv4-mapped and NAT64 form, userinfo trick, redirect and DNS rebinding
 * attempt goes through /v1/pdf, /v1/image and the search engines' upstream URLs; the canaries
 * must see nothing, and nothing refused is charged.
 *
 * Needs root and a kernel that allows `unshare --net --mount`; skipped with the reason otherwise.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';

const SANDBOX = new URL('../support/reliability-ssrf-sandbox.ts', import.meta.url).pathname;

function whyNot(): string | undefined {
  if (process.platform !== 'linux') return 'network namespaces are Linux only';
  if (process.getuid?.() !== 0) return 'needs root to create a network namespace (unshare --net)';
  const probe = spawnSync('unshare', ['--net', '--mount', '--', 'ip', 'link', 'set', 'lo', 'up'], { encoding: 'utf8' });
  if (probe.error) return `unshare or ip is not available: ${probe.error.message}`;
  if (probe.status !== 0) return `unshare --net --mount is refused here: ${probe.stderr.trim()}`;
  return undefined;
}

interface CanaryHit {
  address: string;
  port: number;
  from: string;
}
interface Report {
  selfCheck: { canarySawProbe: boolean; dnsAnswers: string };
  results: Array<{ name: string; route: string; control: boolean; status: number; message?: string; charged: number; canaryHits: CanaryHit[] }>;
  canaryHits: CanaryHit[];
  audit: unknown[];
  dnsQueries: number;
  rebindQueries: number;
}

const skip = whyNot();

test('SSRF: the canaries on private addresses see no connection at all', { skip, timeout: 300_000 }, async (t) => {
  const child = spawn('unshare', ['--net', '--mount', '--', process.execPath, SANDBOX], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const line = stdout.split('\n').find((l) => l.startsWith('SSRF-REPORT '));
  assert.ok(line, `the sandbox reported nothing (exit ${code}):\n${stderr.slice(-3000)}`);
  const report = JSON.parse(line.slice('SSRF-REPORT '.length)) as Report;

  // Without these the test would prove nothing.
  assert.ok(report.selfCheck.canarySawProbe, 'a canary records a connection made to it');
  assert.match(report.selfCheck.dnsAnswers, /10\.0\.0\.1/, 'the fake DNS answers inside the namespace');
  for (const control of report.results.filter((r) => r.control)) {
    assert.equal(control.status, 200, `${control.name}: the public upstream is reachable (${control.message})`);
  }
  assert.ok(report.rebindQueries >= 8, `the rebinding name was asked ${report.rebindQueries} times`);

  const attacks = report.results.filter((r) => !r.control);
  for (const attack of attacks) {
    await t.test(attack.name, () => {
      assert.deepEqual(attack.canaryHits, [], 'no connection reached a private address');
      if (attack.status === 200) {
        // Only a rebinding name caught on its public answer may be served (by the public upstream).
        assert.match(attack.name, /rebind/);
      } else {
        assert.ok([400, 422, 502].includes(attack.status), `answered ${attack.status}: ${attack.message}`);
        assert.equal(attack.charged, 0, 'a refused request costs nothing');
      }
    });
  }
  assert.deepEqual(report.canaryHits, [], 'no canary saw a connection, during or after the attacks');
  assert.deepEqual(report.audit, [], 'the ledger audit is clean');
  console.log(`# ssrf figures: ${JSON.stringify({ attacks: attacks.length, refused: attacks.filter((a) => a.status !== 200).length, canary_connections: report.canaryHits.length, dns_queries: report.dnsQueries })}`);
});
