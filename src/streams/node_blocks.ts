// The P-Chain blocks a node proposed, as the data service lists them by NodeID. The items are the
// chain's blocks (platform_blocks' columns); this is a table of its own because a block listed here
// is also a row of platform_blocks' chain-wide partition, and platform_blocks merges by partition:
// in one table the same (network, block_number) would be two rows.
import type { Column, StreamDecl } from '../decl/stream.js';
import { timeRangeCheck, timeRangeQuery } from './common.js';
import { platformBlocks } from './platform_blocks.js';

const NODE_COLUMN: Column = { name: 'node_id', type: 'varchar', partition: 'nodeId', doc: 'the node whose proposed blocks these are (proposer_node_id of each)' };

export const nodeBlocks: StreamDecl = {
  table: 'node_blocks',
  doc: 'blocks of the platform chain (P-Chain) a node proposed, by time: platform_blocks\' columns, per node',
  service: 'data',
  endpoint: '/v1/networks/{network}/blockchains/{blockchainId}/nodes/{nodeId}/blocks',
  items: 'blocks',
  weight: 20,
  pageSize: { min: 1, max: 100, default: 100 },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    nodeIds: { kind: 'node_id[]', required: true, doc: 'nodes whose proposed blocks to list; one partition each' },
    startTimestamp: {
      kind: 'unix_seconds', required: true,
      doc: 'blocks at or after it (inclusive; the first run; later runs start from the newest committed block); required, as a large validator has proposed hundreds of thousands',
    },
    endTimestamp: { kind: 'unix_seconds', doc: 'blocks before it (exclusive): a block at or after it is never committed' },
    chunks: platformBlocks.options.chunks!,
  },
  check: timeRangeCheck,
  partitions: (s) => {
    const network = String(s.network);
    const query = timeRangeQuery(s);
    return (s.nodeIds as string[]).map((nodeId) => ({
      id: `${network}/nodeId=${nodeId}`, path: { network, blockchainId: 'p-chain', nodeId }, query, values: { network, nodeId },
    }));
  },
  refresh: 'merge',
  mergeScope: 'partition',
  timeCursor: platformBlocks.timeCursor!,
  exactNumbers: platformBlocks.exactNumbers!,
  key: ['network', 'node_id', 'block_number'],
  keyDoc: 'node_id included: a partition holds its node\'s blocks alone, whatever another node\'s listing says',
  columns: [platformBlocks.columns[0]!, NODE_COLUMN, ...platformBlocks.columns.slice(1)],
};
