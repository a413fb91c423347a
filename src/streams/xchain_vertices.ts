// The X-Chain's vertices (listLatestXChainVertices): the DAG the X-Chain ran on before Cortina
// linearized it (2023), newest first. The set no longer grows, so each run lists it whole and merges
// by vertex: a rerun adds nothing.
import type { StreamDecl } from '../decl/stream.js';
import { NETWORK_COLUMN } from './common.js';

export const xchainVertices: StreamDecl = {
  table: 'xchain_vertices',
  doc: 'the X-Chain\'s vertices before Cortina (its DAG): height, index, parents, transactions, size, one row per vertex',
  service: 'data',
  endpoint: '/v1/networks/{network}/blockchains/{blockchainId}/vertices',
  items: 'vertices',
  weight: 20,
  pageSize: { min: 1, max: 100, default: 100 },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet (the whole DAG is listed: mainnet\'s is large)' },
  },
  partitions: (s) => {
    const network = String(s.network);
    return [{ id: network, path: { network, blockchainId: 'x-chain' }, query: {}, values: { network } }];
  },
  refresh: 'merge',
  mergeScope: 'partition',
  key: ['network', 'vertex_hash'],
  keyDoc: 'network included, as fuji and testnet name the same network',
  columns: [
    NETWORK_COLUMN,
    { name: 'vertex_hash', type: 'varchar', from: 'vertexHash', required: true, doc: 'vertex id (cb58)' },
    { name: 'vertex_height', type: 'bigint', from: 'vertexHeight', required: true, doc: 'its height in the DAG' },
    { name: 'vertex_index', type: 'bigint', from: 'vertexIndex', required: true, doc: 'its place in the order the chain accepted vertices' },
    { name: 'vertex_timestamp', type: 'timestamptz', from: 'vertexTimestamp', required: true, doc: 'when it was accepted (UTC)' },
    { name: 'parent_hashes', type: 'varchar[]', from: 'parentHashes', required: true, doc: 'the vertices it builds on (of the height below)' },
    { name: 'tx_count', type: 'integer', from: 'txCount', required: true, doc: 'transactions in it' },
    { name: 'tx_hashes', type: 'varchar[]', from: 'transactions', required: true, doc: 'their ids' },
    { name: 'vertex_size_bytes', type: 'bigint', from: 'vertexSizeBytes', doc: 'size in bytes' },
  ],
};
