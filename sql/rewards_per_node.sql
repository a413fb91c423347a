-- Staking rewards paid per validator node, in the reward asset's units (amount / 10^denomination)
-- and at the historical price the service reports for each payment.
SELECT
  network,
  node_id,
  any_value(reward_asset_symbol) AS asset,
  count(*) AS rewards,
  count(DISTINCT tx_hash) AS stakes,
  round(sum(coalesce(reward_amount_units, CAST(reward_amount AS DOUBLE) / 1e9)), 6) AS reward_units,
  round(sum(coalesce(reward_amount_units, CAST(reward_amount AS DOUBLE) / 1e9) * TRY_CAST(reward_price AS DOUBLE)), 2) AS reward_value,
  any_value(reward_price_currency) AS currency
FROM historical_rewards
GROUP BY network, node_id
ORDER BY reward_units DESC
LIMIT 10;
