// What this host can prove about a process by its pid. kill(pid, 0) alone is not enough: it
// succeeds for a killed process that its parent has not reaped yet (a zombie, for good in a
// container whose PID 1 does not reap) and for a pid the kernel has since handed to another
// process or thread. On Linux /proc/<pid>/stat tells both apart: its state ('Z') and the process's
// start time, which a reused pid does not share.
import { hostname } from 'node:os';
import { readFileSync, readlinkSync } from 'node:fs';

export type ProcessFacts =
  | { state: 'gone' }
  | { state: 'zombie' }
  /** `start`: clock ticks after boot, where /proc tells it. */
  | { state: 'running'; start?: string };

/** The fields of /proc/<pid>/stat after the command name, which may itself hold spaces and ')'. */
function statFields(pid: number | 'self'): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid exists here (EPERM: it does, owned by another user). */
function signalable(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function processFacts(pid: number): ProcessFacts {
  if (!Number.isSafeInteger(pid) || pid <= 0) return { state: 'gone' };
  // Fields after the name: [0] is the state (field 3 of proc(5)), [19] the start time (field 22).
  const f = statFields(pid);
  if (f) return f[0] === 'Z' || f[0] === 'X' ? { state: 'zombie' } : { state: 'running', ...(f[19] ? { start: f[19] } : {}) };
  // No /proc (not Linux), or one that hides other users' processes (hidepid): the signal decides.
  return signalable(pid) ? { state: 'running' } : { state: 'gone' };
}

/** Whether a process of this host with this pid runs (a zombie does not). */
export function alive(pid: number): boolean {
  return processFacts(pid).state === 'running';
}

export interface ThisProcess {
  pid: number;
  host: string;
  /** The boot and pid namespace pids are numbered in: two containers of one host name differ here. */
  space?: string;
  start?: string;
}

function read(path: string, f: (p: string) => string): string | undefined {
  try {
    return f(path).trim();
  } catch {
    return undefined;
  }
}

let me: ThisProcess | undefined;

export function thisProcess(): ThisProcess {
  if (me) return me;
  const boot = read('/proc/sys/kernel/random/boot_id', (p) => readFileSync(p, 'utf8'));
  const ns = read('/proc/self/ns/pid', readlinkSync);
  const start = statFields('self')?.[19];
  me = { pid: process.pid, host: hostname(), ...(boot && ns ? { space: `${boot} ${ns}` } : {}), ...(start ? { start } : {}) };
  return me;
}
