// The node tables against a node that answers as AvalancheGo does (docs/services.md, Node
// JSON-RPC): the asset chain's namespace avm, uint64 fields as JSON numbers past 2^53, -32000 on
// HTTP 200 for every error of its own APIs, 415 without the JSON content type, info.uptime that
// ignores subnetID, ethRules with ChainID and newer rules, a health check not run yet, peers with
// upgradeTime and ACP votes, and the admin API's reads. Every node table lands with exact digits
// and no rejected good row; the big numbers are compared, as text, with what the world served.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { formatReport, type RunReport } from '../../src/pipeline/report.js';
import { rebuildTable } from '../../src/pipeline/rebuild.js';
import { Client } from '../../src/sources/client.js';
import { newRequestStats } from '../../src/decl/request.js';
import { RpcError, isMissingMethod, rpc } from '../../src/sources/jsonrpc.js';
import { ExactNumber, parseExact, stringifyExact } from '../../src/json.js';
import { AVAX_ASSET_ID, FIRST_INEXACT, NODE_DEMO, NOT_YET_RUN, assetId } from '../../src/simulator/node_world.js';
import { INVALID_ARG } from '../../src/simulator/node_routes.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { PRIMARY_NETWORK_ID, X_CHAIN_ID } from '../../src/simulator/subnets.js';
import { CHAINS } from '../../src/simulator/evm.js';
import { UNTRACKED_SUBNET_ID } from '../../src/streams/node_uptime.js';
import { STREAMS } from '../../src/streams/index.js';
import { lakeContents, lakeRows as rows, line, quiet, recordingProxy, sorted, source } from '../helpers.js';
import { ADDRESSES, ASSET_IDS, WINDOW, nodePipeline, nodeStreams, plainSubnetChain } from './node_fixture.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'cl-node-prod-'));
const C_CHAIN = CHAINS.find((c) => c.chainId === '43114')!.blockchainId;
const UINT64_MAX = '18446744073709551615';
const secs = (t: string | null | undefined) => (t == null ? null : Math.floor(Date.parse(t.replace(/\.\d+Z$/, 'Z')) / 1000));
/** A JSON column's text, read keeping its numbers' digits, written back in one form. */
const exactJson = (text: string | null) => (text === null ? null : stringifyExact(parseExact(text)));

const pipeline = nodePipeline;

type Obj = Record<string, any>;

