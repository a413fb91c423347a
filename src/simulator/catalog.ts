// Reference records of the data service: contract metadata, the supported chains, and which
// primary-network chains an address has touched. Small and fixed per seed.
import type { Network } from '../ids.js';
import { CHAINS, type ChainInfo, type EvmWorld } from './evm.js';
import { Rng, hashKey, labelBytes } from './hash.js';
import { checksumAddress } from './keccak.js';
import { addressBody, poolAddress, stakingNetwork } from './staking.js';
import { EVM_VM_ID, LAKESIDE_SUBNET_ID, PRIMARY_NETWORK_ID, SUBNET_EVM_VM_ID, X_CHAIN_ID } from './subnets.js';

export const RESOURCE_LINK_TYPES = [
  'Blog', 'CoinGecko', 'CoinMarketCap', 'Discord', 'Documentation', 'Facebook', 'Github', 'Instagram', 'LinkedIn',
  'Medium', 'Reddit', 'Support', 'Telegram', 'TikTok', 'Twitter', 'Website', 'Whitepaper', 'Youtube',
] as const;

export interface ImageAsset {
  assetId?: string;
  imageUri?: string;
}

export interface ContractMetadata {
  name?: string;
  description?: string;
  officialSite?: string;
  email?: string;
  logoAsset?: ImageAsset;
  bannerAsset?: ImageAsset;
  color?: string;
  resourceLinks?: Array<{ type: string; url: string }>;
  tags?: string[];
  address: string;
  deploymentDetails?: { txHash: string; deployerAddress: string; deployerContractAddress?: string };
  ercType: 'ERC-20' | 'ERC-721' | 'ERC-1155' | 'UNKNOWN';
  symbol?: string;
  decimals?: number;
  pricingProviders?: { coingeckoCoinId: string };
}

export interface SupportedChain {
  chainId: string;
  status: 'OK' | 'UNAVAILABLE';
  chainName: string;
  description: string;
  platformChainId?: string;
  subnetId?: string;
  vmId?: string;
  vmName: 'EVM' | 'BITCOIN' | 'ETHEREUM';
  explorerUrl?: string;
  rpcUrl: string;
  wsUrl?: string;
  isTestnet: boolean;
  utilityAddresses?: { multicall: string };
  networkToken: { name: string; symbol: string; decimals: number; logoUri?: string; description?: string };
  chainLogoUri?: string;
  private?: boolean;
  enabledFeatures?: Array<'nftIndexing' | 'webhooks' | 'teleporter'>;
}

export interface AddressChains {
  address: string;
  blockchainIds: string[];
}

const TAGS = ['defi', 'dex', 'stablecoin', 'nft', 'gaming', 'bridge', 'lending', 'meme'];

export class Catalog {
  constructor(readonly seed: number, private readonly evm: EvmWorld) {}

  /** Metadata of a contract the world knows (tokens, named contracts, factories); undefined otherwise. */
  contract(chain: ChainInfo, address: string): ContractMetadata | undefined {
    const token = this.evm.contract(chain.chainId, address);
    const named = token ? undefined : this.evm.namedOf(chain.chainId).find((a) => a.address.toLowerCase() === address.toLowerCase());
    const owner = token || named ? undefined : this.evm.owner(chain.chainId, address);
    const known = token ?? named ?? owner;
    if (!known) return undefined;
    const r = Rng.of(this.seed, 'contract-meta', chain.chainId, known.address.toLowerCase());
    const slug = (known.name ?? 'contract').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'contract';
    const m: ContractMetadata = { address: known.address, ercType: token ? token.ercType : 'UNKNOWN' };
    if (known.name) m.name = known.name;
    if (r.chance(0.8)) m.description = r.chance(0.2) ? `${known.name ?? 'A contract'}: "quoted", multi-line\nand ünïcødé ✓` : `${known.name ?? 'A contract'} on ${chain.name}`;
    if (r.chance(0.7)) m.officialSite = `https://${slug}.example.invalid`;
    if (r.chance(0.3)) m.email = `hello@${slug}.example.invalid`;
    if (r.chance(0.7)) m.logoAsset = { assetId: r.hex(8), imageUri: `https://images.example.invalid/${chain.chainId}/${slug}.png` };
    if (r.chance(0.3)) m.bannerAsset = { assetId: r.hex(8), imageUri: `https://images.example.invalid/${chain.chainId}/${slug}-banner.png` };
    if (r.chance(0.5)) m.color = '#' + r.hex(3);
    const links = r.int(4);
    if (links > 0 || r.chance(0.5)) {
      m.resourceLinks = Array.from({ length: links }, (_, k) => {
        const type = RESOURCE_LINK_TYPES[(hashKey(this.seed, 'link', known.address, k) % RESOURCE_LINK_TYPES.length)]!;
        return { type, url: `https://${type.toLowerCase()}.example.invalid/${slug}?ref=${k}` };
      });
    }
    if (r.chance(0.8)) m.tags = Array.from(new Set(Array.from({ length: r.int(4) }, () => r.pick(TAGS))));
    if (r.chance(0.9)) {
      m.deploymentDetails = { txHash: '0x' + r.hex(32), deployerAddress: checksumAddress(r.bytes(20)) };
      if (r.chance(0.3)) m.deploymentDetails.deployerContractAddress = this.evm.internalOwnersOf(chain.chainId)[0]!;
    }
    if (token) {
      m.symbol = token.symbol;
      if (token.ercType === 'ERC-20') m.decimals = token.decimals;
      if (token.priceUsd !== undefined) m.pricingProviders = { coingeckoCoinId: slug };
    } else if (known.symbol) m.symbol = known.symbol;
    return m;
  }

