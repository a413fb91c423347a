// The simulated node's state (docs/services.md, Node JSON-RPC): what its info, health, asset
// chain, EVM chain and admin methods answer. Everything is a function of the seed and the world's
// clock. It answers as AvalancheGo does, or as the reference documents the node (NodeShape); a
// uint64 is an ExactNumber here, which AvalancheGo writes as a JSON number and the reference as a
// decimal string. Calls are parsed in node_params.ts and dispatched in node_routes.ts; UTXO bytes
// are utxo_codec.ts's.
import { cb58Encode } from '../ids.js';
import { ExactNumber } from '../json.js';
import { invalidParams, serverError } from './errors.js';
import { CHAINS, WORLD_NOW } from './evm.js';
import { Rng, id32, labelBytes } from './hash.js';
import { nodeIdOf } from './staking.js';
import { EVM_VM_ID, LAKESIDE_SUBNET_ID, PRIMARY_NETWORK_ID, SUBNET_EVM_VM_ID, X_CHAIN_ID, type Blockchain, type GenesisConfig, type Subnet } from './subnets.js';
import type { SimUtxo } from './utxo_codec.js';
import { ASSET_NAMES, AVAX_ASSET_ID, FIRST_INEXACT, UINT64_MAX, X_ADDRESSES, amountOf, assetId, nodeUtxoSet, pickAsset, u64, xAddress } from './node_utxos.js';
import { nodeForm, xUtxosOf } from './xchain_utxos.js';

export { AVAX_ASSET_ID, FIRST_INEXACT, assetId, xAddress };

type Obj = Record<string, unknown>;

/**
 * What the node reads from the rest of the world (World is one): declared here, not imported from
 * world.ts, so that world.ts can hold a NodeWorld without an import circle.
 */
export interface NodeSource {
  readonly seed: number;
  readonly now: number;
  headBlock(chainId: string): number;
  block(chainId: string, n: number): { blockTimestamp: number };
  subnets(network: 'mainnet'): Iterable<Subnet>;
}

const DAY = 86_400;
const C_CHAIN_ID = CHAINS.find((c) => c.chainId === '43114')!.blockchainId;
/** secp256k1fx, the feature extension of every input, output and credential here. */
const SECP_FX_ID = 'spdxUxVJQbX85MGxMHbKw1sHxMnSqJ3QBzDyDYEP3h6TLuxqQ';
const ALIASES: Record<string, string> = { P: PRIMARY_NETWORK_ID, X: X_CHAIN_ID.mainnet, C: C_CHAIN_ID };
/** The asset chain was linearized (blocks from height 0) on this day; a block every 30 s since. */
const X_GENESIS = Date.UTC(2023, 3, 25) / 1000;
const X_BLOCK_SECONDS = 30;
/** Health checks run this often (the node flag --health-check-frequency). */
const CHECK_SECONDS = 30;

/** A time as the node writes it: RFC 3339 with nanoseconds. */
function iso(seconds: number, nanos = 0): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, `.${String(nanos).padStart(9, '0')}Z`);
}

export interface AssetDescription {
  assetID: string;
  name: string;
  symbol: string;
  denomination: string;
}


/**
 * How the node answers. `avalanchego` (the default): as AvalancheGo does, read in its source: the
 * asset chain's namespace is `avm`, uint64 fields are JSON numbers, every error of its own APIs is
 * -32000 on HTTP 200 (with `data: null`), a POST without `Content-Type: application/json` gets
 * 415, info.uptime ignores subnetID, peers carry upgradeTime and their ACP votes, ethRules
 * carries ChainID, and a health check not run yet has Go's zero time. `reference`: as the
 * reference documents it: namespace `xvm`, uint64 fields as decimal strings, -32601 and -32602
 * for an unknown method and bad params, info.uptime per subnet.
 */
export type NodeShape = 'avalanchego' | 'reference';

export interface NodeOptions {
  shape?: NodeShape;
  /** Serve the admin API's reads at /ext/admin (a node has it off unless --api-admin-enabled=true). */
  admin?: boolean;
}

