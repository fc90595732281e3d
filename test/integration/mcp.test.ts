/**
 * The MCP server driven by the SDK's own client: over Streamable HTTP at POST /mcp of the real
 * server on loopback, and over stdio by spawning `bin/gleaner mcp`, which relays to that server.
 * Search, PDF and web calls go to loopback fakes; each call's output, charge and history row are
 * checked, as are the refusals (a wrong token, validation, an unknown tool). The server runs a
 * copy of the table with one throw-away row, whose tool appears and is billed with no other code.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestService, type TestService } from '../support/service.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { waitUntil } from '../support/processes.ts';
import { bingFixtures, fixtureResults } from '../support/search-fixtures.ts';
import { MULTI_PAGE_LINES, multiPagePdf } from '../support/pdf-fixtures.ts';
import { articlePage, ARTICLE_HEADINGS, CHROME_TEXTS } from '../support/web-fixtures.ts';
import { ENDPOINTS } from '../../src/endpoints/table.ts';
import { defineEndpoint } from '../../src/pipeline/endpoint.ts';
import { required, string } from '../../src/validation/rules.ts';
import { buildTools } from '../../src/mcp/tools.ts';
import { OPERATION_DEFAULTS } from '../../src/credits/prices.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** A row no real table has: it must become the tool `echo_word` by itself. */
const throwAwayRow = defineEndpoint({
  method: 'POST',
  path: '/v1/echo-word',
  summary: 'Echo a word',
  description: ({ credits }) => `Answers the word. Costs ${credits('web')}.`,
  tag: 'Scraping',
  input: 'body',
  schema: { fields: { word: { rules: [required(), string()], description: 'The word to echo.' } } },
  billing: { product: 'scraping', operation: 'web' },
  history: true,
  success: { status: 200, description: 'The word.', example: { response: { word: 'hello' } } },
  async handler({ input }) {
    return { body: { response: { word: input.word } } };
  },
});

/** A row whose work waits until its request is stopped (or 10 s): to see a client going away. */
const slowWork = { started: 0, stopped: false };
const slowRow = defineEndpoint({
  method: 'POST',
  path: '/v1/slow-thing',
  summary: 'A slow thing',
  tag: 'Scraping',
  input: 'body',
  schema: { fields: {} },
  billing: { product: 'scraping', operation: 'web' },
  history: true,
  success: { status: 200, description: 'Done.' },
  async handler({ signal }) {
    slowWork.started++;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, 10_000);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        slowWork.stopped = true;
        reject(signal.reason);
      }, { once: true });
    });
    return { body: { done: true } };
  },
});

let service: TestService;
let upstream: FakeUpstream;
let pdf: Uint8Array;

before(async () => {
  pdf = await multiPagePdf();
  upstream = await startFakeUpstream();
  upstream.handle((hit) => {
    if (hit.path.startsWith('/bing/')) {
      const page = bingFixtures.results(fixtureResults('bing', 10));
      return { status: page.status, body: page.body };
    }
    if (hit.path === '/report.pdf') return { headers: { 'content-type': 'application/pdf' }, body: pdf };
    if (hit.path === '/article') return { headers: { 'content-type': 'text/html; charset=utf-8' }, body: articlePage() };
    return { status: 404, body: 'missing' };
  });
  service = await startTestService(
    { SEARCH_ENGINES: 'bing', UPSTREAM_BING_URL: `${upstream.url}/bing`, SEARCH_TIMEOUT_MS: '5000', PDF_THREADS: '1', OCR_WORKERS: '1' },
    { endpoints: [...ENDPOINTS, throwAwayRow, slowRow] },
  );
});
after(async () => {
  await service?.close();
  await upstream?.close();
});

async function httpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', service.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/** The user's last history row, through the API. */
async function lastRequest(token: string): Promise<{ endpoint: string; credits: number; product: string; status: number }> {
  const history = await service.call('GET', '/requests', { token });
  return history.body.data[0];
}

