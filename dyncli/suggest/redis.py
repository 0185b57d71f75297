"""PGO state from torch's Redis remote cache (``dyncli suggest --redis``). Read-only.

With ``TORCH_DYNAMO_AUTOMATIC_DYNAMIC_REMOTE_PGO=1`` torch (2.14) stores each rank's PGO state
through ``torch._inductor.remote_cache.RedisRemoteCache("dynamo-pgo")``:

- key ``pt2:dynamo-pgo::<job>:<rank>:<tag>:c1`` — ``pgo.format_cache_key`` makes
  ``<job>:<rank>:<tag>`` (job = ``TORCH_COMPILE_JOB_ID``, rank = the global rank or ``None``,
  tag = ``torch.compiler.config.cache_key_tag``), ``RedisRemoteCache`` wraps it in
  ``pt2:{cache_id}::{key}:c{version}`` with version 1;
- value: JSON ``{"data": "<base64 of the pickle>"}`` (``pgo.put_remote_code_state``), the same
  pickle as a local ``code_state_*.pkl``, so it goes through the same restricted unpickler.

Keys are listed with ``SCAN`` (never ``KEYS``, which blocks a shared server) and read with
``GET``; nothing is ever written. Where the server is: ``--redis URL``, else the variables torch
reads (``TORCHINDUCTOR_REDIS_URL``, or ``TORCHINDUCTOR_REDIS_HOST``/``_PORT``).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import pickle
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dyncli.errors import InputError, UsageError
from dyncli.logparse.safe import clip
from dyncli.suggest.pgo_pickle import MAX_PGO_BYTES, loads_state
from dyncli.suggest.pgo_scan import one_budget
from dyncli.suggest.pgo_state import PgoState

PREFIX = "pt2:dynamo-pgo::"
SUFFIX = ":c1"  # RedisRemoteCache key version 1 (torch 2.14)
# <job>:<rank>:<tag> — the job may hold ':' (torch's own "mast:<name>:<version>"), the rank is
# an int or None; the last ":<rank>:" splits them (a tag is assumed free of ":<digits>:").
_BODY_RE = re.compile(r"^(?P<job>.*):(?P<rank>None|\d+):(?P<tag>[^:]*)$", re.S)
_GLOB_SPECIAL = re.compile(r"([*?\[\]\\])")


def install_hint() -> str:
    """How to install the Redis client, from this checkout or from the index."""
    from dyncli.install import pip_extra

    return f"Install the Redis client: {pip_extra('redis')} (or: pip install redis)"


@dataclass(frozen=True)
class RemoteKey:
    """One PGO entry's key, split into torch's parts."""

    key: str
    job: str
    rank: int | None
    tag: str


def parse_key(key: str) -> RemoteKey | None:
    """``pt2:dynamo-pgo::<job>:<rank>:<tag>:c1`` → its parts; ``None`` for any other key."""
    if not (key.startswith(PREFIX) and key.endswith(SUFFIX)):
        return None
    m = _BODY_RE.match(key[len(PREFIX):-len(SUFFIX)])
    if not m:
        return None
    rank = None if m.group("rank") == "None" else int(m.group("rank"))
    return RemoteKey(key, m.group("job"), rank, m.group("tag"))


def url_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """The server torch would use: ``TORCHINDUCTOR_REDIS_URL``, else ``_HOST``/``_PORT``."""
    env = os.environ if env is None else env
    if env.get("TORCHINDUCTOR_REDIS_URL"):
        return env["TORCHINDUCTOR_REDIS_URL"]
    host, port = env.get("TORCHINDUCTOR_REDIS_HOST"), env.get("TORCHINDUCTOR_REDIS_PORT")
    if host or port:
        return f"redis://{host or 'localhost'}:{port or 6379}"
    return None


ENV_WORD = "env"


def resolve_url(url: str | None) -> str:
    """``--redis URL``, or for ``env`` (or ``""``) the environment's; a usage error if unset."""
    found = url if url and url != ENV_WORD else url_from_env()
    if not found:
        raise UsageError("--redis: no URL given and TORCHINDUCTOR_REDIS_URL (or _HOST/_PORT) "
                         "is not set", hint="dyncli suggest --redis redis://HOST:6379")
    return found


def decode_value(raw: bytes) -> bytes:
    """The pickle inside a stored value; ``ValueError`` naming what is wrong."""
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError("not JSON (torch stores {\"data\": \"<base64>\"})") from None
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, str):
        raise ValueError("no \"data\" string in the stored JSON")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("\"data\" is not base64") from None


# A fleet's cache holds one key per (job, rank, tag); past this, pick a job.
MAX_KEYS = 100_000


def _client() -> Any:
    """The ``redis`` package (an optional extra), or a usage error that says how to get it."""
    try:
        import redis
    except ImportError:
        raise UsageError("--redis needs the redis client, which is not installed",
                         hint=install_hint()) from None
    return redis


