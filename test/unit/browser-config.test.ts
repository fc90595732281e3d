import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserPoolOptionsFromEnv } from '../../src/browser/config.ts';

describe('browser pool settings from the environment', () => {
  test('defaults', () => {
    const options = browserPoolOptionsFromEnv({});
    assert.equal(options.executablePath, '/usr/bin/chromium');
    assert.equal(options.maxBrowsers, 1);
    assert.equal(options.maxPagesPerBrowser, 11);
    assert.equal(options.navigationTimeoutMs, 20_000);
    assert.deepEqual(options.allowHosts, []);
    assert.equal(options.proxyUrl, undefined);
    assert.equal(options.pageMemoryMb, 640);
    assert.equal(options.sandbox, 'auto');
  });

  test('BROWSER_SANDBOX is auto, on or off, any case; anything else fails at start-up', () => {
    assert.equal(browserPoolOptionsFromEnv({ BROWSER_SANDBOX: 'on' }).sandbox, 'on');
    assert.equal(browserPoolOptionsFromEnv({ BROWSER_SANDBOX: 'OFF' }).sandbox, 'off');
    assert.equal(browserPoolOptionsFromEnv({ BROWSER_SANDBOX: ' auto ' }).sandbox, 'auto');
    assert.equal(browserPoolOptionsFromEnv({ BROWSER_SANDBOX: '' }).sandbox, 'auto');
    for (const value of ['true', 'false', 'no', 'yes', 'root']) {
      assert.throws(() => browserPoolOptionsFromEnv({ BROWSER_SANDBOX: value }), /BROWSER_SANDBOX must be one of auto, on, off/);
    }
  });

  test('BROWSER_PAGE_MEMORY_MB sets the renderer limit, from 256 MB up', () => {
    assert.equal(browserPoolOptionsFromEnv({ BROWSER_PAGE_MEMORY_MB: '1024' }).pageMemoryMb, 1024);
    assert.throws(() => browserPoolOptionsFromEnv({ BROWSER_PAGE_MEMORY_MB: '100' }), /BROWSER_PAGE_MEMORY_MB/);
    assert.throws(() => browserPoolOptionsFromEnv({ BROWSER_PAGE_MEMORY_MB: 'lots' }), /BROWSER_PAGE_MEMORY_MB/);
  });

  test('reads CHROMIUM_PATH, BROWSER_* and the shared outbound settings', () => {
    const options = browserPoolOptionsFromEnv({
      CHROMIUM_PATH: '/opt/chromium/chrome',
      BROWSER_MAX_BROWSERS: '2',
      BROWSER_MAX_PAGES: '3',
      BROWSER_TIMEOUT_MS: '15000',
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1, mirror.internal',
      PROXY_URL: 'http://user:pass@proxy:3128',
      PROXY_COUNTRY_USERNAME: '{username}-cc-{country}',
    });
    assert.equal(options.executablePath, '/opt/chromium/chrome');
    assert.equal(options.maxBrowsers, 2);
    assert.equal(options.maxPagesPerBrowser, 3);
    assert.equal(options.navigationTimeoutMs, 15_000);
    assert.deepEqual(options.allowHosts, ['127.0.0.1', 'mirror.internal']);
    assert.equal(options.proxyUrl, 'http://user:pass@proxy:3128');
    assert.equal(options.proxyCountryUsername, '{username}-cc-{country}');
  });

  test('a malformed number fails at start-up', () => {
    assert.throws(() => browserPoolOptionsFromEnv({ BROWSER_MAX_PAGES: 'four' }), /BROWSER_MAX_PAGES/);
    assert.throws(() => browserPoolOptionsFromEnv({ BROWSER_TIMEOUT_MS: '0' }), /BROWSER_TIMEOUT_MS/);
  });
});
