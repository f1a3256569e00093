"""A game environment behind a websocket: actions go out, observations come back."""

import aiohttp

from areal import workflow_context


class WebsocketEnvAgent:
    async def arun_episode(self, engine, data):
        session = await workflow_context.get_aiohttp_session()
        ws = await session.ws_connect("ws://env:9100/play")
        ws.send_json({"reset": data["seed"]})  # ARL201: ws.send_json
        obs = await ws.receive_json()
        for _ in range(8):
            action = await self.policy(engine, obs)
            await ws.send_json({"action": action})
            reply = ws.receive_json()
            if reply["done"]:  # ARL203: reply
                break
        ws.close()  # ARL201: ws.close
        return obs

    async def policy(self, engine, obs):
        return 0

    async def ping(self, ws: aiohttp.ClientWebSocketResponse):
        ws.ping()  # ARL201: ws.ping
        return await ws.receive()
