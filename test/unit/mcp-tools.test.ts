/**
 * The MCP tools as a function of an endpoint table and a price table (src/mcp/tools.ts): which
 * rows are tools, their names, schemas and descriptions, the request a call stands for, and the
 * result an answer becomes.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { ENDPOINTS } from '../../src/endpoints/table.ts';
import { defineEndpoint, type Endpoint } from '../../src/pipeline/endpoint.ts';
import { OPERATION_DEFAULTS } from '../../src/credits/prices.ts';
import { integer, oneOf, required, string } from '../../src/validation/rules.ts';
import { buildTools, inputSchemaOf, isToolRow, requestOf, resultOf, toolNameOf, toolNameProblems } from '../../src/mcp/tools.ts';

const row = (overrides: Partial<Endpoint>): Endpoint =>
  defineEndpoint({
    method: 'POST',
    path: '/v1/thing',
    summary: 'A thing',
    tag: 'Scraping',
    input: 'body',
    schema: { fields: { name: { rules: [required(), string()], example: 'x' } } },
    billing: { product: 'scraping', operation: 'web' },
    history: true,
    success: { status: 200, description: 'The thing.' },
    async handler() {
      return { body: {} };
    },
    ...(overrides as object),
  });

test('the real table: every billed and /v1 row is a tool, plus me; no admin row; names unique and valid', () => {
  const tools = buildTools(ENDPOINTS, OPERATION_DEFAULTS);
  const names = tools.map((entry) => entry.tool.name);
  assert.equal(new Set(names).size, names.length);
  for (const endpoint of ENDPOINTS) {
    const expected = (!!endpoint.billing || endpoint.path.startsWith('/v1/') || (endpoint.method === 'GET' && endpoint.path === '/me')) && !endpoint.path.startsWith('/admin');
    assert.equal(isToolRow(endpoint), expected, `${endpoint.method} ${endpoint.path}`);
    assert.equal(tools.some((entry) => entry.endpoint === endpoint), expected, `${endpoint.method} ${endpoint.path}`);
  }
  for (const name of ['search', 'web', 'map', 'crawl', 'crawl_status', 'crawl_cancel', 'batch', 'batch_status', 'pdf', 'image', 'forum', 'forum_search', 'me']) {
    assert.ok(names.includes(name), name);
  }
  for (const entry of tools) {
    assert.match(entry.tool.name, /^[A-Za-z0-9_.-]{1,64}$/);
    assert.equal(entry.tool.inputSchema.type, 'object');
    assert.ok(entry.tool.description?.startsWith(entry.endpoint.summary), entry.tool.name);
  }
});

test('a row added to a copy of the table is a tool, with its schema and price, and no other code', () => {
  const extra = row({ path: '/v1/throwaway-thing', summary: 'A throw-away thing', description: ({ credits }) => `Costs ${credits('web')}.` });
  const before = buildTools(ENDPOINTS, OPERATION_DEFAULTS).length;
  const tools = buildTools([...ENDPOINTS, extra], { ...OPERATION_DEFAULTS, web: 4 });
  assert.equal(tools.length, before + 1);
  const tool = tools.find((entry) => entry.tool.name === 'throwaway_thing')?.tool;
  assert.ok(tool);
  assert.deepEqual(tool.inputSchema, { type: 'object', properties: { name: { type: 'string', examples: ['x'] } }, required: ['name'] });
  assert.equal(tool.description, "A throw-away thing.\n\nCosts 4 credits.\n\nBilled to the scraping balance, only on success. One unit (`web`) is 4 credits at current prices.");
  assert.equal(tool.title, 'A throw-away thing');
});

test('names: from the path, a job\'s status and cancel rows, and the explicit override', () => {
  assert.equal(toolNameOf(row({ path: '/v1/forum/search' })), 'forum_search');
  assert.equal(toolNameOf(row({ path: '/v1/mb-legacy' })), 'mb_legacy');
  assert.equal(toolNameOf(row({ method: 'GET', path: '/v1/crawl/{id}' })), 'crawl_status');
  assert.equal(toolNameOf(row({ method: 'DELETE', path: '/v1/crawl/{id}', operationId: 'cancelCrawl' })), 'crawl_cancel');
  assert.equal(toolNameOf(row({ method: 'DELETE', path: '/v1/things/{id}' })), 'things_delete');
  assert.equal(toolNameOf(row({ method: 'PATCH', path: '/v1/things/{id}' })), 'things_update');
  assert.equal(toolNameOf(row({ method: 'PATCH', path: '/v1/things/{id}', operationId: 'resumeThing' })), 'things_resume');
  assert.equal(toolNameOf(row({ method: 'GET', path: '/v1/things' })), 'things');
  // A collection that is also created by a POST: the GET lists it.
  const collection = [row({ path: '/v1/things' }), row({ method: 'GET', path: '/v1/things' })];
  assert.deepEqual(collection.map((endpoint) => toolNameOf(endpoint, collection)), ['things', 'things_list']);
  assert.equal(toolNameOf(row({ method: 'GET', path: '/v1/things/{id}/events' })), 'things_events');
  assert.equal(toolNameOf(row({ path: '/v1/engine-search', toolName: 'search' })), 'search');
  assert.equal(toolNameOf(row({ method: 'GET', path: '/me' })), 'me');
});

test('two rows with one tool name, or a name MCP refuses: the problem is named, and serving goes on', () => {
  const clash = [row({ path: '/v1/a-b' }), row({ path: '/v1/a/b' }), row({ toolName: 'has space' })];
  assert.deepEqual(toolNameProblems(clash), [
    'POST /v1/a/b and POST /v1/a-b are both the MCP tool "a_b": set one row\'s toolName.',
    'POST /v1/thing: "has space" is not a valid MCP tool name; set the row\'s toolName.',
  ]);
  assert.deepEqual(buildTools(clash, OPERATION_DEFAULTS).map((entry) => entry.tool.name), ['a_b', 'a_b_post', 'has_space']);
});

test('the real table has no tool name problem', () => {
  assert.deepEqual(toolNameProblems(ENDPOINTS), []);
});

test('admin and owner rows are never tools; unbilled account rows other than GET /me neither', () => {
  assert.equal(isToolRow(row({ path: '/admin/things' })), false);
  assert.equal(isToolRow(row({ path: '/v1/secret', access: 'owner' })), false);
  assert.equal(isToolRow(row({ method: 'GET', path: '/requests', billing: undefined })), false);
  assert.equal(isToolRow(row({ method: 'PATCH', path: '/me', billing: undefined })), false);
  assert.equal(isToolRow(row({ method: 'GET', path: '/v1/things/{id}', billing: undefined })), true);
});

test('the input schema carries path parameters as required properties', () => {
  const schema = inputSchemaOf(
    row({
      method: 'GET',
      path: '/v1/jobs/{id}',
      input: 'query',
      schema: { fields: { id: { in: 'path', rules: [required(), string()], description: 'The job id.' }, skip: { rules: [integer()], default: 0 }, sort: { rules: [string(), oneOf(['a', 'b'])] } } },
    }),
  );
  assert.deepEqual(schema.required, ['id']);
  assert.deepEqual(schema.properties?.id, { type: 'string', description: 'The job id.' });
  assert.equal((schema.properties?.skip as { default: number }).default, 0);
  assert.deepEqual((schema.properties?.sort as { enum: string[] }).enum, ['a', 'b']);
});

test('a call is the row\'s request: path parameters encoded, the rest in the body or the query', () => {
  assert.deepEqual(requestOf(row({}), { name: 'x', n: 2 }), { method: 'POST', url: '/v1/thing', body: { name: 'x', n: 2 } });
  const get = row({ method: 'GET', path: '/v1/jobs/{id}', input: 'query', schema: { fields: { id: { in: 'path', rules: [string()] }, tags: { rules: [] } } } });
  assert.deepEqual(requestOf(get, { id: 'a/b c', skip: 100, tags: ['x', 'y'], flag: true }), { method: 'GET', url: '/v1/jobs/a%2Fb%20c?skip=100&tags=x&tags=y&flag=1' });
  assert.deepEqual(requestOf(get, {}), { method: 'GET', url: '/v1/jobs/' });
});

test('a JSON answer is structured content with its JSON as text', () => {
  const result = resultOf({ query: 'q' }, { status: 200, body: { response: [{ title: 't' }] }, requestId: 'r1' });
  assert.deepEqual(result, {
    content: [{ type: 'text', text: '{"response":[{"title":"t"}]}' }],
    structuredContent: { response: [{ title: 't' }] },
    _meta: { status: 200, request_id: 'r1' },
  });
  assert.deepEqual(resultOf({}, { status: 200, body: ['a'] }).structuredContent, { response: ['a'] });
});

test('a page asked as Markdown or text is the first text block; raw pages stay JSON', () => {
  const body = { response: { url: 'https://example.com/', status_code: 200, content: '# Title\n\nBody' } };
  const markdown = resultOf({ format: 'markdown' }, { status: 200, body });
  assert.deepEqual(markdown.content, [
    { type: 'text', text: '# Title\n\nBody' },
    { type: 'text', text: '{"response":{"url":"https://example.com/","status_code":200}}' },
  ]);
  assert.deepEqual(markdown.structuredContent, body);
  assert.equal(resultOf({ format: 'raw' }, { status: 200, body }).content.length, 1);
});

test('a failure is a tool error with the message, every field error and the status', () => {
  const result = resultOf({}, { status: 422, body: { message: 'The given data was invalid.', errors: { url: ['The url field is required.'], format: ['The selected format is invalid.'] } } });
  assert.equal(result.isError, true);
  assert.deepEqual(result.content, [{ type: 'text', text: 'The given data was invalid. (HTTP 422)\nurl: The url field is required.\nformat: The selected format is invalid.' }]);
  assert.equal((result.structuredContent as { status: number }).status, 422);
  assert.deepEqual(resultOf({}, { status: 502, body: '' }).content, [{ type: 'text', text: 'The API answered with no message. (HTTP 502)' }]);
});

test('a failure names what was expected and, for credits, the product, the credits needed and the balance', () => {
  const invalid = resultOf({}, { status: 422, body: { message: 'The given data was invalid.', errors: { format: ['The selected format is invalid.'] }, expected: { format: 'one of: raw, text, markdown' } } });
  assert.deepEqual(invalid.content, [{ type: 'text', text: 'The given data was invalid. (HTTP 422)\nformat: The selected format is invalid.\nformat: expected one of: raw, text, markdown' }]);
  const credits = resultOf({}, { status: 403, body: { message: 'You do not have enough credits to perform this action.', product: 'scraping', required: 3, balance: 1 } });
  assert.deepEqual(credits.content, [{ type: 'text', text: 'You do not have enough credits to perform this action. (HTTP 403)\nscraping: 3 credits needed, balance 1' }]);
});
