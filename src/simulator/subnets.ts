// Subnets and their blockchains per network, with EVM genesis data in the shapes the OpenAPI
// allows: an object, the same as JSON text, a non-JSON string (other VMs), or none. Identities
// (subnet and blockchain ids) do not depend on the seed; the rest does.
import { cb58Encode, encodePrimaryAddress } from '../ids.js';
import { CHAINS, WORLD_NOW } from './evm.js';
import { Rng, labelBytes } from './hash.js';
import { checksumAddress } from './keccak.js';
import type { StakingNetwork } from './staking.js';

export const PRIMARY_NETWORK_ID = '11111111111111111111111111111111LpoYY';
export const X_CHAIN_ID: Record<StakingNetwork, string> = {
  mainnet: '2oYMBNV4eNHyqk2fjjV5nVQLDbtmNJzq5s3qs3Lo6ftnC6FByM',
  fuji: '2JVSBoinj9C2J33VntvzYtVJNZdN2NKiwwKjcumHUWEb5DbBrm',
};
export const EVM_VM_ID = 'mgj786NP7uDwBCcq6YwThhaN8FLyybkCa4zBWTQbNgmK6k9A6';
export const SUBNET_EVM_VM_ID = 'srEXiWaHuhNyGwPUi444Tu47ZEDwxTWrbQiuD7FmgSAQ6X7Dy';
const AVM_VM_ID = 'jvYyfQTxGMJLuGWa55kdP2p2zSUYsQ5Raupu4TW34ZAUBAbtq';
/** Id of the subnet the world's subnet chain (432204) runs on. */
export const LAKESIDE_SUBNET_ID = cb58Encode(labelBytes('subnet:mainnet:lakeside', 32));

const DAY = 86_400;
const ZERO_HASH = '0x' + '0'.repeat(64);
const GENERATED: Record<StakingNetwork, number> = { mainnet: 30, fuji: 14 };

export interface AllowListConfig {
  blockTimestamp: number;
  adminAddresses?: string[];
  managerAddresses?: string[];
  enabledAddresses?: string[];
}

export const PRECOMPILES = ['txAllowListConfig', 'contractDeployerAllowListConfig', 'contractNativeMinterConfig', 'feeManagerConfig', 'rewardManagerConfig'] as const;
export type Precompile = (typeof PRECOMPILES)[number];

export interface GenesisConfig {
  chainId: number;
  homesteadBlock: number;
  eip150Block: number;
  eip150Hash?: string;
  eip155Block: number;
  eip158Block: number;
  byzantiumBlock: number;
  constantinopleBlock: number;
  petersburgBlock: number;
  istanbulBlock: number;
  muirGlacierBlock: number;
  berlinBlock?: number;
  londonBlock?: number;
  subnetEVMTimestamp?: number;
  allowFeeRecipients?: boolean;
  feeConfig?: {
    gasLimit: number;
    targetBlockRate: number;
    minBaseFee: number;
    targetGas: number;
    baseFeeChangeDenominator: number;
    minBlockGasCost: number;
    maxBlockGasCost: number;
    blockGasCostStep: number;
  };
  warpConfig?: { blockTimestamp: number; quorumNumerator: number; requirePrimaryNetworkSigners: boolean };
  txAllowListConfig?: AllowListConfig;
  contractDeployerAllowListConfig?: AllowListConfig;
  contractNativeMinterConfig?: AllowListConfig;
  feeManagerConfig?: AllowListConfig;
  rewardManagerConfig?: AllowListConfig;
}

export interface EvmGenesis {
  airdropAmount: number | null;
  airdropHash: string;
  alloc: Record<string, { balance: string; code?: string; storage?: Record<string, string> }>;
  baseFeePerGas: number | null;
  blobGasUsed: string | null;
  coinbase: string;
  config: GenesisConfig;
  difficulty: string;
  excessBlobGas: string | null;
  extraData: string;
  gasLimit: string;
  gasUsed: string;
  mixHash: string;
  nonce: string;
  number: string;
  parentHash: string;
  timestamp: string;
}

export interface Blockchain {
  createBlockTimestamp: number;
  createBlockNumber: string;
  blockchainId: string;
  vmId: string;
  subnetId: string;
  blockchainName: string;
  evmChainId?: number;
  genesisData?: EvmGenesis | string;
}

export interface Subnet {
  createBlockTimestamp: number;
  createBlockIndex: string;
  subnetId: string;
  ownerAddresses: string[];
  threshold: number;
  locktime: number;
  subnetOwnershipInfo: { locktime: number; threshold: number; addresses: string[] };
  isL1: boolean;
  l1ConversionTransactionHash?: string;
  l1ValidatorManagerDetails?: { blockchainId: string; contractAddress: string };
  blockchains: Blockchain[];
}

