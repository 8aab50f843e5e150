"""pccstream A/B campaigns on Slurm with dask-jobqueue: this script starts a Dask scheduler
here (a login node), submits worker jobs, and runs `pccstream ab --cluster` against it.

    pip install dask-jobqueue            # in the checkout's venv, beside pccstream[cluster]
    .venv/bin/python infra/cluster/slurm.py --jobs 8 --queue normal --walltime 04:00:00 -- \\
        --arms vivace,bbr,cubic --scenario video-rttflap --runs 30 --duration 60 \\
        --db results.sqlite

Each Slurm job is one worker (one thread, the resource pccstream=1: one block at a time) on a
node that ran infra/bootstrap.sh in this shared checkout; the results stay in this process's
SQLite file. Interrupted? Run the same command with --resume (also on another cluster).
docs/cluster.md explains the design.
"""

from __future__ import annotations

import argparse
import sys

from dask_jobqueue import SLURMCluster

from pccstream.cli import main as pccstream_main
from pccstream.paths import checkout_root

CHECKOUT = checkout_root()
assert CHECKOUT is not None, "run this from the checkout the workers share (infra/bootstrap.sh)"


def parse() -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=4, help="worker jobs (one worker each)")
    parser.add_argument("--queue", help="Slurm partition (#SBATCH -p)")
    parser.add_argument("--account", help="Slurm account (#SBATCH -A)")
    parser.add_argument("--walltime", default="04:00:00", help="per worker job")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs booked per job (default 2)")
    parser.add_argument("--memory", default="8GB", help="memory per job")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    return parser.parse_args(argv[:split]), argv[split + 1 :]


def main() -> int:
    args, ab_args = parse()
    cluster = SLURMCluster(
        queue=args.queue,
        account=args.account,
        walltime=args.walltime,
        cores=1,  # one thread: one block at a time
        processes=1,
        job_cpu=args.cpus,  # but the run's Chromium, server and emulator get the node's CPUs
        memory=args.memory,
        job_script_prologue=[f"cd {CHECKOUT}"],
        python=str(CHECKOUT / ".venv" / "bin" / "python"),
        worker_extra_args=["--resources", "pccstream=1"],
    )
    print(cluster.job_script(), file=sys.stderr)
    cluster.scale(jobs=args.jobs)
    try:
        return pccstream_main(["ab", *ab_args, "--cluster", cluster.scheduler_address])
    finally:
        cluster.close()


if __name__ == "__main__":
    sys.exit(main())
