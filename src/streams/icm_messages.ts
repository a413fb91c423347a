import type { Page } from '../decl/request.js';
import type { Column, ExtractContext, StreamDecl } from '../decl/stream.js';
import { isBlockchainId, isEvmAddress } from '../ids.js';
import { NETWORK_COLUMN, PRICE_KEYS } from './common.js';

/** Messages of one address (sent or received): the other endpoint, in the same item shape. */
const BY_ADDRESS = '/v1/icm/addresses/{address}/messages';

/** The address endpoint for a partition of `addresses`; the filtered listing otherwise. */
async function* icmPages(x: ExtractContext): AsyncGenerator<Page> {
  const address = x.partition.path.address;
  if (address === undefined) {
    yield* x.paginate({ startToken: x.startToken });
    return;
  }
  yield* x.paginate({ path: BY_ADDRESS.replace('{address}', encodeURIComponent(address)), endpoint: BY_ADDRESS, startToken: x.startToken });
}

const FILTERS = ['sourceBlockchainId', 'destinationBlockchainId', 'blockchainId', 'from', 'to'] as const;

/** A transaction of either side: hash, time, gas. */
function txColumns(side: 'source' | 'destination', path: string): Column[] {
  return [
    { name: `${side}_tx_hash`, type: 'varchar', from: `${path}.txHash`, doc: `hash of the ${side} transaction${side === 'source' ? ' (NULL where the source is not indexed)' : ' (NULL while pending)'}` },
    { name: `${side}_timestamp`, type: 'timestamptz', from: `${path}.timestamp`, doc: `time of the ${side} transaction (UTC)` },
    { name: `${side}_gas_spent`, type: 'amount', from: `${path}.gasSpent`, doc: `gas spent by the ${side} transaction` },
  ];
}

const receiptsOf = (m: Record<string, unknown>, field: string): unknown =>
  Array.isArray(m.receipts) ? m.receipts.map((r) => (r !== null && typeof r === 'object' ? (r as Record<string, unknown>)[field] : undefined)) : m.receipts;

