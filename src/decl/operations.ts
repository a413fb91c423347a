// The declaration of the `operations` table, apart from the code that writes it, so the views can
// read it without importing the writer.
import type { StreamDecl } from './stream.js';

/**
 * Not a stream (no pipeline lists it, nothing pages it): declared as one so the views, the merge by
 * key and the empty view of a fresh lake treat it like every other table.
 */
export const OPERATIONS: StreamDecl = {
  table: 'operations',
  doc: 'export operations started or polled by `chainlake export-op`, in their latest state.',
  service: 'data',
  endpoint: '/v1/operations/{operationId}',
  items: '',
  weight: 10,
  pageSize: { min: 0, max: 0, default: 0 },
  options: {},
  partitions: () => [],
  refresh: 'merge',
  mergeScope: 'table',
  key: ['operation_id'],
  columns: [
    { name: 'operation_id', type: 'varchar', required: true, doc: 'operation id given by the service' },
    { name: 'operation_type', type: 'varchar', doc: 'TRANSACTION_EXPORT_EVM or a TRANSACTION_EXPORT_PRIMARY_NETWORK variant, as the service sent it' },
    { name: 'operation_status', type: 'varchar', doc: 'RUNNING, COMPLETED, COMPLETED_WITH_WARNING or FAILED, as last seen' },
    { name: 'first_date', type: 'varchar', doc: 'firstDate of the request (YYYY-MM-DD)' },
    { name: 'last_date', type: 'varchar', doc: 'lastDate of the request (YYYY-MM-DD)' },
    { name: 'options', type: 'json', doc: 'options of the request (addresses, includeChains, ...)' },
    { name: 'code', type: 'varchar', doc: 'metadata.code: ErrInvalidRequest, ErrInternal, WarnTruncatedExport' },
    { name: 'message', type: 'varchar', doc: "the service's message" },
    { name: 'next_date', type: 'varchar', doc: 'metadata.nextDate: where a truncated export continues' },
    { name: 'created_at', type: 'timestamptz', doc: 'createdAtTimestamp' },
    { name: 'updated_at', type: 'timestamptz', doc: 'updatedAtTimestamp' },
    { name: 'continues_operation_id', type: 'varchar', doc: 'the truncated operation whose nextDate this one continues' },
    { name: 'download_path', type: 'varchar', doc: 'the exported file, relative to the lake' },
    { name: 'download_bytes', type: 'bigint', doc: 'its size' },
    { name: 'download_sha256', type: 'varchar', doc: 'its sha256 (hex)' },
    { name: 'recorded_at', type: 'timestamptz', doc: 'when chainlake wrote this row' },
  ],
};
