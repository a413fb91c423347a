// The blocks of the P-, X- and C-Chain by time (listLatestPrimaryNetworkBlocks): one shape, the
// PrimaryNetworkBlock, so one declaration over the chain; the X- and C-Chain's blocks leave the
// P-Chain's own fields (supply, L1 validator fees, proposer) NULL.
import type { StreamDecl } from '../decl/stream.js';
import { NETWORK_COLUMN, timeRangeCheck, timeRangeQuery } from './common.js';
import { TX_TIME_CURSOR, TX_TIME_OPTIONS } from './platform_reads.js';

interface BlockChain {
  blockchainId: 'p-chain' | 'x-chain' | 'c-chain';
  table: string;
  doc: string;
  /** how the chain writes a block id */
  hash: string;
  /** the table of the chain's transactions, that tx_hashes name */
  transactions: string;
}

function chainBlocks(c: BlockChain): StreamDecl {
  return {
    table: c.table,
    doc: c.doc,
    service: 'data',
    endpoint: '/v1/networks/{network}/blockchains/{blockchainId}/blocks',
    items: 'blocks',
    weight: 20,
    pageSize: { min: 1, max: 100, default: 100 },
    options: {
      network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
      startTimestamp: {
        kind: 'unix_seconds', required: true,
        doc: 'blocks at or after it (inclusive; the first run; later runs start from the newest committed block); required, as the chain has millions',
      },
      endTimestamp: { kind: 'unix_seconds', doc: 'blocks before it (exclusive): a block at or after it is never committed' },
      chunks: TX_TIME_OPTIONS.chunks!,
    },
    check: timeRangeCheck,
    partitions: (s) => {
      const network = String(s.network);
      const query = timeRangeQuery(s);
      return [{ id: network, path: { network, blockchainId: c.blockchainId }, query, values: { network } }];
    },
    refresh: 'merge',
    mergeScope: 'partition',
    // As the transaction listings: a backfill of more than a week is fetched as time ranges at once.
    timeCursor: TX_TIME_CURSOR,
    exactNumbers: ['l1ValidatorsAccruedFees'],
    key: ['network', 'block_number'],
    keyDoc: 'network included, as fuji and testnet name the same network',
    columns: [
      NETWORK_COLUMN,
      { name: 'block_number', type: 'bigint', from: 'blockNumber', required: true, doc: 'height' },
      { name: 'block_hash', type: 'varchar', from: 'blockHash', required: true, doc: `block id (${c.hash})` },
      { name: 'parent_hash', type: 'varchar', from: 'parentHash', doc: 'parent block id' },
      { name: 'block_timestamp', type: 'timestamptz', from: 'blockTimestamp', required: true, doc: 'block time (UTC)' },
      { name: 'block_type', type: 'varchar', from: 'blockType', doc: 'BanffStandardBlock, BanffProposalBlock, BanffCommitBlock, ... (the X-Chain: StandardBlock)' },
      { name: 'tx_count', type: 'integer', from: 'txCount', doc: 'transactions in the block' },
      { name: 'tx_hashes', type: 'varchar[]', from: 'transactions', doc: `their ids (${c.transactions}.tx_hash)` },
      { name: 'block_size_bytes', type: 'bigint', from: 'blockSizeBytes', doc: 'size in bytes' },
      { name: 'l1_validators_accrued_fees', type: 'amount', from: 'l1ValidatorsAccruedFees', units: 9, doc: 'continuous fees L1 validators have paid so far, in nAVAX' },
      { name: 'active_l1_validators', type: 'integer', from: 'activeL1Validators', doc: 'L1 validators active' },
      { name: 'current_supply', type: 'amount', from: 'currentSupply', units: 9, doc: 'AVAX supply after the block, in nAVAX' },
      { name: 'proposer_id', type: 'varchar', from: 'proposerDetails.proposerId', doc: 'the proposer VM\'s block id (standard and proposal blocks)' },
      { name: 'proposer_parent_id', type: 'varchar', from: 'proposerDetails.proposerParentId', doc: 'its parent' },
      { name: 'proposer_node_id', type: 'varchar', from: 'proposerDetails.proposerNodeId', doc: 'the node that proposed it' },
      { name: 'proposer_p_chain_height', type: 'bigint', from: 'proposerDetails.proposerPChainHeight', doc: 'P-Chain height the proposer built on' },
      { name: 'proposer_timestamp', type: 'timestamptz', from: 'proposerDetails.proposerTimestamp', doc: 'the proposer\'s time (UTC)' },
    ],
  };
}

export const platformBlocks = chainBlocks({
  blockchainId: 'p-chain',
  table: 'platform_blocks',
  doc: 'blocks of the platform chain (P-Chain) by time: type, transactions, size, supply, L1 validator fees, proposer',
  transactions: 'platform_transactions',
  hash: 'cb58',
});

// issue 40, the primary network and the X-Chain
export const xchainBlocks = chainBlocks({
  blockchainId: 'x-chain',
  table: 'xchain_blocks',
  doc: 'blocks of the X-Chain since Cortina (linear) by time: transactions, size (the P-Chain\'s own columns NULL)',
  transactions: 'xchain_transactions',
  hash: 'cb58',
});

// issue 40, the C-Chain's side of the primary network
export const cchainBlocks = chainBlocks({
  blockchainId: 'c-chain',
  table: 'cchain_blocks',
  doc: 'blocks of the C-Chain as the primary network listing has them, by time: its atomic transactions (the P-Chain\'s own columns NULL; the EVM side is blocks\')',
  transactions: 'cchain_atomic_transactions',
  hash: '0x hex, as blocks.block_hash',
});
