// The node tables (docs/node.md; docs/services.md, Node JSON-RPC): pipelines run in-process against the simulator's node, and
// each table is compared row for row with what the simulator's world served; JSON-RPC errors,
// health answered with 503, UTXO paging with repeats, and resuming the asset chain's blocks. The
// row-for-row suite and the JSON-RPC errors run against a node shaped as the reference documents
// it (the xvm namespace, uint64 fields as strings, -32601 and -32602); node_production.test.ts
// runs every table against a node that answers as AvalancheGo does.
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkPipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import type { RunReport } from '../../src/pipeline/report.js';
import { Client } from '../../src/sources/client.js';
import { newRequestStats } from '../../src/decl/request.js';
import { RpcError, rpc } from '../../src/sources/jsonrpc.js';
import { AVAX_ASSET_ID, NODE_DEMO, assetId, xAddress } from '../../src/simulator/node_world.js';
import type { SimUtxo } from '../../src/simulator/utxo_codec.js';
import { asStrings } from '../../src/simulator/node_routes.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { PRIMARY_NETWORK_ID, X_CHAIN_ID } from '../../src/simulator/subnets.js';
import { DEMO } from '../../src/simulator/world.js';
import { CHAINS } from '../../src/simulator/evm.js';
import { labelBytes } from '../../src/simulator/hash.js';
import { encodePrimaryAddress } from '../../src/ids.js';
import { StateStore } from '../../src/state/store.js';
import { listingsOf } from '../../src/state/cursor.js';
import { expectCleanRun, json, lakeRows, line, quiet, scriptedServer, sorted, source } from '../helpers.js';
import { ADDRESSES, ASSET_IDS, WINDOW, nodePipeline, nodeStreams, plainSubnetChain } from './node_fixture.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'cl-node-'));
const C_CHAIN = CHAINS.find((c) => c.chainId === '43114')!.blockchainId;
const FUJI_X = encodePrimaryAddress('fuji', labelBytes('xaddr:0', 20), 'X');

const rows = lakeRows;
/** The node's RFC 3339 time, to the second (as TIMESTAMPTZ columns land it). */
const secs = (t: string | null | undefined) => (t == null ? null : Math.floor(Date.parse(t.replace(/\.\d+Z$/, 'Z')) / 1000));
/** JSON as the lake returns it (text), normalized for comparison. */
const js = (text: string | null) => (text === null ? null : JSON.stringify(JSON.parse(text)));
const sha = (hex: string) => createHash('sha256').update(Buffer.from(hex.slice(2, -8), 'hex')).digest('hex');

/** As the reference documents the node: the asset chain's namespace pinned to its xvm. */
const REFERENCE = { assetNamespace: 'xvm' };

const pipeline = nodePipeline;

type Obj = Record<string, any>;

