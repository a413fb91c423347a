-- Daily token flows per contract and UTC day: transfers, distinct senders and receivers, the
-- amount moved, exact in the token's smallest unit (`amount`, sum(value): uint256 amounts, over 38
-- digits too), and the volume in token units for reading (`volume`, the amount / 10^decimals, a
-- DOUBLE rounded once). ERC-721 transfers carry no value and count one token each.
WITH daily AS (
  SELECT
    chain_id,
    token_address,
    any_value(token_symbol) AS symbol,
    any_value(token_type) AS token_type,
    any_value(token_decimals) AS decimals,
    CAST(block_timestamp AT TIME ZONE 'UTC' AS DATE) AS day,
    count(*) AS transfers,
    count(DISTINCT from_address) AS senders,
    count(DISTINCT to_address) AS receivers,
    sum(CASE WHEN token_type = 'ERC-721' THEN 1::BIGNUM ELSE value END) AS amount
  FROM erc_transfers
  GROUP BY ALL
)
SELECT
  chain_id, token_address, symbol, token_type, day, transfers, senders, receivers, amount,
  round(CAST(amount AS DOUBLE) / pow(10, CASE WHEN token_type = 'ERC-721' THEN 0 ELSE coalesce(decimals, 0) END), 6) AS volume
FROM daily
ORDER BY day DESC, transfers DESC, chain_id, token_address
LIMIT 20;
