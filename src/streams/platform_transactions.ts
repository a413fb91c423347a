import type { StreamDecl } from '../decl/stream.js';
import { NETWORK_COLUMN } from './common.js';
import { PLATFORM_TX_STREAM, avaxOf, utxoOwners } from './platform_reads.js';

type Item = Record<string, unknown>;

const count = (v: unknown) => (Array.isArray(v) ? v.length : undefined);

export const platformTransactions: StreamDecl = {
  table: 'platform_transactions',
  doc: 'transactions of the platform chain (P-Chain) by address or L1 validation, by time: amounts in nAVAX, staking and L1 fields as columns',
  ...PLATFORM_TX_STREAM,
  key: ['network', 'tx_hash'],
  keyDoc: 'network included, as fuji and testnet name the same network',
  knownFields: ['value', 'amountBurned', 'amountStaked', 'amountL1ValidatorBalanceBurned', 'consumedUtxos', 'emittedUtxos'],
  columns: [
    NETWORK_COLUMN,
    { name: 'tx_hash', type: 'varchar', from: 'txHash', required: true, doc: 'transaction id (cb58)' },
    { name: 'tx_type', type: 'varchar', from: 'txType', required: true, doc: 'AddPermissionlessDelegatorTx, ImportTx, RewardValidatorTx, ...' },
    { name: 'block_number', type: 'bigint', from: 'blockNumber', required: true, doc: 'height of its block' },
    { name: 'block_timestamp', type: 'timestamptz', from: 'blockTimestamp', required: true, doc: 'time of its block (UTC)' },
    { name: 'block_hash', type: 'varchar', from: 'blockHash', doc: 'its block' },
    { name: 'value', type: 'amount', derive: avaxOf('value'), units: 9, doc: 'nAVAX of the UTXOs it emits' },
    { name: 'amount_burned', type: 'amount', derive: avaxOf('amountBurned'), units: 9, doc: 'nAVAX burned (the fee)' },
    { name: 'amount_staked', type: 'amount', derive: avaxOf('amountStaked'), units: 9, doc: 'nAVAX staked (validations and delegations)' },
    { name: 'amount_l1_validator_balance_burned', type: 'amount', derive: avaxOf('amountL1ValidatorBalanceBurned'), units: 9, doc: 'nAVAX moved into L1 validator balances (pays their continuous fee)' },
    { name: 'addresses', type: 'varchar[]', derive: utxoOwners, doc: 'owners of the UTXOs it consumes and emits, once each, sorted (bech32 as sent)' },
    { name: 'input_count', type: 'integer', derive: (t) => count(t.consumedUtxos), doc: 'UTXOs it consumes (rows of platform_inputs)' },
    { name: 'output_count', type: 'integer', derive: (t) => count(t.emittedUtxos), doc: 'UTXOs it emits (rows of platform_outputs)' },
    { name: 'source_chain', type: 'varchar', from: 'sourceChain', doc: 'imports: the chain the funds come from' },
    { name: 'destination_chain', type: 'varchar', from: 'destinationChain', doc: 'exports: the chain the funds go to' },
    { name: 'node_id', type: 'varchar', from: 'nodeId', doc: 'staking and subnet-validator transactions: the validator' },
    { name: 'subnet_id', type: 'varchar', from: 'subnetId', doc: 'the subnet it concerns (the primary network: 111...LpoYY)' },
    { name: 'start_timestamp', type: 'timestamptz', from: 'startTimestamp', doc: 'staking: start of the validation or delegation' },
    { name: 'end_timestamp', type: 'timestamptz', from: 'endTimestamp', doc: 'staking: its end' },
    { name: 'delegation_fee_percent', type: 'varchar', from: 'delegationFeePercent', doc: 'validations: the fee taken of delegators\' rewards, in percent (text as sent)' },
    { name: 'estimated_reward', type: 'amount', from: 'estimatedReward', units: 9, doc: 'staking: the reward expected, in nAVAX' },
    { name: 'reward_addresses', type: 'varchar[]', from: 'rewardAddresses', doc: 'staking: where rewards go' },
    { name: 'reward_tx_hash', type: 'varchar', from: 'rewardTxHash', doc: 'staking: the RewardValidatorTx that ended it' },
    { name: 'staking_tx_hash', type: 'varchar', from: 'stakingTxHash', doc: 'RewardValidatorTx: the staking transaction it rewards' },
    { name: 'memo', type: 'varchar', from: 'memo', doc: 'memo (hex)' },
    {
      name: 'l1_validation_ids',
      type: 'varchar[]',
      derive: (t) => (Array.isArray(t.l1ValidatorDetails) ? (t.l1ValidatorDetails as Item[]).map((d) => d?.validationId) : undefined),
      doc: 'L1 transactions: the validations registered or changed',
    },
    { name: 'l1_validator_details', type: 'json', from: 'l1ValidatorDetails', doc: 'L1 transactions: each validation as of the transaction (node, subnet, weight, balances; uint64 digits exact)' },
    { name: 'l1_validator_manager_blockchain_id', type: 'varchar', from: 'l1ValidatorManagerDetails.blockchainId', doc: 'ConvertSubnetToL1Tx: blockchain of the validator manager contract' },
    { name: 'l1_validator_manager_address', type: 'evm_address', from: 'l1ValidatorManagerDetails.contractAddress', doc: 'ConvertSubnetToL1Tx: the validator manager contract, lowercased' },
    { name: 'subnet_owner_addresses', type: 'varchar[]', from: 'subnetOwnershipInfo.addresses', doc: 'CreateSubnetTx, TransferSubnetOwnershipTx: the owners' },
    { name: 'subnet_owner_threshold', type: 'integer', from: 'subnetOwnershipInfo.threshold', doc: 'signatures of the owners required' },
    { name: 'subnet_owner_locktime', type: 'ubigint', from: 'subnetOwnershipInfo.locktime', doc: 'time after which the owners may act (Unix seconds, uint64)' },
    { name: 'bls_public_key', type: 'varchar', from: 'blsCredentials.publicKey', doc: 'AddPermissionlessValidatorTx: BLS public key (hex)' },
    { name: 'bls_proof_of_possession', type: 'varchar', from: 'blsCredentials.proofOfPossession', doc: 'its proof of possession (hex)' },
    { name: 'blockchain_name', type: 'varchar', from: 'blockchainInfo.chainName', doc: 'CreateChainTx: the new chain\'s name' },
    { name: 'vm_id', type: 'varchar', from: 'blockchainInfo.vmId', doc: 'CreateChainTx: its virtual machine' },
    { name: 'blockchain_info', type: 'json', from: 'blockchainInfo', doc: 'CreateChainTx: name, VM and genesis whole' },
  ],
};
