"""asyncio client for interactived's local API (JSON-RPC 2.0, one JSON object per line).

    client = await interactived_client.connect("/run/interactived/interactived.sock")
    await client.call("room.join", {"mediaId": "m1"})
    async for event in client.events(types=["overlay."]):
        print(event["type"], event["seq"], event["data"])
    await client.close()

Standard library only. The protocol is described in the project's docs/ipc.md.
"""

from .client import PROTOCOL, Client, connect
from .errors import ConnectionClosed, DaemonError
from .events import Event, EventStream
from .paths import default_socket_path
from .voice import VOICE_EVENTS, VoiceParticipant, VoiceRoom

__all__ = ["PROTOCOL", "VOICE_EVENTS", "Client", "ConnectionClosed", "DaemonError", "Event", "EventStream",
           "VoiceParticipant", "VoiceRoom", "connect", "default_socket_path"]