describe('node tables, row for row against the simulated node shaped as the reference', () => {
  let sim: Simulator;
  let lake: string;
  let report: RunReport;
  let t0: number;
  let t1: number;
  /** A subnet-EVM chain of a plain subnet (not an L1) of this seed's world. */
  let other: string;
  const { start, end } = WINDOW;
  const stream = (table: string) => report.streams.find((s) => s.table === table)!;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 17, node: { shape: 'reference' } });
    other = plainSubnetChain(sim);
    lake = tmp();
    const p = pipeline(sim.url, [
      ...nodeStreams(other),
      { table: 'utxos', addresses: [xAddress(2)], sourceChain: 'P' },
    ], REFERENCE);
    t0 = Math.floor(Date.now() / 1000);
    report = await runPipeline(p, { lake, logger: quiet, flushRows: 40 });
    t1 = Math.ceil(Date.now() / 1000);
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('completes every partition without rejects', () => expectCleanRun(report, { drift: false }));


  it('stamps every snapshot row with the node url and the time of the run', async () => {
    for (const t of ['node_info', 'node_peers', 'node_uptime', 'health_checks', 'subnet_validators', 'fee_config', 'chain_config', 'active_rules', 'utxos']) {
      const [r] = await rows(lake, `SELECT count(*) n, count(DISTINCT node_url) urls, min(node_url) url, min(epoch(snapshot_at))::BIGINT lo, max(epoch(snapshot_at))::BIGINT hi FROM ${t}`);
      expect(r!.urls, t).toBe('1');
      expect(r!.url, t).toBe(sim.url);
      expect(Number(r!.lo), t).toBeGreaterThanOrEqual(t0);
      expect(Number(r!.hi), t).toBeLessThanOrEqual(t1);
    }
  });

  it('node_info: identity, version, fees, upgrades, ACP votes (exact weights) and bootstrapping', async () => {
    const n = sim.world.node;
    const got = await rows(lake, `SELECT * FROM node_info`);
    expect(got).toHaveLength(1);
    const r = got[0]!;
    const v = n.nodeVersion();
    expect(r).toMatchObject({
      node_id: n.nodeId, node_id_error: null, bls_public_key: n.nodePop().publicKey, bls_proof_of_possession: n.nodePop().proofOfPossession,
      network_id: 1, network_name: 'mainnet', version: v.version, database_version: v.databaseVersion, git_commit: v.gitCommit,
      rpc_protocol_version: v.rpcProtocolVersion, tx_fee: '1000000', tx_fee_raw: '1000000', create_asset_tx_fee_raw: '10000000',
      bootstrapped_p: true, bootstrapped_x: true, bootstrapped_c: true,
    });
    expect(JSON.parse(r.vm_versions)).toEqual(v.vmVersions);
    expect(JSON.parse(r.tx_fees)).toEqual(n.txFee());
    expect(JSON.parse(r.upgrades)).toEqual(n.upgrades());
    const acps = JSON.parse(r.acps) as Record<string, Obj>;
    expect(acps).toEqual(n.acps());
    expect(Object.values(acps).some((a) => BigInt(a.supportWeight) > 2n ** 53n)).toBe(true);
  });

  it('node_peers: every connected peer as served', async () => {
    const want = sim.world.node.peers().map((p: Obj) => line(p.nodeID, p.ip, p.publicIP, p.version, secs(p.lastSent), secs(p.lastReceived), p.benched, p.observedUptime, p.trackedSubnets));
    const got = (await rows(lake, `SELECT node_id, ip, public_ip, version, epoch(last_sent)::BIGINT s, epoch(last_received)::BIGINT r, benched, observed_uptime, tracked_subnets FROM node_peers`)).map((r) =>
      line(r.node_id, r.ip, r.public_ip, r.version, r.s, r.r, r.benched, r.observed_uptime, r.tracked_subnets),
    );
    expect(got.length).toBeGreaterThan(5);
    expect(sorted(got)).toEqual(sorted(want));
  });

  it('node_uptime: the primary network and each listed subnet', async () => {
    const n = sim.world.node;
    const want = [PRIMARY_NETWORK_ID, NODE_DEMO.subnetId].map((id) => {
      const u = n.uptime(id === PRIMARY_NETWORK_ID ? undefined : id);
      return line(id, Number(u.rewardingStakePercentage), Number(u.weightedAveragePercentage));
    });
    const got = (await rows(lake, `SELECT subnet_id, rewarding_stake_percentage a, weighted_average_percentage b FROM node_uptime`)).map((r) => line(r.subnet_id, r.a, r.b));
    expect(sorted(got)).toEqual(sorted(want));
  });

  it('health_checks: one row per check and one per report; a 503 is an answer, not retried', async () => {
    const n = sim.world.node;
    const want = (['health', 'readiness', 'liveness'] as const).flatMap((kind) => {
      const rep = n.health(kind);
      const status = rep.healthy ? 200 : 503;
      return [
        line(kind, '*', rep.healthy, rep.healthy, status, null, null, null, null, null, null),
        ...Object.entries(rep.checks).map(([name, c]) =>
          line(kind, name, c.error === undefined, rep.healthy, status, c.message === undefined ? null : JSON.stringify(c.message), c.error, secs(c.timestamp), c.duration, c.contiguousFailures, secs(c.timeOfFirstFailure)),
        ),
      ];
    });
    const got = (
      await rows(lake, `SELECT kind, name, healthy, report_healthy, http_status, message, error, epoch(timestamp)::BIGINT ts, duration, contiguous_failures, epoch(time_of_first_failure)::BIGINT f FROM health_checks`)
    ).map((r) => line(r.kind, r.name, r.healthy, r.report_healthy, r.http_status, js(r.message), r.error, r.ts, r.duration, r.contiguous_failures, r.f));
    expect(sorted(got)).toEqual(sorted(want));
    // The still world's node is unhealthy (diskspace) but ready and live.
    const verdicts = await rows(lake, `SELECT kind, http_status, healthy FROM health_checks WHERE name = '*' ORDER BY kind`);
    expect(verdicts).toEqual([
      { kind: 'health', http_status: 503, healthy: false },
      { kind: 'liveness', http_status: 200, healthy: true },
      { kind: 'readiness', http_status: 200, healthy: true },
    ]);
    const [disk] = await rows(lake, `SELECT healthy, error, contiguous_failures FROM health_checks WHERE kind = 'health' AND name = 'diskspace'`);
    expect(disk).toMatchObject({ healthy: false, error: expect.stringContaining('disk space') });
    expect(Number(disk!.contiguous_failures)).toBeGreaterThan(0);
    const s = stream('health_checks');
    expect(s.requests).toBe(3);
    expect(s.retries).toBe(0);
  });

  it('subnet_validators: the validators of each chain, weights exact', async () => {
    const n = sim.world.node;
    const want = [NODE_DEMO.evmChain, other].flatMap((id) =>
      n.validators(n.evmChain(id)!).map((v: Obj) => line(id, v.nodeID, v.validationID, v.weight, v.startTimestamp, v.isActive, v.isL1Validator, v.isConnected, v.uptimeSeconds, v.uptimePercentage)),
    );
    const got = (
      await rows(lake, `SELECT blockchain_id, node_id, validation_id, weight_raw, epoch(start_timestamp)::BIGINT st, is_active, is_l1_validator, is_connected, uptime_seconds, uptime_percentage FROM subnet_validators`)
    ).map((r) => line(r.blockchain_id, r.node_id, r.validation_id, r.weight_raw, r.st, r.is_active, r.is_l1_validator, r.is_connected, r.uptime_seconds, r.uptime_percentage));
    expect(sorted(got)).toEqual(sorted(want));
    const [x] = await rows(lake, `SELECT count(*) FILTER (WHERE weight::VARCHAR <> weight_raw) AS off, count(*) FILTER (WHERE weight > 9007199254740992) big, count(DISTINCT is_l1_validator) kinds FROM subnet_validators`);
    expect(x).toEqual({ off: '0', big: '2', kinds: '2' });
  });

  it('fee_config: the fee config in force and where it last changed', async () => {
    const n = sim.world.node;
    const want = [NODE_DEMO.evmChain, other].map((id) => {
      const f = n.feeConfig(n.evmChain(id)!) as Obj;
      const c = f.feeConfig;
      return line(id, c.gasLimit, c.targetBlockRate, c.minBaseFee, c.targetGas, c.baseFeeChangeDenominator, c.minBlockGasCost, c.maxBlockGasCost, c.blockGasCostStep, f.lastChangedAt, JSON.stringify(c));
    });
    const got = (
      await rows(lake, `SELECT blockchain_id, gas_limit, target_block_rate, min_base_fee, target_gas, base_fee_change_denominator, min_block_gas_cost, max_block_gas_cost, block_gas_cost_step, last_changed_at, fee_config FROM fee_config`)
    ).map((r) => line(r.blockchain_id, r.gas_limit, r.target_block_rate, r.min_base_fee, r.target_gas, r.base_fee_change_denominator, r.min_block_gas_cost, r.max_block_gas_cost, r.block_gas_cost_step, r.last_changed_at, js(r.fee_config)));
    expect(sorted(got)).toEqual(sorted(want));
    // The Lakeside chain has a fee manager, and changed its fee config once.
    const [lakeside] = await rows(lake, `SELECT last_changed_at FROM fee_config WHERE blockchain_id = '${NODE_DEMO.evmChain}'`);
    expect(Number(lakeside!.last_changed_at)).toBeGreaterThan(0);
  });

  it('chain_config: the config whole, with its settings as columns; C resolved to its id', async () => {
    const n = sim.world.node;
    const PRE = ['txAllowListConfig', 'contractDeployerAllowListConfig', 'contractNativeMinterConfig', 'feeManagerConfig', 'rewardManagerConfig'];
    const want = [NODE_DEMO.evmChain, other, C_CHAIN].map((id) => {
      const c = n.chainConfig(n.evmChain(id)!) as Obj;
      return line(id, c.chainId, c.feeConfig?.minBaseFee, c.feeConfig?.gasLimit, c.allowFeeRecipients, PRE.filter((k) => c[k]), c.feeManagerConfig?.adminAddresses?.map((a: string) => a.toLowerCase()), c.upgrades?.precompileUpgrades, JSON.stringify(c));
    });
    const got = (
      await rows(lake, `SELECT blockchain_id, evm_chain_id, fee_min_base_fee, fee_gas_limit, allow_fee_recipients, precompiles, fee_manager_admins, precompile_upgrades, config FROM chain_config`)
    ).map((r) => line(r.blockchain_id, r.evm_chain_id, r.fee_min_base_fee, r.fee_gas_limit, r.allow_fee_recipients, r.precompiles, r.fee_manager_admins, r.precompile_upgrades === null ? null : JSON.parse(r.precompile_upgrades), js(r.config)));
    expect(sorted(got)).toEqual(sorted(want));
  });

  it('active_rules: one row per rule at the latest block time; a disabled precompile is not listed', async () => {
    const n = sim.world.node;
    const c = n.evmChain(NODE_DEMO.evmChain)!;
    const a = n.activeRules(c, n.latestTime(c)) as Obj;
    const want = [
      ...Object.entries(a.ethRules).map(([k, v]) => line('eth', k, v, null)),
      ...Object.entries(a.avalancheRules).map(([k, v]) => line('avalanche', k, v, null)),
      ...Object.entries(a.precompiles).map(([k, v]) => line('precompile', k, true, (v as Obj).timestamp)),
    ];
    const got = (await rows(lake, `SELECT kind, rule, active, epoch(activated_at)::BIGINT AS t FROM active_rules`)).map((r) => line(r.kind, r.rule, r.active, r.t));
    expect(sorted(got)).toEqual(sorted(want));
    const precompiles = (await rows(lake, `SELECT rule FROM active_rules WHERE kind = 'precompile' ORDER BY rule`)).map((r) => r.rule);
    expect(precompiles).toContain('feeManagerConfig');
    expect(precompiles).not.toContain('rewardManagerConfig');
  });

  it('xvm_blocks, xvm_transactions, xvm_inputs, xvm_outputs: every block of the window and what it holds, amounts exact', async () => {
    const n = sim.world.node;
    const blocks: Obj[] = [];
    for (let h = start; h < end; h++) blocks.push(n.xvmBlock(h)!);
    const X = X_CHAIN_ID.mainnet;
    const wantBlocks = blocks.map((b) => line(X, b.height, b.id, b.parentID, b.time, b.merkleRoot, b.txs.length, b.txs.map((t: Obj) => t.id)));
    const gotBlocks = (await rows(lake, `SELECT blockchain_id, block_height, block_id, parent_id, epoch(block_time)::BIGINT t, merkle_root, tx_count, tx_ids FROM xvm_blocks`)).map((r) =>
      line(r.blockchain_id, r.block_height, r.block_id, r.parent_id, r.t, r.merkle_root, r.tx_count, r.tx_ids),
    );
    expect(gotBlocks).toHaveLength(end - start);
    expect(sorted(gotBlocks)).toEqual(sorted(wantBlocks));

    const txs = blocks.flatMap((b) => b.txs.map((t: Obj, i: number) => ({ b, t, i })));
    const type = (u: Obj) => ('importedInputs' in u ? 'import' : 'exportedOutputs' in u ? 'export' : 'initialStates' in u ? 'create_asset' : 'base');
    const wantTxs = txs.map(({ b, t, i }) => {
      const u = t.unsignedTx;
      return line(X, b.height, t.id, i, type(u), u.networkID, u.memo, u.sourceChain, u.destinationChain, u.inputs.length + (u.importedInputs?.length ?? 0), u.outputs.length + (u.exportedOutputs?.length ?? 0), t.credentials.length, JSON.stringify(asStrings(u)));
    });
    const gotTxs = (
      await rows(lake, `SELECT blockchain_id, block_height, tx_id, tx_index, tx_type, network_id, memo, source_chain, destination_chain, input_count, output_count, credential_count, unsigned_tx FROM xvm_transactions`)
    ).map((r) => line(r.blockchain_id, r.block_height, r.tx_id, r.tx_index, r.tx_type, r.network_id, r.memo, r.source_chain, r.destination_chain, r.input_count, r.output_count, r.credential_count, js(r.unsigned_tx)));
    expect(sorted(gotTxs)).toEqual(sorted(wantTxs));
    const types = (await rows(lake, `SELECT DISTINCT tx_type FROM xvm_transactions ORDER BY 1`)).map((r) => r.tx_type);
    expect(types).toEqual(expect.arrayContaining(['base', 'export', 'import']));

    const wantIn = txs.flatMap(({ b, t }) => {
      const u = t.unsignedTx;
      return [...u.inputs.map((x: Obj) => [x, false]), ...(u.importedInputs ?? []).map((x: Obj) => [x, true])].map(([x, imported], k) =>
        line(b.height, t.id, k, imported, imported ? u.sourceChain : null, x.txID, x.outputIndex, x.assetID, x.fxID, x.input.amount, x.input.signatureIndices),
      );
    });
    const gotIn = (
      await rows(lake, `SELECT block_height, tx_id, input_index, imported, source_chain, spent_tx_id, spent_output_index, asset_id, fx_id, amount_raw, signature_indices FROM xvm_inputs`)
    ).map((r) => line(r.block_height, r.tx_id, r.input_index, r.imported, r.source_chain, r.spent_tx_id, r.spent_output_index, r.asset_id, r.fx_id, r.amount_raw, JSON.parse(r.signature_indices)));
    expect(sorted(gotIn)).toEqual(sorted(wantIn));

    const wantOut = txs.flatMap(({ b, t }) => {
      const u = t.unsignedTx;
      return [...u.outputs.map((x: Obj) => [x, false]), ...(u.exportedOutputs ?? []).map((x: Obj) => [x, true])].map(([x, exported], k) =>
        line(b.height, t.id, k, exported, exported ? u.destinationChain : null, x.assetID, x.fxID, x.output.amount, x.output.locktime, x.output.threshold, x.output.addresses),
      );
    });
    const gotOut = (
      await rows(lake, `SELECT block_height, tx_id, output_index, exported, destination_chain, asset_id, fx_id, amount_raw, locktime, threshold, addresses FROM xvm_outputs`)
    ).map((r) => line(r.block_height, r.tx_id, r.output_index, r.exported, r.destination_chain, r.asset_id, r.fx_id, r.amount_raw, r.locktime, r.threshold, r.addresses));
    expect(sorted(gotOut)).toEqual(sorted(wantOut));

    for (const t of ['xvm_inputs', 'xvm_outputs']) {
      const [x] = await rows(lake, `SELECT typeof(amount) ty, count(*) FILTER (WHERE amount::VARCHAR <> amount_raw) AS off, count(*) FILTER (WHERE amount > 9007199254740992) big, count(*) FILTER (WHERE amount > 9223372036854775807) over_int64 FROM ${t} GROUP BY ALL`);
      expect(x!.ty, t).toBe('BIGNUM');
      expect(x!.off, t).toBe('0');
      expect(Number(x!.big), t).toBeGreaterThan(0);
      expect(Number(x!.over_int64), t).toBeGreaterThan(0);
    }
  });

  it('assets: the description of each listed asset', async () => {
    const want = sim.world.node.assets().filter((a) => ASSET_IDS.includes(a.assetID)).map((a) => line(X_CHAIN_ID.mainnet, a.assetID, a.name, a.symbol, a.denomination));
    const got = (await rows(lake, `SELECT blockchain_id, asset_id, name, symbol, denomination FROM assets`)).map((r) => line(r.blockchain_id, r.asset_id, r.name, r.symbol, r.denomination));
    expect(got).toHaveLength(ASSET_IDS.length);
    expect(sorted(got)).toEqual(sorted(want));
  });

  it('utxos: every UTXO of the addresses once, though the node listed some twice; decoded, with a stable id', async () => {
    const n = sim.world.node;
    const listed = ADDRESSES.flatMap((a) => n.utxosOf(a));
    const unique = new Map<string, SimUtxo>(listed.map((u) => [u.hex, u]));
    // Owners of two listed addresses are listed under each: the paging must have met repeats.
    expect(listed.length).toBeGreaterThan(unique.size);
    const want = [...unique.values()].map((u) => line(sha(u.hex), u.hex, u.txId, u.outputIndex, u.assetId, 7, u.amount, u.locktime, u.threshold, u.owners));
    const got = (await rows(lake, `SELECT utxo_id, utxo, tx_id, output_index, asset_id, type_id, amount_raw, locktime, threshold, addresses FROM utxos WHERE source_chain IS NULL`)).map((r) =>
      line(r.utxo_id, r.utxo, r.tx_id, r.output_index, r.asset_id, r.type_id, r.amount_raw, r.locktime, r.threshold, r.addresses),
    );
    expect(sorted(got)).toEqual(sorted(want));
    // Five a page until a short page: the listing as served, in full.
    const s = stream('utxos');
    // Kept once as they came, not left for the merge by key to collapse.
    const atomic = n.utxosOf(xAddress(2), PRIMARY_NETWORK_ID);
    expect(s.rows).toBe(unique.size + atomic.length);
    expect(s.pages).toBe(Math.floor(listed.length / 5) + 1 + 1);
    expect(s.requests).toBe(2 + s.pages); // and info.getBlockchainID for X, per partition
    // Atomic UTXOs exported from the P-Chain to this one.
    expect(atomic.length).toBeGreaterThan(0);
    const gotAtomic = (await rows(lake, `SELECT utxo_id, amount_raw FROM utxos WHERE source_chain = 'P'`)).map((r) => line(r.utxo_id, r.amount_raw));
    expect(sorted(gotAtomic)).toEqual(sorted(atomic.map((u) => line(sha(u.hex), u.amount))));
  });
});

