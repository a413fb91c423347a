-- Transfers per UTC day over the newest 365 days of data, per token: the six busiest tokens by name
-- (symbol, else contract address), the others summed as 'other'. An ERC-1155 batch counts one row
-- per token id. The report's "daily transfers" chart is this query.
WITH per_day AS (
  SELECT CAST(block_timestamp AT TIME ZONE 'UTC' AS DATE) AS day, chain_id, token_address, count(*) AS transfers
  FROM erc_transfers
  WHERE block_timestamp AT TIME ZONE 'UTC' > (SELECT max(block_timestamp AT TIME ZONE 'UTC') FROM erc_transfers) - INTERVAL 365 DAY
  GROUP BY ALL
),
ranked AS (
  SELECT chain_id, token_address, row_number() OVER (ORDER BY total DESC, token_address) AS rank
  FROM (SELECT chain_id, token_address, sum(transfers) AS total FROM per_day GROUP BY ALL)
),
names AS (
  SELECT chain_id, token_address, any_value(coalesce(token_symbol, token_name)) AS symbol
  FROM erc_transfers
  GROUP BY ALL
)
SELECT
  day,
  CASE WHEN rank <= 6 THEN coalesce(symbol, token_address) ELSE 'other' END AS token,
  sum(transfers) AS transfers
FROM per_day JOIN ranked USING (chain_id, token_address) JOIN names USING (chain_id, token_address)
GROUP BY ALL
ORDER BY day, token;
