// A real Herald process, started the way `npm start` starts it, for tests of starting, crashing and restarting.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
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
  /** The process spawned: Herald, or with `unreaped` the parent that never reaps it. */
  child: ChildProcess;
  /** Herald's own process id. */
  pid: number;
  url: string;
  /** The API key of the banner (only on a fresh database). */
  apiKey?: string;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or the signal) once the process has ended; with `unreaped`, with 'zombie' (not reaped, no code). */
  exited: Promise<number | string>;
  /** SIGKILL to the Herald process alone, or to its whole process group. */
  kill(scope: 'process' | 'group'): void;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
}

/** Ends the Herald process when the socket on its file descriptor 3 closes (see exit-with-parent.mjs). */
const EXIT_WITH_PARENT = pathToFileURL(path.join(repositoryRoot, 'test/helpers/exit-with-parent.mjs')).href;

/** Linux: whether the process has ended (gone, or a zombie that its parent has not reaped). */
function ended(pid: number): boolean {
  try {
    return /^\d+ \(.*\) [ZX]/s.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/**
 * Herald under a parent that never reaps it (Linux): `sh` starts Herald in a session and process group of its own, says
 * its pid on file descriptor 4, and becomes `sleep`, which never waits for a child. As `npm start` killed with its group
 * leaves Herald to an init that reaps late, or in a container whose first process never reaps: killed, Herald stays a
 * zombie (state Z) holding its pid. The sleep ends after 15 minutes at most, or with stop().
 */
const UNREAPED = 'setsid "$@" 4>&- & echo $! >&4; exec sleep 900 4>&-';

/**
 * Starts Herald in its own process group (so a kill of its group spares the test runner) and waits for the banner.
 * Answers when it is running, or rejects with its output when it exits first. The process ends with the test runner's
 * process, however that ends: it watches its end of a socket pair whose other end only the runner holds. `unreaped`:
 * under a parent that never reaps it (see UNREAPED).
 */
export async function startHeraldProcess(options: { env: Record<string, string>; cwd?: string; timeoutMs?: number; args?: string[]; unreaped?: boolean }): Promise<HeraldProcess> {
  const port = options.env.PORT ?? String(await freePort());
  const { command, args } = startCommand(options.args);
  const heraldArgs = ['--import', EXIT_WITH_PARENT, ...args];
  const child = spawn(options.unreaped ? 'sh' : command, options.unreaped ? ['-c', UNREAPED, 'sh', command, ...heraldArgs] : heraldArgs, {
    cwd: options.cwd ?? repositoryRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', ...options.env, PORT: port },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe', ...(options.unreaped ? (['pipe'] as const) : [])],
  });
  // The runner's end: never read or written, and no reason to keep the runner alive.
  (child.stdio[3] as net.Socket).unref();
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  let pid = child.pid!;
  let exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  if (options.unreaped) {
    let said = '';
    const announced = child.stdio[4] as net.Socket;
    announced.on('data', (chunk: Buffer) => (said += chunk.toString('utf8')));
    await new Promise((resolve) => announced.once('end', resolve));
    pid = Number(said.trim());
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`the unreaping parent did not say Herald's pid (${JSON.stringify(said)}):\n${stderr}`);
    exited = new Promise((resolve) => {
      const timer = setInterval(() => {
        if (!ended(pid)) return;
        clearInterval(timer);
        resolve('zombie');
      }, 50);
    });
  }
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
    pid,
    url: `http://127.0.0.1:${port}`,
    apiKey: /API key:\s+(\S+)/.exec(stdout)?.[1],
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    kill(scope) {
      try {
        process.kill(scope === 'group' ? -pid : pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    },
    async stop() {
      try {
        process.kill(pid, 'SIGTERM');
        await exited;
      } catch {
        /* already gone */
      }
      // The parent that never reaps: ended, so that the zombie is reaped.
      if (options.unreaped) child.kill('SIGKILL');
    },
  };
  if (!started) {
    handle.kill('group');
    if (options.unreaped) child.kill('SIGKILL');
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
