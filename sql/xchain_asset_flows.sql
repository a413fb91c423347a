-- X-Chain asset flows by day, from xchain_asset_transactions: per asset listed and UTC day, the
-- transactions that moved it, what their inputs unlocked and their outputs created of it (exact, in
-- the asset's smallest unit: HUGEINT holds any sum of uint64 amounts a day can have), and the
-- difference: AVAX burned in fees where it is negative, a new asset's supply minted where positive.
WITH parts AS (
  SELECT t.network, t.asset_id, CAST(t.block_timestamp AT TIME ZONE 'UTC' AS DATE) AS day, t.tx_hash, t.tx_type, 'unlocked' AS side, e.amount::HUGEINT AS amount
  FROM xchain_asset_transactions t, unnest(from_json(t.amount_unlocked, '[{"assetId":"VARCHAR","amount":"VARCHAR"}]')) AS u(e)
  WHERE e.assetId = t.asset_id
  UNION ALL
  SELECT t.network, t.asset_id, CAST(t.block_timestamp AT TIME ZONE 'UTC' AS DATE), t.tx_hash, t.tx_type, 'created', e.amount::HUGEINT
  FROM xchain_asset_transactions t, unnest(from_json(t.amount_created, '[{"assetId":"VARCHAR","amount":"VARCHAR"}]')) AS c(e)
  WHERE e.assetId = t.asset_id
)
SELECT
  network,
  asset_id,
  day,
  count(DISTINCT tx_hash) AS transactions,
  count(DISTINCT tx_hash) FILTER (WHERE tx_type = 'CreateAssetTx') AS creations,
  coalesce(sum(amount) FILTER (WHERE side = 'unlocked'), 0) AS unlocked,
  coalesce(sum(amount) FILTER (WHERE side = 'created'), 0) AS created,
  coalesce(sum(amount) FILTER (WHERE side = 'created'), 0) - coalesce(sum(amount) FILTER (WHERE side = 'unlocked'), 0) AS net_created
FROM parts
GROUP BY ALL
ORDER BY network, asset_id, day;
