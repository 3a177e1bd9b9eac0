// Forem's own contract for the DEV fake: every request to the API is checked against the vendored OpenAPI 3 document
// (./openapi.json: Forem API v1, cut down to Herald's operations by scripts/contracts/devto.mjs, source and revision in its
// `x-herald-source`, corrections from Forem's controller in `x-herald-corrections`) by the shared checker (../openapi.ts).
// A mismatch is a bug of Herald's request, so the fake refuses it and records it for the test to fail on.
import type { RecordedRequest } from '../../helpers/fake-server.js';
import { vendoredOpenApi } from '../openapi.js';

const vendored = vendoredOpenApi(new URL('./openapi.json', import.meta.url), (source) => `Forem API v1 ${source.version}`);
export const devtoContractSource = vendored.source;

/** Forem's v1 API is chosen by this media type; without it the same URLs answer the deprecated v0 API. */
export const FOREM_V1_ACCEPT = 'application/vnd.forem.api-v1+json';

/** What in a request the contract refuses, one sentence each; [] when it matches. `path` is relative to the server URL (/api). */
export function contractProblems(request: Pick<RecordedRequest, 'method' | 'query' | 'json' | 'form' | 'body' | 'headers'>, path: string): string[] {
  const problems = vendored.problems(request, path);
  const accept = String(request.headers.accept ?? '');
  if (!accept.split(',').some((type) => type.trim() === FOREM_V1_ACCEPT)) problems.push(`the Accept header is "${accept}", not ${FOREM_V1_ACCEPT}: Forem would answer with its deprecated v0 API`);
  return problems;
}
