-- Internal transactions per week (Monday, UTC) and type (CALL, CREATE, ...): count, reverted, and the
-- native value moved, exact in wei (`value`, sum(value)) and in the native token's units for reading
-- (`native`, 18 decimals, a DOUBLE). The table holds a row per listed address, so an internal transaction between
-- two listed addresses is there twice: it counts once here (internal_tx_id does not depend on the
-- address).
WITH once AS (
  SELECT DISTINCT ON (chain_id, internal_tx_id) *
  FROM internal_transactions
  ORDER BY chain_id, internal_tx_id
)
SELECT
  CAST(date_trunc('week', block_timestamp AT TIME ZONE 'UTC') AS DATE) AS week,
  internal_tx_type AS type,
  count(*) AS txs,
  count(*) FILTER (WHERE is_reverted) AS reverted,
  sum(value) AS value,
  round(CAST(sum(value) AS DOUBLE) / 1e18, 6) AS native
FROM once
GROUP BY ALL
ORDER BY week, type;
