// A lake for the warehouse tests (check, export, report, sql, warehouse): the demo pipeline's
// streams of the given tables, run against the embedded simulator on loopback into a fresh
// temporary folder, or the one demo lake shared by the files that only read it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPipeline, type Pipeline } from '../src/config/pipeline.js';
import { runPipeline, type RunOptions } from '../src/pipeline/run.js';
import type { RunReport } from '../src/pipeline/report.js';
import { startSimulator } from '../src/simulator/server.js';
import { quiet } from './helpers.js';

export const DEMO_TABLES = ['erc_transfers', 'internal_transactions', 'historical_rewards', 'pending_rewards', 'delegators', 'chain_metrics', 'avg_tps', 'icm_messages', 'validators', 'platform_transactions', 'address_token_transfers', 'platform_balances', 'nft_tokens', 'network_details', 'xchain_asset_transactions'];

export function demoPipeline(url: string, tables: string[]): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  for (const s of Object.values(p.sources)) s.url = url;
  p.streams = p.streams.filter((s) => tables.includes(s.table));
  return p;
}

/** Runs the demo streams of `tables` into `lake` (a new temporary folder by default). */
export async function demoLake(tables: string[] = DEMO_TABLES, o: { lake?: string; seed?: number; run?: Partial<RunOptions> } = {}): Promise<{ lake: string; report: RunReport }> {
  const sim = await startSimulator({ port: 0, seed: o.seed ?? 5 });
  const lake = o.lake ?? mkdtempSync(join(tmpdir(), 'cl-wh-'));
  try {
    const report = await runPipeline(demoPipeline(sim.url, tables), { lake, logger: quiet, ...o.run });
    return { lake, report };
  } finally {
    await sim.close();
  }
}

let shared: Promise<string> | undefined;

/**
 * The demo lake of DEMO_TABLES for the files that only read it (a test that changes a lake makes
 * or copies its own), made once per test worker (the integration files share a worker's modules)
 * and, under the folder of a test run (tmpdir.setup.ts), once for all its workers: the first to
 * finish building it moves it into place; one that built it meanwhile drops its own. It is alone
 * in its folder: what `chainlake warehouse` writes next to it by default goes there.
 */
export function sharedDemoLake(): Promise<string> {
  shared ??= buildSharedLake().catch((err: unknown) => {
    shared = undefined;
    throw err;
  });
  return shared;
}

async function buildSharedLake(): Promise<string> {
  const run = process.env.CHAINLAKE_TEST_TMP;
  const place = run ? join(run, 'demo-lake') : undefined;
  if (place && existsSync(join(place, 'lake'))) return join(place, 'lake');
  const dir = mkdtempSync(join(tmpdir(), 'cl-demo-'));
  await demoLake(DEMO_TABLES, { lake: join(dir, 'lake') });
  if (!place) return join(dir, 'lake');
  try {
    renameSync(dir, place);
  } catch (err) {
    if (!existsSync(join(place, 'lake'))) throw err;
    rmSync(dir, { recursive: true, force: true });
  }
  return join(place, 'lake');
}

const BIN = fileURLToPath(new URL('../bin/chainlake.js', import.meta.url));

function spawnCli(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 1 << 28 });
}

/** The built CLI (dist/, which `npm test` compiles first), as a user runs it. */
export function cli(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnCli(args, env);
  return { code: r.status, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
}

/** `cli` with stdout as bytes (binary output such as Arrow IPC, which text would mangle). */
export function cliBytes(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: Buffer; stderr: string } {
  const r = spawnCli(args, env);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr.toString('utf8') };
}
