-- Platform-chain (P-Chain) activity per day (UTC) and transaction type: transactions, the distinct
-- addresses their UTXOs name, and nAVAX burned (fees), staked, and moved into L1 validator
-- balances, exact. The lake holds the transactions of the addresses and L1 validations a pipeline
-- lists (each once, however many of them list it): the figures are theirs, not the whole chain's.
WITH t AS (
  SELECT network, CAST(block_timestamp AT TIME ZONE 'UTC' AS DATE) AS day, tx_type, addresses,
         amount_burned, amount_staked, amount_l1_validator_balance_burned
  FROM platform_transactions
),
owners AS (
  SELECT network, day, tx_type, count(DISTINCT address) AS addresses
  FROM (SELECT network, day, tx_type, unnest(addresses) AS address FROM t)
  GROUP BY ALL
)
SELECT
  t.network,
  t.day,
  t.tx_type,
  count(*) AS txs,
  coalesce(any_value(owners.addresses), 0) AS addresses,
  coalesce(sum(t.amount_burned), 0) AS navax_burned,
  coalesce(sum(t.amount_staked), 0) AS navax_staked,
  coalesce(sum(t.amount_l1_validator_balance_burned), 0) AS navax_l1_balance
FROM t LEFT JOIN owners USING (network, day, tx_type)
GROUP BY t.network, t.day, t.tx_type
ORDER BY t.network, t.day, txs DESC, t.tx_type;
