// What the benchmarks that drive the CLI against the simulator share (cpu.mjs, cluster.mjs): the
// world's contracts sized to a number of rows, the simulator in its own process, a pipeline of
// their erc_transfers, and a CLI timed with its peak RSS.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWorld } from '../dist/simulator/world.js';

export { buildWorld };
export const root = fileURLToPath(new URL('..', import.meta.url));
export const bin = join(root, 'bin', 'chainlake.js');

/** The value after `--name` on the command line, or `dflt`. */
export const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};

export const fmt = (n) => Math.round(n).toLocaleString('en-US');

/**
 * Contracts of the simulator's world, at a scale that gives about `rows` transfers: without
 * `contracts`, those of 43114 until `rows` is reached; with it, the first `contracts` of the
 * world's chains (43114 first), at the scale at which they reach `rows` together.
 */
export function plan(rows, { contracts: count } = {}) {
  const world = buildWorld({ seed: 1, scale: 1 });
  const chains = count ? world.chains.map((c) => c.chainId) : ['43114'];
  const all = chains.flatMap((chainId) => world.contractsOf(chainId).map((c) => ({ chainId, address: c.address })));
  if (count > all.length) throw new Error(`--contracts ${count}: the simulator's world has ${all.length}`);
  const candidates = count ? all.slice(0, count) : all;
  const perScale = candidates.reduce((n, c) => n + world.transferCountFor(c.chainId, c.address), 0);
  const scale = Math.max(1, Math.ceil(rows / perScale));
  const big = buildWorld({ seed: 1, scale });
  const chosen = [];
  let total = 0;
  for (const c of candidates) {
    if (!count && total >= rows) break;
    chosen.push(c);
    total += big.transferCountFor(c.chainId, c.address);
  }
  return { scale, contracts: chosen, total };
}

/** A pipeline of the erc_transfers of `contracts` ({ chainId, address }), one stream a chain. */
export function transfersPipeline(url, contracts, { concurrency = 8, chunks, apiKey = false, cuPerMinute } = {}) {
  const byChain = new Map();
  for (const c of contracts) byChain.set(c.chainId, [...(byChain.get(c.chainId) ?? []), c.address]);
  const source = `{ url: "${url}", concurrency: ${concurrency}${apiKey ? ', apiKey: "${CHAINLAKE_API_KEY}"' : ''}${cuPerMinute ? `, cuPerMinute: ${cuPerMinute}` : ''} }`;
  const streams = [...byChain].map(
    ([chainId, addresses]) =>
      `  - table: erc_transfers\n    chainId: "${chainId}"\n    contracts: [${addresses.map((a) => `"${a}"`).join(', ')}]\n${chunks ? `    chunks: ${chunks}\n` : ''}`,
  );
  return `name: bench\nsources:\n  data: ${source}\nstreams:\n${streams.join('')}`;
}

/** `chainlake sim` in its own process (limits off unless `flags` turn them on). */
export function startSim(scale, flags = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'sim', '--port', '0', '--scale', String(scale), ...flags], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (d) => {
      const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(String(d));
      if (m) resolve({ url: m[1], child, stop: () => child.kill('SIGTERM') });
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`simulator exited ${code}`)));
  });
}

/** The CLIs under /usr/bin/time now running: killed if this process exits before them. */
const running = new Set();
process.on('exit', () => {
  for (const child of running) stopTimed(child, 'SIGKILL');
});

/** Stops a CLI under /usr/bin/time: time itself does not pass a signal on to it. */
function stopTimed(child, signal = 'SIGTERM') {
  try {
    for (const pid of readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').split(' ').filter(Boolean)) process.kill(Number(pid), signal);
  } catch {
    // Already gone.
  }
}

/**
 * Runs the CLI under /usr/bin/time, for the peak RSS of that process alone. Past `timeoutMs` it is
 * stopped (SIGTERM) and the promise rejected.
 */
export function timed(args, { env = {}, timeoutMs } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('/usr/bin/time', ['-f', 'maxrss_kb=%M cpu=%U+%S', bin, ...args], { env: { ...process.env, ...env } });
    running.add(child);
    const timer = timeoutMs ? setTimeout(() => stopTimed(child), timeoutMs) : undefined;
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    // Only the end of the log is shown on failure; the peak RSS comes last.
    child.stderr.on('data', (c) => (stderr = (stderr + c).slice(-100_000)));
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      running.delete(child);
      const seconds = (performance.now() - t0) / 1000;
      // A connection string's password stays out of the message.
      const shown = args.join(' ').replace(/(postgres:\/\/[^:@\s]*:)[^@\s]*@/g, '$1***@');
      if (status !== 0) return reject(new Error(`chainlake ${shown} exited ${status}${seconds * 1000 >= timeoutMs ? ` (stopped after ${timeoutMs / 1000} s)` : ''}:\n${stderr.slice(-2000)}`));
      const rss = Number(/maxrss_kb=(\d+)/.exec(stderr)?.[1] ?? NaN) / 1024;
      // user + sys CPU of the process: on a loaded machine it moves less than the wall time.
      const cpu = /cpu=([\d.]+)\+([\d.]+)/.exec(stderr);
      resolve({ seconds, rssMB: rss, cpuSeconds: cpu ? Number(cpu[1]) + Number(cpu[2]) : NaN, stdout });
    });
  });
}
