-- Top senders across token contracts: transfers sent, tokens touched, and the last time seen.
SELECT
  from_address,
  any_value(from_name) AS name,
  count(*) AS transfers,
  count(DISTINCT token_address) AS tokens,
  min(block_timestamp) AS first_seen,
  max(block_timestamp) AS last_seen
FROM erc_transfers
GROUP BY from_address
ORDER BY transfers DESC, from_address
LIMIT 10;
