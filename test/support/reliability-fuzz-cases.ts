/**
 * Generated requests for the fuzz test of the reliability tier: for every row of the endpoint
 * table, bodies built from the row's own schema (the JSON Schema the OpenAPI document is made of)
 * mixed with hostile mutations — wrong types, nulls, huge strings, nesting thousands of levels
 * deep, duplicate keys, NUL, lone surrogates, invalid UTF-8, non-object JSON, malformed JSON,
 * method overrides, bad path parameters and bad tokens. Two dimensions cut across all of it: the
 * HTTP method (`FUZZ_METHODS`, any row may be sent any of them) and the body's content type
 * (`CONTENT_KINDS`: JSON, a form, text/plain, multipart, no Content-Type at all, garbage).
 *
 * Bodies are raw text, not `JSON.stringify` output, so that what JSON cannot express as a value
 * (duplicate keys, nesting deeper than the stringifier's stack) is sent too. Everything comes from
 * fast-check with a fixed seed: the same seed gives the same requests.
 */
import fc from 'fast-check';
import type { Endpoint } from '../../src/pipeline/endpoint.ts';
import { pathParameters, toJsonSchema } from '../../src/validation/schema.ts';
import type { JsonSchema } from '../../src/validation/rules.ts';

/** Marks on a case, so an answer that breaks a rule can be traced to what was sent. */
export type Feature =
  | 'deep' // nesting of 1,000+ levels somewhere in the body
  | 'oversize' // a body over the server's limit
  | 'huge-header' // a header over Node's header limit
  | 'huge-string'
  | 'duplicate-keys'
  | 'non-object' // JSON that is not an object: array, number, string, null, boolean
  | 'malformed' // not JSON at all
  | 'nul'
  | 'lone-surrogate'
  | 'invalid-utf8'
  | 'wrong-type'
  | 'wrong-content-type' // any content type but JSON's
  | 'form'
  | 'multipart'
  | 'no-content-type'
  | 'garbage-content-type'
  | 'override' // POST with X-HTTP-Method-Override or `_method`
  | 'wrong-method'
  | 'bad-path-param'
  | 'no-token'
  | 'bad-token'
  | 'long-url' // a URL over 8 KB (240,000 slashes among them), or exactly at the limit
  | 'hostile-pattern' // crawl path patterns that backtrack exponentially on a backtracking engine
  | 'hostile-robots'; // a crawl or map of the upstream, whose robots.txt is 500 KiB of `*`-laden rules

/**
 * The methods any row may be sent: the table's own, and methods no row has that Node's parser and
 * the router still accept. HEAD is left out: its answer has no body whose shape could be checked.
 */
export const FUZZ_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'QUERY', 'PROPFIND', 'PURGE'] as const;

/** How a body is typed: `none` sends it without Content-Type, `garbage` with one no parser expects. */
export const CONTENT_KINDS = ['json', 'form', 'text', 'multipart', 'none', 'garbage'] as const;
export type ContentKind = (typeof CONTENT_KINDS)[number];

export interface FuzzCase {
  endpoint: Endpoint;
  method: string;
  /** How the body is typed; undefined when no body is sent. */
  contentKind?: ContentKind;
  /** Path with any query string. */
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  token: 'valid' | 'none' | 'bogus';
  features: Feature[];
}

export interface FuzzContext {
  /**
   * Document URLs on the loopback upstream, by extension kind; `links` is a page of 1,000 long
   * links, where crawls and maps start (the upstream's robots.txt is hostile).
   */
  urls: { pdf: string; image: string; missing: string; links: string };
  /** The user id admin path parameters name (never the fuzzing caller). */
  targetUserId: number;
  /** Operations whose price the admin fuzz may change: never those of the billed rows under test. */
  freeOperations: readonly string[];
  /** The server's body limit, to build bodies just over it. */
  bodyLimitBytes: number;
}

/** JSON text of a value, keeping a raw fragment as it is. */
class Raw {
  readonly text: string;
  readonly features: Feature[];
  constructor(text: string, features: Feature[] = []) {
    this.text = text;
    this.features = features;
  }
}
type Fragment = Raw;

const json = (value: unknown, features: Feature[] = []) => new Raw(JSON.stringify(value), features);

const DEEP_LEVELS = fc.integer({ min: 1_000, max: 6_000 });

