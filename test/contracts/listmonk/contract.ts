// listmonk's own contract for the fake: every request to the API is checked against the vendored OpenAPI 3 document
// (./openapi.json: docs/swagger/collections.yaml of github.com/knadh/listmonk, cut down to Herald's operations by
// scripts/contracts/listmonk.mjs, source and revision in its `x-herald-source`, corrections from the server's source in
// `x-herald-corrections`) by the shared checker (../openapi.ts). A mismatch is a bug of Herald's request, so the fake refuses
// it and records it for the test to fail on.
import { vendoredOpenApi } from '../openapi.js';

const vendored = vendoredOpenApi(new URL('./openapi.json', import.meta.url), (source) => `listmonk API (${source.revision.split(' ').slice(0, 2).join(' ')})`);
export const listmonkContractSource = vendored.source;
/** What in a request the contract refuses, one sentence each; [] when it matches. `path` is relative to the server URL (/api). */
export const contractProblems = vendored.problems;