const NAMES = ['Dexalot', 'Beam', 'Coqnet', 'Shrapnel', 'Lamina', 'Ünïty Chain', 'Pulse', 'Nexus', 'Kite', 'Orbit', 'Delta', 'Fjord'];

function evmAddress(r: Rng): string {
  return checksumAddress(r.bytes(20));
}

function addresses(r: Rng, n: number): string[] {
  return Array.from({ length: n }, () => evmAddress(r));
}

function allowList(r: Rng, at: number): AllowListConfig {
  const c: AllowListConfig = { blockTimestamp: at, adminAddresses: addresses(r, 1 + r.int(3)) };
  if (r.chance(0.4)) c.managerAddresses = addresses(r, 1 + r.int(2));
  if (r.chance(0.5)) c.enabledAddresses = addresses(r, 1 + r.int(4));
  return c;
}

function hex(n: number): string {
  return '0x' + n.toString(16);
}

/** A subnet-EVM genesis; `all` sets every precompile (the world's own subnet chain). */
function subnetEvmGenesis(r: Rng, chainId: number, created: number, all = false): EvmGenesis {
  const config: GenesisConfig = {
    chainId, homesteadBlock: 0, eip150Block: 0, eip155Block: 0, eip158Block: 0, byzantiumBlock: 0,
    constantinopleBlock: 0, petersburgBlock: 0, istanbulBlock: 0, muirGlacierBlock: 0, subnetEVMTimestamp: 0,
    feeConfig: {
      gasLimit: r.pick([8_000_000, 12_000_000, 15_000_000, 20_000_000]), targetBlockRate: r.range(1, 3),
      minBaseFee: r.pick([1, 25_000_000_000, 1_000_000_000]), targetGas: r.pick([15_000_000, 60_000_000, 100_000_000]),
      baseFeeChangeDenominator: r.pick([36, 48]), minBlockGasCost: 0, maxBlockGasCost: r.pick([1_000_000, 10_000_000]),
      blockGasCostStep: r.pick([200_000, 500_000]),
    },
    allowFeeRecipients: r.chance(0.3),
  };
  if (all || r.chance(0.6)) config.warpConfig = { blockTimestamp: created, quorumNumerator: 67, requirePrimaryNetworkSigners: r.chance(0.5) };
  for (const p of PRECOMPILES) if (all || r.chance(0.35)) config[p] = allowList(r, all ? 0 : created);
  const alloc: EvmGenesis['alloc'] = {};
  for (let k = 0; k < 1 + r.int(3); k++) {
    const entry: EvmGenesis['alloc'][string] = { balance: '0x' + (r.hex(11).replace(/^0+/, '') || '0') };
    if (r.chance(0.3)) {
      entry.code = '0x6080604052' + r.hex(24);
      entry.storage = { '0x0': '0x1', [hex(r.int(1000))]: '0x' + r.hex(8) };
    }
    alloc[evmAddress(r)] = entry;
  }
  return {
    airdropAmount: null, airdropHash: ZERO_HASH, alloc, baseFeePerGas: null, blobGasUsed: null,
    coinbase: '0x0000000000000000000000000000000000000000', config, difficulty: '0x0', excessBlobGas: null,
    extraData: '0x', gasLimit: hex(config.feeConfig!.gasLimit), gasUsed: '0x0', mixHash: ZERO_HASH, nonce: '0x0',
    number: '0x0', parentHash: ZERO_HASH, timestamp: hex(created),
  };
}

/** The C-Chain's genesis (coreth): fork blocks, no fee config or precompiles. */
function cChainGenesis(chainId: number): EvmGenesis {
  const config: GenesisConfig = {
    chainId, homesteadBlock: 0, eip150Block: 0, eip150Hash: '0x2086799aeebeae135c246c65021c82b4e15a2c451340993aacfd2751886514f0',
    eip155Block: 0, eip158Block: 0, byzantiumBlock: 0, constantinopleBlock: 0, petersburgBlock: 0, istanbulBlock: 0, muirGlacierBlock: 0,
  };
  return {
    airdropAmount: null, airdropHash: ZERO_HASH, alloc: {}, baseFeePerGas: null, blobGasUsed: null,
    coinbase: '0x0000000000000000000000000000000000000000', config, difficulty: '0x0', excessBlobGas: null,
    extraData: '0x00', gasLimit: '0x5f5e100', gasUsed: '0x0', mixHash: ZERO_HASH, nonce: '0x0', number: '0x0',
    parentHash: ZERO_HASH, timestamp: '0x0',
  };
}

function owners(net: StakingNetwork, label: string, n: number): string[] {
  return Array.from({ length: n }, (_, k) => encodePrimaryAddress(net, labelBytes(`subnet-owner:${label}:${k}`, 20), ''));
}

