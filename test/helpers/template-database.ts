// The migrated template database every test file clones, and connection strings to other databases of the same server.
// Shared by the global setup (which makes the template) and the harness (which clones it).

export const TEMPLATE = 'herald_template';

/** The connection string `url` with its database replaced by `database`. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