  /** The chains list; `network` keeps mainnet or test chains only (fuji and testnet are the same). */
  chains(chains: readonly ChainInfo[], network?: Network, feature?: string): SupportedChain[] {
    const out: SupportedChain[] = [];
    for (const c of chains) {
      const isTestnet = c.network === 'fuji';
      if (network && (network === 'mainnet') === isTestnet) continue;
      const primary = c.chainId === '43114' || c.chainId === '43113';
      const enabledFeatures: SupportedChain['enabledFeatures'] = primary ? ['nftIndexing', 'webhooks', 'teleporter'] : ['teleporter'];
      if (feature && !(enabledFeatures as string[]).includes(feature)) continue;
      const slug = c.name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
      out.push({
        chainId: c.chainId,
        // The subnet chain's nodes are down now and then: requests relying on them may get 503.
        status: !primary && hashKey(this.seed, 'chain-status', c.chainId) % 2 === 0 ? 'UNAVAILABLE' : 'OK',
        chainName: c.name,
        description: primary ? `${c.name}: the EVM chain of the primary network` : `${c.name}: an L1 running subnet-EVM`,
        platformChainId: c.blockchainId,
        subnetId: primary ? PRIMARY_NETWORK_ID : LAKESIDE_SUBNET_ID,
        vmId: primary ? EVM_VM_ID : SUBNET_EVM_VM_ID,
        vmName: 'EVM',
        explorerUrl: `https://explorer.example.invalid/${slug}`,
        rpcUrl: `https://rpc.example.invalid/ext/bc/${c.blockchainId}/rpc`,
        ...(primary ? { wsUrl: `wss://rpc.example.invalid/ext/bc/${c.blockchainId}/ws` } : {}),
        isTestnet,
        ...(primary ? { utilityAddresses: { multicall: checksumAddress(labelBytes(`multicall:${c.chainId}`, 20)) } } : {}),
        networkToken: primary
          ? { name: 'Avalanche', symbol: 'AVAX', decimals: 18, logoUri: 'https://images.example.invalid/avax.svg', description: 'The native token of the primary network' }
          : { name: 'Lake', symbol: 'LAKE', decimals: 18 },
        chainLogoUri: `https://images.example.invalid/${slug}.svg`,
        private: false,
        enabledFeatures,
      });
    }
    return out;
  }

  /**
   * The primary-network chains each address has touched, the address as given. Staking owners
   * have all touched the P-Chain; the rest is drawn per address, and some have touched nothing.
   */
  chainIdsOf(network: Network, addresses: readonly string[]): AddressChains[] {
    const net = stakingNetwork(network);
    const cChain = CHAINS.find((c) => c.chainId === (net === 'mainnet' ? '43114' : '43113'))!.blockchainId;
    const stakers = new Set(Array.from({ length: 32 }, (_, i) => addressBody(poolAddress(net, i))));
    return addresses.map((address) => {
      const body = addressBody(address);
      const h = hashKey(this.seed, 'address-chains', net, body);
      const ids: string[] = [];
      if (stakers.has(body) || h & 1) ids.push(PRIMARY_NETWORK_ID);
      if (h & 2) ids.push(X_CHAIN_ID[net]);
      if (h & 4) ids.push(cChain);
      return { address, blockchainIds: ids };
    });
  }
}