export const icmMessages: StreamDecl = {
  table: 'icm_messages',
  doc: 'cross-chain (ICM / Teleporter) messages with their source and destination sides and status; by filters, or per address (`GET /v1/icm/addresses/{address}/messages`, 20 CU)',
  service: 'data',
  endpoint: '/v1/icm/messages',
  items: 'messages',
  extract: icmPages,
  weight: 20,
  // The reward's price is a Money value, a JSON number: kept as sent.
  exactNumbers: PRICE_KEYS,
  pageSize: { min: 1, max: 100, default: 100 },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    sourceBlockchainId: { kind: 'evm_chain_id', doc: 'only messages sent from this chain (cb58 blockchain id or EVM chain id)' },
    destinationBlockchainId: { kind: 'evm_chain_id', doc: 'only messages sent to this chain (cb58 blockchain id or EVM chain id)' },
    blockchainId: { kind: 'string', doc: 'only messages from or to this chain (cb58 blockchain id)' },
    from: { kind: 'string', doc: 'only messages sent by this EVM address' },
    to: { kind: 'string', doc: 'only messages to this EVM address' },
    addresses: { kind: 'evm_address[]', doc: 'instead of the filters: the messages each of these addresses sent or received, one partition each' },
  },
  check: (s) => {
    const out: Array<[string, string]> = [];
    if (s.blockchainId !== undefined && !isBlockchainId(s.blockchainId)) out.push(['blockchainId', `${JSON.stringify(s.blockchainId)} is not a blockchain id (cb58 of 32 bytes)`]);
    for (const k of ['from', 'to'] as const)
      if (s[k] !== undefined && !isEvmAddress(s[k])) out.push([k, `${JSON.stringify(s[k])} is not an EVM address (0x + 40 hex digits)`]);
    if (s.addresses !== undefined)
      for (const k of FILTERS) if (s[k] !== undefined) out.push([k, `icm_messages takes either addresses or the filters (${FILTERS.join(', ')}), not both: the address endpoint filters by nothing else`]);
    return out;
  },
  partitions: (s) => {
    const network = String(s.network);
    if (Array.isArray(s.addresses))
      return (s.addresses as string[]).map((address) => ({ id: `${network}/address=${address}`, path: { address }, query: { network }, values: { network } }));
    const q: Record<string, string> = {};
    for (const k of FILTERS) if (s[k] !== undefined) q[k] = k === 'from' || k === 'to' ? String(s[k]).toLowerCase() : String(s[k]);
    const id = [network, ...Object.keys(q).sort().map((k) => `${k}=${q[k]}`)].join('/');
    return [{ id, path: {}, query: { network, ...q }, values: { network } }];
  },
  refresh: 'merge',
  mergeScope: 'table',
  // Newest first by the message's time; a pending message holds the next run back to it until delivered.
  timeCursor: { column: 'message_timestamp', settled: (m) => m.status !== 'pending' },
  key: ['message_id'],
  knownFields: ['receipts'],
  keyDoc: 'a message is one row across every query and address that lists it; its row is updated as it moves from pending to delivered',
  columns: [
    NETWORK_COLUMN,
    { name: 'message_id', type: 'varchar', from: 'messageId', required: true, doc: 'Teleporter message id (hex)' },
    { name: 'status', type: 'varchar', from: 'status', required: true, doc: 'pending, delivered, or delivered_source_not_indexed (delivered; the service does not index the source chain)' },
    {
      name: 'message_timestamp', type: 'timestamptz', from: ['sourceTransaction.timestamp', 'destinationTransaction.timestamp'], required: true,
      doc: 'time the listing orders by: the source transaction, or the destination transaction where the source is not indexed (UTC)',
    },
    { name: 'source_blockchain_id', type: 'varchar', from: 'sourceBlockchainId', required: true, doc: 'source chain (cb58 blockchain id)' },
    { name: 'destination_blockchain_id', type: 'varchar', from: 'destinationBlockchainId', required: true, doc: 'destination chain (cb58 blockchain id)' },
    { name: 'source_evm_chain_id', type: 'varchar', from: 'sourceEvmChainId', doc: 'EVM chain id of the source chain' },
    { name: 'destination_evm_chain_id', type: 'varchar', from: 'destinationEvmChainId', doc: 'EVM chain id of the destination chain' },
    { name: 'icm_contract_address', type: 'evm_address', from: 'icmContractAddress', doc: 'TeleporterMessenger contract, lowercased' },
    { name: 'message_nonce', type: 'amount', from: 'messageNonce', doc: 'message nonce (uint256)' },
    { name: 'from_address', type: 'evm_address', from: 'from', doc: 'sender on the source chain, lowercased' },
    { name: 'to_address', type: 'evm_address', from: 'to', doc: 'recipient on the destination chain, lowercased' },
    { name: 'data', type: 'varchar', from: 'data', doc: 'message payload (hex)' },
    { name: 'message_executed', type: 'boolean', from: 'messageExecuted', doc: 'the recipient executed the message successfully' },
    { name: 'receipt_delivered', type: 'boolean', from: 'receiptDelivered', doc: "the message's receipt has been delivered back to the source chain" },
    { name: 'receipt_message_nonces', type: 'varchar[]', derive: (m) => receiptsOf(m, 'receivedMessageNonce'), doc: 'receipts the message carries: nonces of the messages received (uint256 digits)' },
    { name: 'receipt_relayer_reward_addresses', type: 'varchar[]', derive: (m) => receiptsOf(m, 'relayerRewardAddress'), doc: 'receipts the message carries: reward address of each relayer, in the order of receipt_message_nonces' },
    { name: 'fee_token_address', type: 'evm_address', from: 'rewardDetails.address', doc: 'token of the relayer fee, lowercased (the zero address: no fee)' },
    { name: 'fee_token_name', type: 'varchar', from: 'rewardDetails.name', doc: 'name of the fee token' },
    { name: 'fee_token_symbol', type: 'varchar', from: 'rewardDetails.symbol', doc: 'symbol of the fee token' },
    { name: 'fee_token_decimals', type: 'integer', from: 'rewardDetails.decimals', doc: 'decimals of the fee token' },
    { name: 'fee_token_logo_uri', type: 'varchar', from: 'rewardDetails.logoUri', doc: 'logo of the fee token' },
    { name: 'fee_token_erc_type', type: 'varchar', from: 'rewardDetails.ercType', doc: 'standard of the fee token (ERC-20)' },
    { name: 'fee_amount', type: 'amount', from: 'rewardDetails.value', units: 'fee_token_decimals', doc: 'relayer fee in the smallest unit of the fee token' },
    { name: 'fee_price_currency', type: 'varchar', from: 'rewardDetails.price.currencyCode', doc: 'currency of fee_price' },
    { name: 'fee_price', type: 'varchar', from: 'rewardDetails.price.value', doc: 'price of one fee token (exact text as sent)' },
    ...txColumns('source', 'sourceTransaction'),
    ...txColumns('destination', 'destinationTransaction'),
    { name: 'destination_reward_redeemer', type: 'evm_address', from: 'destinationTransaction.rewardRedeemer', doc: 'address that may redeem the relayer fee, lowercased' },
    { name: 'destination_deliverer_address', type: 'evm_address', from: 'destinationTransaction.delivererAddress', doc: 'relayer that delivered the message, lowercased' },
  ],
};