describe('every node table against a node that answers as AvalancheGo does', () => {
  let sim: Simulator;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let lake: string;
  let report: RunReport;
  /** A subnet-EVM chain of a plain subnet (not an L1). */
  let other: string;
  const { start, end } = WINDOW;
  const stream = (table: string) => report.streams.find((s) => s.table === table)!;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 23, node: { admin: true } });
    // Between chainlake and the node: every request is recorded as sent.
    proxy = await recordingProxy(sim.url);
    other = plainSubnetChain(sim);
    lake = tmp();
    const p = pipeline(proxy.url, [
      ...nodeStreams(other),
      { table: 'active_rules', blockchainIds: [other] },
      { table: 'chain_aliases', blockchainIds: ['P', 'X', 'C', NODE_DEMO.evmChain] },
      { table: 'logger_levels' },
    ]);
    report = await runPipeline(p, { lake, logger: quiet, flushRows: 40 });
  });
  afterAll(async () => {
    await proxy?.close();
    await sim?.close();
  });

  it('lists every node table of the registry', () => {
    const listed = new Set(report.streams.map((s) => s.table));
    expect(STREAMS.filter((d) => d.service === 'node').map((d) => d.table).filter((t) => !listed.has(t))).toEqual([]);
  });

  it('completes: no error, no reject, no drift (inside nested objects either); every table has rows', () => {
    expect(report.status).toBe('ok');
    for (const s of report.streams) {
      expect(s.errors, s.table).toEqual([]);
      expect(s.rejects, s.table).toBe(0);
      expect(s.extraFields, s.table).toEqual({});
      expect(s.rows, s.table).toBeGreaterThan(0);
      expect(s.partitionsDone, s.table).toBe(s.partitions);
    }
  });

  it('sends every call as application/json, and asks the asset chain in the avm namespace only', () => {
    const posts = proxy.requests.filter((r) => r.method === 'POST');
    expect(posts.length).toBeGreaterThan(50);
    for (const r of posts) expect(r.headers['content-type'], r.body).toBe('application/json');
    const asset = posts.map((r) => JSON.parse(r.body).method as string).filter((m) => /^(avm|xvm)\./.test(m));
    expect(new Set(asset)).toEqual(new Set(['avm.getHeight', 'avm.getBlockByHeight', 'avm.getAssetDescription', 'avm.getUTXOs']));
  });

  it('the asset chain: every block, transaction, input and output, uint64 fields exact to the last digit', async () => {
    const n = sim.world.node;
    const blocks: Obj[] = [];
    for (let h = start; h < end; h++) blocks.push(n.xvmBlock(h)!);
    const X = X_CHAIN_ID.mainnet;
    // Heights and times are JSON numbers here: compared as the text the node wrote.
    const wantBlocks = blocks.map((b) => line(X, b.height, b.id, secsOf(b.time), b.txs.length));
    const gotBlocks = (await rows(lake, `SELECT blockchain_id, block_height, block_id, epoch(block_time)::BIGINT t, tx_count FROM xvm_blocks`)).map((r) => line(r.blockchain_id, r.block_height, r.block_id, r.t, r.tx_count));
    expect(sorted(gotBlocks)).toEqual(sorted(wantBlocks));

    const txs = blocks.flatMap((b) => b.txs.map((t: Obj) => ({ b, t })));
    const wantTxs = txs.map(({ t }) => line(t.id, stringifyExact(t.unsignedTx)));
    const gotTxs = (await rows(lake, `SELECT tx_id, unsigned_tx FROM xvm_transactions`)).map((r) => line(r.tx_id, exactJson(r.unsigned_tx)));
    expect(sorted(gotTxs)).toEqual(sorted(wantTxs));
    // The JSON column's text holds the digits as sent, not a double's.
    const [maxTx] = await rows(lake, `SELECT unsigned_tx::VARCHAR j FROM xvm_transactions WHERE contains(unsigned_tx::VARCHAR, '${UINT64_MAX}') LIMIT 1`);
    expect(maxTx, 'a transaction paying the uint64 maximum').toBeDefined();
    expect(maxTx!.j).not.toContain('18446744073709552000');

    const wantOut = txs.flatMap(({ t }) => {
      const u = t.unsignedTx;
      return [...u.outputs, ...(u.exportedOutputs ?? [])].map((x: Obj, k: number) => line(t.id, k, x.output.amount, x.output.locktime, x.output.threshold, x.output.addresses));
    });
    const gotOut = (await rows(lake, `SELECT tx_id, output_index, amount_raw, locktime, threshold, addresses FROM xvm_outputs`)).map((r) => line(r.tx_id, r.output_index, r.amount_raw, r.locktime, r.threshold, r.addresses));
    expect(sorted(gotOut)).toEqual(sorted(wantOut));
    const wantIn = txs.flatMap(({ t }) => {
      const u = t.unsignedTx;
      return [...u.inputs, ...(u.importedInputs ?? [])].map((x: Obj, k: number) => line(t.id, k, x.txID, x.outputIndex, x.input.amount));
    });
    const gotIn = (await rows(lake, `SELECT tx_id, input_index, spent_tx_id, spent_output_index, amount_raw FROM xvm_inputs`)).map((r) => line(r.tx_id, r.input_index, r.spent_tx_id, r.spent_output_index, r.amount_raw));
    expect(sorted(gotIn)).toEqual(sorted(wantIn));

    for (const t of ['xvm_inputs', 'xvm_outputs']) {
      const [x] = await rows(lake, `SELECT count(*) FILTER (WHERE amount::VARCHAR <> amount_raw) AS off, count(*) FILTER (WHERE amount > 9007199254740992) AS big FROM ${t}`);
      expect(x!.off, t).toBe('0');
      expect(Number(x!.big), t).toBeGreaterThan(0);
    }
    const [max] = await rows(lake, `SELECT count(*) n FROM xvm_outputs WHERE amount_raw = '${UINT64_MAX}'`);
    expect(Number(max!.n)).toBeGreaterThan(0);
    // A locktime of the uint64 maximum (top bit set: past BIGINT) lands whole, as DECIMAL(20,0) (every uint64, and a type every engine and Iceberg read).
    const [lock] = await rows(lake, `SELECT count(*) n, any_value(typeof(locktime)) t FROM xvm_outputs WHERE locktime = ${UINT64_MAX}::DECIMAL(20,0)`);
    expect(Number(lock!.n)).toBeGreaterThan(0);
    expect(lock!.t).toBe('DECIMAL(20,0)');
  });

  it('subnet_validators: a weight of 2^53 + 1 lands as 9007199254740993, every field as served', async () => {
    const n = sim.world.node;
    const want = [NODE_DEMO.evmChain, other].flatMap((id) =>
      n.validators(n.evmChain(id)!).map((v: Obj) => line(id, v.nodeID, v.weight, v.startTimestamp, v.uptimeSeconds, v.uptimePercentage)),
    );
    const got = (await rows(lake, `SELECT blockchain_id, node_id, weight_raw, epoch(start_timestamp)::BIGINT st, uptime_seconds, uptime_percentage FROM subnet_validators`)).map((r) =>
      line(r.blockchain_id, r.node_id, r.weight_raw, r.st, r.uptime_seconds, r.uptime_percentage),
    );
    expect(sorted(got)).toEqual(sorted(want));
    const weights = (await rows(lake, `SELECT weight_raw, weight::VARCHAR w FROM subnet_validators`)).map((r) => [r.weight_raw, r.w]);
    expect(weights.every(([raw, w]) => raw === w)).toBe(true);
    const served = [NODE_DEMO.evmChain, other].flatMap((id) => n.validators(n.evmChain(id)!).map((v: Obj) => String(v.weight)));
    expect(served).toContain(FIRST_INEXACT.toString());
    expect(weights.map(([raw]) => raw)).toContain(FIRST_INEXACT.toString());
  });

  it('node_uptime: the primary network once; the subnet is skipped with the reason, not given the primary figures', async () => {
    const u = sim.world.node.uptime();
    expect(await rows(lake, `SELECT subnet_id, rewarding_stake_percentage a, weighted_average_percentage b FROM node_uptime`)).toEqual([
      { subnet_id: PRIMARY_NETWORK_ID, a: Number(u.rewardingStakePercentage), b: Number(u.weightedAveragePercentage) },
    ]);
    const s = stream('node_uptime');
    expect(s.skips).toHaveLength(1);
    expect(s.skips[0]!.startsWith(`${NODE_DEMO.subnetId}: the node ignores info.uptime's subnetID`)).toBe(true);
    // One question settles it: a subnet no node tracks was asked once, the listed subnet never.
    const asked = proxy.requests.filter((r) => r.body.includes('"info.uptime"')).map((r) => JSON.parse(r.body).params);
    expect(asked).toEqual(expect.arrayContaining([{}, { subnetID: UNTRACKED_SUBNET_ID }]));
    expect(asked.some((p: Obj) => p.subnetID === NODE_DEMO.subnetId)).toBe(false);
    expect(formatReport(report)).toContain(`node_uptime: ${NODE_DEMO.subnetId}: the node ignores`);
  });

  it("active_rules: ChainID is each row's evm_chain_id, not a rule; the newer rules are rows", async () => {
    const n = sim.world.node;
    const want = [NODE_DEMO.evmChain, other].flatMap((id) => {
      const c = n.evmChain(id)!;
      const a = n.activeRules(c, n.latestTime(c)) as Obj;
      expect(a.ethRules.ChainID).toBe(c.config.chainId);
      return [
        ...Object.entries(a.ethRules).filter(([k]) => k !== 'ChainID').map(([k, v]) => line(id, 'eth', k, v, c.config.chainId)),
        ...Object.entries(a.avalancheRules).map(([k, v]) => line(id, 'avalanche', k, v, c.config.chainId)),
        ...Object.keys(a.precompiles).map((k) => line(id, 'precompile', k, true, c.config.chainId)),
      ];
    });
    const got = (await rows(lake, `SELECT blockchain_id, kind, rule, active, evm_chain_id FROM active_rules`)).map((r) => line(r.blockchain_id, r.kind, r.rule, r.active, r.evm_chain_id));
    expect(sorted(got)).toEqual(sorted(want));
    const rules = (await rows(lake, `SELECT DISTINCT rule FROM active_rules`)).map((r) => r.rule);
    expect(rules).toEqual(expect.arrayContaining(['IsBerlin', 'IsLondon', 'IsShanghai', 'IsPrague', 'IsFortuna', 'IsGranite']));
    expect(rules).not.toContain('ChainID');
  });

  it('health_checks: a check not run yet lands with a NULL timestamp, unhealthy, the row kept', async () => {
    const fresh = sim.world.node.newChain()!;
    expect(sim.world.node.health('health').checks[fresh.blockchainId]).toEqual(NOT_YET_RUN);
    const got = await rows(lake, `SELECT healthy, error, timestamp, duration, contiguous_failures, time_of_first_failure FROM health_checks WHERE kind = 'health' AND name = '${fresh.blockchainId}'`);
    expect(got).toEqual([{ healthy: false, error: 'not yet run', timestamp: null, duration: '0', contiguous_failures: null, time_of_first_failure: null }]);
    // The others ran: each has its time.
    const [ran] = await rows(lake, `SELECT count(*) FILTER (WHERE timestamp IS NULL) AS untimed, count(*) n FROM health_checks WHERE name <> '*' AND name <> '${fresh.blockchainId}'`);
    expect(ran).toMatchObject({ untimed: '0' });
  });

  it('node_peers: upgradeTime and the ACP votes land with the rest', async () => {
    const want = sim.world.node.peers().map((p: Obj) => line(p.nodeID, p.version, Number(p.upgradeTime), secs(p.lastSent), p.observedUptime, p.trackedSubnets, p.supportedACPs, p.objectedACPs, p.benched));
    const got = (await rows(lake, `SELECT node_id, version, epoch(upgrade_time)::BIGINT u, epoch(last_sent)::BIGINT s, observed_uptime, tracked_subnets, supported_acps, objected_acps, benched FROM node_peers`)).map((r) =>
      line(r.node_id, r.version, r.u, r.s, r.observed_uptime, r.tracked_subnets, r.supported_acps, r.objected_acps, r.benched),
    );
    expect(sorted(got)).toEqual(sorted(want));
    const [acps] = await rows(lake, `SELECT count(*) FILTER (WHERE len(supported_acps) > 0) s, count(*) FILTER (WHERE len(objected_acps) > 0) o FROM node_peers`);
    expect(Number(acps!.s)).toBeGreaterThan(0);
    expect(Number(acps!.o)).toBeGreaterThan(0);
  });

  it('node_info, fee_config, chain_config, assets and utxos: as served', async () => {
    const n = sim.world.node;
    const [info] = await rows(lake, `SELECT node_id, network_id, tx_fee_raw, acps FROM node_info`);
    expect(info).toMatchObject({ node_id: n.nodeId, network_id: 1, tx_fee_raw: '1000000' });
    expect(JSON.parse(info!.acps)).toEqual(n.acps());
    const fees = (await rows(lake, `SELECT blockchain_id, min_base_fee, last_changed_at, fee_config FROM fee_config`)).map((r) => line(r.blockchain_id, r.min_base_fee, r.last_changed_at, exactJson(r.fee_config)));
    const wantFees = [NODE_DEMO.evmChain, other].map((id) => {
      const f = n.feeConfig(n.evmChain(id)!) as Obj;
      return line(id, f.feeConfig.minBaseFee, f.lastChangedAt, stringifyExact(f.feeConfig));
    });
    expect(sorted(fees)).toEqual(sorted(wantFees));
    const configs = (await rows(lake, `SELECT blockchain_id, evm_chain_id FROM chain_config`)).map((r) => line(r.blockchain_id, r.evm_chain_id));
    expect(sorted(configs)).toEqual(sorted([NODE_DEMO.evmChain, other, C_CHAIN].map((id) => line(id, n.chainConfig(n.evmChain(id)!).chainId))));
    const assets = (await rows(lake, `SELECT asset_id, denomination FROM assets`)).map((r) => line(r.asset_id, r.denomination));
    expect(sorted(assets)).toEqual(sorted(n.assets().filter((a) => ASSET_IDS.includes(a.assetID)).map((a) => line(a.assetID, a.denomination))));
    const utxos = new Set(ADDRESSES.flatMap((a) => n.utxosOf(a)).map((u) => line(u.txId, u.amount, u.locktime)));
    const got = (await rows(lake, `SELECT tx_id, amount_raw, locktime FROM utxos`)).map((r) => line(r.tx_id, r.amount_raw, r.locktime));
    expect(sorted(got)).toEqual(sorted([...utxos]));
  });

  it('chain_aliases and logger_levels: the admin API read where the node enables it', async () => {
    const n = sim.world.node;
    const ids = ['P', 'X', 'C'].map((a) => n.chainId(a)!).concat(NODE_DEMO.evmChain);
    const want = ids.map((id) => line(id, n.chainAliases(id)));
    const got = (await rows(lake, `SELECT blockchain_id, aliases FROM chain_aliases`)).map((r) => line(r.blockchain_id, r.aliases));
    expect(sorted(got)).toEqual(sorted(want));
    expect(got.find((l) => l.startsWith(n.chainId('X')!))).toContain('"avm"');
    const levels = (await rows(lake, `SELECT logger_name, log_level, display_level FROM logger_levels`)).map((r) => line(r.logger_name, r.log_level, r.display_level));
    expect(sorted(levels)).toEqual(sorted(Object.entries(n.loggerLevels()).map(([k, v]) => line(k, v.logLevel, v.displayLevel))));
  });

  it('rebuild from the raw pages gives the same exact digits (the pages are read back exactly too)', async () => {
    const before = await lakeContents(lake);
    for (const table of ['xvm_transactions', 'xvm_outputs', 'subnet_validators']) {
      const r = await rebuildTable(lake, table, { logger: quiet });
      expect(r.rejects, table).toBe(0);
    }
    const after = await lakeContents(lake);
    for (const table of ['xvm_transactions', 'xvm_outputs', 'subnet_validators']) expect(after[table], table).toEqual(before[table]);
    expect(after.xvm_outputs!.join('\n')).toContain(UINT64_MAX);
  });
});

