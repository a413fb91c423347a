-- Weekly (Monday, UTC) and monthly rollups of the daily metric series. How a metric rolls up
-- depends on what it measures: counts and totals (txCount, gasUsed, feesPaid, contracts,
-- deployers) add up; averages (avg*) are averaged over the days; maxima (max*) take the largest
-- day; cumulative* take the period's last day. Distinct counts (activeAddresses, activeSenders)
-- cannot be added up from days: for those the service's own week/month points are used when the
-- lake has them (method 'service'), and nothing is made up otherwise. `days` is how many daily
-- points a period holds: a period at either end of a series may be partial.
WITH daily AS (
  SELECT chain_id, metric, timestamp, value
  FROM chain_metrics
  WHERE time_interval = 'day' AND metric NOT IN ('activeAddresses', 'activeSenders')
),
rolled AS (
  SELECT
    chain_id,
    metric,
    period,
    CAST(date_trunc(period, timestamp AT TIME ZONE 'UTC') AS DATE) AS period_start,
    CASE
      WHEN metric LIKE 'avg%' THEN avg(value)
      WHEN metric LIKE 'max%' THEN max(value)
      WHEN metric LIKE 'cumulative%' THEN arg_max(value, timestamp)
      ELSE sum(value)
    END AS value,
    CASE
      WHEN metric LIKE 'avg%' THEN 'avg'
      WHEN metric LIKE 'max%' THEN 'max'
      WHEN metric LIKE 'cumulative%' THEN 'last'
      ELSE 'sum'
    END AS method,
    count(*) AS days
  FROM daily CROSS JOIN (VALUES ('week'), ('month')) AS p(period)
  GROUP BY chain_id, metric, period, period_start
),
service AS (
  SELECT chain_id, metric, time_interval AS period, CAST(timestamp AT TIME ZONE 'UTC' AS DATE) AS period_start, value, 'service' AS method, CAST(NULL AS BIGINT) AS days
  FROM chain_metrics
  WHERE time_interval IN ('week', 'month') AND metric IN ('activeAddresses', 'activeSenders')
)
SELECT * FROM rolled
UNION ALL BY NAME
SELECT * FROM service
ORDER BY chain_id, metric, period, period_start DESC;