/** Loggers of the node (the main one, http, one per chain by alias) and their levels. */
const LOGGERS: Record<string, { logLevel: string; displayLevel: string }> = {
  C: { logLevel: 'INFO', displayLevel: 'INFO' },
  P: { logLevel: 'INFO', displayLevel: 'INFO' },
  X: { logLevel: 'INFO', displayLevel: 'INFO' },
  http: { logLevel: 'INFO', displayLevel: 'WARN' },
  main: { logLevel: 'DEBUG', displayLevel: 'INFO' },
};

export type HealthKind = 'health' | 'readiness' | 'liveness';

interface Check {
  message?: unknown;
  error?: string;
  timestamp: string;
  duration: number;
  /** AvalancheGo leaves these out when 0 and null (omitempty) */
  contiguousFailures?: number;
  timeOfFirstFailure?: string | null;
}

/** What a check not run yet reports (AvalancheGo's notYetRunResult): Go's zero time. */
export const NOT_YET_RUN = { error: 'not yet run', timestamp: '0001-01-01T00:00:00Z', duration: 0 } as const;

export interface HealthReport {
  checks: Record<string, Check>;
  healthy: boolean;
}

/** The EVM chains the node runs: the C-Chain and the subnet-EVM chains of the world's subnets. */
export interface EvmChain {
  blockchainId: string;
  subnet: Subnet;
  config: GenesisConfig;
  subnetEvm: boolean;
}

export class NodeWorld {
  readonly shape: NodeShape;
  readonly admin: boolean;

  constructor(
    private readonly world: NodeSource,
    opts: NodeOptions = {},
  ) {
    this.shape = opts.shape ?? 'avalanchego';
    this.admin = opts.admin ?? false;
  }

  /** The asset chain's method prefix. */
  get assetNamespace(): 'avm' | 'xvm' {
    return this.shape === 'avalanchego' ? 'avm' : 'xvm';
  }

  private get seed(): number {
    return this.world.seed;
  }

  private get now(): number {
    return this.world.now;
  }

  // ---- info ----

  readonly nodeId = nodeIdOf('mainnet', 0);

  nodeVersion(): Obj {
    return {
      version: 'avalanchego/1.13.4',
      databaseVersion: 'v1.4.5',
      rpcProtocolVersion: '41',
      gitCommit: Rng.of(this.seed, 'node', 'git').hex(20),
      vmVersions: { avm: 'v1.13.4', evm: 'v0.15.3', platform: 'v1.13.4', 'subnet-evm': 'v0.7.9' },
    };
  }

  nodePop(): Obj {
    const r = Rng.of(this.seed, 'node', 'bls');
    return { publicKey: '0x' + r.hex(48), proofOfPossession: '0x' + r.hex(96) };
  }

  txFee(): Obj {
    return {
      txFee: '1000000', createAssetTxFee: '10000000', createSubnetTxFee: '1000000000', transformSubnetTxFee: '10000000000',
      createBlockchainTxFee: '1000000000', addPrimaryNetworkValidatorFee: '0', addPrimaryNetworkDelegatorFee: '0',
      addSubnetValidatorFee: '1000000', addSubnetDelegatorFee: '1000000',
    };
  }

  upgrades(): Obj {
    return {
      apricotPhase1Time: '2021-03-31T14:00:00Z', apricotPhase2Time: '2021-05-10T11:00:00Z', apricotPhase3Time: '2021-08-24T14:00:00Z',
      apricotPhase4Time: '2021-09-22T21:00:00Z', apricotPhase4MinPChainHeight: 793005, apricotPhase5Time: '2021-12-02T18:00:00Z',
      apricotPhasePre6Time: '2022-09-05T01:30:00Z', apricotPhase6Time: '2022-09-06T20:00:00Z', apricotPhasePost6Time: '2022-09-07T03:00:00Z',
      banffTime: '2022-10-18T16:00:00Z', cortinaTime: '2023-04-25T15:00:00Z', cortinaXChainStopVertexID: 'jrGWDh5Po9FMj54depyunNixpia5PN4aAYxfmNzU8n752Rjga',
      durangoTime: '2024-03-06T16:00:00Z', etnaTime: '2024-12-16T17:00:00Z', fortunaTime: '2025-04-08T15:00:00Z', graniteTime: '9999-12-01T00:00:00Z',
    };
  }

