import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { lakeRows, quiet } from '../helpers.js';
import { isEvmAddress } from '../../src/ids.js';
import {
  DEMO, INTERNAL_TX_TYPES, METRICS, UINT256_MAX_STRING, buildWorld, dayOnly, startSimulator,
  type FaultKind, type Simulator,
} from '../../src/simulator/index.js';
import { checksumAddress } from '../../src/simulator/keccak.js';

interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

async function call(sim: Simulator, path: string, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(sim.url + path, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

function withParams(path: string, params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}${path.includes('?') ? '&' : '?'}${s}` : path;
}

/** Follows nextPageToken to the end; checks every page but the last carries one. */
async function pageAll(sim: Simulator, path: string, field: string, pageSize?: number, nextKey = 'nextPageToken'): Promise<{ items: any[]; pages: any[][] }> {
  const items: any[] = [];
  const pages: any[][] = [];
  let token: string | undefined;
  for (let guard = 0; guard < 10_000; guard++) {
    const r = await call(sim, withParams(path, { pageSize, pageToken: token }));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const page = r.body[field] as any[];
    expect(Array.isArray(page)).toBe(true);
    pages.push(page);
    items.push(...page);
    token = r.body[nextKey];
    if (nextKey !== 'nextPageToken') expect(r.body.nextPageToken).toBeUndefined();
    if (token === undefined) return { items, pages };
    expect(typeof token).toBe('string');
    expect(page.length).toBe(pageSize ?? page.length);
  }
  throw new Error('paging did not stop');
}

/** Keyed requests that all get through, each answer announcing the budget and what is left of it. */
async function spendKeyed(sim: Simulator, path: string, key: Record<string, string>, o: { requests: number; weight: number; quota: number; policy: string }): Promise<void> {
  for (let i = 1; i <= o.requests; i++) {
    const r = await call(sim, path, key);
    expect(r.status).toBe(200);
    expect(r.headers.get('ratelimit-policy')).toBe(o.policy);
    expect(r.headers.get('ratelimit-limit')).toBe(String(o.quota));
    expect(r.headers.get('ratelimit-remaining')).toBe(String(o.quota - o.weight * i));
  }
}

function expectDataError(r: Reply, status: number, mentions: string): void {
  expect(r.status).toBe(status);
  expect(typeof r.body.message).toBe('string');
  expect(r.body.statusCode).toBe(status);
  expect(r.body.error).toBe(status === 400 ? 'Bad Request' : status === 404 ? 'Not Found' : r.body.error);
  expect(r.body.message).toContain(mentions);
}

function expectMetricsError(r: Reply, status: number, mentions: string): void {
  expect(r.status).toBe(status);
  expect(Array.isArray(r.body.message)).toBe(true);
  expect(r.body.statusCode).toBe(status);
  expect(r.body.message.join(' ')).toContain(mentions);
}

const transfersPath = (contract: string, chain = '43114') => `/v1/chains/${chain}/tokens/${contract}/transfers`;
const internalsPath = (address: string, chain = '43114') => `/v1/chains/${chain}/addresses/${address}/transactions:listInternals`;
const SEED = 42;

describe('simulator world', () => {
  it('is deterministic per seed and generates items by index in any order', () => {
    const a = buildWorld({ seed: SEED });
    const b = buildWorld({ seed: SEED });
    const c = buildWorld({ seed: SEED + 1 });
    const n = a.transferCountFor('43114', DEMO.contracts.erc20);
    expect(n).toBe(b.transferCountFor('43114', DEMO.contracts.erc20));
    const late = a.transferAt('43114', DEMO.contracts.erc20, n - 1);
    expect([...b.transfers('43114', DEMO.contracts.erc20)][0]).toEqual(late);
    expect([...a.transfers('43114', DEMO.contracts.erc20)]).toEqual([...b.transfers('43114', DEMO.contracts.erc20)]);
    expect([...c.transfers('43114', DEMO.contracts.erc20)]).not.toEqual([...a.transfers('43114', DEMO.contracts.erc20)]);
    expect([...a.rewards('mainnet', { nodeIds: [...DEMO.nodeIds] })]).toEqual([...b.rewards('mainnet', { nodeIds: [...DEMO.nodeIds] })]);
  });

  it('names real ids in DEMO, valid for any seed', () => {
    for (const seed of [1, 99]) {
      const w = buildWorld({ seed });
      expect(w.contract('43114', DEMO.contracts.erc20)?.ercType).toBe('ERC-20');
      expect(w.contract('43114', DEMO.contracts.erc721)?.ercType).toBe('ERC-721');
      expect(w.contract('43114', DEMO.contracts.erc1155)?.ercType).toBe('ERC-1155');
      for (const a of DEMO.internalAddresses) expect(w.internalCountFor('43114', a)).toBeGreaterThan(50);
      const nodeIds = w.validators('mainnet').map((v) => v.nodeId);
      for (const n of DEMO.nodeIds) expect(nodeIds).toContain(n);
      for (const a of DEMO.rewardAddresses) {
        expect(w.listRewards('mainnet', { addresses: [a] }).length).toBeGreaterThan(5);
        expect(w.listDelegators('mainnet', { rewardAddresses: [a] }).length).toBeGreaterThan(0);
      }
    }
  });

  it('scales to millions of transfers without materialising them', () => {
    const w = buildWorld({ seed: 5, scale: 2000 });
    const started = Date.now();
    const n = w.transferCountFor('43114', DEMO.contracts.erc20);
    expect(n).toBeGreaterThan(500_000);
    const first = w.transferAt('43114', DEMO.contracts.erc20, 0);
    const last = w.transferAt('43114', DEMO.contracts.erc20, n - 1);
    expect(BigInt(last.blockNumber)).toBeGreaterThan(BigInt(first.blockNumber));
    const mid = Number(w.transferAt('43114', DEMO.contracts.erc20, Math.floor(n / 2)).blockNumber);
    const window = w.listTransfers('43114', DEMO.contracts.erc20, { startBlock: mid, endBlock: mid + 1 });
    expect(window.length).toBeGreaterThan(0);
    for (let k = 0; k < window.length; k++) expect(window.at(k).blockNumber).toBe(String(mid));
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('data service', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: SEED });
  });
  afterAll(() => sim.close());

  it('serves the same pages for the same seed and different pages for another', async () => {
    const same = await startSimulator({ seed: SEED });
    const other = await startSimulator({ seed: SEED + 1 });
    try {
      const path = withParams(transfersPath(DEMO.contracts.erc20), { pageSize: 25 });
      const [a, b, c] = await Promise.all([call(sim, path), call(same, path), call(other, path)]);
      expect(b.body).toEqual(a.body);
      expect(c.body.transfers).not.toEqual(a.body.transfers);
      const second = withParams(path, { pageToken: a.body.nextPageToken });
      expect((await call(same, second)).body).toEqual((await call(sim, second)).body);
    } finally {
      await same.close();
      await other.close();
    }
  });

  it('pages every transfer listing exactly once, newest first, in all three forms', async () => {
    const w = sim.world;
    for (const contract of w.contractsOf('43114')) {
      const expected = [...w.transfers('43114', contract.address)];
      const { items, pages } = await pageAll(sim, transfersPath(contract.address), 'transfers', 100);
      expect(items).toEqual(expected);
      expect(pages.length).toBe(Math.ceil(expected.length / 100));
      expect(new Set(items.map((t) => `${t.txHash}:${t.logIndex}`)).size).toBe(items.length);
      for (let i = 1; i < items.length; i++) {
        const [p, q] = [items[i - 1], items[i]];
        const byBlock = BigInt(p.blockNumber) - BigInt(q.blockNumber);
        expect(byBlock > 0n || (byBlock === 0n && p.logIndex > q.logIndex)).toBe(true);
        expect(p.blockTimestamp).toBeGreaterThanOrEqual(q.blockTimestamp);
      }
      const key = { 'ERC-20': 'erc20Token', 'ERC-721': 'erc721Token', 'ERC-1155': 'erc1155Token' }[contract.ercType];
      for (const t of items) {
        expect(Object.keys(t)).toContain(key);
        expect(typeof t.blockTimestamp).toBe('number');
        expect(typeof t.logIndex).toBe('number');
        expect(t.blockNumber).toMatch(/^\d+$/);
        expect(t.txHash).toMatch(/^0x[0-9a-f]{64}$/);
        expect(t.blockHash).toMatch(/^0x[0-9a-f]{64}$/);
      }
      if (contract.ercType === 'ERC-721') {
        for (const t of items) {
          expect('value' in t).toBe(false);
          expect(t.erc721Token).toMatchObject({ ercType: 'ERC-721', address: contract.address });
          expect(typeof t.erc721Token.tokenId).toBe('string');
          expect(typeof t.erc721Token.tokenUri).toBe('string');
          expect(typeof t.erc721Token.metadata.indexStatus).toBe('string');
        }
      } else {
        for (const t of items) expect(t.value).toMatch(/^(0|[1-9]\d*)$/);
      }
      if (contract.ercType === 'ERC-20') for (const t of items) expect(typeof t.erc20Token.decimals).toBe('number');
      if (contract.ercType === 'ERC-1155') for (const t of items) expect(t.erc1155Token).toMatchObject({ ercType: 'ERC-1155' });
    }
  });

  it('lets a block straddle a page boundary', async () => {
    const { pages } = await pageAll(sim, transfersPath(DEMO.contracts.erc1155), 'transfers', 7);
    const straddles = pages.slice(1).filter((p, i) => p[0].blockNumber === pages[i]!.at(-1).blockNumber);
    expect(straddles.length).toBeGreaterThan(0);
  });

  it('produces amounts from 0 to uint256 max, with 38, 39 and 78 digits', () => {
    const values = sim.world.contractsOf('43114').flatMap((c) => [...sim.world.transfers('43114', c.address)])
      .filter((t) => 'value' in t).map((t) => (t as { value: string }).value);
    const lengths = new Set(values.map((v) => v.length));
    expect(values).toContain('0');
    expect(values).toContain(UINT256_MAX_STRING);
    for (const n of [38, 39, 78]) expect(lengths.has(n)).toBe(true);
    for (const v of values) expect(BigInt(v) <= BigInt(UINT256_MAX_STRING)).toBe(true);
  });

  it('writes EVM addresses with EIP-55 checksums, some with name/symbol/decimals/logoUri', () => {
    const items = [...sim.world.transfers('43114', DEMO.contracts.erc20)];
    const parties = items.flatMap((t) => [t.from, t.to]);
    let named = 0;
    let bare = 0;
    for (const p of parties) {
      expect(isEvmAddress(p.address)).toBe(true);
      expect(p.address).toBe(checksumAddress(Buffer.from(p.address.slice(2), 'hex')));
      if (Object.keys(p).length === 1) bare++;
      if (p.name !== undefined) named++;
    }
    expect(parties.some((p) => p.logoUri && p.symbol && typeof p.decimals === 'number')).toBe(true);
    expect(named).toBeGreaterThan(0);
    expect(bare).toBeGreaterThan(0);
    expect(parties.some((p) => p.address !== p.address.toLowerCase())).toBe(true);
  });

  it('applies startBlock inclusive and endBlock exclusive', async () => {
    const w = sim.world;
    const all = [...w.transfers('43114', DEMO.contracts.erc20)];
    const counts = new Map<string, number>();
    for (const t of all) counts.set(t.blockNumber, (counts.get(t.blockNumber) ?? 0) + 1);
    const [busy] = [...counts.entries()].filter(([, n]) => n > 1).map(([b]) => Number(b)).slice(3);
    const only = await pageAll(sim, withParams(transfersPath(DEMO.contracts.erc20), { startBlock: busy, endBlock: busy + 1 }), 'transfers', 100);
    expect(only.items.length).toBe(counts.get(String(busy)));
    for (const t of only.items) expect(t.blockNumber).toBe(String(busy));
    const from = await pageAll(sim, withParams(transfersPath(DEMO.contracts.erc20), { startBlock: busy }), 'transfers', 100);
    expect(from.items).toEqual(all.filter((t) => Number(t.blockNumber) >= busy));
    const before = await pageAll(sim, withParams(transfersPath(DEMO.contracts.erc20), { endBlock: busy }), 'transfers', 100);
    expect(before.items).toEqual(all.filter((t) => Number(t.blockNumber) < busy));
    expect(from.items.length + before.items.length).toBe(all.length);
  });

  it('rejects bad parameters with 400 and names the parameter', async () => {
    const base = transfersPath(DEMO.contracts.erc20);
    for (const pageSize of ['0', '101', 'abc', '1.5', '-3', '']) {
      expectDataError(await call(sim, `${base}?pageSize=${pageSize}`), 400, 'pageSize');
    }
    expectDataError(await call(sim, `${base}?startBlock=100&endBlock=100`), 400, 'startBlock');
    expectDataError(await call(sim, `${base}?startBlock=x`), 400, 'startBlock');
    expectDataError(await call(sim, `${base}?endBlock=-1`), 400, 'endBlock');
    expectDataError(await call(sim, transfersPath('0x1234')), 400, 'address');
    expectDataError(await call(sim, transfersPath(DEMO.contracts.erc20, 'c-chain')), 400, 'chainId');
    expectDataError(await call(sim, transfersPath(DEMO.contracts.erc20, '1')), 404, 'chain');
    expectDataError(await call(sim, transfersPath(DEMO.contracts.erc20, '43113')), 404, 'contract');
    expectDataError(await call(sim, transfersPath('0x' + '12'.repeat(20))), 404, 'contract');
    expectDataError(await call(sim, internalsPath('nope')), 400, 'address');
  });

  it('binds page tokens to their query and rejects unknown ones', async () => {
    const base = transfersPath(DEMO.contracts.erc20);
    const first = await call(sim, `${base}?pageSize=5`);
    const token = first.body.nextPageToken as string;
    expect((await call(sim, `${base}?pageSize=5&pageToken=${token}`)).status).toBe(200);
    expectDataError(await call(sim, `${base}?pageSize=5&pageToken=garbage`), 400, 'pageToken');
    expectDataError(await call(sim, `${base}?pageSize=5&pageToken=${token.slice(0, -2)}xx`), 400, 'pageToken');
    expectDataError(await call(sim, `${base}?pageSize=5&startBlock=1&pageToken=${token}`), 400, 'pageToken');
    expectDataError(await call(sim, `${transfersPath(DEMO.contracts.erc721)}?pageToken=${token}`), 400, 'pageToken');
    expectDataError(await call(sim, `${internalsPath(DEMO.internalAddresses[0])}?pageToken=${token}`), 400, 'pageToken');
  });

  it('accepts the blockchain id for the chain and any address case', async () => {
    const chain = sim.world.chain('43114')!;
    const a = await call(sim, `${transfersPath(DEMO.contracts.erc721.toLowerCase(), chain.blockchainId)}?pageSize=3`);
    const b = await call(sim, `${transfersPath(DEMO.contracts.erc721)}?pageSize=3`);
    expect(a.status).toBe(200);
    expect(a.body.transfers).toEqual(b.body.transfers);
  });

  it('pages internal transactions with every type, reverts and shared tx hashes', async () => {
    const w = sim.world;
    const all: any[] = [];
    for (const address of DEMO.internalAddresses) {
      const { items } = await pageAll(sim, internalsPath(address), 'transactions', 100);
      expect(items).toEqual([...w.internals('43114', address)]);
      for (const t of items) {
        expect(t.gasUsed).toMatch(/^\d+$/);
        expect(t.gasLimit).toMatch(/^\d+$/);
        expect(BigInt(t.gasUsed) <= BigInt(t.gasLimit)).toBe(true);
        expect(t.value).toMatch(/^(0|[1-9]\d*)$/);
        expect([t.from.address, t.to.address]).toContain(address);
      }
      all.push(...items);
    }
    expect(new Set(all.map((t) => t.internalTxType))).toEqual(new Set(INTERNAL_TX_TYPES));
    expect(new Set(all.map((t) => t.isReverted))).toEqual(new Set([true, false]));
    const byTx = new Map<string, any[]>();
    for (const t of all) byTx.set(t.txHash, [...(byTx.get(t.txHash) ?? []), t]);
    const shared = [...byTx.values()].filter((g) => g.length > 1);
    expect(shared.length).toBeGreaterThan(0);
    const sameShape = shared.filter((g) => new Set(g.map((t) => `${t.from.address}|${t.to.address}|${t.internalTxType}`)).size < g.length);
    expect(sameShape.length).toBeGreaterThan(0);
    for (const g of shared) expect(new Set(g.map((t) => t.blockNumber)).size).toBe(1);
    const values = all.map((t) => t.value as string);
    expect(values.some((v) => v.length > 38)).toBe(true);
  });

  it('answers an address without internal transactions with an empty list', async () => {
    const r = await call(sim, internalsPath('0x' + 'ab'.repeat(20)));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ transactions: [] });
  });

  it('pages historical rewards by address and node, in both sort orders and currencies', async () => {
    const w = sim.world;
    const addresses = DEMO.rewardAddresses.join(',');
    const desc = await pageAll(sim, withParams('/v1/networks/mainnet/rewards', { addresses }), 'historicalRewards', 10);
    expect(desc.items).toEqual([...w.rewards('mainnet', { addresses: [...DEMO.rewardAddresses] })]);
    const asc = await pageAll(sim, withParams('/v1/networks/mainnet/rewards', { addresses, sortOrder: 'asc' }), 'historicalRewards', 100);
    expect(asc.items).toEqual([...desc.items].reverse());
    for (let i = 1; i < asc.items.length; i++) expect(asc.items[i].endTimestamp).toBeGreaterThanOrEqual(asc.items[i - 1].endTimestamp);
    const byNode = await pageAll(sim, withParams('/v1/networks/mainnet/rewards', { nodeIds: DEMO.nodeIds.join(','), currency: 'eur' }), 'historicalRewards', 100);
    expect(new Set(byNode.items.map((r) => r.rewardType))).toEqual(new Set(['VALIDATOR', 'DELEGATOR', 'VALIDATOR_FEE']));
    for (const r of byNode.items) {
      expect(DEMO.nodeIds).toContain(r.nodeId);
      expect(r.reward).toMatchObject({ symbol: 'AVAX', denomination: 9, type: 'secp256k1' });
      expect(r.reward.amount).toMatch(/^\d+$/);
      if (r.reward.historicalPrice) {
        expect(r.reward.historicalPrice.currencyCode).toBe('eur');
        expect(typeof r.reward.historicalPrice.value).toBe('number');
      }
    }
    expect(byNode.items.some((r) => r.reward.historicalPrice === undefined)).toBe(true);
    expect(new Set(byNode.items.map((r) => r.utxoId)).size).toBe(byNode.items.length);
    // X- and bare forms select the same rewards as P-.
    const bare = DEMO.rewardAddresses[0].slice(2);
    const x = await call(sim, withParams('/v1/networks/mainnet/rewards', { addresses: `X-${bare}`, pageSize: 100 }));
    const p = await call(sim, withParams('/v1/networks/mainnet/rewards', { addresses: bare, pageSize: 100 }));
    expect(x.body).toEqual(p.body);
  });

  it('validates reward and delegator parameters', async () => {
    expectDataError(await call(sim, '/v1/networks/mainnet/rewards'), 400, 'addresses');
    expectDataError(await call(sim, '/v1/networks/mainnet/rewards:listPending'), 400, 'nodeIds');
    expectDataError(await call(sim, '/v1/networks/mainnet/rewards?addresses=P-avax1nope'), 400, 'addresses');
    const fujiAddress = DEMO.rewardAddresses[0].replace('avax', 'fuji');
    expectDataError(await call(sim, `/v1/networks/mainnet/rewards?addresses=${fujiAddress}`), 400, 'addresses');
    expectDataError(await call(sim, '/v1/networks/mainnet/rewards?nodeIds=NodeID-abc'), 400, 'nodeIds');
    expectDataError(await call(sim, `/v1/networks/mainnet/rewards?nodeIds=${DEMO.nodeIds[0]}&currency=btc`), 400, 'currency');
    expectDataError(await call(sim, `/v1/networks/mainnet/rewards?nodeIds=${DEMO.nodeIds[0]}&sortOrder=up`), 400, 'sortOrder');
    expectDataError(await call(sim, `/v1/networks/mainnet/rewards?nodeIds=${DEMO.nodeIds[0]}&pageSize=101`), 400, 'pageSize');
    expectDataError(await call(sim, `/v1/networks/devnet/rewards?nodeIds=${DEMO.nodeIds[0]}`), 400, 'network');
    expectDataError(await call(sim, '/v1/networks/mainnet/delegators?delegationStatus=done'), 400, 'delegationStatus');
    expectDataError(await call(sim, '/v1/networks/mainnet/delegators?rewardAddresses=avax1xyz'), 400, 'rewardAddresses');
    expectDataError(await call(sim, '/v1/networks/mainnet/delegators?pageSize=0'), 400, 'pageSize');
  });

  it('pages pending rewards with progress and estimated reward', async () => {
    const { items } = await pageAll(sim, withParams('/v1/networks/mainnet/rewards:listPending', { nodeIds: DEMO.nodeIds.join(',') }), 'pendingRewards', 10);
    expect(items).toEqual([...sim.world.pendingRewards('mainnet', { nodeIds: [...DEMO.nodeIds] })]);
    expect(items.length).toBeGreaterThan(2);
    for (const r of items) {
      expect(r.progress).toBeGreaterThanOrEqual(0);
      expect(r.progress).toBeLessThanOrEqual(100);
      expect(r.estimatedReward.amount).toMatch(/^\d+$/);
      expect(r.endTimestamp).toBeGreaterThan(sim.world.now);
    }
  });

  it('pages delegators in all three statuses with the right reward fields', async () => {
    const { items } = await pageAll(sim, '/v1/networks/mainnet/delegators', 'delegators', 100);
    expect(items).toEqual([...sim.world.delegators('mainnet')]);
    expect(new Set(items.map((d) => d.delegationStatus))).toEqual(new Set(['completed', 'active', 'pending']));
    for (const d of items) {
      if (d.delegationStatus === 'completed') {
        expect(d.grossReward).toMatch(/^\d+$/);
        expect(d.netReward).toMatch(/^\d+$/);
        expect(d.estimatedGrossReward).toBeUndefined();
        expect(d.endTimestamp).toBeLessThanOrEqual(sim.world.now);
      } else {
        expect(d.estimatedGrossReward).toMatch(/^\d+$/);
        expect(d.estimatedNetReward).toMatch(/^\d+$/);
        expect(d.grossReward).toBeUndefined();
        expect(d.endTimestamp).toBeGreaterThan(sim.world.now);
      }
    }
    const active = await pageAll(sim, '/v1/networks/mainnet/delegators?delegationStatus=active', 'delegators', 100);
    expect(active.items.length).toBe(items.filter((d) => d.delegationStatus === 'active').length);
    const mine = await pageAll(sim, withParams('/v1/networks/mainnet/delegators', { rewardAddresses: DEMO.rewardAddresses[1] }), 'delegators', 100);
    expect(mine.items.length).toBeGreaterThan(0);
    for (const d of mine.items) expect(d.rewardAddresses).toContain(DEMO.rewardAddresses[1]);
    const testnet = await call(sim, '/v1/networks/testnet/delegators?pageSize=100');
    const fuji = await call(sim, '/v1/networks/fuji/delegators?pageSize=100');
    expect(testnet.body.delegators).toEqual(fuji.body.delegators);
  });

  it('answers unknown routes and methods with 404 in the service error shape', async () => {
    expectDataError(await call(sim, '/v1/chains/43114/nothing'), 404, '/v1/chains/43114/nothing');
    expectMetricsError(await call(sim, '/v2/chains/43114/nothing'), 404, 'nothing');
    const post = await fetch(`${sim.url}${transfersPath(DEMO.contracts.erc20)}`, { method: 'POST' });
    expect(post.status).toBe(404);
    expect(await post.json()).toMatchObject({ error: 'Not Found', statusCode: 404 });
  });

  it('counts requests per route and status', () => {
    expect(sim.stats.byRoute.transfers).toBeGreaterThan(10);
    expect(sim.stats.byStatus['200']).toBeGreaterThan(10);
    expect(sim.stats.byStatus['400']).toBeGreaterThan(5);
    expect(sim.stats.requests).toBeGreaterThan(sim.stats.byRoute.transfers!);
  });
});

describe('answers kept from one request to the next', () => {
  // The simulator keeps what it derives (ids, identities, transaction bodies, sorted listings) in
  // memos shared by every simulator of the process. The first pages of these listings, asked of two
  // worlds in turn, each page twice, must hash to what the simulator answered before it kept
  // anything (423fabc). The worlds stand two days after the P-Chain's first block, so that an
  // address's history is short.
  const PATHS = [
    '/v1/networks/mainnet/blockchains/p-chain/transactions?addresses=P-avax19p4eqkpywnll0payuemw2jdprdtlnk4r8t9cqf&pageSize=7',
    '/v1/networks/mainnet/blockchains/p-chain/transactions?pageSize=50',
    '/v1/networks/mainnet/blockchains/p-chain/blocks?startTimestamp=1760914800&pageSize=40',
    '/v1/networks/mainnet/blockchains/p-chain/balances?addresses=P-avax19p4eqkpywnll0payuemw2jdprdtlnk4r8t9cqf',
    '/v1/networks/mainnet/blockchains/p-chain/utxos?addresses=P-avax19p4eqkpywnll0payuemw2jdprdtlnk4r8t9cqf&includeSpent=true&sortBy=amount&pageSize=20',
    '/v1/networks/mainnet/blockchains/x-chain/utxos?addresses=X-avax19p4eqkpywnll0payuemw2jdprdtlnk4r8t9cqf&includeSpent=true&pageSize=20',
    '/v1/networks/mainnet/blockchains/c-chain/utxos?addresses=avax19p4eqkpywnll0payuemw2jdprdtlnk4r8t9cqf&includeSpent=true&sortBy=amount&sortOrder=asc&pageSize=5',
    '/v1/networks/mainnet/blockchains/x-chain/transactions?addresses=X-avax19p4eqkpywnll0payuemw2jdprdtlnk4r8t9cqf&pageSize=25',
    '/v1/networks/mainnet/blockchains/c-chain/transactions?addresses=avax19p4eqkpywnll0payuemw2jdprdtlnk4r8t9cqf&pageSize=25',
    '/v1/networks/mainnet/delegators?nodeIds=NodeID-yogU5xQ61x9UAPr6tzhRwrU389jx6Rqd,NodeID-Nqtgq7rgyzWHYvouAK51mNKeKtzgCXhQd&pageSize=100',
    '/v1/networks/mainnet/validators?pageSize=100',
    '/v1/chains/43114/tokens/0xb10644cea485f69a5f8859e127911157a0d6d30d/transfers?pageSize=100&endBlock=71234568',
  ];

  it('two worlds in turn get the pages they got before the simulator kept anything', async () => {
    const at = () => DEMO.now - 12 * 86_400;
    const sims = [await startSimulator({ seed: SEED, worldNow: at }), await startSimulator({ seed: SEED + 1, worldNow: at })];
    try {
      const hashes = sims.map(() => createHash('sha256'));
      for (const path of PATHS) {
        const next: Array<string | undefined> = [path, path];
        for (let pages = 0; pages < 3 && next.some((x) => x !== undefined); pages++) {
          for (const [i, sim] of sims.entries()) {
            const at = next[i];
            if (at === undefined) continue;
            const [first, again] = [await fetch(sim.url + at), await fetch(sim.url + at)].map(async (r) => `${(await r).status} ${await (await r).text()}`);
            const body = await first!;
            expect(await again!).toBe(body);
            hashes[i]!.update(`${at}\n${body}\n`);
            const token = JSON.parse(body.slice(body.indexOf(' ') + 1)).nextPageToken as string | undefined;
            next[i] = token === undefined ? undefined : withParams(path, { pageToken: token });
          }
        }
      }
      expect(hashes.map((h) => h.digest('hex'))).toEqual(['7e501ff2c7cadfef1331e1e23104bf9ae34fdae544d9c966d7a85ceab2506a8a', '9224c8faecc43cb00fb5c7ecdd963928794aad0860468ab28a980299edfe7fe0']);
    } finally {
      for (const sim of sims) await sim.close();
    }
  });
});

describe('metrics service', () => {
  let clock = Date.UTC(2025, 10, 1);
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: SEED, now: () => clock });
  });
  afterAll(() => sim.close());

  const aligned: Record<string, (t: number) => boolean> = {
    hour: (t) => t % 3600 === 0,
    day: (t) => t % 86_400 === 0,
    week: (t) => t % 86_400 === 0 && new Date(t * 1000).getUTCDay() === 1,
    month: (t) => t % 86_400 === 0 && new Date(t * 1000).getUTCDate() === 1,
  };

  it('serves aligned, newest-first series for every interval and pages them completely', async () => {
    for (const interval of ['hour', 'day', 'week', 'month']) {
      const path = `/v2/chains/43114/metrics/txCount?timeInterval=${interval}`;
      const { items } = await pageAll(sim, path, 'results', interval === 'hour' ? 2160 : 100);
      expect(items).toEqual([...sim.world.metricPoints('43114', 'txCount', { timeInterval: interval as 'day' })]);
      expect(items.length).toBeGreaterThan(20);
      for (const p of items) {
        expect(aligned[interval]!(p.timestamp)).toBe(true);
        expect(typeof p.value).toBe('number');
        expect(p.timestamp).toBeLessThanOrEqual(sim.world.now);
      }
      for (let i = 1; i < items.length; i++) expect(items[i].timestamp).toBeLessThan(items[i - 1].timestamp);
    }
  });

  it('serves every metric for every chain id, aggregates included', async () => {
    for (const chainId of sim.world.metricChainIds) {
      for (const metric of METRICS) {
        const r = await call(sim, `/v2/chains/${chainId}/metrics/${metric}?pageSize=3`);
        expect(r.status, `${chainId} ${metric}`).toBe(200);
        expect(r.body.results).toHaveLength(3);
        expect(r.body.nextPageToken).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      }
    }
    const cumulative = [...sim.world.metricPoints('43114', 'cumulativeTxCount')].map((p) => p.value);
    for (let i = 1; i < cumulative.length; i++) expect(cumulative[i]).toBeLessThan(cumulative[i - 1]!);
  });

  it("an aggregate is made of its chains' points: total and mainnet add up their counts, and are never below a chain of theirs", async () => {
    const points = async (chainId: string, metric: string) => {
      const r = await call(sim, `/v2/chains/${chainId}/metrics/${metric}?timeInterval=day&startTimestamp=1759276800&endTimestamp=1761955200&pageSize=100`);
      expect(r.status).toBe(200);
      return new Map((r.body.results as Array<{ timestamp: number; value: number }>).map((p) => [p.timestamp, p.value]));
    };
    const mainnet = ['43114', '432204'];
    for (const metric of ['txCount', 'gasUsed', 'cumulativeTxCount', 'activeAddresses', 'maxTps', 'avgGasPrice', 'maxGasPrice']) {
      const [total, main, c, dexalot, fuji] = await Promise.all(['total', 'mainnet', ...mainnet, '43113'].map((id) => points(id, metric)));
      expect(total!.size, metric).toBe(31);
      for (const [t, v] of total!) {
        const chains = [c!.get(t)!, dexalot!.get(t)!, fuji!.get(t)!];
        if (metric === 'avgGasPrice') {
          expect(v, `${metric} ${t}`).toBeGreaterThanOrEqual(Math.min(...chains));
          expect(v, `${metric} ${t}`).toBeLessThanOrEqual(Math.max(...chains));
          continue;
        }
        expect(v, `${metric} ${t}`).toBeGreaterThanOrEqual(Math.max(...chains));
        expect(main!.get(t), `${metric} ${t}`).toBeGreaterThanOrEqual(Math.max(c!.get(t)!, dexalot!.get(t)!));
        if (['txCount', 'gasUsed', 'cumulativeTxCount'].includes(metric)) {
          expect(v, `${metric} ${t}`).toBe(chains.reduce((a, b) => a + b, 0));
          expect(main!.get(t), `${metric} ${t}`).toBe(c!.get(t)! + dexalot!.get(t)!);
        }
      }
    }
  });

  it('accepts only day for cumulative/max/avg metrics and contracts, deployers, feesPaid', async () => {
    for (const metric of METRICS) {
      const r = await call(sim, `/v2/chains/43114/metrics/${metric}?timeInterval=hour&pageSize=1`);
      if (dayOnly(metric)) expectMetricsError(r, 400, 'timeInterval');
      else expect(r.status).toBe(200);
    }
    expect(METRICS.filter(dayOnly)).toEqual(expect.arrayContaining(['contracts', 'deployers', 'feesPaid', 'avgTps', 'maxGps', 'cumulativeAddresses']));
  });

  it('rejects bad parameters with an array message', async () => {
    expectMetricsError(await call(sim, '/v2/chains/43114/metrics/txCount?pageSize=2161'), 400, 'pageSize');
    expectMetricsError(await call(sim, '/v2/chains/43114/metrics/txCount?pageSize=0'), 400, 'pageSize');
    expectMetricsError(await call(sim, '/v2/chains/43114/metrics/txCount?timeInterval=year'), 400, 'timeInterval');
    expectMetricsError(await call(sim, '/v2/chains/43114/metrics/txCount?startTimestamp=-1'), 400, 'startTimestamp');
    expectMetricsError(await call(sim, '/v2/chains/43114/metrics/txCount?startTimestamp=10&endTimestamp=5'), 400, 'startTimestamp');
    expectMetricsError(await call(sim, '/v2/chains/43114/metrics/blocks'), 400, 'metric');
    expectMetricsError(await call(sim, '/v2/chains/c-chain/metrics/txCount'), 400, 'chainId');
    expectMetricsError(await call(sim, '/v2/chains/1/metrics/txCount'), 404, 'chain');
    expectMetricsError(await call(sim, '/v2/chains/43114/metrics/txCount?pageToken=00000000-0000-4000-8000-000000000000'), 400, 'pageToken');
  });

  it('keeps timestamps at or after startTimestamp and before endTimestamp, as production does', async () => {
    const start = Date.UTC(2024, 0, 10, 5) / 1000;
    const end = Date.UTC(2024, 1, 20) / 1000;
    const { items } = await pageAll(sim, `/v2/chains/total/metrics/activeAddresses?startTimestamp=${start}&endTimestamp=${end}`, 'results', 7);
    expect(items[0].timestamp).toBe(end - 86_400);
    expect(items.at(-1).timestamp).toBe(Date.UTC(2024, 0, 11) / 1000);
    for (const p of items) expect(p.timestamp >= start && p.timestamp < end).toBe(true);
    // The published example: August 2024 to 2024-08-31 00:00, daily, ends with 2024-08-30.
    const aug = await pageAll(sim, `/v2/chains/43114/metrics/activeAddresses?startTimestamp=1722470400&endTimestamp=1725062400&timeInterval=day`, 'results', 31);
    expect([aug.items[0].timestamp, aug.items.at(-1).timestamp, aug.items.length]).toEqual([1724976000, 1722470400, 30]);
  });

  it('expires metric page tokens after 24 hours of the server clock and binds them to the query', async () => {
    const first = await call(sim, '/v2/chains/43114/metrics/gasUsed?pageSize=10');
    const token = first.body.nextPageToken as string;
    expectMetricsError(await call(sim, `/v2/chains/43114/metrics/txCount?pageSize=10&pageToken=${token}`), 400, 'pageToken');
    clock += 23 * 3600 * 1000;
    const second = await call(sim, `/v2/chains/43114/metrics/gasUsed?pageSize=10&pageToken=${token}`);
    expect(second.status).toBe(200);
    expect(second.body.results[0].timestamp).toBe(first.body.results[9].timestamp - 86_400);
    clock += 3600 * 1000;
    expectMetricsError(await call(sim, `/v2/chains/43114/metrics/gasUsed?pageSize=10&pageToken=${token}`), 400, 'expired');
  });

  it('serves avg_tps newest first with status and lastRun', async () => {
    const { items, pages } = await pageAll(sim, '/v1/avg_tps/43114', 'results');
    expect(items).toEqual([...sim.world.avgTpsPoints('43114')]);
    expect(pages.length).toBeGreaterThan(1);
    const r = await call(sim, '/v1/avg_tps/43113');
    expect(r.body.status).toBe(200);
    expect(typeof r.body.lastRun).toBe('number');
    expectMetricsError(await call(sim, '/v1/avg_tps/1'), 404, 'chain');
    expectMetricsError(await call(sim, '/v1/avg_tps/total'), 400, 'chainId');
  });

  it('pages avg_tps with nextPageStartKey (the legacy response schema) when asked to, taken back as pageToken', async () => {
    const legacy = await startSimulator({ seed: SEED, now: () => clock, avgTpsNextKey: 'nextPageStartKey' });
    try {
      const { items, pages } = await pageAll(legacy, '/v1/avg_tps/43114', 'results', undefined, 'nextPageStartKey');
      expect(items).toEqual([...legacy.world.avgTpsPoints('43114')]);
      expect(pages.length).toBeGreaterThan(1);
      // The other metrics keep nextPageToken.
      expect((await call(legacy, '/v2/chains/43114/metrics/txCount?pageSize=1')).body.nextPageToken).toEqual(expect.any(String));
    } finally {
      await legacy.close();
    }
  });
});

describe('api keys and rate limits', () => {
  it('accepts both key headers and rejects unknown keys with 401', async () => {
    const sim = await startSimulator({ seed: SEED, apiKeys: ['good'] });
    try {
      const path = `${transfersPath(DEMO.contracts.erc20)}?pageSize=1`;
      expect((await call(sim, path)).status).toBe(200);
      expect((await call(sim, path, { 'x-data-api-key': 'good' })).status).toBe(200);
      expect((await call(sim, path, { 'x-glacier-api-key': 'good' })).status).toBe(200);
      const bad = await call(sim, path, { 'x-glacier-api-key': 'bad' });
      expect(bad.status).toBe(401);
      expect(bad.body).toMatchObject({ error: 'Unauthorized', statusCode: 401 });
      expect((await call(sim, '/v2/chains/43114/metrics/txCount', { 'x-data-api-key': 'bad' })).status).toBe(200);
    } finally {
      await sim.close();
    }
  });

  it('with keyHeader, reads the key under that name only: a key under another is not seen (no budget headers, unauthenticated limits)', async () => {
    // A clock that stands still: every request falls in one window.
    const sim = await startSimulator({ seed: SEED, now: () => Date.UTC(2025, 10, 1, 12), apiKeys: ['good'], keyHeader: 'x-glacier-api-key', rateLimit: { data: { cuPerMinute: 100 } } });
    try {
      const path = `${transfersPath(DEMO.contracts.erc20)}?pageSize=1`;
      const read = await call(sim, path, { 'x-glacier-api-key': 'good' });
      expect(read.status).toBe(200);
      expect(read.headers.get('ratelimit-limit')).toBe('100');
      // A bad key under the other name is not even checked: the request is anonymous.
      const ignored = await call(sim, path, { 'x-data-api-key': 'bad' });
      expect(ignored.status).toBe(200);
      expect(ignored.headers.get('ratelimit-policy')).toBeNull();
      expect(ignored.headers.get('ratelimit-limit')).toBeNull();
      expect((await call(sim, path, { 'x-glacier-api-key': 'bad' })).status).toBe(401);
      // Both names at once: the one it reads counts.
      expect((await call(sim, path, { 'x-glacier-api-key': 'good', 'x-data-api-key': 'good' })).headers.get('ratelimit-remaining')).toBe('60');
      // Anonymous requests share the unauthenticated budget: 100 CU, five 20-CU pages, one spent above.
      for (let i = 0; i < 4; i++) expect((await call(sim, path, { 'x-data-api-key': 'good' })).status).toBe(200);
      expect((await call(sim, path, { 'x-data-api-key': 'good' })).status).toBe(429);
    } finally {
      await sim.close();
    }
  });

  it('counts fixed windows of the length its ratelimit-policy names (windowSeconds), by arrival', async () => {
    let clock = Date.UTC(2025, 10, 1, 12, 0, 1);
    const sim = await startSimulator({ seed: SEED, now: () => clock, rateLimit: { data: { cuPerMinute: 4800, cuPerDay: 1_000_000, windowSeconds: 5 } } });
    try {
      const path = withParams('/v1/networks/mainnet/rewards', { nodeIds: DEMO.nodeIds[0] });
      const key = { 'x-data-api-key': 'k' };
      await spendKeyed(sim, path, key, { requests: 4, weight: 100, quota: 400, policy: '400;w=5, 1000000;w=86400' });
      clock += 2500;
      const limited = await call(sim, path, key);
      expect(limited.status).toBe(429);
      // 12:00:03.5: the window closes at 12:00:05.
      expect(limited.headers.get('retry-after')).toBe('2');
      clock += 1500;
      expect((await call(sim, path, key)).status).toBe(200);
    } finally {
      await sim.close();
    }
  });

  it('charges CU per minute window, answers 429 with retry-after, and blocks clients that keep sending', async () => {
    let clock = Date.UTC(2025, 10, 1, 12, 0, 10);
    const sim = await startSimulator({
      seed: SEED, now: () => clock,
      rateLimit: { data: { cuPerMinute: 100, cuPerDay: 1000 }, metrics: { cuPerMinute: 200 }, blockAfterLimitedRequests: 2, blockSeconds: 300 },
    });
    try {
      const path = `${transfersPath(DEMO.contracts.erc20)}?pageSize=1`;
      const key = { 'x-data-api-key': 'k1' };
      await spendKeyed(sim, path, key, { requests: 5, weight: 20, quota: 100, policy: '100;w=60, 1000;w=86400' });
      const limited = await call(sim, path, key);
      expectDataError(limited, 429, 'Rate limit');
      expect(limited.headers.get('retry-after')).toBe('50');
      expect(limited.headers.get('ratelimit-reset')).toBe('50');
      // Unauthenticated requests are another client, and get no budget headers.
      const anon = await call(sim, path);
      expect(anon.status).toBe(200);
      expect(anon.headers.get('ratelimit-policy')).toBeNull();
      // Rewards weigh 100 CU: one fits in a fresh budget, the next does not.
      const rewards = withParams('/v1/networks/mainnet/rewards', { nodeIds: DEMO.nodeIds[0] });
      expect((await call(sim, rewards, { 'x-data-api-key': 'k2' })).status).toBe(200);
      expect((await call(sim, rewards, { 'x-data-api-key': 'k2' })).status).toBe(429);

      expect((await call(sim, path, key)).status).toBe(429);
      const blocked = await call(sim, path, key);
      expect(blocked.status).toBe(429);
      expect(blocked.headers.get('retry-after')).toBe('300');
      expect(blocked.body.message).toContain('blocked');
      clock += 120_000;
      const still = await call(sim, path, key);
      expect(still.status).toBe(429);
      expect(still.headers.get('retry-after')).toBe('180');
      clock += 181_000;
      expect((await call(sim, path, key)).status).toBe(200);
      expect(sim.stats.rateLimited).toBeGreaterThanOrEqual(5);
      expect(sim.stats.blocked).toBeGreaterThanOrEqual(2);

      // The metrics service has its own budget: 100 CU per series request.
      const m = '/v2/chains/43114/metrics/txCount?pageSize=1';
      expect((await call(sim, m)).status).toBe(200);
      expect((await call(sim, m)).status).toBe(200);
      const mLimited = await call(sim, m);
      expectMetricsError(mLimited, 429, 'Rate limit');
      expect(Number(mLimited.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await sim.close();
    }
  });

  it('enforces the daily budget until the next UTC day', async () => {
    let clock = Date.UTC(2025, 10, 1, 23, 50, 0);
    const sim = await startSimulator({ seed: SEED, now: () => clock, rateLimit: { data: { cuPerMinute: 100, cuPerDay: 200 } } });
    try {
      const path = `${transfersPath(DEMO.contracts.erc20)}?pageSize=1`;
      for (let i = 0; i < 5; i++) expect((await call(sim, path)).status).toBe(200);
      clock += 60_000;
      for (let i = 0; i < 5; i++) expect((await call(sim, path)).status).toBe(200);
      clock += 60_000;
      const r = await call(sim, path);
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe(String(8 * 60));
      clock = Date.UTC(2025, 10, 2, 0, 0, 1);
      expect((await call(sim, path)).status).toBe(200);
    } finally {
      await sim.close();
    }
  });
});

describe('fault injection', () => {
  const path = `${transfersPath(DEMO.contracts.erc20)}?pageSize=5`;

  async function withFault<T>(kind: FaultKind, f: (sim: Simulator) => Promise<T>, slowMs?: number): Promise<T> {
    const sim = await startSimulator({ seed: SEED, faults: { rate: 1, kinds: [kind], ...(slowMs ? { slowMs } : {}) } });
    try {
      return await f(sim);
    } finally {
      await sim.close();
    }
  }

  it('injects 429 with and without retry-after, 500, 502 and 503', async () => {
    await withFault('429', async (sim) => {
      const r = await call(sim, path);
      expectDataError(r, 429, '');
      expect(r.headers.get('retry-after')).not.toBeNull();
      expect(sim.stats.faults['429']).toBe(1);
    });
    await withFault('429-no-retry-after', async (sim) => {
      const r = await call(sim, path);
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBeNull();
    });
    for (const kind of ['500', '502', '503'] as const) {
      await withFault(kind, async (sim) => {
        const r = await call(sim, '/v2/chains/43114/metrics/txCount');
        expect(r.status).toBe(Number(kind));
        expect(Array.isArray(r.body.message)).toBe(true);
        expect(sim.stats.faults[kind]).toBe(1);
      });
    }
  });

  it('resets connections', async () => {
    await withFault('reset', async (sim) => {
      await expect(fetch(sim.url + path)).rejects.toThrow();
      expect(sim.stats.faults.reset).toBeGreaterThanOrEqual(1);
    });
  });

  it('answers slowly, past a client timeout', async () => {
    await withFault('slow', async (sim) => {
      await expect(fetch(sim.url + path, { signal: AbortSignal.timeout(100) })).rejects.toThrow();
      const started = Date.now();
      const r = await fetch(sim.url + path);
      expect(r.status).toBe(200);
      expect((await r.json()).transfers).toHaveLength(5);
      expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    }, 400);
  });

  it('truncates bodies and sends malformed JSON', async () => {
    await withFault('truncated', async (sim) => {
      const r = await fetch(sim.url + path);
      expect(r.status).toBe(200);
      await expect(r.text()).rejects.toThrow();
    });
    await withFault('malformed', async (sim) => {
      const r = await fetch(sim.url + path);
      expect(r.status).toBe(200);
      const text = await r.text();
      expect(text.length).toBeGreaterThan(100);
      expect(() => JSON.parse(text)).toThrow();
    });
  });

  it('is deterministic from its seed and can follow a fixed schedule', async () => {
    async function statuses(opts: { rate: number; seed?: number; every?: number }): Promise<number[]> {
      const sim = await startSimulator({ seed: SEED, faults: { ...opts, kinds: ['500', '503'] } });
      try {
        const out: number[] = [];
        for (let i = 0; i < 30; i++) out.push((await call(sim, path)).status);
        return out;
      } finally {
        await sim.close();
      }
    }
    const a = await statuses({ rate: 0.3, seed: 7 });
    expect(await statuses({ rate: 0.3, seed: 7 })).toEqual(a);
    expect(await statuses({ rate: 0.3, seed: 8 })).not.toEqual(a);
    const faulted = a.filter((s) => s !== 200).length;
    expect(faulted).toBeGreaterThan(2);
    expect(faulted).toBeLessThan(20);
    const every = await statuses({ rate: 0, every: 3 });
    every.forEach((s, i) => expect(s !== 200).toBe((i + 1) % 3 === 0));
  });
});

describe('a world that moves in time', () => {
  const DAY = 86_400;
  const W = DEMO.now;
  const erc20 = transfersPath(DEMO.contracts.erc20);

  async function withClock<T>(f: (sim: Simulator, set: (t: number) => void) => Promise<T>, opts: { seed?: number } = {}): Promise<T> {
    let t: number = W;
    const sim = await startSimulator({ seed: opts.seed ?? SEED, worldNow: () => t });
    try {
      return await f(sim, (next) => {
        t = next;
      });
    } finally {
      await sim.close();
    }
  }

  it('serves at WORLD_NOW what the still world serves (but the running newest metric point)', () => {
    const still = buildWorld({ seed: SEED });
    const clocked = buildWorld({ seed: SEED, now: () => W });
    expect(clocked.now).toBe(still.now);
    expect([...clocked.transfers('43114', DEMO.contracts.erc721)]).toEqual([...still.transfers('43114', DEMO.contracts.erc721)]);
    expect([...clocked.internals('43114', DEMO.internalAddresses[0])]).toEqual([...still.internals('43114', DEMO.internalAddresses[0])]);
    expect([...clocked.delegators('mainnet')]).toEqual([...still.delegators('mainnet')]);
    expect([...clocked.rewards('mainnet', { nodeIds: [...DEMO.nodeIds] })]).toEqual([...still.rewards('mainnet', { nodeIds: [...DEMO.nodeIds] })]);
    expect([...clocked.pendingRewards('mainnet', { nodeIds: [...DEMO.nodeIds] })]).toEqual([...still.pendingRewards('mainnet', { nodeIds: [...DEMO.nodeIds] })]);
    const [newest, ...older] = [...clocked.metricPoints('43114', 'txCount')];
    expect(older).toEqual([...still.metricPoints('43114', 'txCount')].slice(1));
    expect(newest).toEqual({ timestamp: W, value: 0 });
  });

  it('adds whole blocks of transfers above the old head as the clock advances, and leaves older pages identical', async () => {
    await withClock(async (sim, set) => {
      const before = await pageAll(sim, erc20, 'transfers', 100);
      const head = Number(before.items[0].blockNumber);
      expect(head).toBeLessThanOrEqual(sim.world.headBlock('43114'));
      set(W + 2 * DAY);
      const after = await pageAll(sim, erc20, 'transfers', 100);
      const added = after.items.length - before.items.length;
      expect(added).toBe(2 * DEMO.transfersPerDay);
      expect(sim.world.transfersPerDay('43114', DEMO.contracts.erc20)).toBe(DEMO.transfersPerDay);
      expect(after.items.slice(added)).toEqual(before.items);
      for (const t of after.items.slice(0, added)) {
        expect(Number(t.blockNumber)).toBeGreaterThan(sim.world.chain('43114')!.latestBlock);
        expect(t.blockTimestamp).toBeLessThanOrEqual(W + 2 * DAY);
      }
      // The old head's range pages exactly as before.
      const old = await pageAll(sim, withParams(erc20, { endBlock: head + 1 }), 'transfers', 100);
      expect(old.pages).toEqual(before.pages);
      // Mid-day, in the middle of the blocks: only blocks with timestamp <= now, each block whole.
      const later = sim.world.asOf(W + 5 * DAY);
      const mid = W + 2 * DAY + 7 * 3600 + 13;
      set(mid);
      const now = await pageAll(sim, erc20, 'transfers', 100);
      expect(now.items).toEqual([...later.transfers('43114', DEMO.contracts.erc20)].filter((t) => t.blockTimestamp <= mid));
      expect(now.items.length).toBeGreaterThan(after.items.length);
      const internals = (t: number) => [...sim.world.asOf(t).internals('43114', DEMO.internalAddresses[0])];
      const [i0, i3] = [internals(W), internals(W + 3 * DAY)];
      expect(i3.length - i0.length).toBe(3 * DEMO.internalsPerDay);
      expect(i3.slice(3 * DEMO.internalsPerDay)).toEqual(i0);
      // An earlier clock shows less: the oldest part of the same listing.
      const earlier = [...sim.world.asOf(W - 30 * DAY).transfers('43114', DEMO.contracts.erc20)];
      expect(earlier.length).toBeLessThan(before.items.length);
      expect(before.items.slice(before.items.length - earlier.length)).toEqual(earlier);
    });
  });

  it('moves a delegation from pending to active to completed, switching its reward fields', async () => {
    await withClock(async (sim, set) => {
      const { nodeId, txHash, rewardAddress } = DEMO.delegation;
      const find = async () => {
        const { items } = await pageAll(sim, withParams('/v1/networks/mainnet/delegators', { nodeIds: nodeId }), 'delegators', 100);
        return items.find((d) => d.txHash === txHash);
      };
      const rewardsOf = async (path: string, field: string) =>
        (await pageAll(sim, withParams(path, { addresses: rewardAddress }), field, 100)).items.filter((r) => r.txHash === txHash);
      expect(await find()).toBeUndefined();
      expect(DEMO.delegation.start - DEMO.delegation.listedFrom).toBeGreaterThan(0);

      set(DEMO.delegation.listedFrom);
      const pending = await find();
      expect(pending).toMatchObject({ delegationStatus: 'pending', nodeId, startTimestamp: DEMO.delegation.start, endTimestamp: DEMO.delegation.end });
      expect(pending.rewardAddresses).toEqual([rewardAddress]);
      expect(pending.estimatedGrossReward).toMatch(/^\d+$/);
      expect(pending.grossReward).toBeUndefined();
      expect(await rewardsOf('/v1/networks/mainnet/rewards:listPending', 'pendingRewards')).toEqual([]);

      set((DEMO.delegation.start + DEMO.delegation.end) / 2);
      const active = await find();
      expect(active).toMatchObject({ delegationStatus: 'active', txHash, estimatedGrossReward: pending.estimatedGrossReward });
      const [estimate] = await rewardsOf('/v1/networks/mainnet/rewards:listPending', 'pendingRewards');
      expect(estimate).toMatchObject({ rewardType: 'DELEGATOR', progress: 50 });
      const activeOnly = await call(sim, withParams('/v1/networks/mainnet/delegators', { nodeIds: nodeId, delegationStatus: 'active', pageSize: 100 }));
      expect(activeOnly.body.delegators.map((d: any) => d.txHash)).toContain(txHash);
      expect(await rewardsOf('/v1/networks/mainnet/rewards', 'historicalRewards')).toEqual([]);

      set(DEMO.delegation.end);
      const completed = await find();
      expect(completed).toMatchObject({ delegationStatus: 'completed', grossReward: active.estimatedGrossReward, netReward: active.estimatedNetReward });
      expect(completed.estimatedGrossReward).toBeUndefined();
      expect(await rewardsOf('/v1/networks/mainnet/rewards:listPending', 'pendingRewards')).toEqual([]);
      const [reward] = await rewardsOf('/v1/networks/mainnet/rewards', 'historicalRewards');
      expect(reward).toMatchObject({ rewardType: 'DELEGATOR', endTimestamp: DEMO.delegation.end, reward: { amount: completed.netReward } });
      expect(reward.reward.historicalPrice).toBeUndefined();
      set(DEMO.delegation.end + DAY + 1);
      const [priced] = await rewardsOf('/v1/networks/mainnet/rewards', 'historicalRewards');
      expect(priced.reward.historicalPrice).toMatchObject({ currencyCode: 'usd' });
    });
  });

  it('keeps the demo delegation seed-independent, and every status consistent with the clock', () => {
    for (const seed of [1, 99]) {
      const w = buildWorld({ seed, now: DEMO.delegation.start });
      const d = [...w.delegators('mainnet', { nodeIds: [DEMO.delegation.nodeId] })].find((x) => x.txHash === DEMO.delegation.txHash);
      expect(d?.delegationStatus).toBe('active');
      for (const t of [W - 40 * DAY, W, W + 10 * DAY, W + 100 * DAY]) {
        const at = w.asOf(t);
        const all = [...at.delegators('mainnet')];
        expect(all.length).toBeGreaterThan(0);
        for (const x of all) {
          const status = t < x.startTimestamp ? 'pending' : t < x.endTimestamp ? 'active' : 'completed';
          expect(x.delegationStatus).toBe(status);
          expect('grossReward' in x).toBe(status === 'completed');
        }
        for (const r of at.rewards('mainnet', { nodeIds: [...DEMO.nodeIds] })) expect(r.endTimestamp).toBeLessThanOrEqual(t);
        for (const r of at.pendingRewards('mainnet', { nodeIds: [...DEMO.nodeIds] })) {
          expect(r.endTimestamp).toBeGreaterThan(t);
          expect(r.progress).toBe(Math.round(((t - r.startTimestamp) / (r.endTimestamp - r.startTimestamp)) * 10_000) / 100);
        }
      }
    }
  });

  it('changes the newest metric point as the clock moves through its period, never the older ones', async () => {
    await withClock(async (sim, set) => {
      const series = async (path: string) => (await pageAll(sim, path, 'results', 2160)).items;
      set(W + DAY + 3600);
      const a = await series('/v2/chains/43114/metrics/txCount');
      const hourA = await series('/v2/chains/43114/metrics/gasUsed?timeInterval=hour');
      set(W + DAY + 5 * 3600);
      const b = await series('/v2/chains/43114/metrics/txCount');
      expect(b[0].timestamp).toBe(W + DAY);
      expect(b[0].value).toBeGreaterThan(a[0].value);
      expect(b.slice(1)).toEqual(a.slice(1));
      const hourB = await series('/v2/chains/43114/metrics/gasUsed?timeInterval=hour');
      expect(hourB.length).toBe(hourA.length + 4);
      expect(hourB.slice(5)).toEqual(hourA.slice(1));
      expect(hourB[4]).not.toEqual(hourA[0]);
      // Within one update period (15 minutes) the running value holds.
      set(W + DAY + 5 * 3600 + 14 * 60);
      expect((await series('/v2/chains/43114/metrics/txCount'))[0]).toEqual(b[0]);
      // Once the next day starts, the point is final: what any later clock serves for it.
      set(W + 2 * DAY);
      const c = await series('/v2/chains/43114/metrics/txCount');
      expect(c[0]).toEqual({ timestamp: W + 2 * DAY, value: 0 });
      expect(c.slice(1)).toEqual([...sim.world.asOf(W + 50 * DAY).metricPoints('43114', 'txCount')].filter((p) => p.timestamp <= W + DAY));
      expect(c[1].value).toBeGreaterThan(b[0].value);
      const tps = await pageAll(sim, '/v1/avg_tps/43114', 'results');
      expect(tps.items[0].timestamp).toBe(W + 2 * DAY);
      expect(tps.items).toEqual([...sim.world.avgTpsPoints('43114')]);
    });
  });

  it('expires data page tokens after dataTokenTtlMs of the server clock, and never without it', async () => {
    let clock = Date.UTC(2025, 10, 1);
    const ttl = await startSimulator({ seed: SEED, now: () => clock, dataTokenTtlMs: 60_000 });
    const still = await startSimulator({ seed: SEED, now: () => clock });
    try {
      const first = await call(ttl, `${erc20}?pageSize=5`);
      const token = first.body.nextPageToken as string;
      const plain = (await call(still, `${erc20}?pageSize=5`)).body.nextPageToken as string;
      clock += 59_999;
      const second = await call(ttl, `${erc20}?pageSize=5&pageToken=${token}`);
      expect(second.status).toBe(200);
      expect(second.body.transfers).toEqual((await call(still, `${erc20}?pageSize=5&pageToken=${plain}`)).body.transfers);
      clock += 1;
      const expired = await call(ttl, `${erc20}?pageSize=5&pageToken=${token}`);
      expectDataError(expired, 400, 'pageToken');
      expect(expired.body.message).toContain('expired');
      // A fresh token from a later page lives its own TTL.
      expect((await call(ttl, `${erc20}?pageSize=5&pageToken=${second.body.nextPageToken}`)).status).toBe(200);
      clock += 10 * 365 * 86_400_000;
      expect((await call(still, `${erc20}?pageSize=5&pageToken=${plain}`)).status).toBe(200);
    } finally {
      await ttl.close();
      await still.close();
    }
  });

  it('continues a listing where it left off however the clock moves between its pages', async () => {
    await withClock(async (sim, set) => {
      async function walk(path: string, field: string, pageSize: number | undefined, step: number): Promise<any[]> {
        const items: any[] = [];
        let token: string | undefined;
        let t = sim.world.now;
        do {
          const r = await call(sim, withParams(path, { pageSize, pageToken: token }));
          expect(r.status, JSON.stringify(r.body)).toBe(200);
          items.push(...r.body[field]);
          token = r.body.nextPageToken;
          set((t += step));
        } while (token !== undefined);
        return items;
      }
      const t0 = W + DAY / 2;
      set(t0);
      const at0 = sim.world.asOf(t0);
      const transfers = await walk(erc20, 'transfers', 10, DAY);
      expect(transfers).toEqual([...at0.transfers('43114', DEMO.contracts.erc20)]);
      expect(new Set(transfers.map((t) => `${t.txHash}:${t.logIndex}`)).size).toBe(transfers.length);
      // A new listing then starts from the new head.
      const fresh = await call(sim, withParams(erc20, { pageSize: 10 }));
      expect(Number(fresh.body.transfers[0].blockNumber)).toBeGreaterThan(Number(transfers[0].blockNumber));

      set(t0);
      const delegators = await walk('/v1/networks/mainnet/delegators', 'delegators', 7, 5 * DAY);
      expect(delegators).toEqual([...at0.delegators('mainnet')]);
      set(t0);
      const pendingPath = withParams('/v1/networks/mainnet/rewards:listPending', { nodeIds: DEMO.nodeIds.join(',') });
      expect(await walk(pendingPath, 'pendingRewards', 2, 20 * DAY)).toEqual([...at0.pendingRewards('mainnet', { nodeIds: [...DEMO.nodeIds] })]);
      set(t0);
      const hours = await walk('/v2/chains/43114/metrics/txCount?timeInterval=hour', 'results', 500, 3600);
      expect(hours).toEqual([...at0.metricPoints('43114', 'txCount', { timeInterval: 'hour' })]);
      set(t0);
      expect(await walk('/v1/avg_tps/43114', 'results', undefined, DAY)).toEqual([...at0.avgTpsPoints('43114')]);
    });
  });
});

describe('chainlake sim --now', () => {
  const HOUR = 3600;
  // Mid-hour, days past the world's start: blocks exist after it in the world's time.
  const T = DEMO.now + 3 * 86_400 + 1_234;

  /** `chainlake sim` (the built CLI) with its world at `now`, on a free port. */
  function cliSim(now: string): Promise<{ url: string; stop(): void }> {
    const bin = fileURLToPath(new URL('../../bin/chainlake.js', import.meta.url));
    const child = spawn(process.execPath, [bin, 'sim', '--port', '0', '--now', now], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    return new Promise((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) resolve({ url: m[1]!, stop: () => child.kill('SIGTERM') });
      });
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('exit', (code) => reject(new Error(`chainlake sim exited ${code}: ${out}`)));
    });
  }

  it('serves the world as of --now (ISO or Unix seconds): no block nor transfer after it, every one up to it', async () => {
    const world = buildWorld({ seed: 1, now: T });
    for (const now of [new Date(T * 1000).toISOString(), String(T)]) {
      const sim = await cliSim(now);
      try {
        const as = { url: sim.url } as Simulator;
        const blocks = await call(as, withParams('/v1/chains/43114/blocks', { pageSize: 1 }));
        expect(Number(blocks.body.blocks[0].blockNumber)).toBe(world.headBlock('43114'));
        expect(blocks.body.blocks[0].blockTimestamp).toBeLessThanOrEqual(T);
        expect(world.headBlock('43114')).toBeGreaterThan(world.chain('43114')!.latestBlock);
        const { items } = await pageAll(as, transfersPath(DEMO.contracts.erc20), 'transfers', 100);
        expect(items).toEqual([...world.transfers('43114', DEMO.contracts.erc20)]);
        expect(items[0].blockTimestamp).toBeGreaterThan(DEMO.now);
        expect(items.filter((t) => t.blockTimestamp > T)).toEqual([]);
      } finally {
        sim.stop();
      }
    }
  });

  it('two runs an hour of the world apart: the second lands what the hour added, only that', async () => {
    const lake = mkdtempSync(join(tmpdir(), 'cl-sim-now-'));
    const pipeline = (url: string) => {
      const p = loadPipeline('pipelines/demo.yaml');
      p.sources.data.url = url;
      p.streams = p.streams.filter((x) => x.table === 'erc_transfers');
      return p;
    };
    const contracts = pipeline('http://x').streams[0]!.contracts as string[];
    const later = buildWorld({ seed: 1, now: T + HOUR });
    const all = contracts.flatMap((c) => [...later.transfers('43114', c)]);
    const added = all.filter((t) => t.blockTimestamp > T);
    expect(added.length).toBeGreaterThan(0);
    for (const [now, want] of [[T, all.length - added.length], [T + HOUR, added.length]] as const) {
      const sim = await cliSim(String(now));
      try {
        const report = await runPipeline(pipeline(sim.url), { lake, logger: quiet });
        expect(report.streams.find((x) => x.table === 'erc_transfers')!.rows).toBe(want);
      } finally {
        sim.stop();
      }
    }
    const rows = await lakeRows(lake, 'SELECT tx_hash, log_index, block_timestamp FROM erc_transfers ORDER BY block_number, log_index');
    expect(rows.length).toBe(all.length);
    expect(new Set(rows.map((r) => `${r.tx_hash}|${r.log_index}`)).size).toBe(all.length);
  });

  it('refuses a --now that is no time, or before the world starts, naming it', async () => {
    const { worldNowOf } = await import('../../src/cli/sim.js');
    expect(worldNowOf('2025-11-04T00:20:34Z', DEMO.now)).toBe(T);
    expect(worldNowOf(String(T), DEMO.now)).toBe(T);
    expect(() => worldNowOf('yesterday', DEMO.now)).toThrow('--now "yesterday": not a time');
    expect(() => worldNowOf('2025-11-04', DEMO.now)).toThrow('not a time');
    expect(() => worldNowOf(String(DEMO.now - 1), DEMO.now)).toThrow('before 2025-11-01T00:00:00Z, where the simulated world starts');
  });
});
