// Pinterest's own contract for the fake: every request to the API is checked against the vendored OpenAPI description
// (./openapi.json, from github.com/pinterest/api-description at the revision named in its `x-herald-source`; refreshed with
// scripts/contracts/pinterest.mjs) by the shared OpenAPI checker (../openapi.ts). A mismatch is a bug of Herald's request,
// so the fake refuses it (400) and records it for the test to fail on.
import { vendoredOpenApi } from '../openapi.js';

const vendored = vendoredOpenApi(new URL('./openapi.json', import.meta.url), (source) => `Pinterest API ${source.version}`);
export const pinterestContractSource = vendored.source;
/** What in a request the contract refuses, one sentence each; [] when it matches. `path` is relative to the API base (/v5). */
export const contractProblems = vendored.problems;
