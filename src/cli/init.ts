// `chainlake init [file]`: writes a commented starter pipeline for the common first questions (a
// token's transfers, an address's activity, a validator's rewards, chain metrics). Its ids are
// the simulator world's (as pipelines/demo.yaml's), so that `run <file> --simulator` answers
// before any id is changed; the comments say what to put in their place for the production services.
import { existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { commandOf, type ArgsOf, type Globals } from './args.js';

export const DEFAULT_PIPELINE = 'pipelines/my.yaml';

/** The starter pipeline named `name` (letters, digits, `_ . -`), saved at `file`. */
export function starterPipeline(name: string, file: string): string {
  return `# A starter pipeline, written by \`chainlake init\`. Every id in it exists in the world of the
# embedded simulator, so it runs as it is:
#
#   npx chainlake run ${file} --simulator --lake data/${name} --dry-run   # what a run would fetch; sends nothing
#   npx chainlake run ${file} --simulator --lake data/${name}             # into a lake of its own
#   npx chainlake query --lake data/${name} "SELECT to_address, sum(value_units) AS received FROM erc_transfers GROUP BY 1 ORDER BY 2 DESC LIMIT 5"
#   npx chainlake report --lake data/${name}                              # charts of the lake in one HTML file
#
# For the production services: drop --simulator and put your own ids where a comment says
# "production:". Every id is checked before any request (a wrong one exits 2, naming where it is),
# and \`--dry-run\` shows what a run would fetch and how long it would take. A rerun resumes where
# the last one stopped. Every table and its keys: \`chainlake tables\` (docs/tables.md).
name: ${name}
# lake: data/${name}-lake             # where run lands this pipeline (default data/lake; --lake wins)
sources:
  # The data service (https://glacier-api.avax.network unless a url is given). The key is optional
  # and read from the environment, never written here: export CHAINLAKE_API_KEY=...
  data:
    apiKey: "\${CHAINLAKE_API_KEY}"
  # The metrics service (https://metrics.avax.network) needs no key or setting.
streams:
  # A token's transfers, one partition per contract, appended block by block.
  - table: erc_transfers
    chainId: "43114"                                          # the C-Chain
    contracts:
      # production: your token's contract, e.g. USDC 0xB97EF9Ef8734C71904D8002F8b6BC66Dd9c48a6E
      - "0xb10644cea485f69a5F8859e127911157A0d6D30d"           # the simulator's ERC-20 token
    # October 2025: dates (or UTC date-times, or Unix seconds) become the first block at or after
    # each, found once through the data service and remembered in the lake; the start is included,
    # the end excluded. Leave endTimestamp out to follow the chain: later runs go on from the newest
    # block landed. production: the days you want (a token's whole history may be millions of rows).
    startTimestamp: 2025-10-01
    endTimestamp: 2025-11-01

  # An address's activity: its native transactions and its token transfers (sent or received)
  # from a block on, and a snapshot of its ERC-20 balances each run.
  - table: address_transactions
    chainId: "43114"
    addresses: ["0x319646172ef34adDbBa180d4A2c86B3b4A06907d"]   # production: your address (0x + 40 hex)
    startTimestamp: 2025-09-25                                # production: a recent day
  - table: address_token_transfers
    chainId: "43114"
    addresses: ["0xDC05Caae3AD0d9055A0094d7aa21d877960390A9"]   # production: your address
    startTimestamp: 2025-09-25                                # production: a recent day
  - table: erc20_balances
    chainId: "43114"
    addresses: ["0x319646172ef34adDbBa180d4A2c86B3b4A06907d"]   # production: your address

  # A validator's rewards: those paid, those still to be paid (estimates) and its delegations.
  - table: historical_rewards
    network: mainnet                                          # or fuji
    nodeIds: ["NodeID-yogU5xQ61x9UAPr6tzhRwrU389jx6Rqd"]         # production: your NodeID-...
  - table: pending_rewards
    network: mainnet
    nodeIds: ["NodeID-yogU5xQ61x9UAPr6tzhRwrU389jx6Rqd"]         # production: your NodeID-...
  - table: delegators
    network: mainnet
    nodeIds: ["NodeID-yogU5xQ61x9UAPr6tzhRwrU389jx6Rqd"]         # production: your NodeID-...

  # Chain metrics: daily transactions and active addresses of the C-Chain and of all chains
  # together ("total"), from 2025-10-01; later runs go on from the newest point.
  - table: chain_metrics
    chainIds: ["43114", "total"]
    metrics: [txCount, activeAddresses]
    timeInterval: day
    startTimestamp: 2025-10-01
`;
}

/** The pipeline's name from its file's (`my.yaml`: my), or `my` where the file's is not a name. */
function nameOf(file: string): string {
  const name = basename(file, extname(file));
  return /^[A-Za-z0-9_.-]+$/.test(name) ? name : 'my';
}

const initFlags = (y: Argv<Globals>) =>
  y
    .positional('file', { type: 'string', default: DEFAULT_PIPELINE, describe: 'where to write the pipeline' })
    .option('force', { type: 'boolean', describe: 'overwrite the file if it exists' });

function cmdInit(a: ArgsOf<typeof initFlags>): number {
  const file = a.file;
  // The name is quoted in the file's comments, where a line break would end one.
  if (/[\x00-\x1f\x7f]/.test(file)) throw new UsageError(`${JSON.stringify(file)}: a file name with a control character`);
  if (existsSync(file) && statSync(file).isDirectory()) throw new UsageError(`${file}: is a folder; give a file name (e.g. ${join(file, 'my.yaml')})`);
  if (existsSync(file) && !a.force) throw new UsageError(`${file}: exists; give --force to overwrite it, or another file name`);
  let folder = dirname(file);
  while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder);
  if (!statSync(folder).isDirectory()) throw new UsageError(`${file}: ${folder} is a file, not a folder`);
  // Written whole or not at all: a file cut short would be a pipeline of fewer streams.
  const tmp = join(dirname(file), `.${basename(file)}.tmp-${process.pid}`);
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(tmp, starterPipeline(nameOf(file), file));
    renameSync(tmp, file);
  } catch (err) {
    if (existsSync(tmp)) rmSync(tmp);
    // No permission, a read-only disk: the message without the temporary file's name.
    if ((err as NodeJS.ErrnoException).code) throw new UsageError(`${file}: cannot write it (${(err as Error).message.split(',')[0]})`);
    throw err;
  }
  // A lake of its own: the default one (data/lake) holds the demo's rows after `make demo`.
  process.stdout.write(`wrote ${file}: a starter pipeline (a token's transfers, an address's activity, a validator's rewards, chain metrics)\nnext: chainlake run ${file} --simulator --lake data/${nameOf(file)}\n`);
  return 0;
}

export const initCommand = commandOf('init [file]', `write a commented starter pipeline (default ${DEFAULT_PIPELINE}) that runs on the simulator as it is`, initFlags, cmdInit);
