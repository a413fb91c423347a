-- P-Chain balances of each address at its newest snapshot (of the time it was taken, not a past
-- blockTimestamp), exact nAVAX: unlocked (spendable now), staked (whatever unlocks after), locked
-- (by a locktime, not staked), in atomic memory (exported, not yet imported), their total, and
-- the UTXOs they sum. A category the service adds is counted in the total only.
WITH latest AS (
  SELECT network, address, max(snapshot_at) AS snapshot_at
  FROM platform_balances WHERE balance_at = snapshot_at
  GROUP BY ALL
)
SELECT
  b.network,
  b.address,
  b.snapshot_at,
  coalesce(sum(b.amount) FILTER (WHERE b.category = 'unlockedUnstaked'), 0) AS navax_unlocked,
  coalesce(sum(b.amount) FILTER (WHERE b.category IN ('unlockedStaked', 'lockedStaked', 'pendingStaked')), 0) AS navax_staked,
  coalesce(sum(b.amount) FILTER (WHERE b.category IN ('lockedPlatform', 'lockedStakeable')), 0) AS navax_locked,
  coalesce(sum(b.amount) FILTER (WHERE b.category LIKE 'atomicMemory%'), 0) AS navax_atomic,
  sum(b.amount) AS navax_total,
  sum(b.utxo_count) AS utxos
FROM platform_balances b JOIN latest USING (network, address, snapshot_at)
WHERE b.balance_at = b.snapshot_at
GROUP BY b.network, b.address, b.snapshot_at
ORDER BY navax_total DESC, b.address;
