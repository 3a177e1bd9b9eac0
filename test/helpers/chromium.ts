// The Chromium the console tests drive. Found, or installed once per test run by the global setup before any file starts
// (Debian's "chromium" package through apt-get, as root), never by the test files themselves: two files installing at once
// met each other's dpkg lock, and an install inside a file's beforeAll outlasts its hook timeout. When it cannot be
// installed (not root, no apt-get, the install failed) the run goes on and each browser file fails with the one sentence
// saying what to install.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where a Chromium binary may be: CHROMIUM_PATH first, then Debian's and Ubuntu's paths. */
const candidates = () => [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((item): item is string => Boolean(item));

export function findChromium(): string | undefined {
  return candidates().find((candidate) => fs.existsSync(candidate));
}

export const INSTALL_HINT =
  'install Debian\'s "chromium" package (as root: apt-get install chromium; otherwise sudo apt-get install chromium), or set CHROMIUM_PATH to a Chromium or Chrome binary';

/** Whether any of the run's test files drives a browser (imports test/helpers/browser.ts). */
export function needsBrowser(testFiles: string[]): boolean {
  return testFiles.some((file) => /helpers\/browser\.js['"]/.test(fs.readFileSync(file, 'utf8')));
}

export type ChromiumOutcome = { path: string } | { problem: string };

/**
 * Finds Chromium, or installs it with apt-get when this process may (root, apt-get present), saying what it does on stderr.
 * `DPkg::Lock::Timeout` makes apt wait for another apt (an unattended upgrade, a second test run) instead of failing.
 */
export async function provideChromium(log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Promise<ChromiumOutcome> {
  const found = findChromium();
  if (found) return { path: found };
  if (process.getuid?.() !== 0 || !fs.existsSync('/usr/bin/apt-get')) {
    const why = process.getuid?.() !== 0 ? 'this user is not root' : 'this machine has no apt-get';
    log(`Herald tests: Chromium is missing and cannot be installed here (${why}): the console tests will fail; ${INSTALL_HINT}.`);
    return { problem: `Chromium is needed for the console tests and was not found (${why}, so the test run could not install it): ${INSTALL_HINT}.` };
  }
  const started = Date.now();
  log('Herald tests: Chromium is missing; installing Debian\'s "chromium" package with apt-get for the console tests (once, a minute or two)...');
  const environment = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args: string[], timeout: number) => run('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], { env: environment, timeout, maxBuffer: 64 * 1024 * 1024 });
  try {
    await apt(['update', '-qq'], 300_000);
    await apt(['install', '-y', '-qq', '--no-install-recommends', 'chromium'], 600_000);
  } catch (error) {
    const detail = String((error as { stderr?: string }).stderr || (error as Error).message).trim().split('\n').slice(-3).join(' ');
    log(`Herald tests: installing Chromium failed (${detail}); the console tests will fail; ${INSTALL_HINT}.`);
    return { problem: `Chromium is needed for the console tests; the test run's apt-get install failed (${detail}): ${INSTALL_HINT}.` };
  }
  const installed = findChromium();
  if (!installed) return { problem: `apt-get installed chromium but no binary is at ${candidates().join(' or ')}: set CHROMIUM_PATH.` };
  log(`Herald tests: Chromium installed at ${installed} in ${Math.round((Date.now() - started) / 1000)} s (${path.basename(installed)}).`);
  return { path: installed };
}