  /** Votes on proposals; weights are stake in nAVAX, past 2^53. */
  acps(): Obj {
    const out: Obj = {};
    for (const n of [176, 194, 226]) {
      const r = Rng.of(this.seed, 'acp', n);
      const w = () => (r.bigBelow(10n ** 17n) + 10n ** 16n).toString();
      out[String(n)] = {
        supportWeight: w(), objectWeight: r.chance(0.5) ? w() : '0', abstainWeight: w(),
        supporters: [nodeIdOf('mainnet', r.int(6)), nodeIdOf('mainnet', 3)].filter((v, i, a) => a.indexOf(v) === i), objectors: [],
      };
    }
    return out;
  }

  /** A chain by alias (P, X, C) or id; undefined when the node runs no such chain. */
  chainId(chain: string): string | undefined {
    if (ALIASES[chain]) return ALIASES[chain];
    if (chain === PRIMARY_NETWORK_ID || chain === X_CHAIN_ID.mainnet || this.evmChain(chain)) return chain;
    return undefined;
  }

  /** Peers: the other validators of the world and a few other nodes, seen recently. */
  peers(nodeIds?: string[]): Obj[] {
    const ids = [...Array.from({ length: 5 }, (_, v) => nodeIdOf('mainnet', v + 1)), ...Array.from({ length: 7 }, (_, i) => `NodeID-${cb58Encode(labelBytes(`peer:${i}`, 20))}`)];
    const t = this.now;
    return ids
      .filter((id) => !nodeIds?.length || nodeIds.includes(id))
      .map((nodeID, i) => {
        // Who the peer is stays; when it last spoke moves with the clock.
        const r = Rng.of(this.seed, 'peer', i);
        const seen = Rng.of(this.seed, 'peer-seen', i, t);
        const ip = `198.51.100.${10 + i}:9651`;
        const at = {
          ip, publicIP: r.chance(0.8) ? ip : '', nodeID, version: r.pick(['avalanchego/1.13.4', 'avalanchego/1.13.3', 'avalanchego/1.13.2']),
        };
        const seenAt = { lastSent: iso(t - seen.int(5), seen.int(1e9)), lastReceived: iso(t - seen.int(8), seen.int(1e9)) };
        const benched = r.chance(0.15) ? [C_CHAIN_ID] : [];
        const observed = { observedUptime: String(seen.range(94, 100)), trackedSubnets: r.chance(0.3) ? [LAKESIDE_SUBNET_ID] : [] };
        if (this.shape === 'reference') return { ...at, ...seenAt, benched, ...observed };
        // The fields of AvalancheGo's peer.Info in its order, then benched; ACP sets are written sorted.
        const votes = [176, 194, 226].filter(() => r.chance(0.5));
        const upgradeTime = u64(Date.parse(this.upgrades()[r.chance(0.7) ? 'graniteTime' : 'fortunaTime'] as string) / 1000);
        return { ...at, upgradeTime, ...seenAt, ...observed, supportedACPs: votes.filter((n) => n !== 226), objectedACPs: votes.filter((n) => n === 226), benched };
      });
  }

  /** AvalancheGo (v1.11.12 on) takes no subnetID: the answer is the primary network's whatever was asked. */
  uptime(subnetId?: string): Obj {
    if (this.shape === 'avalanchego') subnetId = undefined;
    if (subnetId !== undefined && subnetId !== PRIMARY_NETWORK_ID && !this.subnets().some((s) => s.subnetId === subnetId)) {
      throw serverError(`couldn't get node uptime: subnet ${subnetId} is not tracked by this node`);
    }
    const r = Rng.of(this.seed, 'uptime', subnetId ?? PRIMARY_NETWORK_ID, Math.floor(this.now / 3600));
    return { rewardingStakePercentage: (95 + r.int(50_001) / 10_000).toFixed(4), weightedAveragePercentage: (92 + r.int(80_001) / 10_000).toFixed(4) };
  }

  // ---- admin ----

  /** admin.getChainAliases: the aliases of a chain the node runs (its id is one), null for another (a Go nil slice). */
  chainAliases(id: string): string[] | null {
    const named = Object.entries(ALIASES).filter(([, v]) => v === id).map(([k]) => k);
    const vm: Record<string, string> = { P: 'platform', X: 'avm', C: 'evm' };
    if (named.length) return [...named.flatMap((k) => [k, vm[k]!]), id];
    return this.evmChain(id) ? [id] : null;
  }