describe('the public server', () => {
  it('has no getNodeID: node_id lands NULL with the JSON-RPC error, and the run succeeds', async () => {
    const sim = await startSimulator({ seed: 2 });
    try {
      const lake = tmp();
      const r = await runPipeline(pipeline(`${sim.url}/public`, [{ table: 'node_info' }]), { lake, logger: quiet });
      expect(r.status).toBe('ok');
      const [row] = await rows(lake, `SELECT node_url, node_id, node_id_error, bls_public_key, version FROM node_info`);
      expect(row).toMatchObject({ node_url: `${sim.url}/public`, node_id: null, bls_public_key: null, version: sim.world.node.nodeVersion().version });
      expect(row!.node_id_error).toBe('POST /ext/info info.getNodeID: JSON-RPC error -32601: the method info.getNodeID does not exist/is not available');
    } finally {
      await sim.close();
    }
  });
});

describe('JSON-RPC errors', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 4, node: { shape: 'reference' } });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('fail the partition with the method, the path, the code and the message; the other partitions land', async () => {
    const unknownAsset = assetId(99);
    const p = pipeline(sim.url, [
      { table: 'fee_config', blockchainIds: ['C', NODE_DEMO.evmChain] },
      { table: 'assets', assetIds: [unknownAsset, AVAX_ASSET_ID] },
      { table: 'utxos', addresses: [FUJI_X] },
    ], REFERENCE);
    const lake = tmp();
    const r = await runPipeline(p, { lake, logger: quiet });
    expect(r.status).toBe('failed');
    const errors = (t: string) => r.streams.find((s) => s.table === t)!.errors.join('\n');
    expect(errors('fee_config')).toContain('C: POST /ext/bc/C/rpc eth_feeConfig: JSON-RPC error -32601: the method eth_feeConfig does not exist/is not available');
    expect(errors('assets')).toContain(`X/${unknownAsset}: POST /ext/bc/X xvm.getAssetDescription: JSON-RPC error -32000: couldn't find asset ${unknownAsset}`);
    expect(errors('utxos')).toMatch(/POST \/ext\/bc\/X xvm\.getUTXOs: JSON-RPC error -32000: address "X-fuji1.*" has hrp "fuji"/);
    // An answer, not a fault: tried once.
    for (const s of r.streams) expect(s.retries, s.table).toBe(0);
    expect(await rows(lake, `SELECT blockchain_id FROM fee_config`)).toEqual([{ blockchain_id: NODE_DEMO.evmChain }]);
    expect(await rows(lake, `SELECT asset_id FROM assets`)).toEqual([{ asset_id: AVAX_ASSET_ID }]);
  });

  it('rpc() throws an RpcError naming method and path, with the code: unknown method, bad params, unknown chain', async () => {
    const client = new Client('node', source(sim.url, { retries: 0 }));
    const call = (path: string, method: string, params: unknown) => rpc(client, path, method, params, { stats: newRequestStats() });
    const fail = async (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);
    const unknown = await fail(call('/ext/info', 'info.nope', {}));
    expect(unknown).toBeInstanceOf(RpcError);
    expect((unknown as RpcError).code).toBe(-32601);
    expect((unknown as Error).message).toBe('POST /ext/info info.nope: JSON-RPC error -32601: the method info.nope does not exist/is not available');
    const bad = await fail(call('/ext/bc/X', 'xvm.getBlockByHeight', { height: 'ten', encoding: 'json' }));
    expect((bad as RpcError).code).toBe(-32602);
    expect((bad as Error).message).toContain('POST /ext/bc/X xvm.getBlockByHeight: JSON-RPC error -32602: height must be a decimal string');
    const above = await fail(call('/ext/bc/X', 'xvm.getBlockByHeight', { height: String(sim.world.node.xvmHeight() + 1), encoding: 'json' }));
    expect((above as RpcError).code).toBe(-32000);
    const uptime = await fail(call('/ext/info', 'info.uptime', { subnetID: assetId(5) }));
    expect((uptime as Error).message).toContain(`info.uptime: JSON-RPC error -32000: couldn't get node uptime: subnet ${assetId(5)} is not tracked by this node`);
    // No such chain on the node: an HTTP 404, not retried.
    const chain = await fail(call(`/ext/bc/${assetId(1)}/rpc`, 'eth_feeConfig', []));
    expect(chain).not.toBeInstanceOf(RpcError);
    expect((chain as Error).message).toMatch(/POST \/ext\/bc\/.*\/rpc .*answered 404/);
    // The envelope: a request that is not JSON-RPC 2.0.
    const res = await fetch(`${sim.url}/ext/info`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 7, method: 'info.getNetworkID' }) });
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32600, message: expect.stringContaining('invalid request') } });
    // And an answer: the id is echoed, 64-bit integers as decimal strings.
    const ok = await fetch(`${sim.url}/ext/bc/X`, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'xvm.getHeight', params: {} }) });
    expect(await ok.json()).toEqual({ jsonrpc: '2.0', id: 'a', result: { height: String(NODE_DEMO.xvmHead) } });
  });
});