/** A block time as the node wrote it (a JSON number kept exact) in seconds. */
function secsOf(t: unknown): number {
  return Number(t instanceof ExactNumber ? t.text : t);
}

describe('a node without the admin API', () => {
  it('skips the admin tables with the reason in the report; the run is ok', async () => {
    const sim = await startSimulator({ seed: 3 });
    try {
      const lake = tmp();
      const r = await runPipeline(pipeline(sim.url, [{ table: 'node_info' }, { table: 'chain_aliases' }, { table: 'logger_levels' }]), { lake, logger: quiet });
      expect(r.status).toBe('ok');
      for (const t of ['chain_aliases', 'logger_levels']) {
        const s = r.streams.find((x) => x.table === t)!;
        expect(s.errors, t).toEqual([]);
        expect(s.rows, t).toBe(0);
        expect(s.partitionsDone, t).toBe(s.partitions);
        expect(s.skips.length, t).toBe(s.partitions);
        for (const why of s.skips) expect(why).toMatch(/the node does not serve the admin API \(POST \/ext\/admin answered 404; it is off unless the node runs with --api-admin-enabled=true\)/);
      }
      expect(r.streams.find((x) => x.table === 'node_info')!.rows).toBe(1);
      const text = formatReport(r);
      expect(text).toContain('\nskipped (the source does not serve them; no rows, not a failure):\n');
      expect(text).toContain('\n  chain_aliases: P: the node does not serve the admin API');
    } finally {
      await sim.close();
    }
  });

  it('an admin error that is not a missing API still fails the partition', async () => {
    const sim = await startSimulator({ seed: 3, node: { admin: true } });
    try {
      const r = await runPipeline(pipeline(sim.url, [{ table: 'logger_levels', loggerName: 'nosuch' }]), { lake: tmp(), logger: quiet });
      expect(r.status).toBe('failed');
      expect(r.streams[0]!.errors.join()).toContain('admin.getLoggerLevel: JSON-RPC error -32000: logger "nosuch" not found');
      expect(r.streams[0]!.skips).toEqual([]);
    } finally {
      await sim.close();
    }
  });
});

