/**
 * `cnirec mcp`: an MCP server on stdin/stdout for an agent's client, talking to a daemon's API with the
 * CLI's client (--api, --token, --token-file as every command takes them). stdout carries the protocol
 * only; a line on stderr says where it is pointed. It serves until the client closes stdin.
 */

import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { ClientOptions } from '../api-client.js';
import { parseCommand } from '../flags.js';
import { stderr } from '../output.js';
import { createMcpServer } from './server.js';

export const MCP_USAGE = 'usage: cnirec mcp [--allow-capture-changes]   (an MCP server on stdio; --api, --token, --token-file as for every command)';

export async function mcpCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values } = parseCommand(args, { 'allow-capture-changes': { type: 'boolean' } }, MCP_USAGE);
  const server = createMcpServer(client, { allowCaptureChanges: values['allow-capture-changes'] ?? false });
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  await server.connect(new StdioServerTransport());
  stderr.line(`cnirec mcp: serving MCP on stdio for the daemon at ${client.api}${values['allow-capture-changes'] ? ' (set_capture offered)' : ''}`);
  await closed;
  await server.close();
  return 0;
}
