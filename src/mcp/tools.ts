/**
 * The MCP tools, derived from the endpoint table: one tool per row an agent may call (every billed
 * row, every /v1 row, and GET /me for the balances), named from its path, described from its
 * summary and description (prices quoted from the current price table), with the row's request
 * schema as the tool's input schema (the same JSON Schema /openapi.json publishes).
 *
 * Everything here is a function of a table and a price table, so a row added to the table is a
 * tool with no other code, and a test can build the tools of any table.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { priceText, type Endpoint, type HttpMethod } from '../pipeline/endpoint.ts';
import type { PriceTable } from '../credits/prices.ts';
import { pathParameters, toJsonSchema } from '../validation/schema.ts';
import type { JsonSchema } from '../validation/rules.ts';

/** Account rows that are tools although unbilled and outside /v1: the caller's balances. */
const ACCOUNT_TOOLS: ReadonlyArray<{ method: HttpMethod; path: string; name: string }> = [{ method: 'GET', path: '/me', name: 'me' }];

/** MCP tool names: letters, digits, `_`, `-` and `.`, at most 64 characters (the spec's SEP-986). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export interface TableTool {
  /** What tools/list shows. */
  tool: Tool;
  endpoint: Endpoint;
}

/** Whether a row is a tool: billed or under /v1, never an owner-only or /admin row. */
export function isToolRow(endpoint: Endpoint): boolean {
  if (endpoint.access === 'owner' || endpoint.path.startsWith('/admin')) return false;
  if (endpoint.billing || endpoint.path.startsWith('/v1/')) return true;
  return ACCOUNT_TOOLS.some((row) => row.method === endpoint.method && row.path === endpoint.path);
}

/**
 * The tool name of a row: its explicit `toolName`, else its path without `/v1` and parameters,
 * `-` and `/` read as `_` (`/v1/forum/search` → `forum_search`), then what the method does there:
 *
 * - `POST`: the bare name (`search`, `crawl`, `chain_monitors` creates one);
 * - `GET` of one item (the path ends in a parameter): `…_status` (`crawl_status`);
 * - `GET` of a path that also takes a `POST`: `…_list` (`chain_monitors_list`); other `GET`s: the bare name;
 * - anything else: the verb of the row's operationId (`cancelCrawl` → `crawl_cancel`,
 *   `resumeChainMonitor` → `chain_monitors_resume`), else `…_delete` or `…_update`.
 *
 * `table` is the rows the name must stand out among (for the `…_list` rule).
 */
export function toolNameOf(endpoint: Endpoint, table: readonly Endpoint[] = []): string {
  if (endpoint.toolName) return endpoint.toolName;
  const account = ACCOUNT_TOOLS.find((row) => row.method === endpoint.method && row.path === endpoint.path);
  if (account) return account.name;
  const segments = endpoint.path.split('/').filter(Boolean);
  if (segments[0] === 'v1') segments.shift();
  const ofOneItem = segments.at(-1)?.startsWith('{') ?? false;
  const base = segments
    .filter((segment) => !segment.startsWith('{'))
    .join('_')
    .replace(/[^A-Za-z0-9_]+/g, '_');
  switch (endpoint.method) {
    case 'POST':
      return base;
    case 'GET':
      if (ofOneItem) return `${base}_status`;
      return table.some((row) => row.method === 'POST' && row.path === endpoint.path) ? `${base}_list` : base;
    default: {
      const verb = /^[a-z]+/.exec(endpoint.operationId ?? '')?.[0];
      return `${base}_${verb ?? (endpoint.method === 'DELETE' ? 'delete' : 'update')}`;
    }
  }
}

/**
 * The input schema: the row's request schema as /openapi.json publishes it, plus its path
 * parameters (required), since a tool has one object of arguments. `example` becomes JSON
 * Schema's `examples`.
 */
export function inputSchemaOf(endpoint: Endpoint): Tool['inputSchema'] {
  const schema = toJsonSchema(endpoint.schema);
  const properties: Record<string, JsonSchema> = {};
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  for (const parameter of pathParameters(endpoint.schema)) {
    properties[parameter.name] = { ...parameter.schema, ...(parameter.description ? { description: parameter.description } : {}) };
    required.add(parameter.name);
  }
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) properties[name] = property;
  for (const [name, { example, ...property }] of Object.entries(properties)) {
    properties[name] = example === undefined ? property : { ...property, examples: [example] };
  }
  return { type: 'object', properties, ...(required.size ? { required: [...required] } : {}) };
}

/** What a tool costs, in words, from the price table of the moment. */
export function costText(endpoint: Endpoint, prices: PriceTable): string {
  const billing = endpoint.billing;
  if (!billing) return 'Free.';
  const text = priceText(prices);
  // A fixed operation's unit price can be quoted; one picked from the input is quoted by the row's description.
  const unit = typeof billing.operation === 'string' ? ` One unit (\`${billing.operation}\`) is ${text.credits(billing.operation)} at current prices.` : '';
  return `Billed to the ${billing.product} balance, only on success.${unit}`;
}

/**
 * What is wrong with the tool names of a table: a name MCP refuses, or two rows with one name.
 * Empty for a good table (test/unit/mcp-tools.test.ts keeps the real one so).
 */
export function toolNameProblems(endpoints: readonly Endpoint[]): string[] {
  const problems: string[] = [];
  const seen = new Map<string, Endpoint>();
  for (const endpoint of endpoints.filter(isToolRow)) {
    const name = toolNameOf(endpoint, endpoints);
    if (!TOOL_NAME.test(name)) problems.push(`${endpoint.method} ${endpoint.path}: "${name}" is not a valid MCP tool name; set the row's toolName.`);
    const taken = seen.get(name);
    if (taken) problems.push(`${endpoint.method} ${endpoint.path} and ${taken.method} ${taken.path} are both the MCP tool "${name}": set one row's toolName.`);
    seen.set(name, endpoint);
  }
  return problems;
}

