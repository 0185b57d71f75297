"""bench's torch-free core: what a bench result is, and what it means.

compare, suites, ``--resume`` and the renderers import only this layer (and nothing here
imports torch or bench's engine modules; a test checks it):

- ``strategy``: the strategy table, one row per strategy (and the compile modes): everything
  about a strategy, read by everything else (``dyncli.config`` takes its names from it);
- ``result``: the result model and the one owner of the bench JSON (``to_dict``/``from_dict``);
  ``run_parts``: its environment, ranks, pgo passes, replay, pad buckets and restarts;
  ``fields``: tolerant JSON reads;
- ``status``: :class:`~dyncli.bench.core.status.Status` (a StrEnum), severity, ``short_error``;
- ``stats``: medians, speedups, summaries, p-values;
- ``stream_file``: reading a request stream (``--shapes``/``--sizes``);
  ``plan``: the shapes to measure and the request order;
- ``cost``: the stream cost model, pad buckets and the recommendation rule;
  ``recommend``: from a measured result to stream costs and the recommendation;
- ``buckets``: ``--buckets auto``, the bucket set that costs a stream least;
  ``restarts``: a service that restarts (``--start warm``, ``--requests-per-start``);
  ``apply``: a strategy's plan, built from its row: what bench measures, what
  ``recommendation.apply`` says; ``emit``: the plan's forms (``--emit python|env|toml``);
- ``settings``: the checks across ``[bench]`` options;
- ``suites``: suite definitions; ``suite_result``: a suite run and its document.
"""