/** Nesting `levels` deep, as arrays or objects. */
const deepFragment: fc.Arbitrary<Fragment> = fc
  .tuple(DEEP_LEVELS, fc.boolean())
  .map(([levels, arrays]) => new Raw(arrays ? '['.repeat(levels) + '1' + ']'.repeat(levels) : '{"a":'.repeat(levels) + '1' + '}'.repeat(levels), ['deep']));

/** 100 KB to 700 KB of one character: big, but under the default 1 MiB body limit. */
const hugeString: fc.Arbitrary<Fragment> = fc
  .tuple(fc.integer({ min: 100, max: 700 }), fc.constantFrom('a', ' ', 'é', '€', '😀', '\\u0000'))
  .map(([kb, unit]) => {
    const bytes = unit === '\\u0000' ? 6 : Buffer.byteLength(unit);
    return new Raw(`"${unit.repeat(Math.floor((kb * 1024) / bytes))}"`, unit === '\\u0000' ? ['huge-string', 'nul'] : ['huge-string']);
  });

const hostileString: fc.Arbitrary<Fragment> = fc.oneof(
  fc.constantFrom('\u0000', 'a\u0000b', '\u0000@example.com', 'x\u0000.pdf').map((s) => json(s, ['nul'])),
  // JSON.stringify writes lone surrogates as \uD800 escapes: valid JSON, invalid Unicode.
  fc.constantFrom('\ud800', '\udfff@x.com', 'a\ud800b', '\ud800@x.com', 'https://x.invalid/\ud800.pdf').map((s) => json(s, ['lone-surrogate'])),
  fc.constantFrom('', ' ', '\t\n', '0', '1e3', '0x10', ' 12 ', '-0', 'true', 'null', 'NaN', 'Infinity', '١٢', '１２').map((s) => json(s)),
  fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => json(s)),
  fc.string({ unit: 'binary', maxLength: 30 }).map((s) => json(s)),
);

const hostileScalar: fc.Arbitrary<Fragment> = fc.oneof(
  fc.constant(json(null, ['wrong-type'])),
  fc.boolean().map((b) => json(b, ['wrong-type'])),
  fc.constantFrom('-0', '1e400', '-1e400', '1.5', '0.0000001', '9007199254740993', '-9007199254740993', '1E2', '123456789012345678901234567890').map((t) => new Raw(t, ['wrong-type'])),
  fc.integer().map((n) => json(n, ['wrong-type'])),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => json(n, ['wrong-type'])),
);

const hostileValue: fc.Arbitrary<Fragment> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 4, arbitrary: hostileScalar },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => json(v, ['wrong-type'])) },
  { weight: 1, arbitrary: fc.constantFrom('[]', '{}', '[null]', '{"":null}', '[[[]]]', '{"__proto__":{"x":1}}').map((t) => new Raw(t, ['wrong-type'])) },
  { weight: 1, arbitrary: deepFragment },
  { weight: 1, arbitrary: hugeString },
);

/** Rows that read the site's robots.txt and judge a page's links. */
const SITE_ROWS = new Set(['/v1/crawl', '/v1/map']);

function validUrl(context: FuzzContext, endpoint: Endpoint): fc.Arbitrary<string> {
  const own = endpoint.path === '/v1/image' ? context.urls.image : SITE_ROWS.has(endpoint.path) ? context.urls.links : context.urls.pdf;
  return fc.constantFrom(
    own,
    own,
    own.toUpperCase().replace('HTTP://', 'http://'),
    context.urls.missing,
    context.urls.pdf,
    context.urls.image,
    `${own}?q=1#frag`,
    'http://169.254.169.254/latest/meta-data.pdf',
    'http://10.0.0.1/x.png',
    'http://[::1]/a.pdf',
    'http://0x7f000001/a.pdf',
    'http://2130706433/a.png',
    'http://nothing.invalid/a.pdf',
    'https://user:pass@nothing.invalid/a.png',
    'ftp://example.com/a.pdf',
    'file:///etc/passwd.pdf',
    'javascript:alert(1)//.pdf',
    'http:///a.pdf',
    'http://a b.invalid/a.pdf',
  );
}

/** URLs at and past the 8 KB limit (issue 33: 240,000 slashes held the server 41 s). */
function longUrl(context: FuzzContext): fc.Arbitrary<Fragment> {
  const origin = new URL(context.urls.pdf).origin;
  return fc
    .constantFrom(`${origin}/${'/'.repeat(240_000)}x`, `${context.urls.pdf}?${'a'.repeat(8200)}`, `${origin}/${'a'.repeat(8192 - origin.length - 1)}`, `${origin}/a${'/'.repeat(8000)}`)
    .map((url) => json(url, ['long-url']));
}

