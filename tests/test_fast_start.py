"""Fast start: the catalog cache, lazy startup and the optional-server grace (SPEC §11.12)."""

from __future__ import annotations

import pathlib
import sys
from typing import Any

import anyio
import attrs
import mcp_types as types
import pytest
import trio.testing
from mcp import StdioServerParameters
from mcp.server.lowlevel import Server

from mcpbind.impl import (
    CatalogCache,
    ConfigError,
    Host,
    HostConfig,
    ServerConfig,
    ServerStartupError,
)
from mcpbind.impl.config.catalog_cache import server_identity
from mcpbind.impl.config.host import parse_toml
from mcpbind.model import texts

STDIO_SERVER = pathlib.Path(__file__).parent / "testservers" / "stdio_server.py"


def tool(name: str) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}}


@attrs.define(eq=False)
class Counting:
    """A real in-process MCP server that counts what it is asked, with a catalog the test
    changes and an optional gate that holds every ``tools/list`` until it is set."""

    tools: list[str]
    listings: int = 0
    calls: list[str] = attrs.field(factory=list)
    gate: anyio.Event | None = None
    server: Server[Any] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        async def on_list_tools(
            ctx: Any, params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            self.listings += 1
            if self.gate is not None:
                await self.gate.wait()
            return types.ListToolsResult(
                tools=[types.Tool.model_validate(tool(n)) for n in self.tools]
            )

        async def on_call_tool(
            ctx: Any, params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            self.calls.append(params.name)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"ran {params.name}")]
            )

        self.server = Server("counting", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def lazy(counting: Counting, **options: Any) -> ServerConfig:
    return ServerConfig(target=counting.server, startup="lazy_when_cached", **options)


async def warm(cache: CatalogCache, **servers: ServerConfig) -> None:
    """Open a host once so that every server's listing is cached."""
    eager = {name: attrs.evolve(s, startup="eager") for name, s in servers.items()}
    async with Host.open(HostConfig(servers=eager, catalog_cache=cache)):
        pass


# --- the cache -------------------------------------------------------------------------


def identity(name: str) -> Any:
    return server_identity(ServerConfig(target=f"http://{name}.example/mcp"))


def test_the_cache_keeps_the_most_recently_used_entries_within_its_bound():
    cache = CatalogCache(max_entries=2)
    a, b, c = identity("a"), identity("b"), identity("c")
    cache.put(a, [tool("x")])
    cache.put(b, [tool("y")])
    assert cache.get(a) == (tool("x"),)  # a is now the most recently used
    cache.put(c, [tool("z")])
    assert cache.get(b) is None
    assert cache.get(a) == (tool("x"),)
    assert cache.get(c) == (tool("z"),)
    stats = cache.statistics()
    assert (stats.entries, stats.evictions, stats.hits, stats.misses) == (2, 1, 3, 1)


def test_the_default_bound_is_32_entries_and_30_minutes():
    cache = CatalogCache()
    assert (cache.max_entries, cache.max_age_sec) == (32, 1800.0)
    for i in range(40):
        cache.put(identity(f"s{i}"), [])
    assert cache.statistics().entries == 32
    assert cache.get(identity("s7")) is None
    assert cache.get(identity("s8")) == ()


def test_cache_entries_expire_after_their_maximum_age_on_the_injected_clock():
    now = [100.0]
    cache = CatalogCache(max_age_sec=60, clock=lambda: now[0])
    cache.put(identity("a"), [tool("x")])
    now[0] = 159.0
    assert cache.get(identity("a")) == (tool("x"),)
    now[0] = 160.0
    assert cache.get(identity("a")) is None
    assert cache.statistics().expirations == 1
    assert cache.statistics().entries == 0
    cache.put(identity("a"), [tool("y")])  # storing again restarts the age
    now[0] = 200.0
    assert cache.get(identity("a")) == (tool("y"),)


@pytest.mark.parametrize(
    ("field", "value"),
    [("max_entries", 0), ("max_entries", 1.5), ("max_age_sec", 0), ("max_age_sec", -1)],
)
def test_a_cache_with_an_impossible_bound_is_a_config_error(field, value):
    with pytest.raises(ConfigError, match=field):
        CatalogCache(**{field: value})


def test_a_cache_takes_a_maximum_age_under_a_second_and_a_single_entry():
    """The least bounds that hold: an age is any number > 0 (seed 82: ``> 0`` made ``> 1``
    survived), entries an integer >= 1."""
    cache = CatalogCache(max_entries=1, max_age_sec=0.5)
    assert (cache.max_entries, cache.max_age_sec) == (1, 0.5)


def test_the_identity_is_the_same_whatever_order_the_headers_or_environment_come_in():
    """Headers and environment are mappings: the same pairs in another order (a TOML file
    reordered) are the same server, whose cached catalog is reused (issue 33: the secret
    digest's ``sort_keys=True`` made ``False`` survived)."""
    headers = {"Authorization": "Bearer t", "X-Team": "blue"}
    env = {"K": "v", "A": "b"}
    for one, two in (
        (
            ServerConfig(target="http://h.example/mcp", headers=headers),
            ServerConfig(target="http://h.example/mcp", headers=dict(reversed(headers.items()))),
        ),
        (
            ServerConfig(target=StdioServerParameters(command="srv", env=env)),
            ServerConfig(
                target=StdioServerParameters(command="srv", env=dict(reversed(env.items())))
            ),
        ),
    ):
        assert server_identity(one).digest == server_identity(two).digest


def test_the_identity_follows_target_and_tool_filters_not_the_server_name():
    base = ServerConfig(target="http://h.example/mcp")
    key = server_identity(base).digest
    assert server_identity(ServerConfig(target="http://h.example/mcp")).digest == key
    changed = [
        ServerConfig(target="http://other.example/mcp"),
        attrs.evolve(base, enabled_tools=["read"]),
        attrs.evolve(base, disabled_tools=["write"]),
        attrs.evolve(base, headers={"Authorization": "Bearer t"}),
        ServerConfig(target=StdioServerParameters(command="srv", args=["a"])),
        ServerConfig(target=StdioServerParameters(command="srv", args=["b"])),
        ServerConfig(target=StdioServerParameters(command="srv", env={"K": "v"})),
    ]
    digests = {server_identity(c).digest for c in changed}
    assert key not in digests
    assert len(digests) == len(changed)
    one, two = Counting(["x"]), Counting(["x"])
    assert server_identity(ServerConfig(target=one.server)) != server_identity(
        ServerConfig(target=two.server)
    )


def test_cache_keys_hold_no_secret_in_clear():
    secret = "s3cr3t-token-value"
    configs = [
        ServerConfig(target="http://h.example/mcp", headers={"Authorization": f"Bearer {secret}"}),
        ServerConfig(target=StdioServerParameters(command="srv", env={"API_KEY": secret})),
    ]
    cache = CatalogCache()
    for config in configs:
        ident = server_identity(config)
        cache.put(ident, [tool("x")])
        assert len(ident.digest) == 64
        assert int(ident.digest, 16) >= 0  # a SHA-256 hex digest, nothing else
        assert secret not in ident.digest
        assert secret not in repr(ident)
    assert not any(secret in key for key in cache.keys())  # noqa: SIM118 - keys() is the API under test
    assert secret not in repr(cache.statistics())


# --- lazy_when_cached ------------------------------------------------------------------


async def test_a_lazy_server_with_a_cached_catalog_opens_unconnected_and_connects_on_first_call():
    cache = CatalogCache()
    counting = Counting(["read", "write"])
    await warm(cache, s=lazy(counting))
    assert counting.listings == 1
    async with Host.open(HostConfig(servers={"s": lazy(counting)}, catalog_cache=cache)) as host:
        snap = host.sample()
        assert snap.generation == 1  # the cached catalog, installed by one publication
        assert sorted(snap.names) == ["mcp__s__read", "mcp__s__write"]
        assert counting.listings == 1  # nothing was listed at open
        assert host.statistics().connected == {"s": False}
        result = await host.call(snap, "c1", "mcp__s__read", {})
        assert (result.status, result.output.splitlines()[-1]) == ("ok", "ran read")
        assert counting.listings == 2  # the first call connected and refreshed
        assert counting.calls == ["read"]
        assert host.statistics().connected == {"s": True}
        assert host.sample().generation == 1  # the live catalog was the cached one


async def test_a_lazy_server_without_a_cache_entry_starts_eagerly():
    counting = Counting(["read"])
    config = HostConfig(servers={"s": lazy(counting)}, catalog_cache=CatalogCache())
    async with Host.open(config) as host:
        assert counting.listings == 1
        assert host.statistics().connected == {"s": True}
        assert "mcp__s__read" in host.sample().names


async def test_the_first_refresh_of_a_lazy_server_connects_and_reports_its_outcome():
    cache = CatalogCache()
    counting = Counting(["read"])
    await warm(cache, s=lazy(counting))
    counting.tools = ["read", "grep"]
    async with Host.open(HostConfig(servers={"s": lazy(counting)}, catalog_cache=cache)) as host:
        outcome = await host.refresh("s")
        assert (outcome.status, outcome.generation) == ("installed", 2)
        assert sorted(host.sample().names) == ["mcp__s__grep", "mcp__s__read"]
    assert cache.get(server_identity(lazy(counting))) == (tool("read"), tool("grep"))


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
async def test_a_changed_live_catalog_reaches_the_next_step_and_the_current_step_keeps_its_plan(
    policy,
):
    cache = CatalogCache()
    counting = Counting(["keep", "gone"])
    await warm(cache, s=lazy(counting))
    counting.tools = ["keep", "new"]
    config = HostConfig(servers={"s": lazy(counting)}, catalog_cache=cache, binding_policy=policy)
    async with Host.open(config) as host:
        first = host.sample()
        assert sorted(first.names) == ["mcp__s__gone", "mcp__s__keep"]
        gone = await host.call(first, "c1", "mcp__s__gone", {})
        if policy == "revalidate":
            assert gone.status == "unavailable"
            assert gone.output == texts.UNAVAILABLE.format(
                name="mcp__s__gone", server="s", tool="gone"
            )
            assert counting.calls == []
        else:
            assert gone.status == "ok"  # frozen: sent as captured; this server answers
            assert counting.calls == ["gone"]
        kept = await host.call(first, "c2", "mcp__s__keep", {})
        assert kept.status == "ok"
        assert sorted(first.names) == ["mcp__s__gone", "mcp__s__keep"]
        second = host.sample()
        assert second.generation == first.generation + 1
        assert sorted(second.names) == ["mcp__s__keep", "mcp__s__new"]


async def test_calls_that_arrive_while_a_lazy_server_starts_all_wait_for_it():
    cache = CatalogCache()
    counting = Counting(["read"])
    await warm(cache, s=lazy(counting))
    counting.gate = anyio.Event()
    async with Host.open(HostConfig(servers={"s": lazy(counting)}, catalog_cache=cache)) as host:
        snap = host.sample()
        results: list[Any] = []

        async def call(call_id: str) -> None:
            results.append(await host.call(snap, call_id, "mcp__s__read", {}))

        async with anyio.create_task_group() as nursery:
            nursery.start_soon(call, "c1")
            nursery.start_soon(call, "c2")
            await anyio.wait_all_tasks_blocked()
            assert counting.listings == 2  # one connection, one first listing
            assert results == []
            assert host.statistics().calls_in_flight == 2
            counting.gate.set()
        assert sorted((r.call_id, r.status) for r in results) == [("c1", "ok"), ("c2", "ok")]


async def test_a_call_during_the_first_refresh_of_a_lazy_server_waits_for_it():
    """INV-11: once connected, a lazily started server still gets no tools/call until its
    first refresh has ended; the calls that waited then go out in acceptance order."""
    cache = CatalogCache()
    counting = Counting(["first", "second"])
    await warm(cache, s=lazy(counting))
    counting.gate = anyio.Event()
    async with Host.open(HostConfig(servers={"s": lazy(counting)}, catalog_cache=cache)) as host:
        snap = host.sample()
        results: list[Any] = []

        async def call(call_id: str, name: str) -> None:
            results.append(await host.call(snap, call_id, name, {}))

        async with anyio.create_task_group() as nursery:
            nursery.start_soon(call, "c1", "mcp__s__first")
            await anyio.wait_all_tasks_blocked()
            assert counting.listings == 2  # connected: its first listing is held
            assert host.statistics().connected == {"s": True}
            nursery.start_soon(call, "c2", "mcp__s__second")
            await anyio.wait_all_tasks_blocked()
            assert counting.calls == []  # c2 waits too, although the server is connected
            assert host.statistics().calls_in_flight == 2
            counting.gate.set()
        assert counting.calls == ["first", "second"]  # exclusive: one lane, in order
        assert sorted((r.call_id, r.status) for r in results) == [("c1", "ok"), ("c2", "ok")]


async def test_a_waiting_call_to_a_lazy_server_can_be_cancelled():
    cache = CatalogCache()
    counting = Counting(["read"])
    await warm(cache, s=lazy(counting))
    counting.gate = anyio.Event()
    async with Host.open(HostConfig(servers={"s": lazy(counting)}, catalog_cache=cache)) as host:
        results: list[Any] = []

        async def call() -> None:
            results.append(await host.call(host.sample(), "c1", "mcp__s__read", {}))

        async with anyio.create_task_group() as nursery:
            nursery.start_soon(call)
            await anyio.wait_all_tasks_blocked()
            host.cancel("c1")
        assert [(r.status, r.output) for r in results] == [("cancelled", texts.CANCELLED)]
        counting.gate.set()
    assert counting.calls == []


@pytest.mark.trio
async def test_a_call_whose_deadline_passes_while_a_lazy_server_starts_times_out_unsent(
    autojump_clock: trio.testing.MockClock,
):
    cache = CatalogCache()
    counting = Counting(["read"])
    await warm(cache, s=lazy(counting))
    counting.gate = anyio.Event()
    server = lazy(counting, tool_timeout_sec=5)
    async with Host.open(HostConfig(servers={"s": server}, catalog_cache=cache)) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__read", {})
        counting.gate.set()
    assert result.status == "timed_out"
    assert result.output == texts.TIMED_OUT_STARTING.format(seconds="5 seconds", server="s")
    assert counting.calls == []


def unreachable_stdio(**options: Any) -> ServerConfig:
    target = StdioServerParameters(command=sys.executable, args=["-c", "raise SystemExit(3)"])
    return ServerConfig(target=target, startup="lazy_when_cached", **options)


@pytest.mark.parametrize("required", [False, True])
async def test_a_lazy_server_that_fails_to_start_fails_the_waiting_call_not_the_open(required):
    cache = CatalogCache()
    # A long startup deadline: the waiting call must end when the start fails, not when
    # the deadline passes (the guard below is far shorter than the deadline).
    server = unreachable_stdio(required=required, startup_timeout_sec=3600)
    cache.put(server_identity(server), [tool("read")])
    config = HostConfig(
        servers={"s": server},
        catalog_cache=cache,
        reconnect_initial_sec=60,
        reconnect_max_sec=60,
    )
    async with Host.open(config) as host:
        snap = host.sample()
        assert "mcp__s__read" in snap.names
        with anyio.fail_after(300):
            result = await host.call(snap, "c1", "mcp__s__read", {})
        assert result.status == "failed"
        assert result.output == texts.NOT_CONNECTED.format(server="s")
        [status] = host.server_status()
        assert (status.connected, status.tools) == (False, 1)  # the cached catalog stays
        assert status.error is not None
        again = await host.call(snap, "c2", "mcp__s__read", {})  # now fail fast (INV-8)
        assert again.output == texts.NOT_CONNECTED.format(server="s")
        refreshed = await host.refresh("s")
        assert (refreshed.status, refreshed.kind) == ("rejected", "disconnected")


async def test_an_eager_server_that_fails_to_start_still_fails_open_even_with_a_cached_catalog():
    cache = CatalogCache()
    server = attrs.evolve(unreachable_stdio(required=True), startup="eager")
    cache.put(server_identity(server), [tool("read")])
    with pytest.raises(ServerStartupError):
        async with Host.open(HostConfig(servers={"s": server}, catalog_cache=cache)):
            pass


@pytest.mark.trio
async def test_a_cached_catalog_installs_in_configuration_order(
    autojump_clock: trio.testing.MockClock,
):
    """SPEC §11.3: a collision resolves the same way whatever the start order, even when
    the server before a cached one is slow to list."""
    cache = CatalogCache()
    first, second = Counting(["t"]), Counting(["t"])
    await warm(cache, a_b=lazy(second))
    first.gate = anyio.Event()
    servers = {"a.b": ServerConfig(target=first.server), "a_b": lazy(second)}

    async def release_later() -> None:
        await anyio.sleep(5)
        assert first.gate is not None
        first.gate.set()

    async with anyio.create_task_group() as nursery:
        nursery.start_soon(release_later)
        async with Host.open(HostConfig(servers=servers, catalog_cache=cache)) as host:
            names = {(b.server, b.remote_name): n for n, b in host.sample().names.items()}
    assert names[("a.b", "t")] == "mcp__a_b__t"
    assert names[("a_b", "t")].startswith("mcp__a_b__t_")
    assert second.listings == 1  # the warm-up only


async def test_every_successful_refresh_stores_its_listing_and_a_rejected_one_does_not():
    cache = CatalogCache()
    counting = Counting(["read"])
    config = HostConfig(servers={"s": ServerConfig(target=counting.server)}, catalog_cache=cache)
    ident = server_identity(ServerConfig(target=counting.server))
    async with Host.open(config) as host:
        assert cache.get(ident) == (tool("read"),)
        counting.tools = ["read", "read"]  # listed twice: rejected
        assert (await host.refresh("s")).status == "rejected"
        assert cache.get(ident) == (tool("read"),)
        counting.tools = ["grep"]
        assert (await host.refresh("s")).status == "installed"
        assert cache.get(ident) == (tool("grep"),)


@pytest.mark.parametrize("phase", ["connected", "dormant", "connecting"])
async def test_reconnect_returns_at_once_and_connects_nothing_for_a_server_in_no_backoff(
    phase: str,
):
    """SPEC §11.18: ``host.reconnect`` has no effect on a server that is connected, dormant
    (``lazy_when_cached``) or whose first attempt is under way: it returns before anything
    else happens, no new connection listed, and the server's state unchanged."""
    cache = CatalogCache()
    counting = Counting(["read"])
    if phase == "dormant":
        await warm(cache, s=lazy(counting))
    config = lazy(counting) if phase == "dormant" else ServerConfig(target=counting.server)
    if phase == "connecting":
        counting.gate = anyio.Event()  # its first listing is held: the attempt is under way
    host_config = HostConfig(servers={"s": config}, catalog_cache=cache)
    async with Host.open(host_config, wait_ready=phase != "connecting") as host:
        await anyio.wait_all_tasks_blocked()
        listings, (before,) = counting.listings, host.server_status()
        returned: list[bool] = []

        async def reconnect() -> None:
            await host.reconnect("s")
            returned.append(True)

        async with anyio.create_task_group() as nursery:
            nursery.start_soon(reconnect)
            await anyio.wait_all_tasks_blocked()
            try:
                assert returned == [True]
                assert counting.listings == listings
                assert host.server_status() == [before]
            finally:
                nursery.cancel_scope.cancel()
                if counting.gate is not None:
                    counting.gate.set()


# --- the grace for optional servers ----------------------------------------------------


@pytest.mark.trio
async def test_a_slow_optional_server_starts_absent_after_the_grace_and_joins_later(
    autojump_clock: trio.testing.MockClock,
):
    slow, fast = Counting(["late"]), Counting(["early"])
    slow.gate = anyio.Event()
    config = HostConfig(
        servers={
            "slow": ServerConfig(target=slow.server),
            "fast": ServerConfig(target=fast.server),
        },
        optional_startup_grace_sec=1.0,
        catalog_cache=CatalogCache(),
    )
    async with Host.open(config) as host:
        snap = host.sample()
        assert sorted(snap.names) == ["mcp__fast__early"]
        slow.gate.set()
        with anyio.fail_after(10):
            while "mcp__slow__late" not in host.sample().names:
                await anyio.sleep(0.1)
        assert host.sample().generation == snap.generation + 1  # one normal publication
        result = await host.call(host.sample(), "c1", "mcp__slow__late", {})
        assert result.status == "ok"


@pytest.mark.trio
async def test_a_required_server_is_waited_for_beyond_the_grace_even_behind_an_absent_one(
    autojump_clock: trio.testing.MockClock,
):
    """The first-install order must not make the required server wait for the optional
    one that the host stopped waiting for."""
    optional, required = Counting(["o"]), Counting(["r"])
    optional.gate, required.gate = anyio.Event(), anyio.Event()
    released: list[str] = []
    config = HostConfig(
        servers={
            "opt": ServerConfig(target=optional.server, list_timeout_sec=0),
            "req": ServerConfig(target=required.server, required=True),
        },
        optional_startup_grace_sec=1.0,
        catalog_cache=CatalogCache(),
    )

    async def release_later() -> None:
        await anyio.sleep(5)
        released.append("req")
        required.gate.set()

    with anyio.fail_after(20):
        async with anyio.create_task_group() as nursery:
            nursery.start_soon(release_later)
            async with Host.open(config) as host:
                assert released == ["req"]
                assert sorted(host.sample().names) == ["mcp__req__r"]
                optional.gate.set()
                while "mcp__opt__o" not in host.sample().names:
                    await anyio.sleep(0.1)


@pytest.mark.trio
async def test_without_a_grace_the_host_waits_for_every_optional_server(
    autojump_clock: trio.testing.MockClock,
):
    slow = Counting(["late"])
    slow.gate = anyio.Event()
    config = HostConfig(
        servers={"slow": ServerConfig(target=slow.server)}, catalog_cache=CatalogCache()
    )

    async def release_later() -> None:
        await anyio.sleep(5)
        assert slow.gate is not None
        slow.gate.set()

    async with anyio.create_task_group() as nursery:
        nursery.start_soon(release_later)
        async with Host.open(config) as host:
            assert sorted(host.sample().names) == ["mcp__slow__late"]


# --- configuration ---------------------------------------------------------------------


def test_toml_sets_the_grace_and_per_server_startup_in_the_mcpbind_table():
    loaded = parse_toml(
        """
        [mcp_servers.docs]
        url = "http://docs.example/mcp"
        [mcp_servers.fs]
        command = "fs-server"

        [mcpbind]
        optional_startup_grace_sec = 1.5
        [mcpbind.startup]
        docs = "lazy_when_cached"
        """
    )
    config = loaded.config
    assert config.optional_startup_grace_sec == 1.5
    assert config.servers["docs"].startup == "lazy_when_cached"
    assert config.servers["fs"].startup == "eager"
    assert loaded.warnings == ()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('[mcpbind.startup]\nnope = "eager"', r"\[mcpbind.startup\] key 'nope': names no server"),
        ('[mcpbind.startup]\nfs = "lazy"', r"\[mcpbind.startup\] key 'fs': must be one of"),
        (
            "[mcpbind]\noptional_startup_grace_sec = -1",
            r"optional_startup_grace_sec': must be >= 0",
        ),
    ],
)
def test_bad_fast_start_settings_are_config_errors_naming_table_and_key(table, message):
    text = f'[mcp_servers.fs]\ncommand = "fs-server"\n{table}\n'
    with pytest.raises(ConfigError, match=message):
        parse_toml(text, path="c.toml")


