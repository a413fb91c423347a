// The registry: adding a stream is adding its declaration here.
import type { StreamDecl } from '../decl/stream.js';
import { UsageError } from '../errors.js';
import { didYouMean } from '../closest.js';
import { ercTransfers } from './erc_transfers.js';
import { internalTransactions } from './internal_transactions.js';
import { historicalRewards } from './historical_rewards.js';
import { pendingRewards } from './pending_rewards.js';
import { delegators } from './delegators.js';
import { chainMetrics } from './chain_metrics.js';
import { avgTps } from './avg_tps.js';
import { blocks } from './blocks.js';
import { blockTransactions } from './block_transactions.js';
import { nativeBalances } from './native_balances.js';
import { erc20Balances } from './erc20_balances.js';
import { subnets } from './subnets.js';
import { blockchains } from './blockchains.js';
import { contracts } from './contracts.js';
import { addressChains } from './address_chains.js';
import { chains } from './chains.js';
import { nodeInfo } from './node_info.js';
import { nodePeers } from './node_peers.js';
import { nodeUptime } from './node_uptime.js';
import { healthChecks } from './health_checks.js';
import { subnetValidators } from './subnet_validators.js';
import { feeConfig } from './fee_config.js';
import { chainConfig } from './chain_config.js';
import { activeRules } from './active_rules.js';
import { xvmBlocks } from './xvm_blocks.js';
import { xvmTransactions } from './xvm_transactions.js';
import { xvmInputs } from './xvm_inputs.js';
import { xvmOutputs } from './xvm_outputs.js';
import { assets } from './assets.js';
import { utxos } from './utxos.js';
import { chainAliases } from './chain_aliases.js';
import { loggerLevels } from './logger_levels.js';
import { addressTransactions } from './address_transactions.js';
import { erc721Balances } from './erc721_balances.js';
import { erc1155Balances } from './erc1155_balances.js';
import { contractDeployments } from './contract_deployments.js';
import { icmMessages } from './icm_messages.js';
import { avaxSupply } from './avax_supply.js';
import { icmMetrics } from './icm_metrics.js';
import { validators } from './validators.js';
import { l1Validators } from './l1_validators.js';
import { stakingMetrics } from './staking_metrics.js';
import { platformTransactions } from './platform_transactions.js';
import { platformInputs } from './platform_inputs.js';
import { platformOutputs } from './platform_outputs.js';
import { platformBlocks } from './platform_blocks.js';
import { l1ValidatorMetrics } from './l1_validator_metrics.js';
import { addressTokenTransfers } from './address_token_transfers.js';
import { platformBalances } from './platform_balances.js';
import { platformUtxos } from './platform_utxos.js';
import { xchainTransactions } from './xchain_transactions.js';
import { xchainInputs } from './xchain_inputs.js';
import { xchainOutputs } from './xchain_outputs.js';
import { cchainAtomicTransactions } from './cchain_atomic_transactions.js';
import { cchainAtomicUtxos } from './cchain_atomic_utxos.js';
import { stakingTransactions } from './staking_transactions.js';
import { nodeBlocks } from './node_blocks.js';
import { apiUsageMetrics } from './api_usage_metrics.js';
import { apiLogs } from './api_logs.js';
import { addressTxTransfers } from './address_tx_transfers.js';
import { addressTxInternals } from './address_tx_internals.js';
import { collectibleBalances } from './collectible_balances.js';
// issue 40, the primary network and the X-Chain
import { networkDetails } from './network_details.js';
import { cchainBalances, xchainBalances } from './platform_balances.js';
import { cchainUtxos, xchainUtxos } from './xchain_utxos.js';
import { xchainAssetTransactions } from './xchain_asset_transactions.js';
import { cchainBlocks, xchainBlocks } from './platform_blocks.js';
import { xchainVertices } from './xchain_vertices.js';
// Issue 40, EVM and metrics side.
import { metricsChains } from './metrics_chains.js';
import { chainRollingMetrics } from './chain_rolling_metrics.js';
import { icmSummary } from './icm_summary.js';
import { l1ValidatorAddresses } from './l1_validator_addresses.js';
import { btcbBridgers } from './btcb_bridgers.js';
import { addressEvmChains } from './address_evm_chains.js';
import { nftTokens } from './nft_tokens.js';
import { addressTransactionsV2 } from './address_transactions_v2.js';
import { addressLastActivity } from './address_last_activity.js';
import { primaryRpcUsageMetrics, subnetRpcUsageMetrics } from './rpc_usage_metrics.js';

export const STREAMS: readonly StreamDecl[] = [
  ercTransfers,
  internalTransactions,
  historicalRewards,
  pendingRewards,
  delegators,
  chainMetrics,
  avgTps,
  blocks,
  blockTransactions,
  nativeBalances,
  erc20Balances,
  subnets,
  blockchains,
  contracts,
  addressChains,
  chains,
  nodeInfo,
  nodePeers,
  nodeUptime,
  healthChecks,
  subnetValidators,
  feeConfig,
  chainConfig,
  activeRules,
  xvmBlocks,
  xvmTransactions,
  xvmInputs,
  xvmOutputs,
  assets,
  utxos,
  chainAliases,
  loggerLevels,
  addressTransactions,
  erc721Balances,
  erc1155Balances,
  contractDeployments,
  icmMessages,
  avaxSupply,
  icmMetrics,
  validators,
  l1Validators,
  stakingMetrics,
  platformTransactions,
  platformInputs,
  platformOutputs,
  platformBlocks,
  stakingTransactions,
  nodeBlocks,
  l1ValidatorMetrics,
  addressTokenTransfers,
  platformBalances,
  platformUtxos,
  apiUsageMetrics,
  apiLogs,
  addressTxTransfers,
  addressTxInternals,
  collectibleBalances,
  xchainTransactions,
  xchainInputs,
  xchainOutputs,
  cchainAtomicTransactions,
  cchainAtomicUtxos,
  // issue 40, the primary network and the X-Chain
  networkDetails,
  xchainBalances,
  xchainUtxos,
  cchainBalances,
  cchainUtxos,
  cchainBlocks,
  xchainAssetTransactions,
  xchainBlocks,
  xchainVertices,
  // Issue 40, EVM and metrics side.
  metricsChains,
  chainRollingMetrics,
  icmSummary,
  l1ValidatorAddresses,
  btcbBridgers,
  addressEvmChains,
  nftTokens,
  addressTransactionsV2,
  addressLastActivity,
  subnetRpcUsageMetrics,
  primaryRpcUsageMetrics,
];

export const STREAM_BY_TABLE: ReadonlyMap<string, StreamDecl> = new Map(STREAMS.map((s) => [s.table, s]));

/** The declaration of a table named on the command line; `command` names who asks, for the message. */
export function streamOf(command: string, table: string): StreamDecl {
  const decl = STREAM_BY_TABLE.get(table);
  if (!decl) {
    const names = STREAMS.map((s) => s.table);
    const guess = didYouMean(table, names);
    throw new UsageError(`${command}: ${JSON.stringify(table)} is not a table${guess || ` (${names.join(', ')})`} (\`chainlake tables\` lists them)`);
  }
  return decl;
}