/** Crawl path patterns (issue 33: each was accepted, and a link of 29 a's held the server 29 s). */
const HOSTILE_PATTERNS = ['^/(a|a)*$', '^/a*a*a*a*a*a*a*a*b$', '^/(\\w|\\d)*$', '(x|x|x)*y', '(a+)+$', '(?=a)b', '(a)\\1', '[a-z]{1,100}[0-9]{1,100}x', '(?:a?){200}a{200}', '^/files/'];

function pathPatterns(): fc.Arbitrary<Fragment> {
  return fc.array(fc.constantFrom(...HOSTILE_PATTERNS), { minLength: 1, maxLength: 5 }).map((patterns) => json(patterns, ['hostile-pattern']));
}

/** A value the field's JSON Schema accepts (or nearly: strings at their length limits). */
function validValue(name: string, schema: JsonSchema, context: FuzzContext, endpoint: Endpoint): fc.Arbitrary<Fragment> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[])).map((v) => json(v));
  if (schema.format === 'uri') {
    const features: Feature[] = SITE_ROWS.has(endpoint.path) ? ['hostile-robots'] : [];
    return fc.oneof({ weight: 9, arbitrary: validUrl(context, endpoint).map((v) => json(v, features)) }, { weight: 1, arbitrary: longUrl(context) });
  }
  if (name === 'include_paths' || name === 'exclude_paths') return pathPatterns();
  if (schema.format === 'email') return fc.nat({ max: 1_000_000 }).map((n) => json(`fuzz${n}@example.com`));
  if (name === 'customer') return fc.constantFrom('cus_Fuzz1', 'cus_', 'cus_a b', 'CUS_x').map((v) => json(v));
  if (name === 'plan') return fc.constantFrom('starter', 'growth', 'pro', 'nope', 'STARTER').map((v) => json(v));
  if (schema.type === 'integer') {
    const min = typeof schema.minimum === 'number' ? schema.minimum : -1000;
    const max = typeof schema.maximum === 'number' ? Math.min(schema.maximum, Number.MAX_SAFE_INTEGER) : 1000;
    // Near the bounds, inside and just outside, and as numeric strings (Laravel accepts "12").
    return fc.oneof(
      fc.integer({ min: Math.max(min, -1e9), max: Math.min(max, min + 200) }),
      fc.constantFrom(min - 1, min, max, max + 1),
    ).map((n) => (n % 3 === 0 ? json(String(n)) : json(n)));
  }
  if (schema.type === 'boolean') return fc.constantFrom(true, false, 0, 1, '0', '1').map((v) => json(v));
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength + 2 : 60;
  return fc.string({ minLength: 1, maxLength: Math.min(maxLength, 300) }).map((v) => json(v));
}

/** One body field: mostly schema-valid, else hostile. */
function fieldFragment(name: string, schema: JsonSchema, context: FuzzContext, endpoint: Endpoint): fc.Arbitrary<Fragment> {
  return fc.oneof({ weight: 3, arbitrary: validValue(name, schema, context, endpoint) }, { weight: 2, arbitrary: hostileValue });
}

const EXTRA_KEYS = ['__proto__', 'constructor', 'prototype', '', ' ', 'a\u0000b', '\ud800', '_method', 'page[]', 'toString', 'x'.repeat(1000)];

