-- Token activity of each listed address (address_token_transfers), per token: transfers received
-- and sent, distinct counterparties, the net amount received, exact in the token's smallest unit
-- (`net_raw`, the digits of sum(value): uint256 amounts, over 38 digits too) and in token units
-- for reading (`net_units`, the net / 10^decimals, a DOUBLE), and the first and last time
-- seen. An ERC-721 transfer moves one token; a transfer to itself counts as received and sent,
-- and nets nothing.
WITH per_token AS (
  SELECT
    chain_id,
    address,
    token_address,
    any_value(token_symbol) AS symbol,
    any_value(token_type) AS token_type,
    any_value(token_decimals) AS decimals,
    count(*) FILTER (WHERE to_address = address) AS received,
    count(*) FILTER (WHERE from_address = address) AS sent,
    count(DISTINCT CASE WHEN to_address = address THEN from_address ELSE to_address END) AS counterparties,
    sum(CASE WHEN from_address = to_address THEN 0::BIGNUM
             WHEN to_address = address THEN moved
             ELSE -moved END) AS net,
    min(block_timestamp) AS first_seen,
    max(block_timestamp) AS last_seen
  FROM (SELECT *, CASE WHEN token_type = 'ERC-721' THEN 1::BIGNUM ELSE value END AS moved FROM address_token_transfers)
  GROUP BY chain_id, address, token_address
)
SELECT
  chain_id, address, token_address, symbol, token_type, received, sent, counterparties,
  CAST(net AS VARCHAR) AS net_raw,
  round(CAST(net AS DOUBLE) / pow(10, coalesce(decimals, 0)), 6) AS net_units,
  first_seen, last_seen
FROM per_token
ORDER BY chain_id, address, received + sent DESC, token_address
LIMIT 50;
