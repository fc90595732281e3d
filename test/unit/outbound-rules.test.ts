import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { deflateSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { readBody } from '../../src/outbound/body.ts';
import { OUTBOUND_DEFAULTS, outboundOptionsFromEnv } from '../../src/outbound/config.ts';
import { BodyTooLargeError } from '../../src/outbound/errors.ts';
import { proxyUrlForCountry } from '../../src/outbound/proxy.ts';
import { nextHop, type Hop } from '../../src/outbound/redirect.ts';
import { OutboundError } from '../../src/outbound/types.ts';
import { createHostExemptions, HostExemptions, parseHttpUrl } from '../../src/outbound/url-policy.ts';
import { checkedAddresses, isPrivateUseName } from '../../src/outbound/resolve.ts';
import { OwnListeners } from '../../src/outbound/own-listeners.ts';

describe('parseHttpUrl', () => {
  test('canonicalises numeric hosts before any check', () => {
    for (const input of ['http://2130706433/', 'http://0x7f.1/', 'http://0177.0.0.1/', 'http://127.1/', 'http://017700000001/']) {
      assert.equal(parseHttpUrl(input).hostname, '127.0.0.1', input);
    }
    assert.equal(parseHttpUrl('http://[0:0:0:0:0:ffff:7f00:1]/').hostname, '[::ffff:7f00:1]');
  });

  test('refuses other schemes and unparseable input with invalid_url', () => {
    for (const input of ['file:///etc/passwd', 'ftp://a/', 'mailto:a@b.c', 'http//missing-colon', '']) {
      assert.throws(() => parseHttpUrl(input), (error: unknown) => error instanceof OutboundError && error.code === 'invalid_url', input);
    }
  });

  test('resolves a relative Location against the current URL', () => {
    assert.equal(parseHttpUrl('../b?x=1', new URL('https://example.com/a/c/d')).href, 'https://example.com/a/b?x=1');
  });
});

describe('allowHosts exemptions', () => {
  const isExempt = createHostExemptions(['127.0.0.1', ' LocalHost ', '[::1]', 'internal.example', '']);

  test('match by canonical name or IP literal', () => {
    assert.equal(isExempt('127.0.0.1'), true);
    assert.equal(isExempt('localhost'), true);
    assert.equal(isExempt('::1'), true);
    assert.equal(isExempt('[::1]'), true);
    assert.equal(isExempt('INTERNAL.example'), true);
  });

  test('do not stretch to other addresses or names', () => {
    assert.equal(isExempt('127.0.0.2'), false);
    assert.equal(isExempt('sub.internal.example'), false);
    assert.equal(isExempt('::ffff:127.0.0.1'), false);
  });

  test('numeric spellings in the list are canonicalised too', () => {
    assert.equal(createHostExemptions(['0x7f.1'])('127.0.0.1'), true);
    assert.equal(createHostExemptions(['0:0:0:0:0:0:0:1'])('::1'), true);
  });

  test('entries with a path, a bad port or credentials are a configuration error', () => {
    for (const entry of ['example.com/path', 'localhost:0', 'localhost:65536', 'localhost:http', 'user@localhost', '::1:8080:x']) {
      assert.throws(() => new HostExemptions([entry]), TypeError, entry);
    }
  });

  test('a host:port entry exempts that port only; a bare host every port', () => {
    const exemptions = new HostExemptions(['127.0.0.1:8080', '[::1]:9000', 'fake.test:80', 'every.test']);
    assert.equal(exemptions.covers('127.0.0.1', 8080), true);
    assert.equal(exemptions.covers('127.0.0.1', 9090), false);
    assert.equal(exemptions.covers('[::1]', 9000), true);
    assert.equal(exemptions.covers('::1', 9001), false);
    assert.equal(exemptions.covers('FAKE.test', 80), true);
    assert.equal(exemptions.covers('every.test', 1), true);
    assert.equal(exemptions.coversSomePort('fake.test'), true);
    assert.equal(exemptions.coversEveryPort('fake.test'), false);
    // Where the port is not known, only bare hosts exempt.
    assert.equal(createHostExemptions(['127.0.0.1:8080'])('127.0.0.1'), false);
    assert.equal(createHostExemptions(['127.0.0.1:8080', 'every.test'])('every.test'), true);
  });
});

describe("the process's own listeners", () => {
  test('are refused on their port, whatever address reaches them', () => {
    const listeners = new OwnListeners();
    const remove = listeners.add([{ address: '127.0.0.1', port: 4000 }, { address: '::', port: 4001 }]);
    assert.equal(listeners.includes('127.0.0.1', 4000), true);
    assert.equal(listeners.includes('::ffff:127.0.0.1', 4000), true);
    assert.equal(listeners.includes('0.0.0.0', 4000), true);
    assert.equal(listeners.includes('127.0.0.1', 4002), false);
    assert.equal(listeners.includes('127.0.0.2', 4000), false);
    // A wildcard listener answers on loopback and on every interface address.
    assert.equal(listeners.includes('127.0.0.1', 4001), true);
    assert.equal(listeners.includes('::1', 4001), true);
    assert.equal(listeners.includes('93.184.216.34', 4001), false);
    remove();
    assert.equal(listeners.includes('127.0.0.1', 4000), false);
  });

  test('are refused even when the operator exempts their host', async () => {
    const listeners = new OwnListeners();
    listeners.add([{ address: '127.0.0.1', port: 4000 }]);
    const rules = { exemptions: new HostExemptions(['127.0.0.1']), ownListeners: listeners };
    const lookup = (() => assert.fail('no look-up for an IP literal')) as never;
    await assert.rejects(checkedAddresses('127.0.0.1', 4000, lookup, rules), /own listener/);
    assert.deepEqual(await checkedAddresses('127.0.0.1', 4001, lookup, rules), [{ address: '127.0.0.1', family: 4 }]);
  });
});

describe('redirect hop rules', () => {
  const post: Hop = {
    url: new URL('https://a.example/form'),
    method: 'POST',
    headers: { 'content-type': 'text/plain', authorization: 'Bearer t', cookie: 'c=1', 'x-auth-token': 't', 'x-api-key': 'k', accept: '*/*', host: 'a.example' },
    body: 'payload',
  };

  test('303 switches to GET and drops the body and its headers', () => {
    const next = nextHop(post, 303, '/done');
    assert.equal(next.method, 'GET');
    assert.equal(next.body, undefined);
    assert.equal(next.headers['content-type'], undefined);
    assert.equal(next.headers.authorization, 'Bearer t', 'same origin keeps credentials');
  });

  test('303 keeps HEAD as HEAD', () => {
    assert.equal(nextHop({ ...post, method: 'HEAD', body: undefined }, 303, '/x').method, 'HEAD');
  });

  test('301 and 302 switch POST to GET, but not PUT', () => {
    assert.equal(nextHop(post, 301, '/x').method, 'GET');
    assert.equal(nextHop(post, 302, '/x').method, 'GET');
    const put = nextHop({ ...post, method: 'PUT' }, 302, '/x');
    assert.equal(put.method, 'PUT');
    assert.equal(put.body, 'payload');
  });

  test('307 and 308 keep method and body', () => {
    for (const status of [307, 308]) {
      const next = nextHop(post, status, '/x');
      assert.equal(next.method, 'POST');
      assert.equal(next.body, 'payload');
      assert.equal(next.headers['content-type'], 'text/plain');
    }
  });

  test('a cross-origin hop drops credential-like and origin-bound headers', () => {
    for (const location of ['https://b.example/', 'http://a.example/form', 'https://a.example:8443/']) {
      const next = nextHop(post, 307, location);
      assert.deepEqual(Object.keys(next.headers).sort(), ['accept', 'content-type'], location);
    }
  });

  test('a Location that is not http(s) is invalid_url', () => {
    assert.throws(() => nextHop(post, 302, 'file:///etc/passwd'), (error: unknown) => error instanceof OutboundError && error.code === 'invalid_url');
  });
});

describe('proxy username for a country', () => {
  const proxy = new URL('http://user:p%40ss@proxy.example:3128');

  test('fills the default template', () => {
    const url = proxyUrlForCountry(proxy, '{username}-country-{country}', 'de');
    assert.equal(decodeURIComponent(url.username), 'user-country-de');
    assert.equal(url.password, 'p%40ss', 'the password is untouched');
    assert.equal(url.host, 'proxy.example:3128');
  });

  test('fills a custom template and keeps special characters encoded', () => {
    const url = proxyUrlForCountry(new URL('http://a%3Ab@proxy.example'), 'cust-{username}-cc-{country}', 'US');
    assert.equal(decodeURIComponent(url.username), 'cust-a:b-cc-US');
  });

  test('refuses a country that could forge credentials', () => {
    for (const country of ['de:secret', 'de@evil', '', 'a b']) {
      assert.throws(() => proxyUrlForCountry(proxy, '{username}-{country}', country), TypeError, country);
    }
  });
});

describe('environment', () => {
  test('defaults', () => {
    const options = outboundOptionsFromEnv({});
    assert.deepEqual(options.allowHosts, []);
    assert.equal(options.proxyUrl, undefined);
    assert.equal(options.timeoutMs, OUTBOUND_DEFAULTS.timeoutMs);
    assert.equal(options.connectTimeoutMs, 10_000);
    assert.equal(options.proxyCountryUsername, '{username}-country-{country}');
  });

  test('reads every variable', () => {
    const options = outboundOptionsFromEnv({
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1, localhost,,',
      PROXY_URL: 'http://u:p@proxy:3128',
      PROXY_COUNTRY_USERNAME: '{username}_{country}',
      OUTBOUND_TIMEOUT_MS: '5000',
      OUTBOUND_CONNECT_TIMEOUT_MS: '1000',
      OUTBOUND_HEADERS_TIMEOUT_MS: '2000',
      OUTBOUND_USER_AGENT: 'custom',
    });
    assert.deepEqual(options.allowHosts, ['127.0.0.1', 'localhost']);
    assert.equal(options.proxyUrl, 'http://u:p@proxy:3128');
    assert.equal(options.proxyCountryUsername, '{username}_{country}');
    assert.deepEqual([options.timeoutMs, options.connectTimeoutMs, options.headersTimeoutMs], [5000, 1000, 2000]);
    assert.equal(options.userAgent, 'custom');
  });

  test('a malformed number fails loudly', () => {
    assert.throws(() => outboundOptionsFromEnv({ OUTBOUND_TIMEOUT_MS: '30s' }), /OUTBOUND_TIMEOUT_MS/);
    assert.throws(() => outboundOptionsFromEnv({ OUTBOUND_CONNECT_TIMEOUT_MS: '0' }), /OUTBOUND_CONNECT_TIMEOUT_MS/);
  });
});

describe('body decoding', () => {
  const text = Buffer.from('decoded text '.repeat(200));
  const streamOf = (data: Buffer, chunkSize = 97) => {
    const parts: Buffer[] = [];
    for (let i = 0; i < data.length; i += chunkSize) parts.push(data.subarray(i, i + chunkSize));
    return Readable.from(parts);
  };

  test('zlib-wrapped deflate and zstd decode', async () => {
    assert.deepEqual((await readBody(streamOf(deflateSync(text)), 'deflate', 1e6)).body, text);
    assert.deepEqual((await readBody(streamOf(zstdCompressSync(text)), 'zstd', 1e6)).body, text);
  });

  test('stacked codings are undone outermost first', async () => {
    const twice = gzipSync(deflateSync(text));
    const result = await readBody(streamOf(twice), 'deflate, gzip', 1e6);
    assert.deepEqual(result.body, text);
  });

  test('an unknown coding leaves the body as received', async () => {
    const result = await readBody(streamOf(Buffer.from('raw')), 'compress', 1e6);
    assert.equal(result.decoded, false);
    assert.equal(result.body.toString(), 'raw');
  });

  test('an empty coded body is empty, not an error', async () => {
    const result = await readBody(Readable.from([]), 'gzip', 10);
    assert.equal(result.body.length, 0);
  });

  test('a corrupt coded body is an error', async () => {
    await assert.rejects(readBody(streamOf(Buffer.from('not gzip at all')), 'gzip', 1e6));
  });

  test('the cap counts decoded bytes', async () => {
    await assert.rejects(readBody(streamOf(gzipSync(text)), 'gzip', text.length - 1), BodyTooLargeError);
    assert.equal((await readBody(streamOf(gzipSync(text)), 'gzip', text.length)).body.length, text.length);
  });

  test('an announced identity length over the cap is refused unread', async () => {
    let pulled = false;
    const stream = new Readable({ read() { pulled = true; this.push(null); } });
    await assert.rejects(readBody(stream, undefined, 10, 11), BodyTooLargeError);
    assert.equal(pulled, false);
  });
});

describe('private-use names', () => {
  test('are recognised by suffix, any case, with a trailing dot', () => {
    for (const name of ['localhost', 'a.localhost', 'metadata.google.internal', 'printer.local', 'nas.home.arpa', 'localhost.localdomain', 'router.lan', 'METADATA.GOOGLE.INTERNAL.']) {
      assert.equal(isPrivateUseName(name), true, name);
    }
    for (const name of ['example.com', 'internal.example', 'localhost.example.com', 'corp.example']) {
      assert.equal(isPrivateUseName(name), false, name);
    }
  });

  test('are refused before any look-up, whatever a resolver would answer', async () => {
    let lookups = 0;
    const lookup = ((_hostname: string, _options: unknown, callback: (error: null, address: Array<{ address: string; family: number }>) => void) => {
      lookups++;
      callback(null, [{ address: '93.184.216.34', family: 4 }]);
    }) as never;
    const rules = (allowHosts: string[]) => ({ exemptions: new HostExemptions(allowHosts), ownListeners: new OwnListeners() });
    await assert.rejects(checkedAddresses('metadata.google.internal', 80, lookup, rules([])), /private-use name/);
    await checkedAddresses('example.com', 80, lookup, rules([]));
    assert.equal(lookups, 1);
    // The operator's exemption still wins (OUTBOUND_ALLOW_HOSTS=localhost for tests).
    await checkedAddresses('localhost', 80, lookup, rules(['localhost']));
  });
});
