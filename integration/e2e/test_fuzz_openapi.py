"""The served OpenAPI document tells the truth: schemathesis generates requests from it (valid, boundary
and invalid bodies, parameters and headers, undeclared methods, missing credentials) and runs every
check it has (`--checks all`) against a real pricesvc and PostgreSQL: statuses, bodies and content
types as documented, invalid data refused, valid data accepted, 405 with Allow, never a 500."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from openapi_spec_validator import validate

from conftest import GENERAL_SETTINGS

VENV_BIN = Path(sys.executable).parent
FIXED_SEED = 20261129
# A second seed, new every run, so each run explores further; a failure names its seed, and
# PRICESVC_TEST_FUZZ_SEED=<seed> replays it.
SECOND_SEED = int(os.environ.get("PRICESVC_TEST_FUZZ_SEED") or random.SystemRandom().randrange(1, 2**31))

# Rules of the protocol that no JSON Schema can state: whether a request succeeds depends on the
# server's state, so a schema-valid request may still be refused. Each exception is one operation and
# one status, with the reason; nothing else is relaxed.
CONFIG = """
[checks.negative_data_rejection]
# PostgREST refuses a negative limit with 416 PGRST103, a refusal like any 4xx.
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "415", "416", "422", "428", "429", "5xx"]

[[operations]]
include-path = "/auth/v1/token"
# A well-formed refresh token that this server never issued is 400 refresh_token_not_found (Supabase Auth).
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "429", "5xx"]

[[operations]]
include-path = "/auth/v1/signup"
# user_metadata is limited to 1 KiB of JSON and no NUL characters: a size in bytes is not a JSON Schema rule.
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "429", "5xx"]

[[operations]]
include-path-regex = "^/rest/v1/rpc/"
# A single object asked of a result that is not one row is 406 PGRST116, and an offset past a counted
# total is 416 PGRST103: both depend on the rows, not on the request. A select that names an output twice
# (`*,location_id`), has more than 32 items or too many order terms is 400 PGRST100 (no
# pattern can say "no repeats"), and so is a response over PRICESVC_MAX_RESPONSE_BYTES (PGRST190).
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "406", "409", "416", "429", "5xx"]
"""


def run_schemathesis(tmp_path: Path, schema: Path, url: str, anon_key: str, token: str, seed: int,
                     scope: list[str], timeout: float, examples: int) -> tuple[int, str]:
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG)
    run = subprocess.run(
        [str(VENV_BIN / "schemathesis"), "--config-file", str(config), "run", str(schema), "--url", url,
         "-H", f"apikey: {anon_key}", "-H", f"Authorization: Bearer {token}", *scope,
         "--checks", "all", "--max-examples", str(examples), "--seed", str(seed),
         "--request-timeout", "10", "--no-color"],
        capture_output=True, text=True, timeout=timeout, cwd=tmp_path)
    return run.returncode, run.stdout[-6000:] + run.stderr[-2000:]


def generated(summary: str) -> int:
    match = re.search(r"(\d+) generated", summary)
    assert match, summary
    return int(match.group(1))


@pytest.fixture
def fuzz_target(start_server, anon_key, tmp_path):
    server = start_server(**GENERAL_SETTINGS, ACCESS_LOG="false")
    api = server.api(anon_key)
    schema = tmp_path / "openapi.json"
    response = api.get("/rest/v1/")
    assert response.status_code == 200
    document = response.json()
    validate(document)
    schema.write_text(json.dumps(document))
    return server, api, schema


# make test: the fixed seed, FIXED_EXAMPLES examples an operation, the same verdict every run. make fuzz and
# make test-all: a new seed each run, SEARCH_EXAMPLES an operation.
FIXED_EXAMPLES, SEARCH_EXAMPLES = 20, 40


# The coverage phase enumerates about 4 000 cases whatever the seed; its time is CPU time (about 270 s with
# three builds beside it on 2 cores), so the bounds below are far above a quiet run's: a busy machine makes
# it slower, never a different verdict.
@pytest.mark.timeout(1500)
@pytest.mark.parametrize("seed,examples", [(FIXED_SEED, FIXED_EXAMPLES),
                                           pytest.param(SECOND_SEED, SEARCH_EXAMPLES, marks=pytest.mark.nightly)])
def test_the_served_document_passes_every_schemathesis_check(fuzz_target, anon_key, tmp_path, seed, examples):
    server, api, schema = fuzz_target
    # Sign-out revokes the token it is sent with, so it runs apart, with a session of its own.
    code, summary = run_schemathesis(tmp_path, schema, server.url, anon_key, api.new_session()["access_token"], seed,
                                     ["--exclude-path", "/auth/v1/logout"], timeout=1000, examples=examples)
    print(summary[-1500:])  # the phases, counts and duration, kept in the log (-rP) of a passing run
    assert code == 0, f"schemathesis (seed {seed}) found failures:\n{summary}"
    assert generated(summary) >= 150 * examples // 20, summary
    code, summary = run_schemathesis(tmp_path, schema, server.url, anon_key, api.new_session()["access_token"], seed,
                                     ["--include-path", "/auth/v1/logout"], timeout=400, examples=examples)
    assert code == 0, f"schemathesis (seed {seed}) found failures on logout:\n{summary}"
    assert generated(summary) >= 10, summary


def test_the_document_follows_the_deployment_and_is_valid_openapi_either_way(start_server, anon_key):
    for challenge in (False, True):
        server = start_server(**GENERAL_SETTINGS, SIGNUP_CHALLENGE=str(challenge).lower())
        document = server.api(anon_key).get("/rest/v1/").json()
        validate(document)
        assert ("/auth/v1/challenge" in document["paths"]) is challenge
        signup = document["paths"]["/auth/v1/signup"]["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert ("gotrue_meta_security" in signup.get("required", [])) is challenge


def test_every_operation_has_an_operation_id_its_own_security_and_documented_errors(api):
    document = api.get("/rest/v1/").json()
    ids = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            ids.append(operation["operationId"])
            assert "security" in operation, (method, path)
            statuses = set(operation["responses"])
            if path.startswith(("/rest/v1/", "/auth/v1/")):
                assert {"401", "429"} <= statuses, (method, path, statuses)
    assert len(ids) == len(set(ids))
    assert "security" not in document, "security is per operation"
    signup = document["paths"]["/auth/v1/signup"]["post"]["security"]
    assert signup == [{"apikey": []}], "sign-up needs only the apikey"
    assert document["paths"]["/auth/v1/token"]["post"]["security"] == [{"apikey": []}]
    created = document["paths"]["/rest/v1/price_reports"]["post"]["responses"]["201"]
    assert "content" not in created, "the default 201 has no body"
