// A real Herald process, started the way `npm start` starts it, for tests of starting, crashing and restarting.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repositoryRoot } from '../../scripts/build.mjs';

export { repositoryRoot };

/**
 * The command `npm start` runs (package.json's `start`: the compiled JavaScript in dist/, built first when a source is
 * newer), usable from any working directory. `args` are Herald's own (e.g. `--role worker`).
 */
export function startCommand(args: string[] = []): { command: string; args: string[] } {
  return { command: process.execPath, args: [path.join(repositoryRoot, 'scripts/run.mjs'), 'main', ...args] };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

export interface HeraldProcess {
  child: ChildProcess;
  url: string;
  /** The API key of the banner (only on a fresh database). */
  apiKey?: string;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or the signal) once the process has ended. */
  exited: Promise<number | string>;
  /** SIGKILL to the Herald process alone, or to its whole process group. */
  kill(scope: 'process' | 'group'): void;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
}

/** Ends the Herald process when the socket on its file descriptor 3 closes (see exit-with-parent.mjs). */
const EXIT_WITH_PARENT = pathToFileURL(path.join(repositoryRoot, 'test/helpers/exit-with-parent.mjs')).href;

/**
 * Starts Herald in its own process group (so a kill of its group spares the test runner) and waits for the banner.
 * Answers when it is running, or rejects with its output when it exits first. The process ends with the test runner's
 * process, however that ends: it watches its end of a socket pair whose other end only the runner holds.
 */
export async function startHeraldProcess(options: { env: Record<string, string>; cwd?: string; timeoutMs?: number; args?: string[] }): Promise<HeraldProcess> {
  const port = options.env.PORT ?? String(await freePort());
  const { command, args } = startCommand(options.args);
  const child = spawn(command, ['--import', EXIT_WITH_PARENT, ...args], {
    cwd: options.cwd ?? repositoryRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', ...options.env, PORT: port },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  // The runner's end: never read or written, and no reason to keep the runner alive.
  (child.stdio[3] as net.Socket).unref();
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const started = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), options.timeoutMs ?? 60_000);
    const check = () => {
      if (/Herald is running/.test(stdout)) {
        clearTimeout(timer);
        resolve(true);
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      resolve(/Herald is running/.test(stdout));
    });
  });
  const handle: HeraldProcess = {
    child,
    url: `http://127.0.0.1:${port}`,
    apiKey: /API key:\s+(\S+)/.exec(stdout)?.[1],
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    kill(scope) {
      try {
        process.kill(scope === 'group' ? -child.pid! : child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    },
    async stop() {
      try {
        process.kill(child.pid!, 'SIGTERM');
      } catch {
        return;
      }
      await exited;
    },
  };
  if (!started) {
    handle.kill('group');
    const error = new Error(`Herald did not start:\n${stdout}\n${stderr}`) as Error & { process: HeraldProcess };
    error.process = handle;
    throw error;
  }
  return handle;
}

/** Runs a start that must fail; answers its exit code and what it printed. */
export async function failedStart(options: { env: Record<string, string>; cwd?: string }): Promise<{ code: number | string; stdout: string; stderr: string }> {
  try {
    const started = await startHeraldProcess({ ...options, timeoutMs: 60_000 });
    await started.stop();
    throw new Error(`Herald started although it should not have:\n${started.stdout()}`);
  } catch (error) {
    const process = (error as { process?: HeraldProcess }).process;
    if (!process) throw error;
    return { code: await process.exited, stdout: process.stdout(), stderr: process.stderr() };
  }
}
