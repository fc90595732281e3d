/**
 * `gleaner mcp`: the MCP server over stdio, for clients that start a command (Claude Desktop,
 * Cursor, VS Code). It holds no database and no table of its own: it relays every message to a
 * running server's `POST /mcp` with the caller's token, so the tools, their prices and every
 * charge are that server's, whatever version of gleaner runs the command.
 *
 * Loaded without the server's modules, so it starts in a moment.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolResultSchema, ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { createToolServer, MCP_PATH } from './protocol.ts';

export const DEFAULT_GLEANER_URL = 'http://127.0.0.1:8080';

/** Long enough for the slowest tool (a scanned PDF through OCR); the API's own deadlines end a stuck call first. */
const CALL_TIMEOUT_MS = 10 * 60_000;

/** A bad option or setting: the command line's usage error (exit 2). */
export class McpUsageError extends Error {}

/** The server refused the token or could not be reached (exit 1). */
export class McpConnectError extends Error {}

export interface StdioOptions {
  /** The running server's base URL (`GLEANER_URL`). */
  url: string;
  token: string;
  version: string;
}

/** `--token <token>` (or `GLEANER_TOKEN`) and `GLEANER_URL`, checked before anything is started. */
export function stdioOptions(args: string[], env: NodeJS.ProcessEnv, version: string): StdioOptions {
  let token = env.GLEANER_TOKEN?.trim() || undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--token') {
      if (args[i + 1] === undefined) throw new McpUsageError('--token needs a value: gleaner mcp --token <API token>.');
      token = args[++i].trim();
    }
    else if (arg.startsWith('--token=')) token = arg.slice('--token='.length).trim();
    else throw new McpUsageError(`Unknown option: ${arg}\n\nUsage: gleaner mcp --token <API token>   (or GLEANER_TOKEN; GLEANER_URL defaults to ${DEFAULT_GLEANER_URL})`);
  }
  if (!token) throw new McpUsageError('an API token is needed: --token <token> or GLEANER_TOKEN.');
  const raw = env.GLEANER_URL?.trim() || DEFAULT_GLEANER_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new McpUsageError(`GLEANER_URL must be the server's URL, such as ${DEFAULT_GLEANER_URL}; got "${raw}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new McpUsageError(`GLEANER_URL must be an http or https URL; got "${raw}".`);
  return { url: url.toString(), token, version };
}

/**
 * Connects to the server first, so a wrong token or an unreachable server ends the command at
 * once with a message (the MCP client shows it as a failed server) rather than failing each call.
 * Resolves once stdin closes.
 */
export async function runStdio(options: StdioOptions): Promise<void> {
  const client = new Client({ name: 'gleaner-mcp-stdio', version: options.version });
  const endpoint = new URL(MCP_PATH.slice(1), options.url.endsWith('/') ? options.url : `${options.url}/`);
  const upstream = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${options.token}` } } });
  try {
    await client.connect(upstream);
  } catch (error) {
    throw new McpConnectError(connectFailure(endpoint, error));
  }
  const server = createToolServer(
    {
      list: async () => (await client.request({ method: 'tools/list', params: {} }, ListToolsResultSchema)).tools,
      call: (name, args, signal) => client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema, { signal, timeout: CALL_TIMEOUT_MS }),
    },
    options.version,
  );
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(new StdioServerTransport());
  await closed;
  await client.close();
}

function connectFailure(endpoint: URL, error: unknown): string {
  if (error instanceof StreamableHTTPError) {
    // The body is the API's answer: `{"message":"Unauthenticated."}` for a refused token.
    // From the first `{` to the last `}`: what `/\{.*\}/s` matches, without its quadratic backtracking.
    const [open, close] = [error.message.indexOf('{'), error.message.lastIndexOf('}')];
    const message = open !== -1 && close > open ? error.message.slice(open, close + 1) : undefined;
    let said = error.message;
    try {
      said = message ? String(JSON.parse(message).message ?? message) : said;
    } catch {
      // Not JSON: the transport's own words.
    }
    if (error.code === 401) return `${endpoint.origin} refused the token (401 ${said}). Use an API token of this server: gleaner tokens create --user <id>.`;
    return `${endpoint.href} answered ${error.code}: ${said}`;
  }
  return `Cannot reach gleaner at ${endpoint.origin} (${(error as Error).message}). Is it running? Set GLEANER_URL to its address.`;
}