def connect(url: str) -> Any:
    """A client for ``url`` that has answered PING; one-line ``InputError`` otherwise."""
    redis = _client()
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=30)
        client.ping()
    except ValueError as e:
        raise InputError(f"--redis {url}: bad URL: {e}",
                         hint="Use redis://HOST:PORT[/DB] (or rediss:// or unix://)") from None
    except redis.exceptions.RedisError as e:
        first = (str(e).splitlines() or [type(e).__name__])[0]
        raise InputError(f"--redis {url}: {first}",
                         hint="Is redis-server running there? torch reads TORCHINDUCTOR_REDIS_URL") from None
    return client


def scan_keys(client: Any, job_id: str | None = None,
              limit: int | None = MAX_KEYS) -> list[RemoteKey]:
    """The PGO keys on the server (``SCAN``, batched), optionally of one job, sorted.

    More than ``limit`` keys is an ``InputError`` asking for one job (None: no limit).
    """
    pattern = PREFIX + (_GLOB_SPECIAL.sub(r"\\\1", job_id) + ":" if job_id is not None else "") + "*"
    keys: list[RemoteKey] = []
    for n, raw in enumerate(_scan(client, pattern)):
        if limit is not None and n >= limit:
            raise InputError(f"--redis: more than {limit:,} PGO keys"
                             + (f" for job {job_id!r}" if job_id else ""),
                             hint="Pick one job with --job-id (--list-jobs lists them)")
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        parsed = parse_key(text)
        if parsed is not None and (job_id is None or parsed.job == job_id):
            keys.append(parsed)
    return sorted(set(keys), key=lambda k: (k.job, -1 if k.rank is None else k.rank, k.tag))


def _scan(client: Any, pattern: str) -> Iterator[Any]:
    redis = _client()

    try:
        yield from client.scan_iter(match=pattern, count=1000)
    except redis.exceptions.RedisError as e:
        raise InputError(f"--redis: SCAN failed: {e}") from None


def read_redis(url: str, job_id: str | None, state: PgoState) -> PgoState:
    """Merge every PGO entry on the server (of ``job_id``) into ``state``; bad ones skipped."""
    redis = _client()
    client = connect(url)
    keys = scan_keys(client, job_id)
    if not keys:
        jobs = sorted(list_jobs_of(client))
        raise InputError(f"--redis {url}: no PGO entries" + (f" for job {job_id!r}" if job_id else ""),
                         hint=(f"Jobs found: {', '.join(jobs)}" if jobs else
                               "torch writes them with TORCH_DYNAMO_AUTOMATIC_DYNAMIC_REMOTE_PGO=1 "
                               "and TORCH_COMPILE_JOB_ID set"))
    seen_jobs = set(state.jobs)
    with one_budget():  # one bound on the whole scan of the keys, not one per key
        for k in keys:
            try:
                # STRLEN first: an oversized value is refused without downloading it
                size = client.strlen(k.key)
                raw = None if size > MAX_PGO_BYTES else client.get(k.key)
            except redis.exceptions.RedisError as e:
                state.skipped.append((k.key, clip(f"GET failed: {e}")))
                continue
            if size > MAX_PGO_BYTES:
                state.skipped.append((k.key, f"{size:,} bytes is more than any PGO state "
                                             f"(at most {MAX_PGO_BYTES >> 20} MB are read)"))
                continue
            if raw is None:  # expired or deleted between SCAN and GET
                state.skipped.append((k.key, "gone before it could be read"))
                continue
            try:
                if len(raw) > MAX_PGO_BYTES:
                    raise ValueError(f"{len(raw):,} bytes is more than any PGO state")
                frames = loads_state(decode_value(raw))
            except (ValueError, TypeError, AttributeError, KeyError, IndexError,
                    pickle.UnpicklingError, RecursionError, MemoryError) as e:
                state.skipped.append((k.key, clip(str(e)) or type(e).__name__))  # bounded text
                continue
            state.inputs.append(k.key)
            if k.job not in seen_jobs:
                seen_jobs.add(k.job)
                state.jobs.append(k.job)
            for key, entries in frames:
                for source, entry in entries.items():
                    state.add(key, source, entry)
    return state


def list_jobs(url: str) -> dict[str, list[int | None]]:
    """Job id → the ranks that stored PGO state for it (``--list-jobs``)."""
    return list_jobs_of(connect(url))


def list_jobs_of(client: Any) -> dict[str, list[int | None]]:
    """Job id → ranks, from one pass of ``SCAN``; memory grows with jobs and ranks, not keys."""
    found: dict[str, set[int | None]] = {}
    for raw in _scan(client, PREFIX + "*"):
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        k = parse_key(text)
        if k is not None:
            found.setdefault(k.job, set()).add(k.rank)
    return {job: sorted(ranks, key=lambda r: -1 if r is None else r)
            for job, ranks in sorted(found.items())}
