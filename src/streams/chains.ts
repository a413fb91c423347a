import type { StreamDecl } from '../decl/stream.js';

export const API_FEATURES = ['nftIndexing', 'webhooks', 'teleporter'] as const;

export const chains: StreamDecl = {
  table: 'chains',
  doc: 'the chains the data service supports',
  service: 'data',
  endpoint: '/v1/chains',
  items: 'chains',
  weight: 1,
  pageSize: { min: 0, max: 0, default: 0 },
  options: {
    network: { kind: 'network', doc: 'only mainnet chains, or only test chains (fuji, testnet); default all' },
    feature: { kind: 'enum', values: API_FEATURES, doc: 'only chains with this feature enabled' },
  },
  partitions: (s) => {
    const query: Record<string, string> = {};
    if (s.network !== undefined) query.network = String(s.network);
    if (s.feature !== undefined) query.feature = String(s.feature);
    const id = Object.entries(query).map(([k, v]) => `${k}=${v}`).join('/') || 'all';
    return [{ id, path: {}, query, values: {} }];
  },
  refresh: 'merge',
  mergeScope: 'table',
  key: ['chain_id'],
  columns: [
    { name: 'chain_id', type: 'varchar', from: 'chainId', required: true, doc: 'EVM chain id' },
    { name: 'status', type: 'varchar', from: 'status', doc: 'OK or UNAVAILABLE (requests needing its nodes may get 503)' },
    { name: 'chain_name', type: 'varchar', from: 'chainName', doc: 'name' },
    { name: 'description', type: 'varchar', from: 'description', doc: 'description' },
    { name: 'platform_chain_id', type: 'varchar', from: 'platformChainId', doc: 'blockchain id (cb58)' },
    { name: 'subnet_id', type: 'varchar', from: 'subnetId', doc: 'its subnet' },
    { name: 'vm_id', type: 'varchar', from: 'vmId', doc: 'virtual machine id' },
    { name: 'vm_name', type: 'varchar', from: 'vmName', doc: 'EVM, BITCOIN or ETHEREUM' },
    { name: 'explorer_url', type: 'varchar', from: 'explorerUrl', doc: 'block explorer' },
    { name: 'rpc_url', type: 'varchar', from: 'rpcUrl', doc: 'JSON-RPC endpoint' },
    { name: 'ws_url', type: 'varchar', from: 'wsUrl', doc: 'websocket endpoint' },
    { name: 'is_testnet', type: 'boolean', from: 'isTestnet', doc: 'a test chain' },
    { name: 'multicall_address', type: 'evm_address', from: 'utilityAddresses.multicall', doc: 'multicall contract, lowercased' },
    { name: 'network_token_name', type: 'varchar', from: 'networkToken.name', doc: 'native token name' },
    { name: 'network_token_symbol', type: 'varchar', from: 'networkToken.symbol', doc: 'native token symbol' },
    { name: 'network_token_decimals', type: 'integer', from: 'networkToken.decimals', doc: 'native token decimals' },
    { name: 'network_token_logo_uri', type: 'varchar', from: 'networkToken.logoUri', doc: 'native token logo' },
    { name: 'network_token_description', type: 'varchar', from: 'networkToken.description', doc: 'native token description' },
    { name: 'chain_logo_uri', type: 'varchar', from: 'chainLogoUri', doc: 'chain logo' },
    { name: 'private', type: 'boolean', from: 'private', doc: 'a private chain' },
    { name: 'enabled_features', type: 'varchar[]', from: 'enabledFeatures', doc: 'nftIndexing, webhooks, teleporter' },
  ],
};
