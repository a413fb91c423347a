-- Daily metrics as one row per chain and day, one column per metric (the newest 14 days).
PIVOT (
  SELECT chain_id, CAST(timestamp AS DATE) AS day, metric, value
  FROM chain_metrics
  WHERE time_interval = 'day'
  QUALIFY dense_rank() OVER (PARTITION BY chain_id ORDER BY CAST(timestamp AS DATE) DESC) <= 14
)
ON metric
USING any_value(value)
ORDER BY chain_id, day DESC;
