// `chainlake sim`: the simulated services on one loopback port, until stopped.
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import type { FaultKind } from '../simulator/faults.js';
import { commandOf, seedOf, type ArgsOf, type Globals } from './args.js';

const simFlags = (y: Argv<Globals>) =>
  y
    .option('port', { type: 'number', default: 8080, requiresArg: true, describe: 'port (0: any free port)' })
    .option('seed', { type: 'number', default: 1, requiresArg: true, describe: 'seed of the simulated world' })
    .option('scale', { type: 'number', requiresArg: true, describe: 'multiply transfers and internal transactions per listing' })
    .option('faults', { type: 'number', requiresArg: true, describe: 'share of requests (0 to 1) answered with an injected fault' })
    .option('fault-kinds', { type: 'string', requiresArg: true, describe: 'comma list: 429, 429-no-retry-after, 500, 502, 503, reset, slow, truncated, malformed' })
    .option('fault-seed', { type: 'number', requiresArg: true, describe: 'seed of the fault schedule' })
    .option('slow-ms', { type: 'number', requiresArg: true, describe: 'delay of a slow answer' })
    .option('data-cu-per-minute', { type: 'number', requiresArg: true, describe: 'data service budget (turns rate limiting on)' })
    .option('data-cu-per-day', { type: 'number', requiresArg: true, describe: 'data service daily budget' })
    .option('metrics-cu-per-minute', { type: 'number', requiresArg: true, describe: 'metrics service budget (turns rate limiting on)' })
    .option('metrics-cu-per-day', { type: 'number', requiresArg: true, describe: 'metrics service daily budget' })
    .option('block-seconds', { type: 'number', requiresArg: true, describe: 'how long a client that keeps sending while limited is blocked' })
    .option('rate-window-seconds', { type: 'number', requiresArg: true, describe: 'length of the rate-limit windows, announced in ratelimit-policy (default 60; the budgets stay per minute)' })
    .option('api-keys', { type: 'string', requiresArg: true, describe: 'comma list of valid keys (others get 401)' })
    .option('key-header', { type: 'string', requiresArg: true, describe: 'read the key from this header only, as production does (default: x-glacier-api-key and x-data-api-key)' })
    .option('avg-tps-next-key', { type: 'string', choices: ['nextPageToken', 'nextPageStartKey'], describe: 'how avg_tps names its next page (default nextPageToken; nextPageStartKey is the legacy schema)' } as const)
    .option('node-shape', { type: 'string', choices: ['avalanchego', 'reference'], default: 'avalanchego', describe: "how the node answers: as AvalancheGo (namespace avm, uint64 as JSON numbers, -32000 errors) or as the reference documents it (namespace xvm, uint64 as strings)" } as const)
    .option('node-admin', { type: 'boolean', describe: "serve the node's admin API reads at /ext/admin (a node has it off unless --api-admin-enabled=true)" })
    .option('now', { type: 'string', requiresArg: true, describe: "the world's time, ISO 8601 (2025-11-08T00:00:00Z) or Unix seconds, from 2025-11-01T00:00:00Z: every listing is served as of it, nothing newer (default: the world stands still at 2025-11-01T00:00:00Z)" });

/**
 * `--now`: Unix seconds from an ISO 8601 time or a whole number of seconds. The world is generated
 * forward from WORLD_NOW only (simulator/world.ts): an earlier time is refused, not served as a
 * world that never was.
 */
export function worldNowOf(text: string, from: number): number {
  const t = /^\d+$/.test(text) ? Number(text) : /^\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)$/.test(text) ? Date.parse(text) / 1000 : NaN;
  if (!Number.isSafeInteger(Math.floor(t))) throw new UsageError(`--now ${JSON.stringify(text)}: not a time; give ISO 8601 with its zone (2025-11-08T00:00:00Z) or Unix seconds`);
  if (t < from) throw new UsageError(`--now ${text}: before ${new Date(from * 1000).toISOString().replace('.000', '')}, where the simulated world starts`);
  return Math.floor(t);
}

async function cmdSim(a: ArgsOf<typeof simFlags>): Promise<number> {
  const { startSimulator } = await import('../simulator/server.js');
  const { FAULT_KINDS } = await import('../simulator/faults.js');
  const { WORLD_NOW } = await import('../simulator/evm.js');
  const worldNow = a.now === undefined ? undefined : worldNowOf(a.now, WORLD_NOW);
  if (!Number.isInteger(a.port) || a.port < 0 || a.port > 65535) throw new UsageError(`--port ${a.port}: must be 0 to 65535`);
  if (a.faults !== undefined && !(a.faults >= 0 && a.faults <= 1)) throw new UsageError(`--faults ${a.faults}: a rate from 0 to 1`);
  const isKind = (k: string): k is FaultKind => (FAULT_KINDS as readonly string[]).includes(k);
  const kinds = a.faultKinds
    ?.split(',')
    .filter(Boolean)
    .map((k) => {
      if (!isKind(k)) throw new UsageError(`--fault-kinds: ${k} is not one of ${FAULT_KINDS.join(', ')}`);
      return k;
    });
  const w = a.rateWindowSeconds;
  if (w !== undefined && !(Number.isInteger(w) && w >= 1 && w < 86_400)) throw new UsageError(`--rate-window-seconds ${w}: a whole number of seconds from 1 to 86399`);
  const budget = (perMinute?: number, perDay?: number) => {
    if (!perMinute) return undefined;
    if (w && Math.floor((perMinute * w) / 60) < 1) throw new UsageError(`--rate-window-seconds ${w}: ${perMinute} CU a minute leaves no CU in a window`);
    return { cuPerMinute: perMinute, ...(perDay ? { cuPerDay: perDay } : {}), ...(w ? { windowSeconds: w } : {}) };
  };
  const data = budget(a.dataCuPerMinute, a.dataCuPerDay);
  const metrics = budget(a.metricsCuPerMinute, a.metricsCuPerDay);
  const sim = await startSimulator({
    port: a.port,
    seed: seedOf(a.seed, 1),
    scale: a.scale,
    ...(data || metrics ? { rateLimit: { data, metrics, ...(a.blockSeconds !== undefined ? { blockSeconds: a.blockSeconds } : {}) } } : {}),
    ...(a.faults ? { faults: { rate: a.faults, kinds, seed: a.faultSeed, slowMs: a.slowMs } } : {}),
    ...(a.apiKeys ? { apiKeys: a.apiKeys.split(',') } : {}),
    ...(a.keyHeader ? { keyHeader: a.keyHeader } : {}),
    ...(a.avgTpsNextKey ? { avgTpsNextKey: a.avgTpsNextKey } : {}),
    node: { shape: a.nodeShape ?? 'avalanchego', admin: a.nodeAdmin === true },
    ...(worldNow !== undefined ? { worldNow: () => worldNow } : {}),
  });
  const at = worldNow === undefined ? '' : `, its world at ${new Date(worldNow * 1000).toISOString().replace('.000', '')}`;
  process.stdout.write(`chainlake simulator (seed ${a.seed}${at}) serving the data, metrics and node services at ${sim.url}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await sim.close();
  return 0;
}

export const simCommand = commandOf('sim', 'serve the simulated data service, metrics service and node (JSON-RPC) on one loopback port until stopped', simFlags, cmdSim);
