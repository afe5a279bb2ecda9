"""The container's place on the runner: the host's address, and handing files back."""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Mapping
from pathlib import Path

HOST_GATEWAY_VAR = "EVALKIT_HOST_GATEWAY"


def host_gateway(route_table: Path = Path("/proc/net/route")) -> str | None:
    """The container's default gateway (the runner host, seen from the action container)."""
    try:
        lines = route_table.read_text(encoding="ascii").splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        # Iface Destination Gateway Flags ...: the default route has destination 0.
        if len(fields) > 3 and fields[1] == "00000000" and int(fields[3], 16) & 0x2:
            return socket.inet_ntoa(struct.pack("<L", int(fields[2], 16)))
    return None


def export_host_gateway(env: Mapping[str, str]) -> None:
    # The gate expands ${ENV} in evalkit.yaml from the process environment.
    if HOST_GATEWAY_VAR not in env and HOST_GATEWAY_VAR not in os.environ:
        gateway = host_gateway()
        if gateway:
            os.environ[HOST_GATEWAY_VAR] = gateway


def hand_back(folder: Path, workspace: Path) -> None:
    """Give what the action wrote under ``folder`` to the workspace's owner."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    try:
        owner = workspace.stat()
        root = workspace.resolve()
        target = folder.resolve()
        if owner.st_uid == 0 or not target.is_relative_to(root):
            return
        paths = [*target.rglob("*"), target]
        paths += [p for p in target.parents if p.is_relative_to(root) and p != root]
        for path in paths:
            if path.lstat().st_uid == 0:
                os.chown(path, owner.st_uid, owner.st_gid, follow_symlinks=False)
    except OSError:
        return


__all__ = ["HOST_GATEWAY_VAR", "export_host_gateway", "hand_back", "host_gateway"]
