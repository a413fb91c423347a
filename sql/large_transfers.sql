-- The five largest transfers of each fungible token (ERC-20, ERC-1155), ranked by the exact amount
-- (over 38 digits too). `amount` is the amount in token units (value / 10^decimals) as a DOUBLE,
-- for reading; `value_raw` is exact. Ranked by the digits rather than by `value` (a BIGNUM made
-- from them per row) so that only a few rows of each token need the exact order.
WITH fungible AS (
  SELECT *, length(ltrim(value_raw, '0')) AS digits
  FROM erc_transfers
  WHERE value_raw IS NOT NULL AND token_type <> 'ERC-721'
),
-- A token's five largest amounts have at least as many digits as its fifth-longest amount: only
-- those rows are ranked, not every transfer (a window holds each row it ranks).
shortest AS (
  SELECT chain_id, token_address, list_min(max(digits, 5)) AS digits
  FROM fungible
  GROUP BY ALL
),
ranked AS (
  SELECT
    f.chain_id, f.token_address, token_symbol, block_timestamp, tx_hash, from_address, to_address, token_decimals, value_raw,
    row_number() OVER (
      PARTITION BY f.chain_id, f.token_address
      ORDER BY f.digits DESC, ltrim(value_raw, '0') DESC, block_number, log_index, token_id
    ) AS rank
  FROM fungible f JOIN shortest s ON f.chain_id IS NOT DISTINCT FROM s.chain_id AND f.token_address IS NOT DISTINCT FROM s.token_address
  WHERE f.digits >= s.digits
)
SELECT
  chain_id,
  token_address,
  token_symbol AS symbol,
  rank,
  block_timestamp,
  tx_hash,
  from_address,
  to_address,
  CAST(value_raw AS DOUBLE) / pow(10, coalesce(token_decimals, 0)) AS amount,
  value_raw
FROM ranked
WHERE rank <= 5
ORDER BY chain_id, token_address, rank;
