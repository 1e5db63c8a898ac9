"""Calls (SPEC §8): the call table and each pending call's phase, arguments, the
exclusive lanes, approval, elicitation, progress, tasks, how a call ends and what its
result shows the model.

Imports the ``catalog``, ``wire`` and ``config`` wings, never a server's runtime."""