  /** admin.getLoggerLevel: one logger's levels, or every logger's. */
  loggerLevels(name?: string): Record<string, { logLevel: string; displayLevel: string }> {
    if (!name) return { ...LOGGERS };
    const l = LOGGERS[name];
    if (!l) throw serverError(`logger "${name}" not found`);
    return { [name]: l };
  }

  // ---- health ----

  /**
   * The subnet-EVM chain the node started to run at WORLD_NOW (AvalancheGo's shape): its health
   * check, registered then, has not run until the next round of checks.
   */
  newChain(): EvmChain | undefined {
    if (this.shape !== 'avalanchego') return undefined;
    const lake = CHAINS.find((c) => c.chainId === '432204')!.blockchainId;
    const id = this.subnets().flatMap((s) => s.blockchains.map((b) => b.blockchainId)).find((b) => b !== lake && this.evmChain(b)?.subnetEvm);
    return id === undefined ? undefined : this.evmChain(id);
  }

  /**
   * Health reports. Every check passes, but for diskspace, which fails through every third hour
   * of Unix time (WORLD_NOW is in one): the node is then unhealthy (503), while ready and live.
   * The subnet chains' checks are tagged with their subnet; `tags` keeps untagged checks and those.
   */
  health(kind: HealthKind, tags: string[] = []): HealthReport {
    if (kind === 'liveness') return { checks: {}, healthy: true };
    const t = this.now;
    const last = t - (t % CHECK_SECONDS);
    const lake = CHAINS.find((c) => c.chainId === '432204')!.blockchainId;
    const fresh = t >= WORLD_NOW ? this.newChain() : undefined;
    const all: Array<[string, string | undefined, () => unknown]> = [
      ['C', undefined, () => ({ consensus: { outstandingBlocks: 0, lastAcceptedHeight: this.world.headBlock('43114') }, vm: null })],
      ['P', undefined, () => ({ consensus: { outstandingBlocks: 0 }, vm: { percentConnected: 0.97 } })],
      ['X', undefined, () => ({ consensus: { outstandingBlocks: 0, lastAcceptedHeight: this.xvmHeight() }, vm: null })],
      [lake, LAKESIDE_SUBNET_ID, () => ({ consensus: { outstandingBlocks: 0, lastAcceptedHeight: this.world.headBlock('432204') }, vm: null })],
      ['bootstrapped', undefined, () => []],
      ['database', undefined, () => undefined],
      ['diskspace', undefined, () => ({ availableDiskBytes: String(412_000_000_000 - (t % 3600) * 1000) })],
      ['network', undefined, () => ({ connectedPeers: 12, sendFailRate: 0, timeSinceLastMsgReceived: '1.2s', timeSinceLastMsgSent: '800ms' })],
      ['router', undefined, () => ({ longestRunningRequest: '0s', outstandingRequests: 0 })],
      ...(fresh ? [[fresh.blockchainId, fresh.subnet.subnetId, () => ({ consensus: { outstandingBlocks: 0 }, vm: null })] as [string, string, () => unknown]] : []),
    ];
    const ready = new Set(['bootstrapped', 'C', 'P', 'X', lake]);
    const checks: Record<string, Check> = {};
    for (const [name, tag, message] of all) {
      if (kind === 'readiness' && !ready.has(name)) continue;
      if (tag !== undefined && tags.length > 0 && !tags.includes(tag)) continue;
      if (name === fresh?.blockchainId && last <= WORLD_NOW) {
        checks[name] = { ...NOT_YET_RUN };
        continue;
      }
      const r = Rng.of(this.seed, 'check', name, last);
      const failing = name === 'diskspace' && Math.floor(t / 3600) % 3 === 0;
      const check: Check = { timestamp: iso(last, r.int(1e9)), duration: 20_000 + r.int(2_000_000) };
      if (this.shape === 'reference') Object.assign(check, { contiguousFailures: 0, timeOfFirstFailure: null });
      const m = message();
      if (m !== undefined) check.message = m;
      if (failing) {
        const since = t - (t % 3600);
        check.error = 'available disk space is below the 10% threshold';
        check.contiguousFailures = Math.floor((last - since) / CHECK_SECONDS) + 1;
        check.timeOfFirstFailure = iso(since, 0);
      }
      checks[name] = check;
    }
    return { checks, healthy: Object.values(checks).every((c) => c.error === undefined) };
  }

