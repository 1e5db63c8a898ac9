"""The client the official MCP conformance suite drives (``scripts/conformance``).

``python client.py URL``: one host on the scenario server at URL, through mcpbind's
public API only. It samples a step and calls every tool of it once, with arguments made
from each tool's input schema, accepting any elicitation with an empty form (so the
schema's defaults are what the server gets, SEP-1034). The authorization scenarios get
OAuth through the same public API (``ServerConfig.oauth``, ``HostConfig.oauth_handler``):
the settings from what the suite hands its client, an in-memory token store, and a
handler that takes the authorization server's redirect in place of a browser. Exit 0
when the host opened and every call ended; the suite itself judges what the server saw.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import anyio

from mcpbind.impl import (
    AssertionValue,
    AuthorizationRequest,
    AuthorizationResponse,
    ElicitationAnswer,
    ElicitationRequest,
    Host,
    HostConfig,
    MemoryTokenStore,
    OAuthConfig,
    ServerConfig,
    response_from_redirect,
)

_SAMPLES: dict[str, Any] = {"string": "test", "integer": 2, "number": 3, "boolean": True}


def arguments_for(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A value of each property's type (the first of an enum)."""
    made: dict[str, Any] = {}
    for name, field in (schema.get("properties") or {}).items():
        if not isinstance(field, Mapping):
            continue
        if field.get("enum"):
            made[name] = field["enum"][0]
        elif field.get("type") in _SAMPLES:
            made[name] = _SAMPLES[field["type"]]
    return made


async def accept_empty(request: ElicitationRequest) -> ElicitationAnswer:
    return ElicitationAnswer("accept", {})


IDENTITY_ASSERTION = ("auth/enterprise-managed-authorization",)
"""0.2's name for 0.1.16's ``auth/cross-app-access-*`` (SEP-990)."""
ECHO_TOOL = "json_schema_echo"
"""``json-schema-2020-12-preservation`` (0.2): called with the schema of the other tool,
as the host received it, so that the suite can see which keywords survived."""

CIMD_URL = "https://conformance-test.local/client-metadata.json"
"""The suite's client metadata document URL (it never fetches it)."""


async def issuer_of(url: str) -> str:
    """The authorization server the MCP server names in its resource metadata."""
    import httpx2

    parts = urlsplit(url)
    found = f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}"
    async with httpx2.AsyncClient() as http:
        answer = await http.get(found)
    return str(answer.json()["authorization_servers"][0])


def identity_assertion(context: Mapping[str, Any]) -> Any:
    """SEP-990's first leg, the host's own: exchange the identity provider's ID token for
    an ID-JAG for the authorization server (RFC 8693)."""

    async def assertion(audience: str, resource: str) -> str:
        import httpx2

        form = {
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "subject_token": context["idp_id_token"],
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "audience": audience,
            "resource": resource,
            "client_id": context["idp_client_id"],
        }
        async with httpx2.AsyncClient() as http:
            answer = await http.post(context["idp_token_endpoint"], data=form)
        answer.raise_for_status()
        return str(answer.json()["access_token"])

    return assertion


async def oauth_for(url: str, scenario: str, context: Mapping[str, Any]) -> OAuthConfig:
    """The server's OAuth settings from what the suite hands its client
    (``MCP_CONFORMANCE_CONTEXT``): a pre-registered client, or the credentials of a
    client-credentials grant, or a workload's JWT."""
    if scenario.startswith("auth/cross-app-access") or scenario in IDENTITY_ASSERTION:
        return OAuthConfig(
            grant="identity_assertion",
            client_id=context["client_id"],
            client_secret=context["client_secret"],
            issuer=await issuer_of(url),
            assertion=identity_assertion(context),
        )
    if scenario == "auth/wif-jwt-bearer":  # SEP-1933: the workload's JWT, a public client
        return OAuthConfig(
            grant="jwt_bearer",
            client_id=context["client_id"],
            issuer=await issuer_of(url),
            assertion=AssertionValue(context["valid_jwt"]),
        )
    if scenario.startswith("auth/dpop"):  # SEP-1932: DPoP-bound tokens, as offered
        return OAuthConfig(client_metadata_url=CIMD_URL, dpop=True)
    if scenario.startswith("auth/client-credentials"):
        if "private_key_pem" in context:
            return OAuthConfig(
                grant="client_credentials",
                client_id=context["client_id"],
                private_key=context["private_key_pem"],
                signing_algorithm=context.get("signing_algorithm", "ES256"),
            )
        return OAuthConfig(
            grant="client_credentials",
            client_id=context["client_id"],
            client_secret=context["client_secret"],
        )
    if "client_id" in context:
        return OAuthConfig(
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
            client_metadata_url=CIMD_URL,
        )
    return OAuthConfig(client_metadata_url=CIMD_URL)


async def approve_in_place(request: AuthorizationRequest) -> AuthorizationResponse:
    """The suite's authorization server approves a plain GET of its authorization URL and
    redirects to the client: no browser, no listener."""
    import httpx2

    async with httpx2.AsyncClient() as http:
        answer = await http.get(request.url, follow_redirects=False)
    return response_from_redirect(request.server, answer.headers.get("location", ""))


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    oauth = await oauth_for(url, scenario, context)
    server = ServerConfig(target=url, required=True, oauth=oauth)
    config = HostConfig(
        servers={"conformance": server},
        elicitation="ask",
        elicitation_handler=accept_empty,
        oauth_store=MemoryTokenStore(),
        oauth_handler=approve_in_place,
    )
    async with Host.open(config) as host:
        step = host.sample()
        by_raw: dict[str, str] = {}
        for name in sorted(step.names):
            binding = step.binding(name)
            if binding is not None and binding.server is not None:
                by_raw[binding.remote_name] = name
        calls = [
            (raw, arguments_for(step.full_input_schema(name) or {})) for raw, name in by_raw.items()
        ]
        if "toolCalls" in context:  # the calls the scenario asks for, arguments as given
            calls = [(call["name"], call.get("arguments") or {}) for call in context["toolCalls"]]
        elif ECHO_TOOL in by_raw:
            (focal,) = (raw for raw in by_raw if raw != ECHO_TOOL)
            # The frozen schema goes back as it is: mcpbind sends it as plain JSON (§8.1).
            calls = [(ECHO_TOOL, {"schema": step.full_input_schema(by_raw[focal])})]
        for index, (raw, arguments) in enumerate(calls):
            name = by_raw[raw]
            result = await host.call(step, f"c{index}", name, arguments)
            print(f"{name}: {result.status}: {result.output.splitlines()[-1][:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[-1], backend="trio"))
