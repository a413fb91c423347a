-- The primary network's staking over time, from the network_details snapshots: per network and UTC
-- day, the day's newest snapshot (validators, delegations, their stake in exact nAVAX and in AVAX,
-- the staking ratio) and how much the total stake changed since the day before it.
WITH daily AS (
  SELECT *, CAST(snapshot_at AT TIME ZONE 'UTC' AS DATE) AS day
  FROM network_details
  QUALIFY row_number() OVER (PARTITION BY network, CAST(snapshot_at AT TIME ZONE 'UTC' AS DATE) ORDER BY snapshot_at DESC) = 1
)
SELECT
  network,
  day,
  snapshot_at,
  validator_count AS validators,
  delegator_count AS delegations,
  validator_amount_staked + delegator_amount_staked AS total_staked_nanoavax,
  validator_amount_staked_units + delegator_amount_staked_units AS total_staked_avax,
  staking_ratio::DOUBLE AS staking_ratio,
  (validator_amount_staked + delegator_amount_staked)
    - lag(validator_amount_staked + delegator_amount_staked) OVER (PARTITION BY network ORDER BY day) AS change_nanoavax
FROM daily
ORDER BY network, day;
