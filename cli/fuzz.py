"""``mcpbind fuzz``: the nightly job — the property machines, sharded, for a while (SPEC §12.6).

N worker processes, each with its own seeds, run the lockstep machine (both policies) and
the real-servers machine over and over until the time is up, against one shared example
database: a directory (``DirectoryBasedExampleDatabase``, safe across processes) or Redis
(Hypothesis's ``RedisExampleDatabase``), so several machines share what they find. Every
failure is written as a replay file; the exit status is 1 if anything failed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import pathlib
import sys
import time
from typing import Any

from mcpbind.model.suite import worker_pool
from mcpbind.properties.variants import LOCKSTEP_VARIANTS, PLAIN

from .progress import Progress

__all__ = ["main"]


def _database(spec: str) -> Any:
    from hypothesis.database import DirectoryBasedExampleDatabase  # noqa: PLC0415

    if spec.startswith("redis://"):
        try:
            import redis  # noqa: PLC0415
            from hypothesis.extra.redis import RedisExampleDatabase  # noqa: PLC0415
        except ImportError as error:  # pragma: no cover - depends on the install
            raise SystemExit(
                "mcpbind fuzz: a redis:// database needs the redis package: "
                "pip install 'mcpbind[fuzz]'"
            ) from error
        return RedisExampleDatabase(redis.Redis.from_url(spec))
    return DirectoryBasedExampleDatabase(spec)


#: What one round runs, in order (SPEC §12.6): each lockstep variant under each policy
#: (``<variant>-<policy>``), then the real-server machine.
MACHINES = (
    *(f"{stage}-{policy}" for stage in LOCKSTEP_VARIANTS for policy in ("revalidate", "frozen")),
    "real-servers",
)


def _worker(index: int, deadline: float, db: str, plant: str | None, out: str) -> dict[str, Any]:
    """One shard: run the machines with fresh seeds until the deadline."""
    from hypothesis import settings  # noqa: PLC0415

    from mcpbind.impl.seams import PRODUCTION  # noqa: PLC0415
    from mcpbind.properties import profiles  # noqa: PLC0415
    from mcpbind.properties.lockstep import MachineFailure, replay_file  # noqa: PLC0415
    from mcpbind.properties.machines import lockstep_property  # noqa: PLC0415
    from mcpbind.properties.realservers import real_servers_property  # noqa: PLC0415

    profiles.load("nightly", database=_database(db))
    seams = PRODUCTION
    if plant is not None:
        from mcpbind.properties.impl_mutants import impl_mutant  # noqa: PLC0415

        seams = impl_mutant(plant).seams
    failures: list[dict[str, Any]] = []
    examples = [0]

    def hook() -> None:
        examples[0] += 1
        if _COUNTER is not None:  # the parent's progress line
            with _COUNTER.get_lock():
                _COUNTER.value += 1

    round_ = 0
    # The first round always runs whole, so that a short run on a slow machine still
    # checks something; later rounds stop at the deadline.
    while (round_ == 0 or time.time() < deadline) and not failures:
        for name in MACHINES:
            if round_ > 0 and time.time() >= deadline:
                break
            variant = PLAIN
            if name == "real-servers":
                test = real_servers_property(seams=seams)
            else:
                stage, policy = name.rsplit("-", 1)
                variant = LOCKSTEP_VARIANTS[stage]
                test = lockstep_property(
                    policy,  # type: ignore[arg-type]
                    seams=seams,
                    on_example=hook,
                    variant=variant,
                )
            budget = settings(max_examples=50, print_blob=True)
            try:
                # No @seed: it would turn the shared database off. Each worker process
                # draws its own random seeds; the database carries what they find.
                budget(test)()
            except MachineFailure as error:
                entry: dict[str, Any] = {
                    "worker": index,
                    "machine": name,
                    "check": error.check,
                    "detail": error.detail,
                    "trace": error.trace,
                }
                if name != "real-servers":
                    path = pathlib.Path(out) / f"fuzz-{name}-w{index}-{int(time.time())}.json"
                    path.parent.mkdir(parents=True, exist_ok=True)
                    text = replay_file(error.trace, policy=policy, variant=variant)
                    path.write_text(text, encoding="utf-8")
                    entry["replay_file"] = str(path)
                failures.append(entry)
                break
            except (
                Exception
            ) as error:  # returned, not raised: a pool hangs on what it cannot unpickle
                failures.append(
                    {
                        "worker": index,
                        "machine": name,
                        "check": f"crash: {type(error).__name__}",
                        "detail": str(error),
                        "trace": [],
                    }
                )
                break
        round_ += 1
    return {"worker": index, "rounds": round_, "examples": examples[0], "failures": failures}


_COUNTER: Any = None
"""In a worker process: the examples run by every worker so far (shared memory)."""


def ignore_sigint(counter: Any = None) -> None:
    """In a worker process: Ctrl-C is the parent's to report (the pool ends the workers);
    ``counter`` counts the examples for the parent's progress line."""
    import signal  # noqa: PLC0415

    global _COUNTER  # noqa: PLW0603 - one per worker process, set once as it starts
    _COUNTER = counter

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def main(args: argparse.Namespace) -> int:
    if args.minutes <= 0 or args.workers < 1:
        print("mcpbind fuzz: --minutes must be > 0 and --workers >= 1", file=sys.stderr)
        return 2
    if args.plant is not None:
        from mcpbind.properties.impl_mutants import impl_mutant  # noqa: PLC0415

        try:
            impl_mutant(args.plant)
        except KeyError as error:
            print(f"mcpbind fuzz: {error.args[0]}", file=sys.stderr)
            return 2
    _database(args.db)  # fail early on a bad database
    started = time.time()
    deadline = started + args.minutes * 60
    counter = multiprocessing.get_context("spawn").Value("q", 0)
    progress = Progress(quiet=args.json, plain=False)
    seconds = args.minutes * 60
    begun = progress.start(f"fuzz: {args.workers} worker(s)", total=seconds)
    jobs = [(i, deadline, args.db, args.plant, args.failures) for i in range(args.workers)]
    try:
        with worker_pool(args.workers, ignore_sigint, "spawn", (counter,)) as pool:
            pending = pool.starmap_async(_worker, jobs)
            while not pending.ready():
                pending.wait(0.5)
                elapsed = min(time.time() - started, seconds)
                progress.set(elapsed, progress.rate(counter.value, "examples"))
            shards = pending.get()
    finally:
        progress.close()
    progress.done(
        f"fuzz: {sum(s['examples'] for s in shards)} examples",
        begun,
        "FAIL" if any(s["failures"] for s in shards) else "ok",
    )
    failures = [f for shard in shards for f in shard["failures"]]
    report = {
        "seconds": round(time.time() - started, 1),
        "workers": args.workers,
        "database": args.db,
        "examples": sum(s["examples"] for s in shards),
        "shards": shards,
        "failures": failures,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"mcpbind fuzz: {args.workers} worker(s), {report['seconds']} s, "
            f"{report['examples']} lockstep examples, {len(failures)} failure(s)"
        )
        for failure in failures:
            where = f"{failure['machine']} (worker {failure['worker']})"
            print(f"  {where}: {failure['check']}: {failure['detail']}")
            if "replay_file" in failure:
                print(f"    replay with: mcpbind check --replay {failure['replay_file']}")
    return 1 if failures else 0
