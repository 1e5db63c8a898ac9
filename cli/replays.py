"""What ``mcpbind check`` is asked to replay, checked before anything runs (SPEC §15):
the stages, a ``--replay`` file, the ``--corpus`` directory; and where the corpus that
ships with mcpbind is (SPEC §12.3)."""

from __future__ import annotations

import argparse
import json
import pathlib

import mcpbind

__all__ = ["STAGES", "UsageError", "bundled_corpus", "replay_problem", "usage_problem"]


class UsageError(Exception):
    """Found only once it runs (a replay whose events do not fit the model): exit 2."""


STAGES = ("explore", "odometer", "replays", "machines", "mutants")


def bundled_corpus() -> pathlib.Path:
    """The replay corpus installed with mcpbind: ``mcpbind/replays/`` in a wheel (package
    data), ``tests/replays/`` in a checkout installed in place."""
    root = pathlib.Path(mcpbind.__file__).parent
    installed = root / "replays"
    return installed if installed.is_dir() else root.parent / "tests" / "replays"


def usage_problem(args: argparse.Namespace) -> str | None:
    """Why ``check``'s arguments cannot run, in one line; None when they can."""
    if args.replay is not None:
        return replay_problem(pathlib.Path(args.replay))
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    unknown = sorted(set(stages) - set(STAGES))
    if unknown:
        return f"unknown stage(s): {', '.join(unknown)} (the stages: {', '.join(STAGES)})"
    if not stages and not args.mutants:
        return "--stages names no stage (the stages: " + ", ".join(STAGES) + ")"
    if args.corpus is not None and ("replays" in stages or "mutants" in stages or args.mutants):
        corpus = pathlib.Path(args.corpus)
        if not corpus.is_dir():
            return f"--corpus {corpus}: no such directory"
        if not any(corpus.glob("*.json")):
            return f"--corpus {corpus}: no replay files (*.json) in it"
    return None


def replay_problem(path: pathlib.Path) -> str | None:
    """Why ``path`` is not a replay file (SPEC §12.3), in one line; None when it is."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        return f"cannot read {path}: {error.strerror or error}"
    except UnicodeDecodeError:
        return f"{path} is not a replay file: not UTF-8 text"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return f"{path} is not a replay file: not JSON ({error.msg}, line {error.lineno})"
    if not isinstance(data, dict):
        return f"{path} is not a replay file: a JSON {type(data).__name__}, not an object"
    events = data.get("events")
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
        return f'{path} is not a replay file: no "events" list of strings (SPEC §12.3)'
    if data.get("policy", "revalidate") not in ("revalidate", "frozen"):
        return f'{path} is not a replay file: "policy" is neither "revalidate" nor "frozen"'
    return None
