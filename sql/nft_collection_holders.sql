-- Holders of each NFT collection: how many of its ERC-721 tokens each owner holds, as the data
-- service's collection listing (nft_tokens) names the owners, with the holder's share of the
-- collection's owned tokens and its rank. Land nft_tokens for the collections first.
WITH held AS (
  SELECT chain_id, token_address, any_value(name) AS collection, owner_address, count(*) AS tokens
  FROM nft_tokens
  WHERE token_type = 'ERC-721' AND owner_address IS NOT NULL
  GROUP BY chain_id, token_address, owner_address
)
SELECT
  chain_id,
  token_address,
  collection,
  owner_address,
  tokens,
  round(100.0 * tokens / sum(tokens) OVER (PARTITION BY chain_id, token_address), 2) AS share_percent,
  rank() OVER (PARTITION BY chain_id, token_address ORDER BY tokens DESC) AS rank
FROM held
ORDER BY chain_id, token_address, tokens DESC, owner_address;