function subnet(net: StakingNetwork, id: string, created: number, index: number, ownerList: string[], threshold: number, blockchains: Blockchain[]): Subnet {
  return {
    createBlockTimestamp: created, createBlockIndex: String(index), subnetId: id,
    ownerAddresses: ownerList, threshold, locktime: 0,
    subnetOwnershipInfo: { locktime: 0, threshold, addresses: ownerList },
    isL1: false, blockchains,
  };
}

/** Subnets of a network, oldest first. */
export function buildSubnets(seed: number, net: StakingNetwork): Subnet[] {
  const c = CHAINS.find((x) => x.chainId === (net === 'mainnet' ? '43114' : '43113'))!;
  const primary = subnet(net, PRIMARY_NETWORK_ID, 1_600_646_400, 0, [], 0, [
    { createBlockTimestamp: 1_600_646_400, createBlockNumber: '0', blockchainId: X_CHAIN_ID[net], vmId: AVM_VM_ID, subnetId: PRIMARY_NETWORK_ID, blockchainName: 'X-Chain', genesisData: '0x' + Rng.of(seed, 'x-genesis', net).hex(48) },
    { createBlockTimestamp: 1_600_646_400, createBlockNumber: '0', blockchainId: c.blockchainId, vmId: EVM_VM_ID, subnetId: PRIMARY_NETWORK_ID, blockchainName: 'C-Chain', evmChainId: Number(c.chainId), genesisData: cChainGenesis(Number(c.chainId)) },
  ]);
  const out = [primary];
  if (net === 'mainnet') {
    const lake = CHAINS.find((x) => x.chainId === '432204')!;
    const created = WORLD_NOW - 700 * DAY;
    const r = Rng.of(seed, 'subnet', 'lakeside');
    const s = subnet(net, LAKESIDE_SUBNET_ID, created, 9_000_000, owners(net, 'lakeside', 2), 1, [
      {
        createBlockTimestamp: created + 3600, createBlockNumber: '9000120', blockchainId: lake.blockchainId, vmId: SUBNET_EVM_VM_ID,
        subnetId: LAKESIDE_SUBNET_ID, blockchainName: lake.name, evmChainId: 432204, genesisData: subnetEvmGenesis(r, 432204, created + 3600, true),
      },
    ]);
    s.isL1 = true;
    s.l1ConversionTransactionHash = cb58Encode(labelBytes('l1-conversion:lakeside', 32));
    s.l1ValidatorManagerDetails = { blockchainId: lake.blockchainId, contractAddress: evmAddress(r) };
    out.push(s);
  }
  for (let i = 0; i < GENERATED[net]; i++) {
    const r = Rng.of(seed, 'subnet', net, i);
    const id = cb58Encode(labelBytes(`subnet:${net}:${i}`, 32));
    const created = WORLD_NOW - r.range(5, 1400) * DAY - r.int(DAY);
    const ownerCount = r.range(1, 3);
    const chains: Blockchain[] = [];
    const n = r.chance(0.15) ? 0 : r.chance(0.8) ? 1 : r.range(2, 3);
    let at = created;
    for (let k = 0; k < n; k++) {
      at += r.range(60, 3 * DAY);
      const name = `${r.pick(NAMES)} ${k === 0 ? 'Chain' : `Chain ${k + 1}`}`;
      const b: Blockchain = {
        createBlockTimestamp: at, createBlockNumber: String(8_000_000 + Math.floor((at - 1_600_000_000) / 2)),
        blockchainId: cb58Encode(labelBytes(`blockchain:${net}:${i}:${k}`, 32)), vmId: SUBNET_EVM_VM_ID, subnetId: id, blockchainName: name,
      };
      const form = r.float();
      if (form < 0.12) {
        // Another VM: its genesis is encoded bytes, not JSON, and it has no EVM chain id.
        b.vmId = cb58Encode(labelBytes(`vm:${net}:${i}:${k}`, 32));
        b.genesisData = '0x' + r.hex(40);
      } else {
        const chainId = 100_000 + r.int(900_000);
        b.evmChainId = chainId;
        const g = subnetEvmGenesis(r, chainId, at);
        if (form < 0.3) b.genesisData = JSON.stringify(g);
        else if (form < 0.92) b.genesisData = g;
      }
      chains.push(b);
    }
    const s = subnet(net, id, created, 5_000_000 + Math.floor((created - 1_600_000_000) / 3), owners(net, `${net}:${i}`, ownerCount), r.range(1, ownerCount), chains);
    if (chains.length && created > WORLD_NOW - 300 * DAY && r.chance(0.5)) {
      s.isL1 = true;
      s.l1ConversionTransactionHash = cb58Encode(labelBytes(`l1-conversion:${net}:${i}`, 32));
      s.l1ValidatorManagerDetails = { blockchainId: chains[0]!.blockchainId, contractAddress: evmAddress(r) };
    }
    out.push(s);
  }
  return out.sort((a, b) => a.createBlockTimestamp - b.createBlockTimestamp || (a.subnetId < b.subnetId ? -1 : 1));
}