  // ---- EVM chains ----

  private subnets(): Subnet[] {
    return [...this.world.subnets('mainnet')];
  }

  /** An EVM chain the node runs, by id or alias, with its config; undefined for any other chain. */
  evmChain(chain: string): EvmChain | undefined {
    const id = chain === 'C' ? C_CHAIN_ID : chain;
    for (const s of this.subnets()) {
      const b = s.blockchains.find((x: Blockchain) => x.blockchainId === id);
      if (!b || (b.vmId !== SUBNET_EVM_VM_ID && b.vmId !== EVM_VM_ID)) continue;
      const g = typeof b.genesisData === 'string' ? (b.genesisData.startsWith('{') ? JSON.parse(b.genesisData) : undefined) : b.genesisData;
      if (!g?.config) return undefined;
      return { blockchainId: id, subnet: s, config: g.config as GenesisConfig, subnetEvm: b.vmId === SUBNET_EVM_VM_ID };
    }
    return undefined;
  }

  /** Precompiles turned off after genesis: the reward manager of chains that have one, 30 days before WORLD_NOW. */
  private upgradesOf(c: EvmChain): Obj[] {
    return c.config.rewardManagerConfig ? [{ rewardManagerConfig: { blockTimestamp: WORLD_NOW - 30 * DAY, disable: true } }] : [];
  }

  chainConfig(c: EvmChain): Obj {
    return c.subnetEvm ? { ...c.config, upgrades: { precompileUpgrades: this.upgradesOf(c) } } : { ...c.config };
  }

  /** The fee config in force: a chain with a fee manager changed its minimum base fee once. */
  feeConfig(c: EvmChain): Obj {
    const fee = c.config.feeConfig!;
    if (!c.config.feeManagerConfig) return { feeConfig: fee, lastChangedAt: 0 };
    const r = Rng.of(this.seed, 'fee-change', c.blockchainId);
    return { feeConfig: { ...fee, minBaseFee: fee.minBaseFee * 2 }, lastChangedAt: 1_000 + r.int(100_000) };
  }

  /** The newest block time of a chain the world has blocks of; the world's now for the others. */
  latestTime(c: EvmChain): number {
    const known = CHAINS.find((x) => x.blockchainId === c.blockchainId);
    return known ? this.world.block(known.chainId, this.world.headBlock(known.chainId)).blockTimestamp : this.now;
  }

  activeRules(c: EvmChain, at: number): Obj {
    const time = (k: string) => Date.parse(this.upgrades()[k] as string) / 1000;
    const [durango, etna, fortuna, granite] = ['durangoTime', 'etnaTime', 'fortunaTime', 'graniteTime'].map(time) as [number, number, number, number];
    const classic = { IsHomestead: true, IsEIP150: true, IsEIP155: true, IsEIP158: true, IsByzantium: true, IsConstantinople: true, IsPetersburg: true, IsIstanbul: true };
    // AvalancheGo: libevm's params.Rules whole (ChainID, a *big.Int, first) and subnet-EVM's avalanche rules.
    const ethRules =
      this.shape === 'reference'
        ? { ...classic, IsCancun: at >= etna }
        : { ChainID: c.config.chainId, ...classic, IsBerlin: true, IsLondon: true, IsMerge: true, IsShanghai: at >= durango, IsCancun: at >= etna, IsPrague: false, IsVerkle: false };
    const avalancheRules = {
      IsSubnetEVM: (c.config.subnetEVMTimestamp ?? 0) <= at, IsDurango: at >= durango, IsEtna: at >= etna,
      ...(this.shape === 'reference' ? {} : { IsFortuna: at >= fortuna, IsGranite: at >= granite, IsHelicon: false }),
    };
    const precompiles: Obj = {};
    const off = new Map<string, number>();
    for (const u of this.upgradesOf(c)) for (const [k, v] of Object.entries(u)) if ((v as Obj).disable) off.set(k, (v as Obj).blockTimestamp as number);
    for (const k of ['txAllowListConfig', 'contractDeployerAllowListConfig', 'contractNativeMinterConfig', 'feeManagerConfig', 'rewardManagerConfig', 'warpConfig'] as const) {
      const p = c.config[k] as { blockTimestamp: number } | undefined;
      if (!p || p.blockTimestamp > at || (off.get(k) ?? Infinity) <= at) continue;
      precompiles[k] = { timestamp: p.blockTimestamp };
    }
    return { ethRules, avalancheRules, precompiles };
  }

