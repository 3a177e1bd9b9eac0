// The MCP conformance suite (pinned; it needs Node 22, so it runs through npx from the registry) against the key-in-path
// URL, for both revisions Herald serves. Scenarios that need the suite's own test fixtures (tools, resources and prompts
// named test_*, which a real server does not have) are the expected failures, each named with why.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';

const CONFORMANCE = '@modelcontextprotocol/conformance@0.2.0-alpha.12';
let herald: Herald;

beforeAll(async () => {
  herald = await startHerald();
});
afterAll(async () => {
  await herald.stop();
});

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** Runs the suite for one revision; answers each scenario's checks. */
async function conformance(selection: string[]): Promise<{ output: string; scenarios: Map<string, Check[]> }> {
  const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-conformance-'));
  const run = spawn('npx', ['-y', '-p', 'node@22', '-p', CONFORMANCE, 'conformance', 'server', '--url', `${herald.url}/api/mcp/${herald.apiKey}`, ...selection, '--timeout', '15000', '-o', outputDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  run.stdout.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  run.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  await new Promise((resolve) => run.on('close', resolve));
  const scenarios = new Map<string, Check[]>();
  for (const file of fs.readdirSync(outputDir, { recursive: true }).map(String).filter((name) => name.endsWith('checks.json'))) {
    scenarios.set(path.basename(path.dirname(file)), JSON.parse(fs.readFileSync(path.join(outputDir, file), 'utf8')) as Check[]);
  }
  fs.rmSync(outputDir, { recursive: true, force: true });
  return { output, scenarios };
}

const FIXTURE_PROMPTS = 'needs the suite\'s fixture prompts (test_*): Herald\'s prompts are its own';
const FIXTURE_RESOURCES = 'needs the suite\'s fixture resources (test://...): Herald\'s resources are herald://';
const FIXTURE_TOOLS = 'needs a fixture tool of the suite (test_*, answering images, audio, embedded resources or progress on demand)';
const TASK_FIXTURES = 'the tasks extension scenarios drive fixture tools (slow_compute, failing_job, confirm_delete...) Herald does not have; never scored';

/** Scenarios of both revisions that fail for a server without the suite's fixtures, and why. */
const FIXTURE_SCENARIOS: Record<string, string> = {
  'server-prompts-get-simple': FIXTURE_PROMPTS,
  'server-prompts-get-with-args': FIXTURE_PROMPTS,
  'server-prompts-get-embedded-resource': FIXTURE_PROMPTS,
  'server-prompts-get-with-image': FIXTURE_PROMPTS,
  'server-resources-read-text': FIXTURE_RESOURCES,
  'server-resources-read-binary': FIXTURE_RESOURCES,
  'server-resources-templates-read': FIXTURE_RESOURCES,
  'server-tools-call-image': FIXTURE_TOOLS,
  'server-tools-call-audio': FIXTURE_TOOLS,
  'server-tools-call-embedded-resource': FIXTURE_TOOLS,
  'server-tools-call-mixed-content': FIXTURE_TOOLS,
  'server-tools-call-with-progress': FIXTURE_TOOLS,
};

const EXPECTED_FAILURES: Record<string, Record<string, string>> = {
  '2026-07-28': {
    ...FIXTURE_SCENARIOS,
    'server-server-stateless': 'its -32021 check calls the fixture tool test_missing_capability',
    'server-input-required-result-basic-elicitation': 'calls the fixture tool test_input_required_result_* (Herald\'s own input_required is tested in mcp-eras)',
    'server-input-required-result-basic-sampling': 'fixture tool test_input_required_result_*: Herald asks for no sampling',
    'server-input-required-result-basic-list-roots': 'fixture tool test_input_required_result_*: Herald asks for no roots',
    'server-input-required-result-capability-check': 'fixture tool asking for sampling',
    'server-input-required-result-multi-round': 'fixture tool of several rounds',
    'server-input-required-result-multiple-input-requests': 'fixture tool asking for several inputs at once',
    'server-input-required-result-request-state': 'fixture tool test_input_required_result_*',
    'server-input-required-result-result-type': 'fixture tool test_input_required_result_*',
    'server-input-required-result-tampered-state': 'needs the fixture tool\'s first input_required result',
    'server-input-required-result-non-tool-request': 'fixture prompt test_input_required_result_prompt',
    'server-http-custom-header-server-validation': 'pending scenario: needs a tool with x-mcp-header annotations',
    'server-json-schema-2020-12': 'pending scenario: fixture tool json_schema_2020_12_tool',
    'server-tasks-capability-negotiation': TASK_FIXTURES,
    'server-tasks-dispatch-and-envelope': TASK_FIXTURES,
    'server-tasks-lifecycle': TASK_FIXTURES,
    'server-tasks-mrtr-composition': TASK_FIXTURES,
    'server-tasks-mrtr-input': TASK_FIXTURES,
    'server-tasks-request-headers': TASK_FIXTURES,
    'server-tasks-request-state-removal': TASK_FIXTURES,
    'server-tasks-required-task-error': TASK_FIXTURES,
    'server-tasks-wire-fields': TASK_FIXTURES,
    'server-tasks-status-notifications': TASK_FIXTURES,
  },
  '2025-11-25': {
    ...FIXTURE_SCENARIOS,
    'server-resources-subscribe': 'fixture resource test://watched-resource',
    'server-resources-unsubscribe': 'fixture resource test://watched-resource',
    'server-tools-call-elicitation': 'fixture tool asking for an elicitation',
    'server-elicitation-sep1034-defaults': 'fixture tool asking for an elicitation with defaults',
    'server-elicitation-sep1330-enums': 'fixture tool asking for an elicitation with enums',
    'server-tools-call-sampling': 'fixture tool asking for sampling',
    'server-tools-call-with-logging': 'fixture tool sending three log messages',
  },
};

/** The scenarios with a failed check (their directory names carry the time of the run). */
const failed = (scenarios: Map<string, Check[]>) =>
  new Map(
    [...scenarios]
      .filter(([, checks]) => checks.some((check) => check.status === 'FAILURE'))
      .map(([name, checks]) => [name.replace(/-\d{4}-\d{2}-\d{2}T[\dTZ-]+$/, ''), checks.filter((check) => check.status === 'FAILURE').map((check) => check.errorMessage ?? check.id).join('; ')]),
  );

// 2026-07-28: what the revision requires, frozen at its release (with its extension and pending scenarios); 2025-11-25:
// the revision's scenarios as they were run before (31).
it.each([
  ['2026-07-28', ['--requirements', '2026-07-28']],
  ['2025-11-25', ['--spec-version', '2025-11-25']],
])(`${CONFORMANCE} server, revision %s: every scenario passes but those needing the suite's fixtures`, async (revision, selection) => {
  const { output, scenarios } = await conformance(selection);
  const failures = failed(scenarios);
  console.log(`${CONFORMANCE} ${revision}: ${scenarios.size - failures.size} of ${scenarios.size} scenarios pass, ${failures.size} need the suite's fixtures`);
  const unexpected = [...failures].filter(([name]) => !EXPECTED_FAILURES[revision][name]).map(([name, why]) => `${name}: ${why}`);
  expect(scenarios.size, output.slice(-3000)).toBeGreaterThanOrEqual(revision === '2026-07-28' ? 50 : 31);
  expect(unexpected).toEqual([]);
  expect(scenarios.size - failures.size, 'scenarios passed').toBeGreaterThanOrEqual(revision === '2026-07-28' ? 16 : 12);
}, 300_000);
