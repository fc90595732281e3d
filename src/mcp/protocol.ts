/**
 * The MCP server both transports run: tools listed and called through a `ToolSource` (the table in
 * the server's process, or a running server for `gleaner mcp`). Kept free of the server's modules,
 * so the stdio command loads only the SDK.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';

export const MCP_PATH = '/mcp';

/** Where a server's tools come from and how a call is answered. */
export interface ToolSource {
  list(): Promise<Tool[]>;
  call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
}

/** What MCP clients are told about the server when they connect. */
export const INSTRUCTIONS =
  'Tools of a credit-metered web data API: web search, web pages as text or Markdown, PDFs and images to text, forums, microblogs, crawls. ' +
  'Each tool description states what it costs; a call is charged only when it succeeds. The `me` tool shows the balances.';

/** An MCP server (not yet connected) whose tools are `source`'s. */
export function createToolServer(source: ToolSource, version: string): Server {
  // The low-level server: the tools and their JSON Schemas come from a table, not from code.
  const server = new Server({ name: 'gleaner', version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await source.list() }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => source.call(request.params.name, request.params.arguments ?? {}, extra.signal));
  return server;
}