const balance = (userId: number, product: 'scraping' | 'extraction') => service.services.ledger.balance(userId, product);
const texts = (result: CallToolResult) => result.content.map((block) => (block.type === 'text' ? block.text : ''));

describe('MCP over Streamable HTTP at POST /mcp', () => {
  test('lists one tool per tool row of the table, the throw-away row included, with the table\'s schemas', async () => {
    const user = await service.user();
    const client = await httpClient(user.token);
    try {
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name).sort();
      // Every tool row this configuration can serve (the microblog rows need X accounts).
      const expected = buildTools([...ENDPOINTS, throwAwayRow, slowRow], OPERATION_DEFAULTS)
        .filter((entry) => entry.endpoint.available?.(service.services) ?? true)
        .map((entry) => entry.tool.name)
        .sort();
      assert.ok(expected.length >= 20, expected.join(', '));
      assert.deepEqual(names, expected);
      for (const name of ['search', 'web', 'pdf', 'image', 'map', 'crawl', 'crawl_status', 'batch', 'batch_status', 'forum_search', 'me', 'echo_word']) {
        assert.ok(names.includes(name), name);
      }
      assert.ok(!names.some((name) => name.startsWith('admin')), names.join(', '));
      // Without X_ACCOUNTS the logged-in microblog rows cannot serve: not listed.
      assert.ok(names.includes('mb_tweet') && !names.includes('mb_search'), names.join(', '));
      const echo = tools.find((tool) => tool.name === 'echo_word');
      assert.deepEqual(echo?.inputSchema, { type: 'object', properties: { word: { type: 'string', description: 'The word to echo.' } }, required: ['word'] });
      assert.match(echo?.description ?? '', /^Echo a word\.\n\nAnswers the word\. Costs 1 credit\./);
      const search = tools.find((tool) => tool.name === 'search');
      assert.deepEqual(search?.inputSchema.required, ['query']);
    } finally {
      await client.close();
    }
  });

  test('descriptions quote the price table of the moment', async () => {
    const user = await service.user();
    const client = await httpClient(user.token);
    try {
      await service.services.prices.set('web', 2);
      const { tools } = await client.listTools();
      assert.match(tools.find((tool) => tool.name === 'echo_word')?.description ?? '', /Costs 2 credits\./);
    } finally {
      await service.services.prices.set('web', OPERATION_DEFAULTS.web);
      await client.close();
    }
  });

  test('search: results as structured content, charged and recorded as the API does', async () => {
    const user = await service.user({ scraping: 10 });
    const client = await httpClient(user.token);
    try {
      const result = (await client.callTool({ name: 'search', arguments: { query: 'meter' } })) as CallToolResult;
      assert.equal(result.isError, undefined, texts(result).join('\n'));
      const structured = result.structuredContent as { response: Array<{ title: string; url: string }> };
      assert.deepEqual(
        structured.response.map((item) => [item.title, item.url]),
        fixtureResults('bing', 10).map((item) => [item.title, item.url]),
      );
      assert.deepEqual(JSON.parse(texts(result)[0]), structured);
      assert.equal(await balance(user.id, 'scraping'), 7);
      assert.deepEqual(await lastRequest(user.token).then((row) => [row.endpoint, row.credits, row.product, row.status]), ['/v1/engine-search', 3, 'scraping', 200]);
    } finally {
      await client.close();
    }
  });

  test('pdf: every page\'s text, one credit a page', async () => {
    const user = await service.user({ extraction: 10 });
    const client = await httpClient(user.token);
    try {
      const result = (await client.callTool({ name: 'pdf', arguments: { url: `${upstream.url}/report.pdf` } })) as CallToolResult;
      assert.equal(result.isError, undefined, texts(result).join('\n'));
      const structured = result.structuredContent as { pages: Array<{ page: number; text: string }>; metadata: { page_count: number } };
      assert.deepEqual(structured.pages, MULTI_PAGE_LINES.map((lines, i) => ({ page: i + 1, text: lines.join('\n') })));
      assert.equal(structured.metadata.page_count, 3);
      assert.equal(await balance(user.id, 'extraction'), 7);
      assert.deepEqual(await lastRequest(user.token).then((row) => [row.endpoint, row.credits, row.product]), ['/v1/pdf', 3, 'extraction']);
    } finally {
      await client.close();
    }
  });

  test('web as Markdown: the page is the first text block, the rest structured', async () => {
    const user = await service.user({ scraping: 5 });
    const client = await httpClient(user.token);
    try {
      const result = (await client.callTool({ name: 'web', arguments: { url: `${upstream.url}/article`, format: 'markdown' } })) as CallToolResult;
      assert.equal(result.isError, undefined, texts(result).join('\n'));
      const [page, rest] = texts(result);
      for (const heading of ARTICLE_HEADINGS) assert.match(page, new RegExp(`^#{1,3} ${heading}$`, 'm'));
      for (const chrome of CHROME_TEXTS) assert.ok(!page.includes(chrome), chrome);
      const meta = JSON.parse(rest) as { response: Record<string, unknown> };
      assert.equal(meta.response.status_code, 200);
      assert.equal('content' in meta.response, false);
      assert.equal((result.structuredContent as { response: { content: string } }).response.content, page);
      assert.equal(await balance(user.id, 'scraping'), 4);
      assert.deepEqual(await lastRequest(user.token).then((row) => [row.endpoint, row.credits]), ['/v1/web', 1]);
    } finally {
      await client.close();
    }
  });

  test('failures are tool errors with the API\'s message and status, and cost nothing', async () => {
    const user = await service.user({ scraping: 5, extraction: 1 });
    const client = await httpClient(user.token);
    try {
      const invalid = (await client.callTool({ name: 'search', arguments: {} })) as CallToolResult;
      assert.equal(invalid.isError, true);
      assert.equal(texts(invalid)[0], 'The given data was invalid. (HTTP 422)\nquery: The query field is required.');
      assert.deepEqual(invalid.structuredContent, { status: 422, message: 'The given data was invalid.', errors: { query: ['The query field is required.'] } });
      const poor = (await client.callTool({ name: 'pdf', arguments: { url: `${upstream.url}/report.pdf` } })) as CallToolResult;
      assert.equal(poor.isError, true);
      assert.match(texts(poor)[0]!, /^You do not have enough credits to perform this action\. \(HTTP 403\)\nextraction: \d+ credits needed, balance 1$/);
      assert.equal(await balance(user.id, 'scraping'), 5);
      assert.equal(await balance(user.id, 'extraction'), 1);
      assert.deepEqual(await lastRequest(user.token).then((row) => [row.endpoint, row.credits, row.status]), ['/v1/pdf', 0, 403]);
      await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /Unknown tool: no_such_tool/);
    } finally {
      await client.close();
    }
  });

  test('the throw-away row\'s tool is called through the pipeline and billed', async () => {
    const user = await service.user({ scraping: 3 });
    const client = await httpClient(user.token);
    try {
      const result = (await client.callTool({ name: 'echo_word', arguments: { word: 'hello' } })) as CallToolResult;
      assert.deepEqual(result.structuredContent, { response: { word: 'hello' } });
      assert.equal(await balance(user.id, 'scraping'), 2);
      assert.deepEqual(await lastRequest(user.token).then((row) => [row.endpoint, row.credits]), ['/v1/echo-word', 1]);
    } finally {
      await client.close();
    }
  });

  test('me and job tools: balances, and a path parameter filled in from the arguments', async () => {
    const user = await service.user({ scraping: 4 });
    const client = await httpClient(user.token);
    try {
      const me = (await client.callTool({ name: 'me', arguments: {} })) as CallToolResult;
      assert.equal(me.isError, undefined, texts(me).join('\n'));
      assert.match(JSON.stringify(me.structuredContent), /"scraping"/);
      const missing = (await client.callTool({ name: 'crawl_status', arguments: { id: '00000000-0000-4000-8000-000000000000' } })) as CallToolResult;
      assert.equal(missing.isError, true);
      assert.match(texts(missing)[0], /\(HTTP 404\)$/);
    } finally {
      await client.close();
    }
  });

  test('a client that goes away mid-call stops the work and is charged nothing', async () => {
    const user = await service.user({ scraping: 5 });
    const hangUp = new AbortController();
    const call = fetch(`${service.url}/mcp`, {
      method: 'POST',
      signal: hangUp.signal,
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow_thing', arguments: {} } }),
    }).catch((error: unknown) => error);
    await waitUntil(async () => slowWork.started === 1, 10_000, 'the slow work to start');
    hangUp.abort();
    await call;
    await waitUntil(async () => slowWork.stopped, 10_000, 'the slow work to stop');
    await waitUntil(async () => (await lastRequest(user.token))?.status === 499, 10_000, 'the history row');
    assert.deepEqual(await lastRequest(user.token).then((row) => [row.endpoint, row.credits, row.status]), ['/v1/slow-thing', 0, 499]);
    assert.equal(await balance(user.id, 'scraping'), 5);
  });

  test('a missing or wrong token is refused as the API refuses it', async () => {
    for (const headers of [{}, { authorization: 'Bearer 1|wrong' }]) {
      const response = await fetch(`${service.url}/mcp`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(response.status, 401);
      assert.deepEqual(await response.json(), { message: 'Unauthenticated.' });
    }
    const client = new Client({ name: 'mcp-test', version: '1.0.0' });
    await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL('/mcp', service.url), { requestInit: { headers: { authorization: 'Bearer 1|wrong' } } })), /Unauthenticated/);
  });

  test('GET and DELETE: 405 with Allow: POST (the server keeps no sessions)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${service.url}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      assert.equal(response.status, 405, method);
      assert.equal(response.headers.get('allow'), 'POST');
    }
  });
});

