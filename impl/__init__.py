"""mcpbind's runtime over the official ``mcp`` SDK, on anyio: trio or asyncio (SPEC §11).

::

    from mcpbind.impl import Host, HostConfig, ServerConfig

    config = HostConfig(servers={"fs": ServerConfig(target=...)})
    async with Host.open(config) as host:
        snap = host.sample()
        result = await host.call(snap, "call-1", "mcp__fs__read", {"path": "x"})
"""

from .approval import (
    APPROVAL_ANSWERS,
    ApprovalAnswer,
    ApprovalGate,
    ApprovalRequest,
    ApprovalStatistics,
    Approver,
    requires_approval,
)
from .catalog_cache import CatalogCache, CatalogCacheStatistics
from .config import ConfigWarning, HostConfig
from .connection import Connection, ConnectionLost, Connector, McpConnector, RequestFailed
from .contributors import (
    ContributorOutcome,
    Fragment,
    McpServerContributor,
    OverlayRecord,
    RemoveServer,
    ServerProvenance,
    SetServer,
    ToolContributor,
    TurnContext,
    TurnInput,
    TurnInputContributor,
    TurnItemContributor,
)
from .errors import (
    CatalogRejected,
    ConfigError,
    ContributorRejected,
    DuplicateCallId,
    HostClosed,
    LocalError,
    McpBindError,
    RemoteError,
    ServerStartupError,
    UnknownServer,
)
from .exposure import Exposure
from .host import Host
from .progress import OnProgress
from .recorder import NullRecorder, Recorder
from .registry import Binding, RegistryState, ToolRegistry, ToolSpec
from .seams import Seams
from .server_config import APPROVAL_MODES, ApprovalMode, BuiltinTool, ServerConfig, ToolConfig
from .values import (
    ElicitationAnswer,
    ElicitationRequest,
    HostStatistics,
    ImageItem,
    Progress,
    RefreshOutcome,
    ServerStatistics,
    ServerStatus,
    StepSnapshot,
    ToolResult,
)

__all__ = [
    "APPROVAL_ANSWERS",
    "APPROVAL_MODES",
    "ApprovalAnswer",
    "ApprovalGate",
    "ApprovalMode",
    "ApprovalRequest",
    "ApprovalStatistics",
    "Approver",
    "Binding",
    "BuiltinTool",
    "CatalogCache",
    "CatalogCacheStatistics",
    "CatalogRejected",
    "ConfigError",
    "ConfigWarning",
    "Connection",
    "ConnectionLost",
    "Connector",
    "ContributorOutcome",
    "ContributorRejected",
    "DuplicateCallId",
    "ElicitationAnswer",
    "ElicitationRequest",
    "Exposure",
    "Fragment",
    "Host",
    "HostClosed",
    "HostConfig",
    "HostStatistics",
    "ImageItem",
    "LocalError",
    "McpBindError",
    "McpConnector",
    "McpServerContributor",
    "NullRecorder",
    "OnProgress",
    "OverlayRecord",
    "Progress",
    "Recorder",
    "RefreshOutcome",
    "RegistryState",
    "RemoteError",
    "RemoveServer",
    "RequestFailed",
    "Seams",
    "ServerConfig",
    "ServerProvenance",
    "ServerStartupError",
    "ServerStatistics",
    "ServerStatus",
    "SetServer",
    "StepSnapshot",
    "ToolConfig",
    "ToolContributor",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "TurnContext",
    "TurnInput",
    "TurnInputContributor",
    "TurnItemContributor",
    "UnknownServer",
    "requires_approval",
]