describe('health answers from any node', () => {
  it('lands a 503 report as data (a 503 that is no report is retried): a scalar message as JSON, an error object as its text', async () => {
    const failing = { checks: { disk: { message: 'low', error: { message: 'below 10%' }, timestamp: '2025-01-02T03:04:05.999999999Z', duration: 1500, contiguousFailures: 4, timeOfFirstFailure: '2025-01-02T03:00:00Z' } }, healthy: false };
    let healthCalls = 0;
    const server = await scriptedServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/ext/health' && ++healthCalls === 1) {
        // A proxy in front of the node, not the node's report.
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end('upstream unavailable');
      } else if (path === '/ext/health') json(res, 503, failing);
      else json(res, 200, { checks: {}, healthy: true });
    });
    try {
      const lake = tmp();
      const r = await runPipeline(pipeline(server.url, [{ table: 'health_checks', tags: ['a', 'b c'] }]), { lake, logger: quiet, client: { minBackoffMs: 5, maxBackoffMs: 20 } });
      expect(r.status).toBe('ok');
      expect(r.streams[0]!.retries).toBe(1);
      expect(r.streams[0]!.faults).toEqual({ '503': 1 });
      const got = await rows(lake, `SELECT kind, name, healthy, http_status, tags, message, error, epoch(timestamp)::BIGINT ts, duration, contiguous_failures, epoch(time_of_first_failure)::BIGINT f FROM health_checks ORDER BY kind, name`);
      expect(got).toEqual([
        { kind: 'health', name: '*', healthy: false, http_status: 503, tags: ['a', 'b c'], message: null, error: null, ts: null, duration: null, contiguous_failures: null, f: null },
        { kind: 'health', name: 'disk', healthy: false, http_status: 503, tags: ['a', 'b c'], message: '"low"', error: '{"message":"below 10%"}', ts: String(Date.UTC(2025, 0, 2, 3, 4, 5) / 1000), duration: '1500', contiguous_failures: '4', f: String(Date.UTC(2025, 0, 2, 3) / 1000) },
        { kind: 'liveness', name: '*', healthy: true, http_status: 200, tags: [], message: null, error: null, ts: null, duration: null, contiguous_failures: null, f: null },
        { kind: 'readiness', name: '*', healthy: true, http_status: 200, tags: ['a', 'b c'], message: null, error: null, ts: null, duration: null, contiguous_failures: null, f: null },
      ]);
      // Tags are repeated query parameters of health and readiness; liveness takes none.
      const urls = server.requests.map((q) => q.url).sort();
      expect(urls).toEqual(['/ext/health/liveness', '/ext/health/readiness?tag=a&tag=b+c', '/ext/health?tag=a&tag=b+c', '/ext/health?tag=a&tag=b+c']);
    } finally {
      await server.close();
    }
  });

  it('filters the simulated node by tag: a subnet check only when its subnet is asked for', async () => {
    const sim = await startSimulator({ seed: 3 });
    try {
      const names = async (tags: string[]) => {
        const lake = tmp();
        expect((await runPipeline(pipeline(sim.url, [{ table: 'health_checks', tags }]), { lake, logger: quiet })).status).toBe('ok');
        return (await rows(lake, `SELECT name FROM health_checks WHERE kind = 'health' ORDER BY name`)).map((r) => r.name);
      };
      expect(await names([NODE_DEMO.subnetId])).toContain(NODE_DEMO.evmChain);
      expect(await names([assetId(3)])).not.toContain(NODE_DEMO.evmChain);
    } finally {
      await sim.close();
    }
  });
});

