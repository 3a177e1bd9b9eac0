// Pinterest's own contract for the fake: every request to the API is checked against the vendored OpenAPI description
// (./openapi.json, from github.com/pinterest/api-description at the revision named in its `x-herald-source`; refreshed with
// scripts/contracts/pinterest.mjs) by the shared OpenAPI checker (../openapi.ts). A mismatch is a bug of Herald's request,
// so the fake refuses it (400) and records it for the test to fail on.
import fs from 'node:fs';
import type { RecordedRequest } from '../../helpers/fake-server.js';
import { openApiContract } from '../openapi.js';

const contract = JSON.parse(fs.readFileSync(new URL('./openapi.json', import.meta.url), 'utf8'));
export const pinterestContractSource: { url: string; revision: string; version: string; retrieved: string } = contract['x-herald-source'];
const checker = openApiContract(contract, `Pinterest API ${pinterestContractSource.version}`);

/** What in a request the contract refuses, one sentence each; [] when it matches. `path` is relative to the API base (/v5). */
export function contractProblems(request: Pick<RecordedRequest, 'method' | 'query' | 'json' | 'form' | 'body'>, path: string): string[] {
  return checker.problems(request, path);
}