/** An object body as JSON text, possibly with extra keys and a repeated key. */
function objectBody(endpoint: Endpoint, context: FuzzContext): fc.Arbitrary<{ text: string; features: Feature[]; fields: Record<string, string> }> {
  const properties = (toJsonSchema(endpoint.schema).properties ?? {}) as Record<string, JsonSchema>;
  const names = Object.keys(properties);
  const fieldArbs = names.map((name) => fc.option(fieldFragment(name, properties[name], context, endpoint), { freq: 5, nil: undefined }));
  return fc
    .tuple(
      fc.tuple(...fieldArbs),
      fc.option(fc.tuple(fc.constantFrom(...EXTRA_KEYS), fc.oneof(hostileValue, fc.constantFrom('GET', 'DELETE', 'PATCH', 'PUT').map((m) => json(m)))), { freq: 6 }),
      fc.option(fc.nat(), { freq: 8 }),
    )
    .map(([values, extra, duplicate]) => {
      const entries: Array<[string, Fragment]> = [];
      values.forEach((value, index) => value && entries.push([names[index], value]));
      const features = new Set<Feature>();
      if (extra) entries.push([extra[0], extra[1]]);
      if (duplicate !== null && entries.length) {
        // The same key twice: JSON.parse keeps the last, a stricter parser might not.
        const [key] = entries[duplicate % entries.length];
        entries.push([key, json(duplicate % 2 ? null : 'duplicate')]);
        features.add('duplicate-keys');
      }
      for (const [, fragment] of entries) for (const f of fragment.features) features.add(f);
      const text = `{${entries.map(([key, fragment]) => `${JSON.stringify(key)}:${fragment.text}`).join(',')}}`;
      const fields = Object.fromEntries(entries.filter(([, f]) => f.text.length < 200).map(([k, f]) => [k, f.text]));
      return { text, features: [...features], fields };
    });
}

const NON_OBJECT = ['[]', '1', '"s"', 'null', 'true', 'false', '[{}]', '[{"user":1}]', '0', '-1', '""', '1e999'];
const MALFORMED = ['{', '}', '{"a":}', "{'a':1}", 'NaN', '{"a":1,}', '{"a" 1}', '\u0000', '<xml/>', 'a=1&b=2', '{"a":"\\x"}', '{"a":"\\ud800"', '\ufeff{}', '{"a":01}'];
const JSON_TYPES = ['application/json', 'application/json', 'application/json; charset=utf-8', 'Application/JSON'];
const TEXT_TYPES = ['text/plain', 'text/plain; charset=utf-8', 'text/plain; charset=latin1'];
/** Content types that no parser of the service expects, or that lie about the body. */
const GARBAGE_TYPES = [
  '%%%',
  '',
  'json',
  '/',
  'a/b/c',
  '*/*',
  'application/json;;;',
  'application/json; charset=utf-16',
  'application/json; charset=nope',
  'application/vnd.api+json',
  'application/xml',
  'application/octet-stream',
  'application/x-www-form-urlencoded; charset=utf-16',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'text/html; charset=utf-8',
  'image/png',
];
/** Weights of the content kinds: mostly JSON, so most bodies still reach the rows' real work. */
const CONTENT_KIND_WEIGHTS: ContentKind[] = ['json', 'json', 'json', 'json', 'json', 'json', 'form', 'text', 'multipart', 'none', 'garbage', 'garbage'];

const BOUNDARY = '----fuzz7MA4YWxkTrZu0gW';

