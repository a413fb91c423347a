-- Daily metrics as one row per chain and UTC day (the newest 14 days), one column per metric the
-- service offers, NULL where the lake has no such series. The columns are listed rather than taken
-- from the data, so that they do not change from one run to the next (and so that it can be a view
-- of the warehouse file: DuckDB keeps no PIVOT over the data's own values in a view).
PIVOT (
  SELECT chain_id, CAST(timestamp AT TIME ZONE 'UTC' AS DATE) AS day, metric, value
  FROM chain_metrics
  WHERE time_interval = 'day'
  QUALIFY dense_rank() OVER (PARTITION BY chain_id ORDER BY CAST(timestamp AT TIME ZONE 'UTC' AS DATE) DESC) <= 14
)
ON metric IN (
  'activeAddresses', 'activeSenders', 'cumulativeTxCount', 'cumulativeAddresses', 'cumulativeContracts',
  'cumulativeDeployers', 'contracts', 'deployers', 'gasUsed', 'txCount', 'avgGps', 'maxGps', 'avgTps',
  'maxTps', 'avgGasPrice', 'maxGasPrice', 'feesPaid'
)
USING any_value(value)
ORDER BY chain_id, day DESC;
