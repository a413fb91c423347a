-- Delegations by validator and status: count, stake and fee in AVAX (9 decimals), and rewards
-- (estimates for active and pending delegations, as the service marks them); each summed exactly
-- in nAVAX, then shown in AVAX as a DOUBLE.
SELECT
  network,
  node_id,
  delegation_status,
  count(*) AS delegations,
  round(CAST(sum(amount_delegated) AS DOUBLE) / 1e9, 3) AS avax_delegated,
  round(CAST(sum(delegation_fee) AS DOUBLE) / 1e9, 6) AS avax_fees,
  round(CAST(sum(net_reward) AS DOUBLE) / 1e9, 6) AS avax_net_reward,
  bool_or(reward_is_estimate) AS includes_estimates
FROM delegators
GROUP BY ALL
ORDER BY network, node_id, delegation_status;
