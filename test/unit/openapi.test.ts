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
import { buildOpenApi, defaultOperationId, schemaFromExample } from '../../src/http/openapi.ts';
import { ENDPOINTS } from '../../src/endpoints/table.ts';
import { SEARCH_MESSAGES } from '../../src/endpoints/search.ts';

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
