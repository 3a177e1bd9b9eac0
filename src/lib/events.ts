// Changes to posts that MCP sessions may have subscribed to (herald://posts/{id}). The publishing core and the approval
// and edit operations announce a change here; the MCP layer delivers it (src/mcp/resources.ts `resourceUpdates`): to every
// session of the organization subscribed to the post, whichever process holds its stream, through the sessions' stored
// stream events (Postgres) — so a worker process announces as well as a web process.
export interface PostChange {
  kind: 'post';
  organizationId: string;
  /** The root post of the chain. */
  postId: string;
  /** The root's state after the change. */
  state: string;
}

export interface PostChanges {
  publish(change: PostChange): Promise<void>;
}
