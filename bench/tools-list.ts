// tools/list: the bytes every MCP conversation is sent each turn before the user says anything (DESIGN §11), per kind of
// credential (each sees only the tools it may call). The agent key's budget, 24,000 bytes, is a contract checked by
// test/mcp-agent.test.ts; this figure shows where each kind stands and which tools weigh most.
import { listedTools } from '../src/mcp/server.js';
import { AGENT_PRESET, OWNER_SCOPES } from '../tools/internal/scopes.js';
import type { Caller } from '../tools/types.js';
import { heading } from './lib/stats.js';

const KINDS: { kind: string; caller: Pick<Caller, 'credentialKind' | 'scopes'> }[] = [
  { kind: 'agent key (read, posts:write)', caller: { credentialKind: 'api_key', scopes: AGENT_PRESET } },
  { kind: 'read-only key', caller: { credentialKind: 'api_key', scopes: ['read'] } },
  { kind: 'OAuth app (mcp:write)', caller: { credentialKind: 'oauth_token', scopes: ['mcp:write'] } },
  { kind: 'owner key (every scope)', caller: { credentialKind: 'api_key', scopes: OWNER_SCOPES } },
];

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

export async function toolsListFigure(): Promise<void> {
  heading('tools/list size per key kind (bytes of the JSON-RPC result; ~4 bytes a token)');
  for (const { kind, caller } of KINDS) {
    const tools = listedTools({ organizationId: 'bench', credentialId: 'bench', ...caller });
    const bytes = bytesOf({ tools });
    console.log(`  ${kind.padEnd(32)} ${String(tools.length).padStart(2)} tools  ${String(bytes).padStart(6)} bytes  ~${Math.round(bytes / 4)} tokens`);
  }
  const agent = listedTools({ organizationId: 'bench', credentialId: 'bench', credentialKind: 'api_key', scopes: AGENT_PRESET });
  const heaviest = [...agent].sort((a, b) => bytesOf(b) - bytesOf(a)).slice(0, 5);
  console.log(`  heaviest for an agent key: ${heaviest.map((tool) => `${tool.name} ${bytesOf(tool)}`).join(', ')}`);
}