describe('errors as AvalancheGo answers them', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 4 });
  });
  afterAll(async () => {
    await sim?.close();
  });
  const fail = async (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);

  it('the node\'s own APIs: -32000 for an unknown method, an unknown namespace and bad params, with data null, on HTTP 200', async () => {
    const client = new Client('node', source(sim.url, { retries: 0 }));
    const call = (path: string, method: string, params: unknown) => rpc(client, path, method, params, { stats: newRequestStats() });
    const unknown = (await fail(call('/ext/info', 'info.nope', {}))) as RpcError;
    expect(unknown).toBeInstanceOf(RpcError);
    expect([unknown.code, unknown.rpcMessage]).toEqual([-32000, 'rpc: can\'t find method "info.Nope"']);
    // data: null adds nothing to the message.
    expect(unknown.message).toBe('POST /ext/info info.nope: JSON-RPC error -32000: rpc: can\'t find method "info.Nope"');
    const service = (await fail(call('/ext/bc/X', 'xvm.getHeight', {}))) as RpcError;
    expect([service.code, service.rpcMessage]).toEqual([-32000, 'rpc: can\'t find service "xvm.GetHeight"']);
    expect(isMissingMethod(unknown) && isMissingMethod(service)).toBe(true);
    const bad = (await fail(call('/ext/bc/X', 'avm.getBlockByHeight', { height: 'ten', encoding: 'json' }))) as RpcError;
    expect([bad.code, bad.rpcMessage]).toEqual([-32000, INVALID_ARG]);
    expect(isMissingMethod(bad)).toBe(false);
    const above = (await fail(call('/ext/bc/X', 'avm.getBlockByHeight', { height: String(sim.world.node.xvmHeight() + 1), encoding: 'json' }))) as RpcError;
    expect(above.code).toBe(-32000);
    expect(above.rpcMessage).toContain("couldn't get block at height");
    // info.uptime takes no argument: a subnet nobody tracks is answered, with the primary network's figures.
    expect(await call('/ext/info', 'info.uptime', { subnetID: assetId(5) })).toEqual(sim.world.node.uptime());

    const raw = await fetch(`${sim.url}/ext/info`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'info.nope' }) });
    expect(raw.status).toBe(200);
    expect(await raw.json()).toEqual({ jsonrpc: '2.0', id: 9, error: { code: -32000, message: 'rpc: can\'t find method "info.Nope"', data: null } });
  });

  it('the EVM chains keep -32601 and -32602', async () => {
    const client = new Client('node', source(sim.url, { retries: 0 }));
    const call = (method: string, params: unknown) => rpc(client, `/ext/bc/${NODE_DEMO.evmChain}/rpc`, method, params, { stats: newRequestStats() });
    expect(((await fail(call('eth_nope', []))) as RpcError).code).toBe(-32601);
    expect(isMissingMethod(await fail(call('eth_nope', [])))).toBe(true);
    expect(((await fail(call('eth_feeConfig', ['soon']))) as RpcError).code).toBe(-32602);
    // The block as subnet-evm decodes it: hex without a leading zero, a hash or a tag; never decimal.
    for (const bad of ['12', '0x0c']) expect(((await fail(call('eth_feeConfig', [bad]))) as RpcError).code, bad).toBe(-32602);
    for (const good of ['0xc', 'accepted', 'latest']) expect(await call('eth_feeConfig', [good]), good).toHaveProperty('feeConfig');
  });

  it('a POST without Content-Type: application/json gets 415 in plain text', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'info.getNetworkID', params: {} });
    const none = await fetch(`${sim.url}/ext/info`, { method: 'POST', body: Buffer.from(body) });
    expect(none.status).toBe(415);
    expect(none.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await none.text()).toBe('rpc: unrecognized Content-Type: ');
    const text = await fetch(`${sim.url}/ext/bc/X`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
    expect([text.status, await text.text()]).toEqual([415, 'rpc: unrecognized Content-Type: text/plain']);
    const evm = await fetch(`${sim.url}/ext/bc/${NODE_DEMO.evmChain}/rpc`, { method: 'POST', body: Buffer.from(body) });
    expect([evm.status, await evm.text()]).toEqual([415, 'invalid content type, only application/json is supported']);
    // With it (a charset after the type too), an answer; uint64 fields as JSON numbers past 2^53.
    const ok = await fetch(`${sim.url}/ext/bc/X`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'avm.getBlockByHeight', params: { height: String(NODE_DEMO.xvmHead - 5), encoding: 'json' } }),
    });
    expect(ok.status).toBe(200);
    const text2 = await ok.text();
    expect(text2).toMatch(/"height":\d+,/);
    expect(text2).toMatch(/"amount":\d+/);
  });
});

