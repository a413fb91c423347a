-- Top receivers across token contracts: transfers received, tokens touched, distinct senders, and
-- the first and last time seen. The counterpart of top_senders.sql.
SELECT
  to_address,
  any_value(to_name) AS name,
  count(*) AS transfers,
  count(DISTINCT token_address) AS tokens,
  count(DISTINCT from_address) AS senders,
  min(block_timestamp) AS first_seen,
  max(block_timestamp) AS last_seen
FROM erc_transfers
GROUP BY to_address
ORDER BY transfers DESC, to_address
LIMIT 10;