/** A multipart/form-data body of `fields`: well formed, or with the wrong boundary, or cut short. */
function multipartBody(fields: Record<string, string>, shape: 'well-formed' | 'wrong-boundary' | 'truncated'): { body: string; contentType: string } {
  const parts = Object.entries(fields).map(([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name=${JSON.stringify(name)}\r\n\r\n${value}\r\n`);
  const body = parts.join('') + (shape === 'truncated' ? `--${BOUNDARY}\r\nContent-Disposition: form-data; name="url"\r\n\r\nhttp` : `--${BOUNDARY}--\r\n`);
  return { body, contentType: `multipart/form-data; boundary=${shape === 'wrong-boundary' ? 'not-the-boundary' : BOUNDARY}` };
}

const BAD_SEGMENTS = ['0', '-1', 'abc', '1.5', '1e2', '0x10', '9007199254740993', '99999999999999999999999', '%00', '%F0%9F%92%A9', '%ED%A0%80', '%20', '1%20', '+1', '%2e%2e', 'null', '[]'];

function pathFor(endpoint: Endpoint, context: FuzzContext): fc.Arbitrary<{ path: string; bad: boolean }> {
  const params = pathParameters(endpoint.schema);
  if (!params.length) return fc.constant({ path: endpoint.path, bad: false });
  const segment = (name: string, schema: JsonSchema) => {
    let valid: fc.Arbitrary<string>;
    if (name === 'user') valid = fc.constant(String(context.targetUserId));
    // Revoking or rotating real tokens would lock the fuzzing callers out: ids that name nobody.
    else if (name === 'token') valid = fc.integer({ min: 1_000_000, max: 2_000_000 }).map(String);
    else if (name === 'operation') valid = fc.constantFrom(...context.freeOperations, 'unknown_op');
    else if (Array.isArray(schema.enum)) valid = fc.constantFrom(...(schema.enum as string[]));
    else valid = fc.constant('1');
    // For a token, no bad form may read as a small id ("+1", "1 " are 1 to Laravel's integer rule).
    const bad = name === 'token' ? BAD_SEGMENTS.filter((b) => !['+1', '1%20'].includes(b)) : BAD_SEGMENTS;
    return fc.oneof({ weight: 4, arbitrary: valid.map((s) => ({ s, bad: false })) }, { weight: 1, arbitrary: fc.constantFrom(...bad).map((s) => ({ s, bad: true })) });
  };
  return fc.tuple(...params.map((p) => segment(p.name, p.schema))).map((segments) => {
    let path = endpoint.path;
    params.forEach((p, i) => (path = path.replace(`{${p.name}}`, segments[i].s)));
    return { path, bad: segments.some((s) => s.bad) };
  });
}

/** A query string for a query-input row: schema fields, valid or hostile, plus array and nested forms. */
function queryFor(endpoint: Endpoint, context: FuzzContext): fc.Arbitrary<{ query: string; features: Feature[] }> {
  const properties = (toJsonSchema(endpoint.schema).properties ?? {}) as Record<string, JsonSchema>;
  const names = Object.keys(properties);
  if (!names.length) {
    return fc.option(fc.constantFrom('a=1', 'a[]=1&a[]=2', '%00=%00', 'x=' + 'y'.repeat(5000), '=&&=', 'a[b][c]=1'), { freq: 3 }).map((q) => ({ query: q ?? '', features: [] }));
  }
  const value = (name: string) =>
    fc.oneof(
      { weight: 3, arbitrary: validValue(name, properties[name], context, endpoint).map((f) => ({ text: String(JSON.parse(f.text)), features: [] as Feature[] })) },
      {
        weight: 2,
        arbitrary: fc.constantFrom('', '%00', '%ED%A0%80', '-1', '1.5', 'abc', '1e3', '99999999999999999999', '%20', 'null').map((t) => ({ text: t, features: ['wrong-type'] as Feature[], raw: true })),
      },
    );
  return fc
    .tuple(...names.map((name) => fc.option(fc.tuple(value(name), fc.constantFrom('', '', '', '[]', '[a]')), { freq: 3 })))
    .map((parts) => {
      const features: Feature[] = [];
      const pairs: string[] = [];
      parts.forEach((part, index) => {
        if (!part) return;
        const [v, suffix] = part;
        features.push(...v.features);
        const raw = (v as { raw?: boolean }).raw;
        pairs.push(`${names[index]}${suffix}=${raw ? v.text : encodeURIComponent(v.text)}`);
      });
      return { query: pairs.join('&'), features };
    });
}

/**
 * The fuzz cases: `count` requests spread over `endpoints`, the same ones for the same `seed`.
 */
export function fuzzCases(endpoints: readonly Endpoint[], context: FuzzContext, count: number, seed: number): FuzzCase[] {
  const caseArb = fc.constantFrom(...endpoints).chain((endpoint) => caseFor(endpoint, context));
  return fc.sample(caseArb, { seed, numRuns: count });
}

function caseFor(endpoint: Endpoint, context: FuzzContext): fc.Arbitrary<FuzzCase> {
  const bodyKind = fc.constantFrom<'object' | 'non-object' | 'malformed' | 'empty' | 'deep' | 'oversize' | 'invalid-utf8'>(
    ...Array(25).fill('object'),
    'non-object',
    'non-object',
    'non-object',
    'malformed',
    'malformed',
    'empty',
    'deep',
    'invalid-utf8',
  );
  return fc
    .record({
      kind: bodyKind,
      oversize: fc.nat({ max: 199 }), // 1 in 200 is over the body limit
      object: objectBody(endpoint, context),
      nonObject: fc.constantFrom(...NON_OBJECT),
      malformed: fc.constantFrom(...MALFORMED),
      deep: deepFragment,
      contentKind: fc.constantFrom(...CONTENT_KIND_WEIGHTS),
      jsonType: fc.constantFrom(...JSON_TYPES),
      textType: fc.constantFrom(...TEXT_TYPES),
      garbageType: fc.constantFrom(...GARBAGE_TYPES),
      multipart: fc.constantFrom<'well-formed' | 'wrong-boundary' | 'truncated'>('well-formed', 'well-formed', 'wrong-boundary', 'truncated'),
      path: pathFor(endpoint, context),
      query: queryFor(endpoint, context),
      method: fc.nat({ max: 39 }), // 0-4: any of FUZZ_METHODS, 5: POST overridden to the row's own
      anyMethod: fc.constantFrom(...FUZZ_METHODS),
      token: fc.nat({ max: 49 }), // 0-1: none, 2-3: bogus
      bogus: fc.constantFrom('1|nope', 'garbage', '0|' + 'a'.repeat(40), '99999999999999999999|x', '|', 'a'.repeat(5000), '1|\u00e9'),
      hugeHeader: fc.nat({ max: 499 }),
    })
    .map((r): FuzzCase => {
      const features = new Set<Feature>();
      const headers: Record<string, string> = { accept: 'application/json' };
      let path = r.path.path;
      if (r.path.bad) features.add('bad-path-param');
      if (endpoint.input === 'query' && r.query.query) {
        path += `?${r.query.query}`;
        r.query.features.forEach((f) => features.add(f));
      }

      let method: string = endpoint.method;
      if (r.method < 5) {
        method = r.anyMethod;
        if (method !== endpoint.method) features.add('wrong-method');
      } else if (r.method === 5 && endpoint.method !== 'POST') {
        method = 'POST';
        headers['x-http-method-override'] = endpoint.method;
        features.add('override');
      }

      // fetch sends no body with GET; every other method carries one, whatever the row expects.
      let body: string | Uint8Array | undefined;
      let contentKind: ContentKind | undefined;
      if (method !== 'GET') {
        contentKind = r.contentKind;
        const oversize = r.oversize === 0;
        if (oversize) features.add('oversize');
        const fields = Object.entries(r.object.fields).map(([k, v]): [string, string] => [k, v.replace(/^"|"$/g, '')]);
        if (contentKind === 'form') {
          body = oversize ? `url=${'a'.repeat(context.bodyLimitBytes + 16)}` : new URLSearchParams(fields).toString();
          headers['content-type'] = 'application/x-www-form-urlencoded';
          features.add('form');
        } else if (contentKind === 'multipart') {
          const multipart = multipartBody(oversize ? { url: 'a'.repeat(context.bodyLimitBytes + 16) } : Object.fromEntries(fields), r.multipart);
          body = multipart.body;
          headers['content-type'] = multipart.contentType;
          features.add('multipart');
        } else {
          switch (oversize ? 'oversize' : r.kind) {
            case 'object':
              body = r.object.text;
              r.object.features.forEach((f) => features.add(f));
              break;
            case 'non-object':
              body = r.nonObject;
              features.add('non-object');
              break;
            case 'malformed':
              body = r.malformed;
              features.add('malformed');
              break;
            case 'empty':
              body = '';
              break;
            case 'deep':
              body = r.deep.text;
              features.add('deep');
              break;
            case 'invalid-utf8':
              // A UTF-16 surrogate encoded as UTF-8 (CESU-8) and a stray continuation byte: not UTF-8.
              body = Buffer.concat([Buffer.from('{"url":"'), Buffer.from([0xed, 0xa0, 0x80, 0x80, 0xff]), Buffer.from('.pdf","email":"a'), Buffer.from([0xc0, 0xaf]), Buffer.from('@x.com"}')]);
              features.add('invalid-utf8');
              break;
            case 'oversize':
              body = `{"url":"${'a'.repeat(context.bodyLimitBytes + 16)}"}`;
              break;
          }
          if (contentKind === 'json') headers['content-type'] = r.jsonType;
          else if (contentKind === 'text') headers['content-type'] = r.textType;
          else if (contentKind === 'garbage') {
            headers['content-type'] = r.garbageType;
            features.add('garbage-content-type');
          } else {
            // As bytes: fetch would label a string body text/plain.
            body = Buffer.from(body ?? '');
            features.add('no-content-type');
          }
        }
        if (contentKind !== 'json') features.add('wrong-content-type');
      }

      let token: FuzzCase['token'] = 'valid';
      if (r.token < 2) {
        token = 'none';
        features.add('no-token');
      } else if (r.token < 4) {
        token = 'bogus';
        features.add('bad-token');
        headers.authorization = `Bearer ${r.bogus}`;
      }
      if (r.hugeHeader === 0) {
        headers['x-padding'] = 'p'.repeat(100 * 1024);
        features.add('huge-header');
      }
      return { endpoint, method, contentKind, path, headers, body, token, features: [...features] };
    });
}