describe('utxo paging', () => {
  it('an endIndex that does not move fails the partition instead of paging forever', async () => {
    let calls = 0;
    const server = await scriptedServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        calls++;
        const { id } = JSON.parse(body);
        json(res, 200, { jsonrpc: '2.0', id, result: { numFetched: '1', utxos: ['0x00'], endIndex: { address: 'X-avax1x', utxo: 'same' }, encoding: 'hex' } });
      });
    });
    try {
      const lake = tmp();
      const r = await runPipeline(pipeline(server.url, [{ table: 'utxos', addresses: [xAddress(0)], blockchainIds: [X_CHAIN_ID.mainnet], pageSize: 1 }], { retries: 0 }), { lake, logger: quiet });
      expect(r.status).toBe('failed');
      expect(r.streams[0]!.errors.join()).toContain('getUTXOs: a full page (1) whose endIndex {"address":"X-avax1x","utxo":"same"} did not move: paging would not end');
      expect(calls).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('sends endIndex back as startIndex, asks at most 1024 a call, and rejects a UTXO whose bytes are not one', async () => {
    const bodies: Obj[] = [];
    const good = '0x' + 'ab'.repeat(10);
    const withSum = good + createHash('sha256').update(Buffer.from(good.slice(2), 'hex')).digest('hex').slice(-8);
    const server = await scriptedServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const b = JSON.parse(body);
        bodies.push(b);
        const page = bodies.length === 1 ? { numFetched: '1024', utxos: [withSum, '0xdeadbeef00'], endIndex: { address: 'X-avax1a', utxo: 'u1' } } : { numFetched: '1', utxos: [withSum], endIndex: { address: 'X-avax1a', utxo: 'u2' } };
        json(res, 200, { jsonrpc: '2.0', id: b.id, result: { ...page, encoding: 'hex' } });
      });
    });
    try {
      const lake = tmp();
      const r = await runPipeline(pipeline(server.url, [{ table: 'utxos', addresses: [xAddress(0)], blockchainIds: [X_CHAIN_ID.mainnet] }]), { lake, logger: quiet });
      expect(r.status).toBe('ok');
      expect(bodies.map((b) => [b.params.limit, b.params.startIndex ?? null])).toEqual([[1024, null], [1024, { address: 'X-avax1a', utxo: 'u1' }]]);
      expect(r.streams[0]!.rejects).toBe(1);
      const [rej] = await rows(lake, `SELECT reason FROM _rejects WHERE table_name = 'utxos'`);
      expect(rej!.reason).toContain('the utxo has a bad checksum');
      // The same UTXO on both pages lands once, its fields NULL where the bytes are no transfer output.
      expect(await rows(lake, `SELECT utxo_id, tx_id, amount FROM utxos`)).toEqual([{ utxo_id: createHash('sha256').update(Buffer.from(good.slice(2), 'hex')).digest('hex'), tx_id: null, amount: null }]);
    } finally {
      await server.close();
    }
  });
});

