"""suggest --redis pieces that need no server: torch's key format, the stored value, the URL."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from dyncli.errors import UsageError
from dyncli.suggest.redis import decode_value, parse_key, resolve_url, url_from_env

PGO = Path(__file__).resolve().parents[1] / "data" / "pgo"


def test_torch_keys_split_into_job_rank_and_tag() -> None:
    k = parse_key("pt2:dynamo-pgo::train:3::c1")
    assert k is not None and (k.job, k.rank, k.tag) == ("train", 3, "")
    k = parse_key("pt2:dynamo-pgo::mast:name:7:None:tagged:c1")  # torch's own mast: job ids
    assert k is not None and (k.job, k.rank, k.tag) == ("mast:name:7", None, "tagged")
    assert parse_key("pt2:fx-graph::abc:c1") is None  # another cache sharing the server
    assert parse_key("pt2:dynamo-pgo::no-rank:c1") is None


def test_the_stored_value_is_base64_pickle_in_json() -> None:
    pickled = next(PGO.glob("mlp/dynamo/code_state_*.pkl")).read_bytes()
    stored = json.dumps({"data": base64.b64encode(pickled).decode("ascii")}).encode()
    assert decode_value(stored) == pickled
    for bad, why in ((b"\x80\x04junk", "not JSON"), (b'{"x": 1}', 'no "data"'),
                     (b'{"data": "%%%"}', "not base64")):
        with pytest.raises(ValueError, match=why):
            decode_value(bad)


def test_url_comes_from_torchs_variables() -> None:
    assert url_from_env({"TORCHINDUCTOR_REDIS_URL": "redis://h:1/2"}) == "redis://h:1/2"
    assert url_from_env({"TORCHINDUCTOR_REDIS_HOST": "h"}) == "redis://h:6379"
    assert url_from_env({"TORCHINDUCTOR_REDIS_PORT": "7000"}) == "redis://localhost:7000"
    assert url_from_env({}) is None


def test_env_without_variables_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TORCHINDUCTOR_REDIS_URL", "TORCHINDUCTOR_REDIS_HOST", "TORCHINDUCTOR_REDIS_PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(UsageError, match="no URL given"):
        resolve_url("env")
    monkeypatch.setenv("TORCHINDUCTOR_REDIS_PORT", "7001")
    assert resolve_url("env") == "redis://localhost:7001"
    assert resolve_url("redis://x:1") == "redis://x:1"
