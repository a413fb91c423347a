-- The newest 20 runs of this lake (its run reports, _runs/*.json): status, seconds, and totals over
-- their streams: partitions done, pages, rows, requests, retries, 429s, rejects, amounts over 38
-- digits. The report's "last runs" charts are this query.
SELECT
  runId AS run_id,
  pipeline,
  status,
  startedAt AS started_at,
  round(seconds, 1) AS seconds,
  list_sum([s.partitionsDone FOR s IN streams]) || '/' || list_sum([s.partitions FOR s IN streams]) AS partitions,
  list_sum([s.pages FOR s IN streams]) AS pages,
  list_sum([s.rows FOR s IN streams]) AS rows,
  list_sum([s.requests FOR s IN streams]) AS requests,
  list_sum([s.retries FOR s IN streams]) AS retries,
  list_sum([s.status429 FOR s IN streams]) AS status_429,
  list_sum([s.rejects FOR s IN streams]) AS rejects,
  list_sum([s.over38 FOR s IN streams]) AS over_38_digits
FROM _runs
ORDER BY startedAt DESC
LIMIT 20;
