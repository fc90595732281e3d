/**
 * Generated requests for the fuzz test of the reliability tier: for every row of the endpoint
 * table, bodies built from the row's own schema (the JSON Schema the OpenAPI document is made of)
 * mixed with hostile mutations — wrong types, nulls, huge strings, nesting thousands of levels
 * deep, duplicate keys, NUL, lone surrogates, invalid UTF-8, non-object JSON, malformed JSON,
 * wrong content types, method overrides, bad path parameters and bad tokens.
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
  | 'wrong-content-type'
  | 'form'
  | 'override' // POST with X-HTTP-Method-Override or `_method`
  | 'wrong-method'
  | 'bad-path-param'
  | 'no-token'
  | 'bad-token';

export interface FuzzCase {
  endpoint: Endpoint;
  method: string;
  /** Path with any query string. */
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  token: 'valid' | 'none' | 'bogus';
  features: Feature[];
}

export interface FuzzContext {
  /** Document URLs on the loopback upstream, by extension kind. */
  urls: { pdf: string; image: string; missing: string };
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

function validUrl(context: FuzzContext, endpoint: Endpoint): fc.Arbitrary<string> {
  const own = endpoint.path === '/v1/image' ? context.urls.image : context.urls.pdf;
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

/** A value the field's JSON Schema accepts (or nearly: strings at their length limits). */
function validValue(name: string, schema: JsonSchema, context: FuzzContext, endpoint: Endpoint): fc.Arbitrary<Fragment> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[])).map((v) => json(v));
  if (schema.format === 'uri') return validUrl(context, endpoint).map((v) => json(v));
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
const CONTENT_TYPES = [
  'application/json',
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/xml',
  'multipart/form-data; boundary=xyz',
  'application/json; charset=utf-16',
  'application/vnd.api+json',
  '%%%',
  '',
];

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
  const bodyKind = fc.constantFrom<'object' | 'non-object' | 'malformed' | 'empty' | 'deep' | 'form' | 'oversize' | 'invalid-utf8'>(
    ...Array(24).fill('object'),
    'non-object',
    'non-object',
    'non-object',
    'malformed',
    'malformed',
    'empty',
    'deep',
    'form',
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
      contentType: fc.constantFrom(...CONTENT_TYPES),
      path: pathFor(endpoint, context),
      query: queryFor(endpoint, context),
      method: fc.nat({ max: 39 }), // 0: a wrong method, 1: override to the right one, 2: `_method` override
      token: fc.nat({ max: 49 }), // 0-1: none, 2-3: bogus
      bogus: fc.constantFrom('1|nope', 'garbage', '0|' + 'a'.repeat(40), '99999999999999999999|x', '|', 'a'.repeat(5000), '1|\u00e9'),
      hugeHeader: fc.nat({ max: 499 }),
    })
    .map((r): FuzzCase => {
      const features = new Set<Feature>();
      const headers: Record<string, string> = { accept: 'application/json' };
      let method: string = endpoint.method;
      let body: string | Uint8Array | undefined;
      let path = r.path.path;
      if (r.path.bad) features.add('bad-path-param');

      const sendsBody = endpoint.method !== 'GET';
      if (endpoint.input === 'query' && r.query.query) {
        path += `?${r.query.query}`;
        r.query.features.forEach((f) => features.add(f));
      }
      if (sendsBody) {
        let kind = r.kind;
        if (r.oversize === 0) kind = 'oversize';
        switch (kind) {
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
          case 'form':
            body = new URLSearchParams(Object.entries(r.object.fields).map(([k, v]): [string, string] => [k, v.replace(/^"|"$/g, '')])).toString();
            headers['content-type'] = 'application/x-www-form-urlencoded';
            features.add('form');
            break;
          case 'invalid-utf8':
            // A UTF-16 surrogate encoded as UTF-8 (CESU-8) and a stray continuation byte: not UTF-8.
            body = Buffer.concat([Buffer.from('{"url":"'), Buffer.from([0xed, 0xa0, 0x80, 0x80, 0xff]), Buffer.from('.pdf","email":"a'), Buffer.from([0xc0, 0xaf]), Buffer.from('@x.com"}')]);
            features.add('invalid-utf8');
            break;
          case 'oversize':
            body = `{"url":"${'a'.repeat(context.bodyLimitBytes + 16)}"}`;
            features.add('oversize');
            break;
        }
        if (!headers['content-type']) {
          headers['content-type'] = r.contentType;
          if (!r.contentType.startsWith('application/json')) features.add('wrong-content-type');
          if (r.contentType === '') delete headers['content-type'];
        }
      }

      if (r.method === 0) {
        method = endpoint.method === 'DELETE' ? 'PATCH' : endpoint.method === 'GET' ? 'PUT' : 'DELETE';
        features.add('wrong-method');
        if (method === 'GET') body = undefined;
      } else if (r.method === 1 && endpoint.method !== 'POST') {
        method = 'POST';
        headers['x-http-method-override'] = endpoint.method;
        features.add('override');
        if (body === undefined) {
          body = '{}';
          headers['content-type'] = 'application/json';
        }
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
      return { endpoint, method, path, headers, body, token, features: [...features] };
    });
}