describe('xvm_blocks', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (closers.length) await closers.pop()!();
  });

  it('resumes from the checkpoint after a failure: no block fetched twice, the table exact', async () => {
    const sim = await startSimulator({ seed: 6 });
    closers.push(() => sim.close());
    const head = sim.world.node.xvmHeight();
    const start = head - 70;
    const end = head - 10;
    let failAt: number | undefined = 30;
    let blockCalls = 0;
    const heights: number[] = [];
    const proxy = await scriptedServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const b = JSON.parse(body || '{}');
        if (b.method === 'avm.getBlockByHeight') {
          heights.push(Number(b.params.height));
          if (++blockCalls === failAt) return json(res, 200, { jsonrpc: '2.0', id: b.id, error: { code: -32000, message: 'cut here' } });
        }
        fetch(sim.url + req.url, { method: req.method, headers: { 'content-type': req.headers['content-type'] ?? '' }, body: req.method === 'POST' ? body : undefined }).then(async (r) => {
          res.writeHead(r.status, { 'content-type': 'application/json' });
          res.end(await r.text());
        });
      });
    });
    closers.push(() => proxy.close());
    const p = pipeline(proxy.url, [{ table: 'xvm_blocks', startBlock: start, endBlock: end }]);
    const lake = tmp();
    const cut = await runPipeline(p, { lake, logger: quiet, flushRows: 1 });
    expect(cut.status).toBe('failed');
    expect(cut.streams[0]!.errors.join()).toContain('avm.getBlockByHeight: JSON-RPC error -32000: cut here');
    const token = listingsOf(new StateStore(lake).load('xvm_blocks', 'X').cursor.window)[0]?.token;
    expect(token).toMatch(/^\d+$/);
    const resumeAt = Number(token);
    expect(resumeAt).toBeGreaterThan(start);
    const committed = Number((await rows(lake, 'SELECT count(*) n FROM xvm_blocks'))[0]!.n);
    expect(committed).toBe(resumeAt - start);

    failAt = undefined;
    heights.length = 0;
    const resumed = await runPipeline(p, { lake, logger: quiet, flushRows: 1 });
    expect(resumed.status).toBe('ok');
    expect(Math.min(...heights)).toBe(resumeAt);
    expect(resumed.streams[0]!.rows).toBe(end - resumeAt);
    const got = (await rows(lake, 'SELECT block_height, block_id FROM xvm_blocks ORDER BY block_height')).map((r) => line(r.block_height, r.block_id));
    const want: string[] = [];
    for (let h = start; h < end; h++) want.push(line(h, sim.world.node.xvmBlock(h)!.id));
    expect(got).toEqual(want);
    expect(new StateStore(lake).load('xvm_blocks', 'X').cursor).toMatchObject({ nextBlock: end });
  });

  it('follows a moving head: a later run appends only the new blocks', async () => {
    const clock = { t: DEMO.now as number };
    const sim = await startSimulator({ seed: 8, worldNow: () => clock.t });
    closers.push(() => sim.close());
    const first = sim.world.node.xvmHeight();
    const p = pipeline(sim.url, [
      { table: 'xvm_blocks', startBlock: first - 5 },
      { table: 'xvm_outputs', startBlock: first - 5 },
    ]);
    const lake = tmp();
    expect((await runPipeline(p, { lake, logger: quiet })).status).toBe('ok');
    clock.t += 300; // 10 blocks of 30 s
    const second = await runPipeline(p, { lake, logger: quiet });
    expect(second.status).toBe('ok');
    expect(second.streams.find((s) => s.table === 'xvm_blocks')!.rows).toBe(10);
    const head = sim.world.node.xvmHeight();
    expect(head).toBe(first + 10);
    const heights = (await rows(lake, 'SELECT block_height FROM xvm_blocks ORDER BY 1')).map((r) => Number(r.block_height));
    expect(heights).toEqual(Array.from({ length: head - first + 6 }, (_, k) => first - 5 + k));
    const outputs = Number((await rows(lake, 'SELECT count(*) n FROM xvm_outputs'))[0]!.n);
    let want = 0;
    for (let h = first - 5; h <= head; h++) for (const t of sim.world.node.xvmBlock(h)!.txs as Obj[]) want += t.unsignedTx.outputs.length + (t.unsignedTx.exportedOutputs?.length ?? 0);
    expect(outputs).toBe(want);
  });
});

