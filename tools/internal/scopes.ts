// What a credential may do (issue 23, DESIGN §9), by name like GitHub's fine-grained tokens. Each tool needs one scope
// (`ToolDefinition.scope`, or `read` for a read-only tool and `posts:write` for any other); the runner checks it and MCP
// lists only the tools the caller may call.
import type { Caller, ToolDefinition } from '../types.js';

export const API_SCOPES = ['read', 'posts:write', 'approve', 'channels:manage', 'organization:manage'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

export const API_SCOPE_DESCRIPTIONS: Record<ApiScope, string> = {
  read: 'See channels, posts, analytics, media and notifications',
  'posts:write': 'Create, schedule, change and delete posts and media (under the approval gate unless an owner key)',
  approve: 'Approve or reject posts waiting for approval (never a post the same key created)',
  'channels:manage': 'Connect, configure and remove channels',
  'organization:manage': 'Manage API keys, members, webhooks, apps and the approval gate; an owner key, never gated',
};

/** Keys made without `scopes`: what an agent needs, and nothing that opens the gate or manages the organization. */
export const AGENT_PRESET: readonly ApiScope[] = ['read', 'posts:write'];
export const OWNER_SCOPES: readonly ApiScope[] = API_SCOPES;

/**
 * OAuth scopes granted before named scopes existed keep their powers: `mcp:read` reads; `mcp:write` wrote posts and changed
 * channels. Webhooks and the gate were never an OAuth app's to change (organization:manage).
 */
const LEGACY: Record<string, readonly ApiScope[]> = { 'mcp:read': ['read'], 'mcp:write': ['read', 'posts:write', 'channels:manage'] };

/** The named scopes of a stored scope list (named scopes pass through; `mcp:*` are mapped; unknown names are dropped). */
export function expandScopes(stored: readonly string[]): ApiScope[] {
  const granted = new Set<ApiScope>();
  for (const scope of stored) {
    if ((API_SCOPES as readonly string[]).includes(scope)) granted.add(scope as ApiScope);
    for (const mapped of LEGACY[scope] ?? []) granted.add(mapped);
  }
  return API_SCOPES.filter((scope) => granted.has(scope));
}

/** The scope a tool needs. */
export function toolScope(tool: Pick<ToolDefinition, 'scope' | 'annotations'>): ApiScope {
  return tool.scope ?? (tool.annotations.readOnlyHint ? 'read' : 'posts:write');
}

/** Whether the caller holds the scope (scopes stored before named keys, mcp:read and mcp:write, count as what they map to). */
export const hasScope = (caller: Caller, scope: ApiScope): boolean => expandScopes(caller.scopes).includes(scope);

/**
 * An owner credential: a person signed in to the console, or an API key that manages the organization (the organization
 * key). It is never held at the approval gate: whoever holds it could open the gate anyway. Every other credential (agent
 * keys, OAuth tokens) is an agent's.
 */
export function isOwnerCredential(caller: Caller): boolean {
  return caller.credentialKind === 'session' || (caller.credentialKind === 'api_key' && hasScope(caller, 'organization:manage'));
}
