/** URLs of one site (src/adapters/site/urls.ts): canonical forms, the site's scope, path patterns. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalUrl, compilePathPatterns, pathFilter, siteScope, type PathPatterns } from '../../src/adapters/site/urls.ts';
import { MAX_URL_LENGTH } from '../../src/core/limits.ts';

describe('canonicalUrl', () => {
  test('a run of 240,000 slashes is read in linear time; a URL over 8 KB is no URL to fetch', () => {
    // Issue 33: `/\/+$/` on this path retried from every slash, 41 s of a stalled server.
    const slashes = canonicalUrl(`http://example.com/${'/'.repeat(240_000)}x`);
    assert.equal(slashes, null, 'longer than MAX_URL_LENGTH');
    const trailing = canonicalUrl(`http://example.com/a${'/'.repeat(8_000)}`);
    assert.deepEqual(trailing && { key: trailing.key, length: trailing.url.length }, { key: 'http://example.com/a', length: 8_020 });
    assert.equal(canonicalUrl(`http://example.com/${'a'.repeat(MAX_URL_LENGTH)}`), null);
    assert.equal(canonicalUrl(`http://example.com/${'a'.repeat(MAX_URL_LENGTH - 'http://example.com/'.length)}`)?.url.length, MAX_URL_LENGTH);
    assert.equal(canonicalUrl('http://example.com//')?.key, 'http://example.com/');
  });

  test('drops the fragment and the default port, lowercases scheme and host, keeps the path as given', () => {
    assert.deepEqual(canonicalUrl('HTTPS://Example.COM:443/Docs/Page#intro'), { url: 'https://example.com/Docs/Page', key: 'https://example.com/Docs/Page' });
    assert.equal(canonicalUrl('http://example.com:80/a')?.url, 'http://example.com/a');
    assert.equal(canonicalUrl('http://example.com:8080/a')?.url, 'http://example.com:8080/a');
    assert.equal(canonicalUrl('https://example.com')?.url, 'https://example.com/');
  });

  test('removes tracking parameters, any case, and an emptied query', () => {
    const tracked = 'https://example.com/p?utm_source=x&UTM_Medium=y&gclid=1&dclid=2&fbclid=3&msclkid=4&yclid=5&igshid=6&mc_cid=7&mc_eid=8&_ga=9&_gl=10&ref_src=11';
    assert.equal(canonicalUrl(tracked)?.url, 'https://example.com/p');
    assert.equal(canonicalUrl('https://example.com/p?id=7&utm_campaign=spring')?.url, 'https://example.com/p?id=7');
    assert.equal(canonicalUrl('https://example.com/p?')?.url, 'https://example.com/p');
    // Names that only look alike stay.
    assert.equal(canonicalUrl('https://example.com/p?utm=1&ref=2&gclidx=3')?.url, 'https://example.com/p?gclidx=3&ref=2&utm=1');
  });

  test('sorts the query by name, stably, keeping each pair byte for byte', () => {
    assert.equal(canonicalUrl('https://example.com/s?b=1&a=2&c=3&a=1')?.url, 'https://example.com/s?a=2&a=1&b=1&c=3');
    assert.equal(canonicalUrl('https://example.com/s?q=a+b&flag&&p=%2F')?.url, 'https://example.com/s?flag&p=%2F&q=a+b');
    assert.equal(canonicalUrl('https://example.com/s?z=1&a=2')?.key, canonicalUrl('https://example.com/s?a=2&z=1')?.key);
  });

  test('the key merges a trailing slash on a non-root path, not http and https', () => {
    const slash = canonicalUrl('https://example.com/a/');
    const bare = canonicalUrl('https://example.com/a');
    assert.equal(slash?.url, 'https://example.com/a/');
    assert.equal(slash?.key, bare?.key);
    assert.equal(canonicalUrl('https://example.com/a/?x=1')?.key, 'https://example.com/a?x=1');
    assert.equal(canonicalUrl('https://example.com/')?.key, 'https://example.com/');
    assert.notEqual(canonicalUrl('http://example.com/a')?.key, bare?.key);
  });

  test('relative URLs resolve against the base', () => {
    assert.equal(canonicalUrl('../b?utm_source=x#top', 'https://example.com/a/c/d')?.url, 'https://example.com/a/b');
    assert.equal(canonicalUrl('//cdn.example.com/x', 'https://example.com/')?.url, 'https://cdn.example.com/x');
  });

  test('null for what is not an http(s) URL, or carries credentials', () => {
    for (const raw of ['mailto:a@example.com', 'javascript:alert(1)', 'ftp://example.com/f', 'not a url', '', 'https://user:pass@example.com/', 'https://user@example.com/', 'data:text/html,hi']) {
      assert.equal(canonicalUrl(raw), null, raw);
    }
    assert.equal(canonicalUrl('/relative'), null);
  });

  test('idempotent: the canonical URL of a canonical URL is itself, with the same key', () => {
    const tracking = fc.constantFrom('utm_source=a', 'gclid=b', 'fbclid=c', '_ga=1', 'x=1', 'a=', 'b');
    const raw = fc.tuple(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.array(tracking, { maxLength: 4 })).map(([url, extra]) =>
      extra.length === 0 ? url : `${url}${url.includes('?') ? '&' : '?'}${extra.join('&')}`,
    );
    fc.assert(
      fc.property(raw, fc.boolean(), (url, trailingSlash) => {
        const once = canonicalUrl(trailingSlash ? url.replace(/(\?|#|$)/, '/$1') : url);
        if (once === null) return;
        const twice = canonicalUrl(once.url);
        assert.deepEqual(twice, once);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('siteScope', () => {
  const url = (raw: string) => new URL(raw);

  test('the same host, www. or not, any path, either scheme on default ports', () => {
    const inSite = siteScope('https://www.example.com/start', { allowSubdomains: false });
    for (const raw of ['https://www.example.com/a', 'https://example.com/b?c=1', 'http://example.com/', 'https://EXAMPLE.com./x']) assert.equal(inSite(url(raw)), true, raw);
    for (const raw of ['https://blog.example.com/', 'https://notexample.com/', 'https://example.com.evil.test/', 'https://example.org/', 'ftp://example.com/']) {
      assert.equal(inSite(url(raw)), false, raw);
    }
    assert.equal(siteScope('https://example.com/', { allowSubdomains: false })(url('https://www.example.com/x')), true);
  });

  test('with subdomains: anything under the registrable domain, never a neighbour on a private suffix', () => {
    const inSite = siteScope('https://docs.example.co.uk/', { allowSubdomains: true });
    for (const raw of ['https://example.co.uk/', 'https://a.b.example.co.uk/x', 'https://www.example.co.uk/']) assert.equal(inSite(url(raw)), true, raw);
    for (const raw of ['https://other.co.uk/', 'https://co.uk/', 'https://example.com/']) assert.equal(inSite(url(raw)), false, raw);
    const pages = siteScope('https://alice.github.io/blog', { allowSubdomains: true });
    assert.equal(pages(url('https://docs.alice.github.io/')), true);
    assert.equal(pages(url('https://bob.github.io/')), false);
    assert.equal(siteScope('https://docs.example.com/', { allowSubdomains: false })(url('https://example.com/')), false);
  });

  test('a different port is a different site', () => {
    const inSite = siteScope('http://example.com:8080/', { allowSubdomains: true });
    assert.equal(inSite(url('http://example.com:8080/a')), true);
    assert.equal(inSite(url('http://example.com/a')), false);
    assert.equal(inSite(url('http://www.example.com:9090/a')), false);
    assert.equal(siteScope('https://example.com/', { allowSubdomains: false })(url('https://example.com:8443/')), false);
  });

  test('an IP-literal start URL matches only itself', () => {
    const v4 = siteScope('http://93.184.215.14/', { allowSubdomains: true });
    assert.equal(v4(url('http://93.184.215.14/a')), true);
    assert.equal(v4(url('http://93.184.215.15/a')), false);
    assert.equal(v4(url('http://93.184.215.14:81/a')), false);
    const v6 = siteScope('http://[2001:db8::1]:8080/', { allowSubdomains: true });
    assert.equal(v6(url('http://[2001:db8::1]:8080/x')), true);
    assert.equal(v6(url('http://[2001:db8::2]:8080/x')), false);
  });
});

describe('compilePathPatterns', () => {
  const compiled = (patterns: unknown): PathPatterns => {
    const result = compilePathPatterns(patterns);
    assert.ok(result.ok);
    return result;
  };

  test('absent is an empty list; strings compile, matched against the path only', () => {
    assert.equal(compiled(undefined).patterns.length, 0);
    assert.equal(compiled(null).patterns.length, 0);
    const blog = compiled(['^/blog/', '\\.html$']);
    assert.equal(blog.test(new URL('https://example.com/blog/post')), true);
    assert.equal(blog.test(new URL('https://example.com/about.html?x=1')), true);
    assert.equal(blog.test(new URL('https://example.com/shop?page=/blog/')), false, 'the query is not the path');
    assert.equal(blog.test(new URL('https://blog.example.com/')), false, 'the host is not the path');
  });

  test('the first invalid pattern is reported by index, with a message for a 422', () => {
    const result = compilePathPatterns(['^/ok', '(unclosed', '[also']);
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.equal(result.index, 1);
    assert.match(result.message('include paths'), /^The include paths\.1 must be a valid regular expression in RE2 syntax \(.+\)\.$/);
  });

  test('RE2: patterns that backtrack exponentially elsewhere match in linear time; look-around is refused with the reason', () => {
    // Issue 33: these were accepted and a link of 29 a's held the event loop for 29 s.
    const hostile = compiled(['^/(a|a)*$', '^/a*a*a*a*a*a*a*a*b$', '^/(\\w|\\d)*$', '(x|x|x)*y']);
    const path = (p: string) => new URL(`https://example.com${p}`);
    // A backtracking engine would not finish these in a lifetime; the test finishing is the proof.
    assert.equal(hostile.test(path(`/${'a'.repeat(100_000)}!`)), false);
    assert.equal(hostile.test(path(`/${'x'.repeat(100_000)}-`)), false);
    assert.equal(hostile.test(path(`/${'a'.repeat(100_000)}`)), true);
    assert.equal(hostile.test(path(`/${'a'.repeat(50)}b`)), true);
    const lookAround = compilePathPatterns(['(?=a)b']);
    assert.ok(!lookAround.ok && lookAround.index === 0);
    assert.match(lookAround.message('include paths'), /^The include paths\.0 must be a valid regular expression in RE2 syntax \(.*\(\?=.*\)\.$/);
    assert.ok(!compilePathPatterns(['(a)\\1']).ok, 'back-references are not RE2');
  });

  test('the patterns of one list compile to at most 1000 RE2 instructions together', () => {
    const heavy = compilePathPatterns(['^/ok', '[a-z]{1,100}[0-9]{1,100}x', '(?:a?){200}a{200}']);
    assert.ok(!heavy.ok && heavy.index === 2);
    assert.match(heavy.message('exclude paths'), /^The exclude paths must be simpler: together they may compile to at most 1000 RE2 instructions, and the first 3 take \d+\.$/);
  });

  test('limits: 500 characters a pattern, 100 patterns, strings only, a list', () => {
    const long = compilePathPatterns(['a', 'b'.repeat(501)]);
    assert.ok(!long.ok && long.index === 1);
    assert.equal(long.message('exclude paths'), 'The exclude paths.1 must not be greater than 500 characters.');
    assert.ok(compilePathPatterns(['b'.repeat(500)]).ok);
    const many = compilePathPatterns(Array.from({ length: 101 }, (_, i) => `^/p${i}`));
    assert.ok(!many.ok && many.index === null);
    assert.equal(many.message('include paths'), 'The include paths must be an array of at most 100 regular expressions.');
    assert.ok(compilePathPatterns(Array.from({ length: 100 }, (_, i) => `^/p${i}`)).ok);
    const notString = compilePathPatterns(['^/a', 7]);
    assert.ok(!notString.ok && notString.index === 1);
    assert.equal(notString.message('include paths'), 'The include paths.1 must be a string.');
    for (const value of ['^/a', { a: 1 }, 3]) assert.ok(!compilePathPatterns(value).ok);
  });

  test('pathFilter: some include must match (none: all), no exclude may', () => {
    const page = (path: string) => new URL(`https://example.com${path}`);
    const all = pathFilter(compiled([]), compiled(['^/private']));
    assert.equal(all(page('/anything')), true);
    assert.equal(all(page('/private/x')), false);
    const docs = pathFilter(compiled(['^/docs', '^/guide']), compiled(['/draft']));
    assert.equal(docs(page('/docs/a')), true);
    assert.equal(docs(page('/guide/b')), true);
    assert.equal(docs(page('/blog/c')), false);
    assert.equal(docs(page('/docs/draft/d')), false);
  });
});
