// A real browser for console tests: Debian's chromium driven by playwright-core. When chromium is missing the test setup
// installs it with apt (the CI machine runs as root with the Debian registry reachable); otherwise it says what to do.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Herald } from './harness.js';

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((item): item is string => Boolean(item));

export const SCREENSHOT_DIR = path.resolve('test-artifacts/screenshots');

function findChromium(): string | undefined {
  return CANDIDATES.find((candidate) => fs.existsSync(candidate));
}

export function ensureChromium(): string {
  const found = findChromium();
  if (found) return found;
  if (process.getuid?.() !== 0 || !fs.existsSync('/usr/bin/apt-get')) {
    throw new Error('Chromium is needed for the console tests: install Debian\'s "chromium" package (apt-get install chromium) or set CHROMIUM_PATH.');
  }
  const environment = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env: environment, timeout: 240_000 });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium'], { stdio: 'ignore', env: environment, timeout: 480_000 });
  const installed = findChromium();
  if (!installed) throw new Error('apt-get installed chromium but no chromium binary was found.');
  return installed;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: ensureChromium(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage', '--no-first-run', '--disable-extensions'],
  });
}

let axeSource: string | undefined;

/**
 * The serious and critical accessibility violations axe-core finds on the page, one line each (rule, impact, the first
 * elements); empty when there are none. axe's source is evaluated through the debugging protocol, which the pages'
 * Content-Security-Policy (scripts from 'self' only) does not apply to, so the pages are checked as they are served.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  axeSource ??= fs.readFileSync(path.resolve('node_modules/axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> } }).axe.run(document, {
      resultTypes: ['violations'],
    });
    return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, targets: violation.nodes.slice(0, 3).map((node) => JSON.stringify(node.target)) }));
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.targets.join(', ')}`);
}

/**
 * The invitation the first person of a test's Herald signs up with: a fresh operator setup link's token where Herald
 * makes owners from one (being the first to sign up no longer makes anyone an owner there), else undefined (open sign-up).
 * Read from the accounts module at run time so these tests sign up the same way on either side of that change.
 */
export async function ownerInvitation(herald: Herald): Promise<string | undefined> {
  const accounts: Record<string, unknown> = await import('../../tools/internal/accounts.js');
  const createSetupLink = accounts.createSetupLink as undefined | ((em: unknown, organizationId: string, options: { publicUrl: string; now: Date }) => Promise<string>);
  if (!createSetupLink) return undefined;
  const link = await createSetupLink(herald.services.orm.em.fork(), herald.organizationId, { publicUrl: herald.url, now: herald.services.now() });
  return link.slice(link.lastIndexOf('/') + 1);
}

/** The page a browser signs up the first person on: the setup link's, or the open sign-up page. */
export const signUpPage = (invitation: string | undefined) => (invitation ? `/invite/${invitation}` : '/signup');
