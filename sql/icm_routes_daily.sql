-- ICM messages per route (source -> destination blockchain) and UTC day of sending: messages,
-- delivered and pending, and the median seconds from the source transaction to the destination
-- transaction (delivered messages whose source the service indexes; the others have no send time).
SELECT
  CAST(message_timestamp AT TIME ZONE 'UTC' AS DATE) AS day,
  network,
  source_blockchain_id,
  destination_blockchain_id,
  any_value(source_evm_chain_id) AS source_evm_chain_id,
  any_value(destination_evm_chain_id) AS destination_evm_chain_id,
  count(*) AS messages,
  count(*) FILTER (WHERE status <> 'pending') AS delivered,
  count(*) FILTER (WHERE status = 'pending') AS pending,
  count(*) FILTER (WHERE status = 'delivered_source_not_indexed') AS source_not_indexed,
  median(epoch(destination_timestamp) - epoch(source_timestamp)) FILTER (WHERE status = 'delivered') AS median_delivery_seconds
FROM icm_messages
GROUP BY ALL
ORDER BY day, network, source_blockchain_id, destination_blockchain_id;