describe('MCP over stdio: bin/gleaner mcp', () => {
  const spawnClient = async (token: string, stderr: string[]) => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(ROOT, 'bin/gleaner'), 'mcp', '--token', token],
      env: { PATH: process.env.PATH ?? '', GLEANER_URL: service.url },
      cwd: ROOT,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const client = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
    await client.connect(transport);
    return client;
  };

  test('lists the server\'s tools and calls search through it, charged and recorded', async () => {
    const user = await service.user({ scraping: 10 });
    const client = await spawnClient(user.token, []);
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((tool) => tool.name === 'echo_word'), 'the server\'s table, not the command\'s');
      assert.ok(tools.some((tool) => tool.name === 'search'));
      const result = (await client.callTool({ name: 'search', arguments: { query: 'meter' } })) as CallToolResult;
      assert.equal(result.isError, undefined, texts(result).join('\n'));
      assert.equal((result.structuredContent as { response: unknown[] }).response.length, 10);
      const invalid = (await client.callTool({ name: 'web', arguments: { url: 'not a url' } })) as CallToolResult;
      assert.equal(invalid.isError, true);
      assert.match(texts(invalid)[0], /^The given data was invalid\. \(HTTP 422\)\nurl: The url must be a valid URL\./);
      assert.equal(await balance(user.id, 'scraping'), 7);
      assert.deepEqual(await lastRequest(user.token).then((row) => [row.endpoint, row.status]), ['/v1/web', 422]);
    } finally {
      await client.close();
    }
  });

  test('a wrong token ends the command with the server\'s refusal', async () => {
    const stderr: string[] = [];
    await assert.rejects(spawnClient('1|wrong', stderr));
    assert.match(stderr.join(''), /refused the token \(401 Unauthenticated\.\)/);
  });
});
