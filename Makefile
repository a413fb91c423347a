# chainlake make targets. `npm ci` first (it builds dist/ through `prepare`).
CHAINLAKE := node bin/chainlake.js
LAKE ?= data/lake
PIPELINE ?= pipelines/demo.yaml
DEMO_QUERIES := sql/daily_token_flows.sql sql/top_senders.sql sql/rewards_per_node.sql sql/delegations_by_status.sql sql/metrics_daily_pivot.sql

.PHONY: demo build test run sim status docs query clean torture

build:
	npm run build --silent

## demo: run pipelines/demo.yaml on the embedded simulator into data/lake and print the bundled queries
demo: build
	$(CHAINLAKE) run pipelines/demo.yaml --simulator --lake $(LAKE)
	@for q in $(DEMO_QUERIES); do echo; echo "== $$q"; $(CHAINLAKE) query --lake $(LAKE) --file $$q || exit $$?; done
	@echo; $(CHAINLAKE) status --lake $(LAKE)

## run: make run PIPELINE=pipelines/x.yaml [LAKE=dir]
run: build
	$(CHAINLAKE) run $(PIPELINE) --lake $(LAKE)

## query: make query SQL=sql/top_senders.sql
query: build
	$(CHAINLAKE) query --lake $(LAKE) --file $(SQL)

sim: build
	$(CHAINLAKE) sim --port 8080

status: build
	$(CHAINLAKE) status --lake $(LAKE)

test:
	npm test

## torture: kill -9 / SIGTERM a run KILLS times at random moments, rerun, compare with an uninterrupted run
KILLS ?= 10
torture: build
	node scripts/torture.mjs --kills $(KILLS)

## docs: regenerate the README's table dictionary from the stream declarations
docs: build
	node dist/cli/docs.js --write README.md

clean:
	rm -rf dist data/lake