describe('snapshots across runs', () => {
  it('each run adds a snapshot; the state it saw is stamped with its own time', async () => {
    const clock = { t: DEMO.now as number };
    const sim = await startSimulator({ seed: 9, worldNow: () => clock.t });
    try {
      const p = pipeline(sim.url, [{ table: 'node_info' }, { table: 'node_uptime' }, { table: 'health_checks' }]);
      const lake = tmp();
      expect((await runPipeline(p, { lake, logger: quiet })).status).toBe('ok');
      // An hour on: the diskspace check passes again, and the uptime moved.
      clock.t += 3600;
      await new Promise((r) => setTimeout(r, 1100));
      expect((await runPipeline(p, { lake, logger: quiet })).status).toBe('ok');
      expect(await rows(lake, `SELECT count(*) n, count(DISTINCT snapshot_at) s FROM node_info`)).toEqual([{ n: '2', s: '2' }]);
      const verdicts = await rows(lake, `SELECT http_status FROM health_checks WHERE kind = 'health' AND name = '*' ORDER BY snapshot_at`);
      expect(verdicts.map((r) => r.http_status)).toEqual([503, 200]);
      const uptimes = await rows(lake, `SELECT rewarding_stake_percentage r FROM node_uptime ORDER BY snapshot_at`);
      expect(uptimes).toHaveLength(2);
      expect(uptimes[1]!.r).toBe(Number(sim.world.node.uptime().rewardingStakePercentage));
    } finally {
      await sim.close();
    }
  });
});

