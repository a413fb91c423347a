-- Active primary-network validators of the newest snapshot, best uptime first, then lowest fee:
-- stake and room for delegations, their delegations (delegators) and the rewards paid to them and
-- their delegators (historical_rewards), in AVAX (9 decimals); the day each validation ends (UTC).
WITH latest AS (
  SELECT *
  FROM validators
  WHERE validation_status = 'active' AND subnet_id = '11111111111111111111111111111111LpoYY'
  QUALIFY snapshot_at = max(snapshot_at) OVER (PARTITION BY network)
),
delegations AS (
  SELECT
    network,
    node_id,
    count(*) FILTER (WHERE delegation_status = 'active') AS active_delegations,
    count(*) FILTER (WHERE delegation_status = 'pending') AS pending_delegations,
    count(*) FILTER (WHERE delegation_status = 'completed') AS completed_delegations,
    CAST(sum(amount_delegated) FILTER (WHERE delegation_status = 'active') AS DOUBLE) / 1e9 AS avax_delegated_now
  FROM delegators
  GROUP BY ALL
),
rewards AS (
  SELECT
    network,
    node_id,
    CAST(sum(reward_amount) FILTER (WHERE reward_type = 'VALIDATOR') AS DOUBLE) / 1e9 AS avax_validation_rewards,
    CAST(sum(reward_amount) FILTER (WHERE reward_type = 'VALIDATOR_FEE') AS DOUBLE) / 1e9 AS avax_fee_rewards,
    CAST(sum(reward_amount) FILTER (WHERE reward_type = 'DELEGATOR') AS DOUBLE) / 1e9 AS avax_delegator_rewards
  FROM historical_rewards
  GROUP BY ALL
)
SELECT
  l.network,
  l.node_id,
  l.snapshot_at,
  l.uptime_performance,
  l.delegation_fee_percent,
  round(CAST(l.amount_staked AS DOUBLE) / 1e9, 3) AS avax_staked,
  round(l.stake_percentage, 4) AS stake_percentage,
  l.delegator_count,
  round(CAST(l.amount_delegated AS DOUBLE) / 1e9, 3) AS avax_delegated,
  round(CAST(l.delegation_capacity AS DOUBLE) / 1e9, 3) AS avax_capacity,
  CAST(l.end_timestamp AT TIME ZONE 'UTC' AS DATE) AS ends_on,
  d.active_delegations,
  d.pending_delegations,
  d.completed_delegations,
  round(d.avax_delegated_now, 3) AS avax_delegated_listed,
  round(r.avax_validation_rewards, 6) AS avax_validation_rewards,
  round(r.avax_fee_rewards, 6) AS avax_fee_rewards,
  round(r.avax_delegator_rewards, 6) AS avax_delegator_rewards
FROM latest l
LEFT JOIN delegations d USING (network, node_id)
LEFT JOIN rewards r USING (network, node_id)
ORDER BY l.uptime_performance DESC, CAST(l.delegation_fee_percent AS DOUBLE), l.node_id;
