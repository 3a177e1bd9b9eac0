// A real browser for console tests: Debian's chromium driven by playwright-core, found or installed once per run by the
// global setup (test/helpers/chromium.ts); a file only launches it, or fails with the sentence saying what to install.
import fs from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Herald } from './harness.js';
import { findChromium, INSTALL_HINT } from './chromium.js';

export const SCREENSHOT_DIR = path.resolve('test-artifacts/screenshots');

/** The Chromium binary of this run: the global setup's, else one found now; otherwise an error naming what to install. */
export function chromiumPath(): string {
  const provided = inject('chromium');
  if (provided && 'path' in provided) return provided.path;
  const found = findChromium();
  if (found) return found;
  throw new Error(provided && 'problem' in provided ? provided.problem : `Chromium is needed for the console tests: ${INSTALL_HINT}.`);
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
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

/** Signs the test's first person up as the owner in the browser (through the setup link where there is one) and waits for Channels. */
export async function signUpOwner(page: Page, herald: Herald, person: { name: string; email: string }): Promise<void> {
  await page.goto(signUpPage(await ownerInvitation(herald)));
  await page.getByLabel('Your name').fill(person.name);
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL('**/channels');
}
