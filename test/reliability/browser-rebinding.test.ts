/**
 * DNS rebinding through PROXY_URL, in browser mode (the outbound client's own case is in
 * smaller-findings.test.ts). The browser's guard checked a name and then asked the operator's
 * proxy for the name, which the proxy resolved again: a rebinding name answered public to the
 * guard and loopback to the proxy, and the page reached a canary on loopback. Now the guard asks
 * the proxy for the checked address (`CONNECT ip:port`), as the outbound client does.
 *
 * A fake DNS on loopback answers the public address first and 127.0.0.1 after; a `proxy-chain`
 * proxy resolves names through the same DNS. The proxy never dials the public address: it
 * refuses every tunnel to it after recording it, so nothing leaves the machine.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestError, Server as ForwardProxy } from 'proxy-chain';
import { createBrowserPool, isBrowserAvailable } from '../../src/browser/index.ts';
import { REBIND_NAME as NAME, startCanary, startRebindingDns } from '../support/rebinding-dns.ts';
import { TEST_BROWSER_SANDBOX } from '../support/service.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const skip = (await isBrowserAvailable(CHROMIUM)) ? false : `Chromium is not available at ${CHROMIUM} (install the chromium package or set CHROMIUM_PATH)`;

/** Public by the address rule; never dialled (the proxy refuses tunnels to it). */
const PUBLIC = '93.184.216.34';

describe('DNS rebinding through PROXY_URL, in the browser', { skip }, () => {
  for (const scheme of ['http', 'https'] as const) {
    test(`${scheme}: the page's proxy is asked for the checked address, never the name, and the canary sees nothing`, async () => {
      const canary = await startCanary();
      const dns = await startRebindingDns(PUBLIC);
      const asked: string[] = [];
      const proxy = new ForwardProxy({
        port: 0,
        host: '127.0.0.1',
        prepareRequestFunction: ({ hostname, port }) => {
          asked.push(`${hostname}:${port}`);
          if (hostname === PUBLIC) throw new RequestError('This test proxy dials no public address', 502);
          return { dnsLookup: dns.lookup as never };
        },
      });
      await proxy.listen();
      const pool = createBrowserPool({
        executablePath: CHROMIUM,
        navigationTimeoutMs: 15_000,
        allowHosts: [],
        lookup: dns.lookup,
        proxyUrl: `http://127.0.0.1:${proxy.port}`,
        idleTimeoutMs: 0,
        sandbox: TEST_BROWSER_SANDBOX,
      });
      try {
        const outcome = await pool.fetchPage({ url: `${scheme}://${NAME}:${canary.port}/` }).then(
          (page) => `answered ${page.status}`,
          (error: Error & { code?: string }) => error.code,
        );
        assert.notEqual(outcome, 'answered 200');
        assert.equal(canary.connections(), 0, 'the canary was reached through the proxy');
        assert.ok(asked.length >= 1, 'the proxy was asked');
        assert.deepEqual([...new Set(asked)], [`${PUBLIC}:${canary.port}`]);
        assert.ok(dns.queries() >= 1, 'the name was resolved here');
      } finally {
        await pool.close();
        await proxy.close(true);
        dns.close();
        await canary.close();
      }
    });
  }
});
