import type { Page } from '../decl/request.js';
import { RunError } from '../errors.js';
import type { ExtractContext, StreamDecl } from '../decl/stream.js';
import { ADMIN, NODE_SNAPSHOT, NODE_SNAPSHOT_COLUMNS, SNAPSHOT_KEY_DOC, adminCall, fields, nodePartition, nodeSnapshot, stamped } from './node_reads.js';

async function* levelsPage(x: ExtractContext): AsyncGenerator<Page> {
  const snap = nodeSnapshot(x);
  const loggerName = x.config.loggerName as string | undefined;
  const r = fields(await adminCall(x, 'admin.getLoggerLevel', loggerName === undefined ? {} : { loggerName }), 'admin.getLoggerLevel');
  const levels = r.loggerLevels;
  if (levels === null || typeof levels !== 'object' || Array.isArray(levels)) throw new RunError('admin.getLoggerLevel: loggerLevels is not a map of logger name to levels');
  yield { items: stamped(Object.entries(levels).map(([name, l]) => (l !== null && typeof l === 'object' ? { ...l, name } : { name, levels: l })), snap) };
}

export const loggerLevels: StreamDecl = {
  table: 'logger_levels',
  doc: "the log and display level of each of the node's loggers (admin.getLoggerLevel; the admin API is off unless the node enables it, and a node without it is skipped with the reason in the run report), one row per logger per snapshot",
  ...NODE_SNAPSHOT,
  endpoint: ADMIN,
  methods: ['admin.getLoggerLevel'],
  items: 'loggerLevels',
  extract: levelsPage,
  options: {
    loggerName: { kind: 'string', doc: 'only this logger (default all: the main logger, one per chain by alias, http, ...)' },
  },
  partitions: () => nodePartition('loggers'),
  key: ['node_url', 'snapshot_at', 'logger_name'],
  keyDoc: SNAPSHOT_KEY_DOC,
  knownFields: ['levels'],
  columns: [
    ...NODE_SNAPSHOT_COLUMNS,
    { name: 'logger_name', type: 'varchar', from: 'name', required: true, doc: 'the logger' },
    { name: 'log_level', type: 'varchar', from: 'logLevel', required: true, doc: 'level written to its log file (OFF, FATAL, ERROR, WARN, INFO, TRACE, DEBUG, VERBO)' },
    { name: 'display_level', type: 'varchar', from: 'displayLevel', required: true, doc: 'level written to the console' },
  ],
};
