-- Daily token flows per contract and UTC day: transfers, distinct senders and receivers, and
-- volume in token units (value / 10^decimals). Volume is a DOUBLE for display; exact sums need
-- value_raw. ERC-721 transfers carry no value and count one token each. Values over 38 digits
-- (NULL in `value`, exact in `value_raw`) are counted in `over_38_digits` and left out of the volume.
SELECT
  chain_id,
  token_address,
  any_value(token_symbol) AS symbol,
  any_value(token_type) AS token_type,
  CAST(block_timestamp AT TIME ZONE 'UTC' AS DATE) AS day,
  count(*) AS transfers,
  count(DISTINCT from_address) AS senders,
  count(DISTINCT to_address) AS receivers,
  round(sum(CASE WHEN token_type = 'ERC-721' THEN 1
                 ELSE CAST(value AS DOUBLE) / pow(10, coalesce(token_decimals, 0)) END), 6) AS volume,
  count(*) FILTER (WHERE value IS NULL AND value_raw IS NOT NULL) AS over_38_digits
FROM erc_transfers
GROUP BY ALL
ORDER BY day DESC, transfers DESC, chain_id, token_address
LIMIT 20;