describe('the asset chain namespace', () => {
  it('is found on the first call: xvm on a node shaped as the reference, remembered for the run', async () => {
    const sim = await startSimulator({ seed: 5, node: { shape: 'reference' } });
    const proxy = await recordingProxy(sim.url);
    try {
      const r = await runPipeline(pipeline(proxy.url, [{ table: 'assets', assetIds: [AVAX_ASSET_ID, assetId(0)], blockchainIds: [X_CHAIN_ID.mainnet] }, { table: 'xvm_blocks', startBlock: NODE_DEMO.xvmHead - 3, blockchainIds: [X_CHAIN_ID.mainnet] }]), {
        lake: tmp(),
        logger: quiet,
        partitionConcurrency: 1,
      });
      expect(r.status).toBe('ok');
      const methods = proxy.requests.map((q) => JSON.parse(q.body).method as string);
      // One call tried avm; every other call went to xvm.
      expect(methods.filter((m) => m.startsWith('avm.'))).toHaveLength(1);
      expect(methods.filter((m) => m.startsWith('xvm.')).length).toBeGreaterThan(4);
    } finally {
      await proxy.close();
      await sim.close();
    }
  });

  it('can be pinned: avm asks nothing else; xvm against an AvalancheGo node fails with the node\'s answer', async () => {
    const sim = await startSimulator({ seed: 5 });
    const proxy = await recordingProxy(sim.url);
    try {
      const streams = [{ table: 'assets', assetIds: [AVAX_ASSET_ID], blockchainIds: [X_CHAIN_ID.mainnet] }];
      const ok = await runPipeline(pipeline(proxy.url, streams, { assetNamespace: 'avm' }), { lake: tmp(), logger: quiet });
      expect(ok.status).toBe('ok');
      expect(proxy.requests.map((q) => JSON.parse(q.body).method)).toEqual(['avm.getAssetDescription']);
      const wrong = await runPipeline(pipeline(proxy.url, streams, { assetNamespace: 'xvm' }), { lake: tmp(), logger: quiet });
      expect(wrong.status).toBe('failed');
      expect(wrong.streams[0]!.errors.join()).toContain('xvm.getAssetDescription: JSON-RPC error -32000: rpc: can\'t find service "xvm.GetAssetDescription"');
    } finally {
      await proxy.close();
      await sim.close();
    }
  });

  it('is checked in the pipeline: avm or xvm, on the node source only', () => {
    expect(() => pipeline('http://127.0.0.1:9650', [{ table: 'node_info' }], { assetNamespace: 'xvn' })).toThrow(/sources\.node\.assetNamespace: "xvn" is not one of avm, xvm/);
    expect(() => checkPipeline({ name: 'x', sources: { data: { assetNamespace: 'avm' } }, streams: [{ table: 'chains' }] }, 'x.yaml')).toThrow(/sources\.data\.assetNamespace: belongs to the node source/);
    expect(pipeline('http://127.0.0.1:9650', [{ table: 'node_info' }], { assetNamespace: 'xvm' }).sources.node.assetNamespace).toBe('xvm');
  });
});
