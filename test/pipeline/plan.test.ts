// `chainlake run --dry-run`: the plan of a run, worked out without a request to any service and
// without writing (no lake folder made, no lock taken); every pipeline shipped in pipelines/ must
// pass it.
import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { checkPipeline, loadPipeline } from '../../src/config/pipeline.js';
import { budgetSeconds, planRun, type RunPlan } from '../../src/pipeline/plan.js';
import { STREAM_BY_TABLE } from '../../src/streams/index.js';
import { StateStore } from '../../src/state/store.js';
import { LakeLock } from '../../src/state/lock.js';
import { TIERS } from '../../src/sources/budget.js';
import { json, scriptedServer } from '../helpers.js';
import { cliHere, demoLake } from '../lake-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'cl-plan-'));

/** A loopback server that counts what reaches it (and answers 404, which no request retries). */
async function countingServer() {
  return scriptedServer((_req, res) => json(res, 404, { message: 'not here' }));
}

const urls = (url: string) => ['--data-url', url, '--metrics-url', url, '--node-url', url];

/** Every file under `root` with its size and modification time: to tell that nothing changed. */
function listing(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const f of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, f.name);
      if (f.isDirectory()) walk(p);
      else out.push(`${relative(root, p)} ${statSync(p).size} ${statSync(p).mtimeMs}`);
    }
  };
  walk(root);
  return out.sort();
}

describe('the pipelines in pipelines/', () => {
  const files = readdirSync('pipelines').filter((f) => f.endsWith('.yaml'));

  it('are there: the demo and the two for the production services', () => {
    expect(files).toEqual(expect.arrayContaining(['demo.yaml', 'mainnet.yaml', 'fuji.yaml']));
  });

  for (const f of files) {
    it(`${f}: the dry run exits 0, plans every partition, sends nothing and makes no lake`, async () => {
      const server = await countingServer();
      const lake = join(dir, `lake-${f}`);
      try {
        const text = await cliHere(['run', join('pipelines', f), '--dry-run', '--lake', lake, ...urls(server.url)]);
        expect(text.stderr).toBe('');
        expect(text.code).toBe(0);
        const asJson = await cliHere(['run', join('pipelines', f), '--dry-run', '--format', 'json', '--lake', lake, ...urls(server.url)]);
        expect(asJson.code).toBe(0);
        const plan = JSON.parse(asJson.stdout) as RunPlan;
        // Each entry's partitions are its declaration's, each named in the text plan too.
        const p = loadPipeline(join('pipelines', f));
        expect(plan.streams.map((s) => [s.table, s.partitions.map((x) => x.id)])).toEqual(p.streams.map((cfg) => [cfg.table, STREAM_BY_TABLE.get(cfg.table)!.partitions(cfg).map((x) => x.id)]));
        for (const s of plan.streams) for (const x of s.partitions) expect(text.stdout).toContain(`    ${x.id}: `);
        expect(plan.services.every((s) => s.url === server.url)).toBe(true);
        expect(server.requests).toHaveLength(0);
        expect(existsSync(lake)).toBe(false);
      } finally {
        await server.close();
      }
    });
  }

  it('the counting server does see a run that is not dry (so zero above means nothing was sent)', async () => {
    const server = await countingServer();
    const p = join(dir, 'one.yaml');
    writeFileSync(p, 'name: one\nstreams:\n  - { table: avg_tps, chainIds: ["43114"] }\n');
    try {
      const r = await cliHere(['run', p, '--quiet', '--lake', join(dir, 'lake-real'), ...urls(server.url)]);
      // Its 404 is a refusal for good.
      expect(r.code).toBe(4);
      expect(server.requests.length).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });
});

describe('the dry run against a lake', () => {
  let lake: string;
  beforeAll(async () => {
    ({ lake } = await demoLake(['erc_transfers', 'delegators', 'chain_metrics']));
  });

  it('says where each partition resumes, from the committed state, and changes nothing (no lock either)', async () => {
    // The lock's folder aside: the test itself takes and releases the lock, a new version there.
    const lakeFiles = () => listing(lake).filter((f) => !f.startsWith('_lock/'));
    const before = lakeFiles();
    // A run holding the lake does not stop a dry run, which takes no lock.
    const lock = await LakeLock.tryAcquire(lake);
    const server = await countingServer();
    let r;
    try {
      r = await cliHere(['run', 'pipelines/demo.yaml', '--dry-run', '--format', 'json', '--lake', lake, ...urls(server.url)]);
      expect(server.requests).toHaveLength(0);
    } finally {
      await lock.release();
      await server.close();
    }
    expect(r.code).toBe(0);
    expect(lakeFiles()).toEqual(before);
    const plan = JSON.parse(r.stdout) as RunPlan;
    const store = new StateStore(lake);
    const of = (table: string) => plan.streams.filter((s) => s.table === table).flatMap((s) => s.partitions);
    for (const x of of('erc_transfers')) {
      const state = store.load('erc_transfers', x.id);
      expect(state.cursor.nextBlock).toBeGreaterThan(0);
      expect(x).toMatchObject({ start: 'resume', fromBlock: state.cursor.nextBlock, requests: 1 });
    }
    for (const x of of('chain_metrics')) expect(x.start).toBe('resume');
    for (const x of of('delegators')) expect(x.start).toBe('refetch');
    // Tables the lake has no state of start from their configured start.
    expect(of('blocks')).toEqual([{ id: '43114', start: 'new', from: 'from block 71234528 to block 71234568 (exclusive)', requests: 41, fromBlock: 71234528 }]);
    for (const x of of('internal_transactions')) expect(x).toMatchObject({ start: 'new', fromBlock: 0 });
  });

  it('--full-refresh: the named tables start again from their configured start', async () => {
    const r = await cliHere(['run', 'pipelines/demo.yaml', '--dry-run', '--format', 'json', '--full-refresh', 'erc_transfers', '--lake', lake]);
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout) as RunPlan;
    const transfers = plan.streams.find((s) => s.table === 'erc_transfers')!.partitions;
    expect(transfers.map((x) => [x.start, x.fromBlock])).toEqual(transfers.map(() => ['full refresh', 0]));
    expect(plan.streams.find((s) => s.table === 'delegators')!.partitions[0]!.start).toBe('refetch');
  });
});

