"""The SDK's ``TokenStorage`` over one record of the host's credentials store (SPEC §11.15).

The SDK's providers read and write tokens and the client registration through it; it
keeps them in a :class:`~mcpbind.impl.config.credentials.Credentials` record, with what
the SDK keeps nowhere across restarts: the token's absolute expiry and the
authorization server's metadata; and what the SDK does not know of: the DPoP key and
whether the token is bound to it (``token_type`` ``DPoP``, RFC 9449; the SDK's token
model takes ``Bearer`` alone, so it is shown one).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ..config.credentials import Credentials, TokenStore, store_key

__all__ = ["Storage"]


class Storage:
    """The SDK's ``TokenStorage`` over one record of a :class:`TokenStore`."""

    def __init__(self, store: TokenStore, server: str, url: str) -> None:
        self.store = store
        self.server = server
        self.url = url
        self.key = store_key(server, url)
        self.record: Credentials | None = None
        self.loaded = False
        self.metadata_of: Callable[[], Mapping[str, Any] | None] = lambda: None
        self.issued_type: str | None = None
        """The ``token_type`` of the token response the SDK is about to store (set by
        :mod:`.dpop`, which sees the response first)."""

    async def current(self) -> Credentials:
        if not self.loaded:
            self.record = await self.store.load(self.key)
            self.loaded = True
        return self.record or Credentials(self.server, self.url)

    async def _save(self, record: Credentials) -> None:
        self.record = record
        await self.store.save(self.key, record)

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken  # noqa: PLC0415

        record = await self.current()
        if record.tokens is None:
            return None
        return OAuthToken.model_validate({**record.tokens, "token_type": "Bearer"})

    def bound(self, access_token: str) -> bool:
        """``access_token`` is the stored one and is bound to the stored DPoP key."""
        record = self.record
        tokens = None if record is None else record.tokens
        return (
            tokens is not None
            and record is not None
            and record.dpop_key is not None
            and tokens.get("access_token") == access_token
            and str(tokens.get("token_type", "")).lower() == "dpop"
        )

    async def set_dpop_key(self, key: Mapping[str, Any]) -> None:
        record = await self.current()
        await self._save(attrs.evolve(record, dpop_key=dict(key)))

    async def set_tokens(self, tokens: Any) -> None:
        record = await self.current()
        expires = tokens.expires_in
        stored = tokens.model_dump(mode="json", exclude_none=True)
        if self.issued_type is not None:
            stored["token_type"] = self.issued_type
            self.issued_type = None
        await self._save(
            attrs.evolve(
                record,
                tokens=stored,
                expires_at=None if expires is None else time.time() + float(expires),
                metadata=self.metadata_of() or record.metadata,
            )
        )

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull  # noqa: PLC0415

        record = await self.current()
        if record.client is None:
            return None
        return OAuthClientInformationFull.model_validate(record.client)

    async def set_client_info(self, client_info: Any) -> None:
        record = await self.current()
        client = client_info.model_dump(mode="json", exclude_none=True)
        await self._save(attrs.evolve(record, client=client))

    async def forget_tokens(self) -> None:
        """A refresh token that no longer works: the next authorization asks a person."""
        record = await self.current()
        if record.tokens is not None:
            await self._save(attrs.evolve(record, tokens=None, expires_at=None))
