"""A/B experiments: blocked, randomized, resumable browser runs of congestion controllers.

- `design`: what an experiment is (arms, scenario, player settings, seed) and its schedule.
- `store`: SQLite storage, one atomic commit per finished run, resume, export.
- `runner`: one run (emulator + server + headless Chromium viewers).
- `experiment`: the loop that runs a schedule against a store with an injectable runner.
- `stats`: bootstrap confidence intervals and paired differences (pure).
- `report`: the self-contained HTML report.
- `pool`: one paired comparison over the blocks of several campaigns of one setup.
- `progress`: progress bar with ETA.
- `cli`: `pccstream ab` and `pccstream report`.

The browser, server-process and CPU helpers it drives are in `pccstream.harness`.
"""
