# Every target sets up .venv on first use, so a fresh clone needs nothing but Python 3.10+.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The Node projects `make test` runs, each pinned by its committed lockfile; `npm ci` in
# clients/node also compiles the client (its `prepare` script runs tsc), which the other
# two link to, so it comes first.
NODE_CLIENT := clients/node/node_modules/.installed
NODE_STAMPS := tests/node/node_modules/.installed \
               tests/frameworks/vercel/node_modules/.installed \
               clients/node/examples/vitest/node_modules/.installed \
               tests/agent_clis/node_modules/.installed
# The Python agent CLIs (aider, llm) tests/agent_clis runs, in their own virtualenv: aider
# pins openai and litellm releases the suite's own pins exclude (docs/agents.md).
AGENTS := .venv-agents/.installed
# LangChain's MCP adapters (tests/frameworks/test_mcp_langchain.py), in their own virtualenv:
# langchain-mcp-adapters requires mcp<2, and mockllm pins the SDK's 2.x (docs/mcp.md).
LANGCHAIN_MCP := .venv-langchain-mcp/.installed
# strands-agents (tests/frameworks/test_strands.py), in its own virtualenv: its `openai`
# extra pins mcp 2.1 and an older openai than mockllm's test pins.
STRANDS := .venv-strands/.installed
# Google ADK (tests/frameworks/test_adk_vertex.py), in its own virtualenv: google-adk
# requires google-genai<3, and mockllm's test pins 3.x.
ADK := .venv-adk/.installed
# The framework matrix (issue 38, docs/frameworks.md): each framework whose pins conflict
# with the suite's in a virtualenv of its own (ADK's is the one above), .venv-NAME from
# tests/frameworks/NAME/requirements.txt, and the Node frameworks (Agents JS, Mastra) in
# tests/frameworks/agentsjs. `make frameworks` runs their cells (the tests marked `matrix`);
# `make test` leaves them out.
MATRIX_VENVS := $(ADK) $(patsubst %,.venv-%/.installed,llamaindex autogen crewai claudesdk)
MATRIX_NODE := tests/frameworks/agentsjs/node_modules/.installed
# The bench's peer column (bench/README.md): a mock server from npm, pinned by its lockfile.
# Installed by `make bench` only, and only where npm is: without it the bench skips the
# column and says why.
PEER_STAMP := bench/peers/aimock/node_modules/.installed
NPM    := $(shell command -v npm 2>/dev/null)
ARGS   ?=

.DEFAULT_GOAL := help
.PHONY: help serve test frameworks unit e2e pythons image lint bench bench-profile bench-spy bench-viewer screenshots fuzz fault-soak clean

help: ## show the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,lint,frameworks,bench]'
	touch $(STAMP)

serve: $(STAMP) ## serve the bundled scenarios on 127.0.0.1:8000 (ARGS="--port 9000 ...")
	$(BIN)/mockllm serve $(ARGS)