  /** Current validators of a subnet-EVM chain: L1 validators for an L1. */
  validators(c: EvmChain, nodeIds?: string[]): Obj[] {
    const r = Rng.of(this.seed, 'subnet-validators', c.blockchainId);
    const n = 5 + r.int(6);
    const out: Obj[] = [];
    for (let k = 0; k < n; k++) {
      const nodeID = k < 4 ? nodeIdOf('mainnet', (k + r.int(2)) % 6) : `NodeID-${cb58Encode(labelBytes(`subnet-validator:${c.blockchainId}:${k}`, 20))}`;
      if (out.some((v) => v.nodeID === nodeID)) continue;
      const v = Rng.of(this.seed, 'subnet-validator', c.blockchainId, k, Math.floor(this.now / 3600));
      out.push({
        validationID: id32(Rng.of(this.seed, 'validation-id', c.blockchainId, k)),
        nodeID,
        // The first validator weighs 2^53 + 1, which a double makes 2^53.
        weight: u64(k === 0 ? FIRST_INEXACT : c.subnet.isL1 ? 20 + r.int(1000) : 2_000_000_000_000 + r.int(1e9)),
        startTimestamp: u64(WORLD_NOW - (30 + r.int(300)) * DAY),
        isActive: c.subnet.isL1 ? v.chance(0.9) : true,
        isL1Validator: c.subnet.isL1,
        isConnected: v.chance(0.85),
        uptimeSeconds: u64(86_400 * 20 + v.int(86_400 * 10)),
        uptimePercentage: Number((90 + v.int(100_000) / 10_000).toFixed(4)),
      });
    }
    return out.filter((v) => !nodeIds?.length || nodeIds.includes(v.nodeID as string));
  }

  // ---- asset chain ----

  xvmHeight(): number {
    return Math.floor((this.now - X_GENESIS) / X_BLOCK_SECONDS);
  }

  private xvmBlockId(h: number): string {
    return h < 0 ? PRIMARY_NETWORK_ID : id32(Rng.of(this.seed, 'xvm-block-id', h));
  }

  assets(): AssetDescription[] {
    return [
      { assetID: AVAX_ASSET_ID, name: 'Avalanche', symbol: 'AVAX', denomination: '9' },
      ...ASSET_NAMES.map(([name, symbol, d], i) => ({ assetID: assetId(i), name, symbol, denomination: String(d) })),
    ];
  }

  /** The block at a height (json encoding), or undefined above the head. */
  xvmBlock(h: number): Obj | undefined {
    if (!Number.isSafeInteger(h) || h < 0 || h > this.xvmHeight()) return undefined;
    const r = Rng.of(this.seed, 'xvm-block', h);
    const txs = Array.from({ length: r.int(4) }, (_, i) => this.xvmTx(h, i));
    return {
      parentID: this.xvmBlockId(h - 1), height: u64(h), time: u64(X_GENESIS + h * X_BLOCK_SECONDS),
      merkleRoot: PRIMARY_NETWORK_ID, txs, id: this.xvmBlockId(h),
    };
  }

