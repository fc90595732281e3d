/**
 * /openapi.json is a document tools build on: every answer has a schema, every operation an
 * operationId, tags are declared, and Redocly's recommended rules (redocly.yaml) find nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildOpenApi, defaultOperationId, OpenApiDocument, schemaFromExample, type OpenApi } from '../../src/http/openapi.ts';
import { ENDPOINTS } from '../../src/endpoints/table.ts';
import { SEARCH_MESSAGES } from '../../src/endpoints/search.ts';
import { OPERATION_DEFAULTS, type PriceTable } from '../../src/credits/prices.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const document = buildOpenApi(ENDPOINTS, { version: '0.0.0-test' });
type Operation = { operationId?: string; tags?: string[]; responses: Record<string, { content?: Record<string, { schema?: unknown; example?: unknown }> }> };
const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ path, method, operation: operation as Operation })),
);

test('every operation has a unique operationId and a declared tag', () => {
  const ids = operations.map((o) => o.operation.operationId);
  assert.ok(ids.every((id) => typeof id === 'string' && /^[A-Za-z][A-Za-z0-9]*$/.test(id)), `bad ids: ${ids}`);
  assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  const declared = new Set(document.tags.map((t) => t.name));
  for (const { path, method, operation } of operations) {
    for (const tag of operation.tags ?? []) assert.ok(declared.has(tag), `${method} ${path}: tag ${tag} is declared globally`);
  }
  assert.ok(document.servers.length > 0);
});

test('every response, success and error, has a JSON schema', () => {
  for (const { path, method, operation } of operations) {
    for (const [status, response] of Object.entries(operation.responses)) {
      const media = response.content?.['application/json'];
      assert.ok(media?.schema && typeof media.schema === 'object', `${method} ${path} ${status} has a schema`);
    }
  }
});

test('search documents its own 404 and 502 messages', () => {
  const search = operations.find((o) => o.path === '/v1/engine-search')!.operation;
  assert.deepEqual(search.responses['404'].content!['application/json'].example, { message: SEARCH_MESSAGES.noResults });
  assert.deepEqual(search.responses['502'].content!['application/json'].example, { message: SEARCH_MESSAGES.unavailable });
  assert.equal(search.operationId, 'search');
});

test('derived operationIds and example schemas', () => {
  assert.equal(defaultOperationId('POST', '/admin/users/{user}/tokens'), 'postAdminUsersByUserTokens');
  assert.equal(defaultOperationId('GET', '/v1/engine-search'), 'getV1EngineSearch');
  assert.deepEqual(schemaFromExample({ a: 1, b: [{ c: 'x' }], d: null }), {
    type: 'object',
    properties: { a: { type: 'integer' }, b: { type: 'array', items: { type: 'object', properties: { c: { type: 'string' } }, required: ['c'] } }, d: {} },
    required: ['a', 'b'],
  });
});

const describedAs = (doc: OpenApi, path: string) => (doc.paths[path].post as { description?: string }).description ?? '';

test('costs are quoted from the price table: the defaults, or the table given', () => {
  assert.match(describedAs(document, '/v1/forum'), /Costs 3 credits;/);
  assert.match(describedAs(document, '/v1/web'), /\(1 credit\), through a proxy in the given country \(5 credits\)/);
  const priced = buildOpenApi(ENDPOINTS, { version: '0', prices: { ...OPERATION_DEFAULTS, forum: 1, web: 2, search: 4, mb_search: 12 } });
  assert.match(describedAs(priced, '/v1/forum/post'), /Costs 1 credit;/);
  assert.match(describedAs(priced, '/v1/web'), /\(2 credits\), through a proxy in the given country \(5 credits\)/);
  assert.match(describedAs(priced, '/v1/engine-search'), /Costs max\(4, round\(per_page \/ 3\)\) credits/);
  assert.match(describedAs(priced, '/v1/mb/search'), /12 credits;/);
  // An operation the table lacks is quoted at its default.
  assert.match(describedAs(buildOpenApi(ENDPOINTS, { version: '0', prices: {} }), '/v1/image'), /Costs 3 credits on success\./);
});

test('the served document is rebuilt only when the price table changed', async () => {
  let table: PriceTable = { ...OPERATION_DEFAULTS };
  let reads = 0;
  const served = new OpenApiDocument(ENDPOINTS, { version: '0', prices: { current: async () => (reads++, table) } });
  const first = await served.current();
  assert.equal(first, served.latest());
  assert.equal(describedAs(first, '/v1/forum'), describedAs(document, '/v1/forum'));
  table = Object.fromEntries(Object.entries(OPERATION_DEFAULTS).reverse()); // the same prices, another object
  assert.equal(await served.current(), first, 'same prices: the same document');
  table = { ...OPERATION_DEFAULTS, forum: 7 };
  const changed = await served.current();
  assert.notEqual(changed, first);
  assert.match(describedAs(changed, '/v1/forum'), /Costs 7 credits;/);
  assert.equal(served.latest(), changed);
  assert.equal(reads, 3);
});

test('an unreadable price table serves the last document', async () => {
  const served = new OpenApiDocument(ENDPOINTS, { version: '0', prices: { current: async () => Promise.reject(new Error('database away')) } });
  assert.equal(await served.current(), served.latest());
});

test("Redocly's recommended rules report no error and no warning", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gleaner-openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(document));
    const cli = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
    const result = await promisify(execFile)(process.execPath, [cli, 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format', 'json'], { env, cwd: dir, maxBuffer: 16 << 20 }).catch(
      (error: { stdout?: string; stderr?: string }) => error,
    );
    const report = JSON.parse(String(result.stdout)) as { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }> };
    const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    assert.deepEqual(problems, [], `redocly problems:\n${problems.join('\n')}`);
    assert.equal(report.totals.errors, 0);
    assert.equal(report.totals.warnings, 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