$(NODE_CLIENT): clients/node/package.json clients/node/package-lock.json \
                clients/node/tsconfig.json $(wildcard clients/node/src/*.ts)
	cd clients/node && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The agent CLIs' lockfile records only the platform binaries the registry serves for this
# machine's kind (opencode's others are absent), which `npm ci` calls a stale lockfile;
# `npm install` honours the lockfile's pins and installs the same tree.
tests/agent_clis/node_modules/.installed: tests/agent_clis/package.json tests/agent_clis/package-lock.json
	cd tests/agent_clis && npm install --no-audit --no-fund --no-save --loglevel=error
	touch $@

%/node_modules/.installed: %/package.json %/package-lock.json $(NODE_CLIENT)
	cd $* && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(PEER_STAMP): bench/peers/aimock/package.json bench/peers/aimock/package-lock.json
	cd bench/peers/aimock && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The release check (tests/release/test_release.py) installs the built wheel and sdist into fresh
# virtualenvs with no index: the wheels they need, at this venv's versions, are kept here.
WHEELHOUSE := $(VENV)/wheelhouse/.downloaded

$(WHEELHOUSE): $(STAMP) tests/support/wheelhouse.py
	$(BIN)/python -m tests.support.wheelhouse $(dir $@)

# Debian packages the tests drive for real, installed when missing (tests/ensure-debian.sh).
CHROMIUM := sh tests/ensure-debian.sh "the viewer's browser tests" "chromium chromedriver" \
            chromium chromium-driver
REDIS    := sh tests/ensure-debian.sh "the shared-state tests" "redis-server" redis-server
BUILDAH  := sh tests/ensure-debian.sh "the image tier" "buildah podman debootstrap" \
            buildah podman debootstrap

# Coverage of the test processes and every Python process they start from this venv: the
# `mockllm serve` and `mockllm record` subprocesses and the `--workers` children, each
# writing its own data file, combined by pytest-cov into the report (pyproject.toml's
# [tool.coverage.run] says how; docs/design.md, Tests). 93.8 % measured on a fresh clone
# with the subprocesses counted (73.1 % without them); the floor is that figure's whole
# percent, raised as coverage rises. It only applies to a whole run, not one narrowed by ARGS.
COV_FLOOR ?= 93

$(AGENTS): tests/agent_clis/requirements.txt
	test -x .venv-agents/bin/python || $(PYTHON) -m venv .venv-agents
	.venv-agents/bin/python -m pip install --quiet -r tests/agent_clis/requirements.txt
	touch $(AGENTS)

$(LANGCHAIN_MCP): tests/frameworks/langchain_mcp/requirements.txt
	test -x .venv-langchain-mcp/bin/python || $(PYTHON) -m venv .venv-langchain-mcp
	.venv-langchain-mcp/bin/python -m pip install --quiet -r tests/frameworks/langchain_mcp/requirements.txt
	touch $(LANGCHAIN_MCP)

$(STRANDS): tests/frameworks/strands/requirements.txt
	test -x .venv-strands/bin/python || $(PYTHON) -m venv .venv-strands
	.venv-strands/bin/python -m pip install --quiet -r tests/frameworks/strands/requirements.txt
	touch $(STRANDS)

$(ADK): tests/frameworks/adk/requirements.txt
	test -x .venv-adk/bin/python || $(PYTHON) -m venv .venv-adk
	.venv-adk/bin/python -m pip install --quiet -r tests/frameworks/adk/requirements.txt
	touch $(ADK)

test: $(STAMP) $(WHEELHOUSE) $(NODE_CLIENT) $(NODE_STAMPS) $(AGENTS) $(LANGCHAIN_MCP) $(STRANDS) $(ADK) ## run the test suite (real servers, real SDKs, Python and Node) with coverage
	@$(CHROMIUM)
	@$(REDIS)
	$(BIN)/pytest -n auto --cov=mockllm --cov-report=term $(if $(ARGS),,--cov-fail-under=$(COV_FLOOR)) $(ARGS)

.venv-%/.installed: tests/frameworks/%/requirements.txt
	test -x .venv-$*/bin/python || $(PYTHON) -m venv .venv-$*
	.venv-$*/bin/python -m pip install --quiet -r $<
	touch $@

frameworks: $(STAMP) $(NODE_CLIENT) $(MATRIX_VENVS) $(MATRIX_NODE) tests/agent_clis/node_modules/.installed ## the framework matrix: ADK, LlamaIndex, AutoGen, CrewAI, Agents JS, Mastra, Claude Agent SDK
	MOCKLLM_MATRIX=1 $(BIN)/pytest -n 2 -m matrix tests/frameworks $(ARGS)

# The image tier (tests/image): the Containerfile built from the release's sdist with buildah
# (no Docker daemon here) on a Debian base made with debootstrap, and served from inside to
# the SDKs, the plugin, the Node client and each recipe of docs/container.md. Its own target:
# the first run on a machine spends about three minutes making the base.
image: $(STAMP) $(WHEELHOUSE) $(NODE_STAMPS) ## build the Containerfile's image and serve the SDKs and the recipes from it
	@$(BUILDAH)
	MOCKLLM_IMAGE_TIER=1 $(BIN)/pytest tests/image -n 0 $(ARGS)

# Every Python requires-python claims (3.10 to 3.13; PYTHONS="3.12" for fewer): a venv each
# under .venvs/ with the package's dependencies as a user's install resolves them, then the
# in-process tier and a real server serving a third-party wire and the Responses WebSocket
# (.ci/pythons says how the interpreters are found).
PYTHONS ?= 3.10 3.11 3.12 3.13
pythons: ## the unit tier and a real server on Python 3.10, 3.11, 3.12 and 3.13
	PYTHONS="$(PYTHONS)" .ci/pythons

# The in-process tier (tests/unit: no servers, no SDKs, no sockets) under Hypothesis's `dev`
# profile, a tenth of the examples `make test` runs (tests/support/hypothesis_profiles.py); one
# process, as a worker pool would take longer to start than the tier takes to run.
unit: $(STAMP) ## the in-process tests in seconds (no servers, no SDKs; fewer Hypothesis examples)
	$(BIN)/pytest tests/unit -n 0 --hypothesis-profile=dev $(ARGS)

# The end-to-end tier of the Python wires alone (tests/e2e: a real `mockllm serve` and the
# official Python SDKs), on a venv that needs only the `test` extra: no frameworks, Node,
# redis-server or Chromium (its few tests that need redis-server are left out by marker).
E2E_STAMP := $(VENV)/.installed-test

$(E2E_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(E2E_STAMP)

e2e: $(E2E_STAMP) ## the Python wires end to end: real servers and SDKs, nothing but the `test` extra
	$(BIN)/pytest tests/e2e -n auto -m "not redis" $(ARGS)

# 5 000 examples per route with a scenario and 5 000 without: 10 000 per model route.
fuzz: $(STAMP) ## hostile bodies and schemas on every route, many more than `make test` sends
	MOCKLLM_FUZZ_EXAMPLES=5000 $(BIN)/pytest -p no:xdist -p no:cacheprovider -q -s tests/e2e/hostile/test_hostile.py $(ARGS)
	MOCKLLM_FUZZ_EXAMPLES=$${MOCKLLM_FUZZ_SCHEMAS:-2000} $(BIN)/pytest -p no:xdist -p no:cacheprovider -q -s \
	    tests/e2e/hostile/test_hostile_schemas.py $(ARGS)

fault-soak: $(STAMP) ## a fleet on a full, hung and restarted redis-server, 300 sessions a run
	@$(REDIS)
	$(BIN)/python -m tests.support.fleet_soak --sessions 300 $(ARGS)

# The viewer's script files (mockllm/viewer/page.py joins them into one) are checked by
# the TypeScript compiler clients/node pins, from their `// @ts-check` and JSDoc: plain
# scripts, so tsc sees them in one global scope, as the page runs them in one function.
VIEWER_JS := $(sort $(wildcard mockllm/viewer/*.js))
TSC_VIEWER := --noEmit --allowJs --checkJs --target es2022 --lib es2022,dom

lint: $(STAMP) $(NODE_CLIENT) ## ruff, mypy, the import contracts (no cycles, layers flow one way), tsc on the viewer
	$(BIN)/ruff check mockllm tests bench examples
	$(BIN)/ruff format --check mockllm tests bench examples
	$(BIN)/mypy
	$(BIN)/lint-imports
	clients/node/node_modules/.bin/tsc $(TSC_VIEWER) $(VIEWER_JS)

screenshots: $(STAMP) ## regenerate docs/img/viewer-*.png from a real run in headless Chromium
	@$(CHROMIUM)
	$(BIN)/python -m tests.support.screenshots

bench-profile: $(STAMP) ## profile the cold path in-process, no sockets (ARGS="--only hist_200 ...")
	$(BIN)/python -m bench.profile $(ARGS)

bench-spy: $(STAMP) ## py-spy on the running server under wrk (ARGS="--only hist_200", "--floor")
	@sh bench/ensure-wrk.sh
	$(BIN)/python -m compileall -q mockllm bench
	$(BIN)/python -m bench.spy $(ARGS)

bench-viewer: $(STAMP) ## time the viewer's first render of a 5,000-request log in Chromium
	@$(CHROMIUM)
	$(BIN)/python -m bench.viewer $(ARGS)

clean: ## remove the virtualenv and caches
	rm -rf $(VENV) .venv-agents .venv-langchain-mcp .venv-strands .venv-adk $(dir $(MATRIX_VENVS)) .pytest_cache .mypy_cache .ruff_cache .coverage \
		clients/node/dist \
		$(dir $(NODE_CLIENT) $(NODE_STAMPS) $(MATRIX_NODE) $(PEER_STAMP))

bench: $(STAMP) $(if $(NPM),$(PEER_STAMP)) ## benchmark mockllm against bare starlette/ASGI floors and a peer (ARGS="--quick ...")
	@sh bench/ensure-wrk.sh
	@# Byte-compile as `pip install` does: an editable checkout under
	@# PYTHONDONTWRITEBYTECODE would otherwise recompile every module at each start.
	$(BIN)/python -m compileall -q mockllm bench
	$(BIN)/python -m bench $(ARGS)
