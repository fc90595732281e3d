/**
 * Google through the shared headless browser: the fake Google on loopback builds its results
 * with JavaScript, so only a JavaScript-capable client sees them. Skipped without Chromium.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { bingFixtures, fixtureResults, googleFixtures } from '../support/search-fixtures.ts';
import { isBrowserAvailable } from '../../src/browser/index.ts';

const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const skip = (await isBrowserAvailable(chromium)) ? false : `Chromium is not available at ${chromium} (install the chromium package or set CHROMIUM_PATH)`;

let service: TestService;
let upstream: FakeUpstream;

before(async () => {
  if (skip) return;
  upstream = await startFakeUpstream();
  upstream.handle((hit) => {
    if (hit.path.startsWith('/bing/')) return { body: bingFixtures.results(fixtureResults('bing', 10)).body };
    // The results page arrives as a script that writes it: a plain HTTP client sees an empty shell.
    // Asked for 100 results, the fake answers 99, as Google's real pages of 100 often do.
    const count = hit.query.get('num') === '100' ? 99 : 10;
    const html = googleFixtures.results(fixtureResults('google', count)).body;
    return {
      body: `<!DOCTYPE html><html><head><title>Google Search</title></head><body><div id="shell"></div>
<script>document.open(); document.write(${JSON.stringify(html).replace(/</g, '\\u003c')}); document.close();</script></body></html>`,
    };
  });
  service = await startTestService({
    SEARCH_ENGINES: 'google,bing',
    UPSTREAM_GOOGLE_URL: `${upstream.url}/google`,
    UPSTREAM_BING_URL: `${upstream.url}/bing`,
    SEARCH_TIMEOUT_MS: '20000',
  });
});
after(async () => {
  await service?.close();
  await upstream?.close();
});

test('Google is fetched through the headless browser and parsed after its scripts ran', { skip, timeout: 60_000 }, async () => {
  const user = await service.user({ scraping: 10 });
  const r = await service.call('POST', '/v1/engine-search', { token: user.token, body: { query: 'rendered by script' } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.response.length, 10);
  assert.equal(r.body.response[0].title, 'google result 1');
  assert.equal(r.body.response[0].url, 'https://google.example/docs/1?ref=a&b=c');
  const googleHits = upstream.hits.filter((h) => h.path.startsWith('/google/'));
  assert.ok(googleHits.length >= 1);
  assert.match(String(googleHits[0].headers['sec-ch-ua'] ?? googleHits[0].headers['user-agent']), /Chrom/);
  assert.equal(upstream.hits.filter((h) => h.path.startsWith('/bing/')).length, 0, 'Bing was not needed');
  assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 7);
});

test('Google at per_page 100 is one render of num=100, and its 99 results come back', { skip, timeout: 120_000 }, async () => {
  const user = await service.user({ scraping: 50 });
  upstream.hits.length = 0;
  const r = await service.call('POST', '/v1/engine-search', { token: user.token, body: { query: 'one large page', per_page: 100 } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.response.length, 99);
  assert.equal(r.body.response[98].title, 'google result 99');
  const googleHits = upstream.hits.filter((h) => h.path.startsWith('/google/') && h.query.get('q') === 'one large page');
  assert.equal(googleHits.length, 1, 'one render, not ten');
  assert.equal(upstream.hits.filter((h) => h.path.startsWith('/bing/')).length, 0, 'Bing was not needed');
});