/**
 * The tools of a table, with descriptions quoting `prices`. A bad name in the table never takes
 * the other tools down: an invalid one is cleaned, a repeated one gets the method, then a number.
 */
export function buildTools(endpoints: readonly Endpoint[], prices: PriceTable): TableTool[] {
  const text = priceText(prices);
  const byName = new Map<string, TableTool>();
  for (const endpoint of endpoints.filter(isToolRow)) {
    let name = toolNameOf(endpoint, endpoints).replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 64) || 'tool';
    if (byName.has(name)) name = `${name}_${endpoint.method.toLowerCase()}`.slice(0, 64);
    for (let n = 2; byName.has(name); n++) name = `${name.slice(0, 60)}_${n}`;
    const description = [
      endpoint.summary + '.',
      typeof endpoint.description === 'function' ? endpoint.description(text) : endpoint.description,
      costText(endpoint, prices),
    ]
      .filter(Boolean)
      .join('\n\n');
    byName.set(name, {
      endpoint,
      tool: {
        name,
        title: endpoint.summary,
        description,
        inputSchema: inputSchemaOf(endpoint),
        annotations: {
          title: endpoint.summary,
          readOnlyHint: endpoint.method === 'GET',
          destructiveHint: endpoint.method === 'DELETE',
          idempotentHint: endpoint.method === 'GET' || endpoint.method === 'DELETE',
          // The scraping and extraction rows reach the open web; account rows read our own records.
          openWorldHint: endpoint.path.startsWith('/v1/'),
        },
      },
    });
  }
  return [...byName.values()];
}

/** The HTTP request a tool call stands for: path parameters filled in, the rest in the body or the query. */
export interface ToolRequest {
  method: HttpMethod;
  url: string;
  body?: Record<string, unknown>;
}

export function requestOf(endpoint: Endpoint, args: Record<string, unknown>): ToolRequest {
  const rest = { ...args };
  const path = endpoint.path.replace(/\{([^/}]+)\}/g, (_match, name: string) => {
    const value = rest[name];
    delete rest[name];
    // A missing parameter is left as an empty segment: the route answers it as the API would.
    return encodeURIComponent(value === undefined || value === null ? '' : String(value));
  });
  if (endpoint.input === 'body') return { method: endpoint.method, url: path, body: rest };
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(rest)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const item of value) query.append(name, queryValue(item));
    else query.append(name, queryValue(value));
  }
  const search = query.toString();
  return { method: endpoint.method, url: search ? `${path}?${search}` : path };
}

function queryValue(value: unknown): string {
  if (typeof value === 'boolean') return value ? '1' : '0';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** The formats whose answer is a page's text for a person to read, not data. */
const TEXT_FORMATS = new Set(['text', 'markdown']);

/** The API's answer to a tool call. */
export interface ToolAnswer {
  status: number;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
  requestId?: string;
}

/**
 * The tool result of an answer. A success is structured content (the JSON body) with its JSON as
 * text; when the caller asked for a page as `text` or `markdown`, the page itself is the first text
 * block. A failure is a tool error carrying the API's message, its field errors and its status.
 */
export function resultOf(args: Record<string, unknown>, answer: ToolAnswer): CallToolResult {
  const meta = { status: answer.status, ...(answer.requestId ? { request_id: answer.requestId } : {}) };
  const body = answer.body;
  if (answer.status < 200 || answer.status >= 300) {
    const record = isRecord(body) ? body : { message: typeof body === 'string' && body ? body : 'The API answered with no message.' };
    const lines = [`${String(record.message)} (HTTP ${answer.status})`];
    if (isRecord(record.errors)) {
      for (const [field, messages] of Object.entries(record.errors)) lines.push(...(Array.isArray(messages) ? messages : [messages]).map((message) => `${field}: ${String(message)}`));
    }
    if (isRecord(record.expected)) for (const [field, wanted] of Object.entries(record.expected)) lines.push(`${field}: expected ${String(wanted)}`);
    if (typeof record.product === 'string' && typeof record.required === 'number') lines.push(`${record.product}: ${record.required} credits needed, balance ${String(record.balance)}`);
    return { isError: true, content: [{ type: 'text', text: lines.join('\n') }], structuredContent: { status: answer.status, ...record }, _meta: meta };
  }
  const structured = isRecord(body) ? body : { response: body };
  const page = pageText(args, structured);
  const content: CallToolResult['content'] = page === undefined ? [] : [{ type: 'text', text: page }];
  content.push({ type: 'text', text: JSON.stringify(page === undefined ? structured : withoutPage(structured)) });
  return { content, structuredContent: structured, _meta: meta };
}

/** The page's text, when the caller asked for `format: text | markdown` and the answer carries it. */
function pageText(args: Record<string, unknown>, body: Record<string, unknown>): string | undefined {
  if (typeof args.format !== 'string' || !TEXT_FORMATS.has(args.format)) return undefined;
  const holder = isRecord(body.response) ? body.response : body;
  return typeof holder.content === 'string' ? holder.content : undefined;
}

/** The answer without the page's text, which the first block already carries. */
function withoutPage(body: Record<string, unknown>): Record<string, unknown> {
  if (isRecord(body.response)) {
    const { content: _content, ...response } = body.response;
    return { ...body, response };
  }
  const { content: _content, ...rest } = body;
  return rest;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