  private xvmTx(h: number, i: number): Obj {
    const r = Rng.of(this.seed, 'xvm-tx', h, i);
    const input = () => ({
      txID: id32(r), outputIndex: r.int(4), assetID: pickAsset(r), fxID: SECP_FX_ID,
      input: { amount: amountOf(r), signatureIndices: r.chance(0.2) ? [0, 1] : [0] },
    });
    let outputs = 0;
    const output = () => {
      const owners = [xAddress(r.int(X_ADDRESSES))];
      if (r.chance(0.2)) owners.push(xAddress(r.int(X_ADDRESSES)));
      const addresses = [...new Set(owners)];
      // The first output of every fifth block's first transaction is the uint64 maximum.
      const n = outputs++;
      const amount = n === 0 && i === 0 && h % 5 === 0 ? u64(UINT64_MAX) : amountOf(r);
      // And its second output is locked for good: a locktime of the uint64 maximum (its top bit set).
      const lock = (t: number) => u64(n === 1 && i === 0 && h % 5 === 0 ? UINT64_MAX : t);
      return {
        assetID: pickAsset(r), fxID: SECP_FX_ID,
        // Keys in the order Go writes a map: AvalancheGo marshals the output through one.
        output: { addresses, amount, locktime: lock(r.chance(0.1) ? WORLD_NOW + r.int(365 * DAY) : 0), threshold: 1 + r.int(addresses.length) },
      };
    };
    const many = <T>(lo: number, hi: number, f: () => T) => Array.from({ length: r.range(lo, hi) }, f);
    const u: Obj = {
      networkID: 1, blockchainID: X_CHAIN_ID.mainnet, outputs: many(1, 3, output), inputs: many(1, 3, input),
      memo: r.chance(0.3) ? '0x' + Buffer.from(`lake ${h}/${i}`).toString('hex') : '0x',
    };
    const kind = r.float();
    if (kind < 0.12) {
      u.sourceChain = r.chance(0.5) ? C_CHAIN_ID : PRIMARY_NETWORK_ID;
      u.importedInputs = many(1, 2, input);
    } else if (kind < 0.24) {
      u.destinationChain = r.chance(0.5) ? C_CHAIN_ID : PRIMARY_NETWORK_ID;
      u.exportedOutputs = many(1, 2, output);
    } else if (kind < 0.28) {
      u.name = `Asset ${h}`;
      u.symbol = `A${h % 1000}`;
      u.denomination = r.int(10);
      u.initialStates = [{ fxIndex: 0, fxID: SECP_FX_ID, outputs: [output().output] }];
    }
    const spent = (u.inputs as unknown[]).length + ((u.importedInputs as unknown[] | undefined)?.length ?? 0);
    const credentials = Array.from({ length: spent }, () => ({ fxID: SECP_FX_ID, credential: { signatures: ['0x' + r.hex(65)] } }));
    return { unsignedTx: u, credentials, id: id32(r) };
  }


  /**
   * What an address's listing holds, in order: its X-Chain UTXOs as the data service has them now
   * (xchain_utxos.ts: one world), or the atomic ones exported to it from `sourceChain`.
   */
  utxosOf(address: string, sourceChain?: string): SimUtxo[] {
    const body = address.replace(/^X-/, '');
    const list = sourceChain
      ? nodeUtxoSet(this.seed, sourceChain).filter((u) => u.owners.some((o) => o.slice(2) === body))
      : xUtxosOf(this.seed, 'mainnet', [body], this.now).held.map(nodeForm);
    return list.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /**
   * xvm.getUTXOs: the addresses' listings one after another (a UTXO of two listed owners is
   * listed under each), from just after startIndex, at most `limit`.
   */
  getUtxos(addresses: string[], limit: number, startIndex?: { address: string; utxo: string }, sourceChain?: string): Obj {
    const rows = addresses.flatMap((address) => this.utxosOf(address, sourceChain).map((u) => ({ address, u })));
    let from = 0;
    if (startIndex) {
      const at = rows.findIndex((x) => x.address === startIndex.address && x.u.key === startIndex.utxo);
      if (at < 0) throw invalidParams(`startIndex: utxo ${startIndex.utxo} of ${startIndex.address} is not in the listing`);
      from = at + 1;
    }
    const page = rows.slice(from, from + limit);
    const last = page[page.length - 1];
    return {
      numFetched: String(page.length),
      utxos: page.map((x) => x.u.hex),
      endIndex: last ? { address: last.address, utxo: last.u.key } : { address: '', utxo: PRIMARY_NETWORK_ID },
      ...(sourceChain ? { sourceChain } : {}),
      encoding: 'hex',
    };
  }
}

/** Ids of the node's world for the demo pipeline and tests; none depends on the seed. */
export const NODE_DEMO = {
  xAddresses: [xAddress(0), xAddress(1)],
  assetIds: [AVAX_ASSET_ID, assetId(0)],
  /** the Lakeside subnet-EVM chain (an L1 with every precompile) and its subnet */
  evmChain: CHAINS.find((c) => c.chainId === '432204')!.blockchainId,
  subnetId: LAKESIDE_SUBNET_ID,
  /** the asset chain's height at WORLD_NOW */
  xvmHead: Math.floor((WORLD_NOW - X_GENESIS) / X_BLOCK_SECONDS),
} as const;
