-- Staking rewards paid per month and reward type. A reward is paid when its staking period ends,
-- so the month is that of end_timestamp (UTC). Amounts are in the reward asset's units
-- (amount / 10^denomination) and valued at the historical price the service reports for each
-- payment. The report's "rewards paid" chart is this query.
SELECT
  CAST(date_trunc('month', end_timestamp AT TIME ZONE 'UTC') AS DATE) AS month,
  network,
  reward_type,
  reward_asset_symbol AS asset,
  count(*) AS rewards,
  round(sum(coalesce(reward_amount_units, CAST(reward_amount AS DOUBLE) / 1e9)), 6) AS reward_units,
  round(sum(coalesce(reward_amount_units, CAST(reward_amount AS DOUBLE) / 1e9) * TRY_CAST(reward_price AS DOUBLE)), 2) AS reward_value,
  any_value(reward_price_currency) AS currency
FROM historical_rewards
GROUP BY ALL
ORDER BY month, network, reward_type, asset;
