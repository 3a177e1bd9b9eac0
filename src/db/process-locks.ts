// The locks of a data directory, told from what a dead process leaves behind: herald.pid (Herald's own) and Postgres's
// postmaster.pid. After kill -9 of Herald's process group its processes may stay zombies (dead, not reaped: by init
// seconds later, or never in a container whose first process does not reap) holding their pids, and a pid may since be
// another program's: neither is a running Herald or Postgres. Linux tells them apart by /proc/<pid>/stat (state, start
// time); elsewhere a signal alone says.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../lib/logger.js';

/** Herald's lock file in the data directory. */
export const LOCK_FILE = 'herald.pid';

/**
 * Linux: what /proc says of a process, its state letter (field 3 of /proc/<pid>/stat) and its start time (field 22, in
 * clock ticks after boot: a later process given the same pid has another). Undefined without /proc (another system), or
 * when the process is gone or hidden.
 */
function processStat(pid: number): { state: string; startTime: string } | undefined {
  try {
    // The command name (field 2, in parentheses) may hold spaces and parentheses: the fields after it follow its last ')'.
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return fields.length >= 20 ? { state: fields[0], startTime: fields[19] } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a process with this pid is running (one of another user, such as the postgres user's, counts). A zombie (state
 * Z, or X) has ended and only waits for its parent to reap it: it answers signals, but is not running. Without /proc, the
 * signal alone says.
 */
export const alive = (pid: number) => {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const state = processStat(pid)?.state;
  return state !== 'Z' && state !== 'X';
};

const commandLine = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
};

/**
 * Whether a live process is the program a lock names, by its command line: where /proc is (its stat readable), an empty
 * command line is not it (a kernel thread); without /proc, nothing tells, and it is taken to be.
 */
const runs = (pid: number, program: RegExp) => {
  const command = commandLine(pid);
  return command || processStat(pid) ? program.test(command) : true;
};

/** herald.pid: this process's pid and, where /proc tells it, its start time, which a later process with the same pid lacks. */
export const lockContent = () => `${process.pid}\n${processStat(process.pid)?.startTime ?? ''}\n`;

/**
 * The live Herald process holding the data directory's lock, if any: the pid of herald.pid, alive (a zombie is not), and
 * the very process that wrote it (the same start time, where /proc tells it), not another that has its pid since. A lock
 * without a start time (written by an earlier Herald, or without /proc): a process whose command line is node's.
 */
export function runningHerald(dataDir: string): number | undefined {
  let lines: string[];
  try {
    lines = fs.readFileSync(path.join(dataDir, LOCK_FILE), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0].trim());
  if (pid === process.pid || !alive(pid)) return undefined;
  const recorded = lines[1]?.trim();
  const startTime = processStat(pid)?.startTime;
  if (recorded && startTime) return recorded === startTime ? pid : undefined;
  return runs(pid, /node|tsx|herald/) ? pid : undefined;
}

/** The postmaster of a cluster that is still running: its pid and port, from postmaster.pid. */
export function runningPostmaster(clusterDir: string): { pid: number; port: number } | undefined {
  try {
    const lines = fs.readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    // Not a zombie, and not a recycled pid.
    if (!alive(pid) || !runs(pid, /postgres/)) return undefined;
    return { pid, port: Number(lines[3]) };
  } catch {
    return undefined;
  }
}

/**
 * Removes a postmaster.pid whose process is not a running Postgres: a postmaster killed with its Herald's group and not
 * reaped yet (a zombie), or a pid another program has since. Postgres takes any pid that answers a signal for a running
 * postmaster, and would refuse to start (`lock file "postmaster.pid" already exists`). Its check of the shared memory
 * stays: a cluster whose old processes still hold it is refused by Postgres all the same.
 */
export function removeStalePostmasterPid(clusterDir: string, logger: Logger): void {
  const file = path.join(clusterDir, 'postmaster.pid');
  let pid: number;
  try {
    pid = Number(fs.readFileSync(file, 'utf8').split('\n')[0]);
  } catch {
    return;
  }
  if (runningPostmaster(clusterDir)) return;
  logger.info({ pid }, 'removing the postmaster.pid of an embedded Postgres that is no longer running');
  try {
    fs.rmSync(file, { force: true });
  } catch {
    // Left: Postgres's own refusal then says which lock file.
  }
}
