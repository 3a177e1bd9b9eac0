// How each MCP client connects to Herald: one source for the console's Developer page (and the README's copy of it).
// Versions are pinned where an unpinned `npx` picks a release that misbehaves: checked on Node 20 and 22.
export const INSPECTOR = '@modelcontextprotocol/inspector@0.16.8';
export const MCP_REMOTE = 'mcp-remote@0.15.1';

export interface ClientSnippet {
  client: string;
  /** Where the snippet goes. */
  where: string;
  text: string;
}

export function clientSnippets(publicUrl: string, key: string): ClientSnippet[] {
  const mcpUrl = `${publicUrl}/api/mcp`;
  const bearer = `Authorization: Bearer ${key}`;
  return [
    {
      client: 'Cursor',
      where: '~/.cursor/mcp.json (streamable HTTP with a header)',
      text: JSON.stringify({ mcpServers: { herald: { url: mcpUrl, headers: { Authorization: `Bearer ${key}` } } } }, null, 2),
    },
    {
      client: 'Claude Desktop',
      where: 'claude_desktop_config.json (its config file starts local programs only: mcp-remote bridges to Herald)',
      text: JSON.stringify({ mcpServers: { herald: { command: 'npx', args: ['-y', MCP_REMOTE, mcpUrl, '--header', bearer] } } }, null, 2),
    },
    { client: 'Claude Code', where: 'a terminal', text: `claude mcp add --transport http herald ${mcpUrl} --header "${bearer}"` },
    { client: 'MCP Inspector', where: 'a terminal', text: `npx -y ${INSPECTOR} --cli ${mcpUrl} --transport http --header "${bearer}" --method tools/list` },
    { client: 'Postiz CLI', where: 'a terminal (npm i -g postiz)', text: `POSTIZ_AUTH_SERVER=${publicUrl} postiz auth:login` },
  ];
}