describe('configuration of the node tables', () => {
  const check = (stream: Record<string, unknown>) => () => checkPipeline({ name: 'x', streams: [stream] }, 'x.yaml');

  it('names the place of every bad value', () => {
    expect(check({ table: 'subnet_validators' })).toThrow(/x\.yaml: streams\[0\]\.blockchainIds: is required for subnet_validators/);
    expect(check({ table: 'fee_config', blockchainIds: ['Q'] })).toThrow(/streams\[0\]\.blockchainIds\[0\]: "Q" is not a blockchain id \(cb58 of 32 bytes\) or one of P, X, C/);
    expect(check({ table: 'assets', assetIds: ['abc'] })).toThrow(/streams\[0\]\.assetIds\[0\]: "abc" is not an id \(cb58 of 32 bytes\)/);
    expect(check({ table: 'node_uptime', subnetIds: [AVAX_ASSET_ID, AVAX_ASSET_ID] })).toThrow(/streams\[0\]\.subnetIds\[1\]: ".*" is listed twice/);
    expect(check({ table: 'utxos', addresses: ['X-avax1bad'] })).toThrow(/streams\[0\]\.addresses\[0\]: "X-avax1bad" is not an X-chain address \(X- and bech32\): it is not valid bech32/);
    expect(check({ table: 'utxos', addresses: [xAddress(0)], sourceChain: 'Z' })).toThrow(/streams\[0\]\.sourceChain: "Z" is not a blockchain id/);
    expect(check({ table: 'utxos', addresses: [xAddress(0)], pageSize: 1025 })).toThrow(/streams\[0\]\.pageSize: 1025 is out of bounds for \/ext\/bc\/\{chain\} \(1 to 1024\): the node returns at most 1024 a call/);
    expect(check({ table: 'health_checks', tags: [''] })).toThrow(/streams\[0\]\.tags\[0\]: "" is not a non-empty string/);
    expect(check({ table: 'xvm_blocks' })).toThrow(/streams\[0\]\.startBlock: is required for xvm_blocks/);
    expect(check({ table: 'xvm_outputs', startBlock: 5, endBlock: 5 })).toThrow(/streams\[0\]\.endBlock: startBlock 5 must be below endBlock 5/);
    expect(check({ table: 'node_peers', nodeIds: ['NodeID-x'] })).toThrow(/streams\[0\]\.nodeIds\[0\]: "NodeID-x" is not a NodeID/);
    expect(check({ table: 'node_info', pageSize: 10 })).toThrow(/streams\[0\]\.pageSize: node_info takes no page size/);
    expect(() => checkPipeline({ name: 'x', sources: { node: { url: 'ftp://node' } }, streams: [{ table: 'node_info' }] }, 'x.yaml')).toThrow(/sources\.node\.url: "ftp:\/\/node" is not an http\(s\) URL/);
  });

  it('takes P/X addresses of any network, and aliases where a blockchain id is asked for', () => {
    const p = checkPipeline({ name: 'x', streams: [{ table: 'utxos', addresses: [FUJI_X, xAddress(0)], sourceChain: 'C' }, { table: 'fee_config', blockchainIds: ['C', NODE_DEMO.evmChain] }] }, 'x.yaml');
    expect(p.sources.node.url).toBe('http://127.0.0.1:9650');
    expect(p.streams).toHaveLength(2);
  });
});
