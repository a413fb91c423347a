-- Staking rewards per reward address, in the reward asset's units (amount / 10^denomination) and at
-- the historical price of each payment. A reward output owned by several addresses (multisig)
-- counts in full for each of them; `shared` says how many of an address's rewards are such.
WITH per_address AS (
  SELECT *, unnest(addresses) AS address
  FROM historical_rewards
)
SELECT
  network,
  address,
  any_value(reward_asset_symbol) AS asset,
  count(*) AS rewards,
  count(DISTINCT node_id) AS nodes,
  round(sum(coalesce(reward_amount_units, CAST(reward_amount AS DOUBLE) / 1e9)), 6) AS reward_units,
  round(sum(coalesce(reward_amount_units, CAST(reward_amount AS DOUBLE) / 1e9) * TRY_CAST(reward_price AS DOUBLE)), 2) AS reward_value,
  any_value(reward_price_currency) AS currency,
  count(*) FILTER (WHERE len(addresses) > 1) AS shared
FROM per_address
GROUP BY network, address
ORDER BY reward_units DESC, address
LIMIT 20;
