/**
 * Every upstream call goes through the one runtime (src/adapters/kit/runtime.ts):
 * - no file of src/ but the transports (src/outbound/, src/browser/) and the runtime opens a
 *   connection or calls a transport: a `fetch(`, a `fetchPage(`, an HTTP/TLS/socket module
 *   anywhere else fails this test, with the file and line;
 * - every adapter of src/adapters/ (found by reading the modules' exports, so a new one is listed
 *   without touching this test) is a pure pair with the metadata the runtime needs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createUpstreamRuntime } from '../../src/adapters/kit/runtime.ts';
import type { Adapter, RuntimeEvent } from '../../src/adapters/kit/types.ts';
import type { OutboundClient } from '../../src/outbound/types.ts';

const SRC = new URL('../../src/', import.meta.url).pathname;

/** Files allowed to reach the network, and why. */
const ALLOWED: Record<string, string> = {
  'adapters/kit/runtime.ts': 'the runtime: the one caller of the transports',
  // A Unix socket to this service's own admin listener, never an upstream.
  'operator/admin-socket.ts': 'the CLI talking to the local server over DATA_DIR/admin.sock',
  // Our own signed events POSTed to the user's receiver: not an upstream read (no verdict to parse).
  'webhooks/delivery.ts': "webhook deliveries to the user's receiver, through the outbound client's address rules",
};
const TRANSPORTS = ['outbound/', 'browser/'];

const NETWORK = [
  { pattern: /(?<![#\w$])fetch\s*\(/, what: 'a fetch() call' },
  { pattern: /\bfetchPage\s*\(/, what: "a call of the browser's fetchPage" },
  { pattern: /from\s+'(undici|node:http|node:https|node:http2|node:tls|node:dgram|http|https|axios|got|node-fetch)'/, what: 'an HTTP client or socket module' },
  { pattern: /\bnet\.(connect|createConnection)\s*\(/, what: 'a socket connection' },
  { pattern: /\bchromium\.(launch|connect)/, what: 'a browser launch' },
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

test('only the runtime calls the transports; nothing else in src/ reaches the network', () => {
  const offenders: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const relative = path.relative(SRC, file);
    if (TRANSPORTS.some((prefix) => relative.startsWith(prefix)) || relative in ALLOWED) continue;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, index) => {
        if (/^\s*(\/\*\*?|\*|\/\/)/.test(line)) return; // comments
        for (const { pattern, what } of NETWORK) if (pattern.test(line)) offenders.push(`src/${relative}:${index + 1}: ${what}: ${line.trim()}`);
      });
  }
  assert.deepEqual(offenders, [], 'upstream calls must go through runtime.upstream(...).call(adapter, ...)');
});

test('the scan itself finds a call outside the runtime (it is not vacuous)', () => {
  const line = "    const response = await services.outbound.fetch(url, { maxBytes });";
  assert.ok(NETWORK.some(({ pattern }) => pattern.test(line)));
  assert.ok(!NETWORK.some(({ pattern }) => pattern.test('    const fetched = await this.#fetch();')), 'a private method named #fetch is not a network call');
});

function isAdapter(value: unknown): value is Adapter<unknown, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return typeof candidate.buildRequest === 'function' && typeof candidate.parse === 'function';
}

/** Every adapter object exported by a module of src/adapters/ (the kit excepted). */
async function discoverAdapters(): Promise<Array<{ module: string; name: string; adapter: Adapter<unknown, unknown> }>> {
  const found: Array<{ module: string; name: string; adapter: Adapter<unknown, unknown> }> = [];
  for (const file of sourceFiles(path.join(SRC, 'adapters'))) {
    const relative = path.relative(SRC, file);
    if (relative.startsWith('adapters/kit/') || file.endsWith('.d.ts')) continue;
    const exports = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(exports)) {
      if (isAdapter(value)) found.push({ module: relative, name, adapter: value });
      else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        // Registries of adapters (ENGINES, DOCUMENT_ADAPTERS).
        for (const [key, inner] of Object.entries(value)) if (isAdapter(inner)) found.push({ module: relative, name: `${name}.${key}`, adapter: inner });
      }
    }
  }
  return found;
}

test('every adapter is a pure pair with an upstream and an operation', async () => {
  const adapters = await discoverAdapters();
  const names = new Set(adapters.map(({ adapter }) => adapter.upstream));
  // The upstreams of the service today; a new adapter only adds to them.
  for (const upstream of ['google', 'bing', 'duckduckgo', 'brave', 'mojeek', 'startpage', 'reddit', 'x-syndication', 'web', 'document', 'freelancer', 'youtube', 'chain-explorer']) {
    assert.ok(names.has(upstream), `no adapter found for ${upstream}`);
  }
  for (const { module, name, adapter } of adapters) {
    assert.match(adapter.upstream, /^[a-z][a-z0-9-]*$/, `${module} ${name}: upstream names are metric labels`);
    assert.match(adapter.operation, /^[\w/-]+$/, `${module} ${name}: operation`);
    assert.ok(adapter.via === undefined || adapter.via === 'http' || adapter.via === 'browser', `${module} ${name}: via`);
  }
});

test('an adapter call made through the runtime is seen: one call event with its upstream and operation', async () => {
  const requested: string[] = [];
  const outbound: OutboundClient = {
    async fetch(url) {
      requested.push(url);
      return { url, status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"ok":true}'), hops: [url] };
    },
    isPublicUrl: async () => true,
  };
  const runtime = createUpstreamRuntime({ outbound });
  const events: RuntimeEvent[] = [];
  runtime.observe((event) => events.push(event));
  const adapter: Adapter<{ id: string }, unknown> = {
    upstream: 'example',
    operation: 'item',
    buildRequest: ({ id }, { baseUrl }) => ({ url: `${baseUrl}/items/${id}`, method: 'GET', headers: {} }),
    parse: (response) => ({ kind: 'ok', value: JSON.parse(response.body) }),
  };
  const outcome = await runtime.upstream({ timeoutMs: 1000, baseUrl: 'https://api.example' }).call(adapter, { id: '7' }, {});
  assert.deepEqual(outcome, { kind: 'ok', value: { ok: true } });
  assert.deepEqual(requested, ['https://api.example/items/7']);
  assert.equal(events.length, 1);
  assert.equal(events[0].type, 'call');
  assert.ok(events[0].type === 'call' && events[0].upstream === 'example' && events[0].operation === 'item' && events[0].verdict === 'ok' && events[0].attempts === 1);
});