def test_the_startup_policy_and_grace_are_validated_when_built():
    with pytest.raises(ConfigError, match="startup must be one of"):
        ServerConfig(target="http://h.example/mcp", startup="later")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="optional_startup_grace_sec"):
        HostConfig(optional_startup_grace_sec=-0.5)
    with pytest.raises(ConfigError, match="catalog_cache"):
        HostConfig(catalog_cache={})  # type: ignore[arg-type]


async def test_a_lazy_server_whose_cached_catalog_is_rejected_connects_at_open():
    """SPEC §11.12: a cached listing the catalog rules reject now (a tool listed twice) is
    not installed; the server connects and lists at open as an eager one does (mutation
    testing, issue 33: install_cached's ``return False`` made ``True`` leaves it
    unconnected, its catalog empty; _install_cached's leaves its start unreported, so the
    open never returns, a timeout the mutation run counts as a kill)."""
    cache = CatalogCache()
    counting = Counting(["read"])
    cache.put(server_identity(lazy(counting)), [tool("gone"), tool("gone")])
    async with Host.open(HostConfig(servers={"s": lazy(counting)}, catalog_cache=cache)) as host:
        assert counting.listings == 1
        assert host.statistics().connected == {"s": True}
        assert list(host.sample().names) == ["mcp__s__read"]
    assert cache.get(server_identity(lazy(counting))) == (tool("read"),)