describe('the dry run refuses what a run refuses', () => {
  it('a bad pipeline: exit 2 with the run\'s own message; a duplicate partition too', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'name: bad\nstreams:\n  - { table: delegators, network: mainnet, nodeIds: ["NodeID-A6onFGyJjA37EZ7kYHANMR1PFRT8NmXrG"] }\n');
    const lake = join(dir, 'lake-bad');
    const dry = await cliHere(['run', bad, '--dry-run', '--lake', lake]);
    const real = await cliHere(['run', bad, '--lake', lake]);
    expect(dry.code).toBe(2);
    expect(dry.stderr).toContain(`${bad}: streams[0].nodeIds[0]: "NodeID-A6onFGyJjA37EZ7kYHANMR1PFRT8NmXrG" is not a NodeID`);
    expect(dry.stderr).toBe(real.stderr);
    const twice = join(dir, 'twice.yaml');
    writeFileSync(twice, 'name: twice\nstreams:\n  - { table: avg_tps, chainIds: ["43114"] }\n  - { table: avg_tps, chainIds: ["43114"] }\n');
    expect(await cliHere(['run', twice, '--dry-run', '--lake', lake])).toMatchObject({ code: 2, stderr: expect.stringContaining('partition 43114 of avg_tps is also in streams[0]') });
    expect(existsSync(lake)).toBe(false);
  });

  it('--format belongs to --dry-run', async () => {
    const r = await cliHere(['run', 'pipelines/demo.yaml', '--format', 'json', '--lake', join(dir, 'lake-format')]);
    expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining('--format: only with --dry-run') });
  });

  it('--simulator with --dry-run starts nothing: the plan names the simulator as every source', async () => {
    const r = await cliHere(['run', 'pipelines/demo.yaml', '--dry-run', '--simulator', '--format', 'json', '--lake', join(dir, 'lake-sim')]);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as RunPlan).services.map((s) => s.url)).toEqual(['the embedded simulator', 'the embedded simulator', 'the embedded simulator']);
  });
});

describe('what the plan reckons', () => {
  const plan = (yaml: string) => planRun(checkPipeline(parse(yaml), 'x.yaml'), { lake: join(dir, 'none') });

  it('a request per partition; a request per block of a block-by-block window plus one for the head', () => {
    const p = plan(`name: x
streams:
  - { table: erc_transfers, chainId: "43114", contracts: ["0xB97EF9Ef8734C71904D8002F8b6BC66Dd9c48a6E", "0x9702230A8Ea53601f5cD2dc00fDBc13d4dF4A8c7"], startBlock: 5 }
  - { table: blocks, chainId: "43114", startBlock: 100, endBlock: 150 }
  - { table: block_transactions, chainId: "43114", startBlock: 100 }
`);
    expect(p.streams.map((s) => [s.table, s.requests, s.cu])).toEqual([
      ['erc_transfers', 2, 40],
      ['blocks', 51, 510],
      // Up to the head: how many blocks that is is known only by asking.
      ['block_transactions', 1, 10],
    ]);
    expect(p.services).toEqual([expect.objectContaining({ service: 'data', partitions: 4, requests: 54, cu: 560 })]);
  });

  it('against the budget: the pipeline\'s, else the published one; days when the daily budget runs out', () => {
    const tiered = plan('name: x\nsources:\n  data: { tier: growth }\nstreams:\n  - { table: chains }\n');
    expect(tiered.services[0]!.budget).toEqual({ ...TIERS.growth, from: 'pipeline' });
    const keyed = plan('name: x\nsources:\n  data: { apiKey: "k" }\nstreams:\n  - { table: chains }\n');
    expect(keyed.services[0]!.budget).toMatchObject({ ...TIERS.free, from: 'published', tier: 'free' });
    expect(plan('name: x\nstreams:\n  - { table: chains }\n').services[0]!.budget).toMatchObject({ ...TIERS.unauthenticated, tier: 'unauthenticated' });
    expect(plan('name: x\nstreams:\n  - { table: node_info }\n').services[0]).toMatchObject({ service: 'node', budget: null, seconds: null });
    expect(budgetSeconds(6_000, 6_000, null)).toBe(60);
    expect(budgetSeconds(3_000, 6_000, 1_200_000)).toBe(30);
    // 2.5 days' budget: two days spent and waited out, then half a day's at the minute rate.
    expect(budgetSeconds(3_000_000, 6_000, 1_200_000)).toBe(2 * 86_400 + (600_000 / 6_000) * 60);
  });
});
