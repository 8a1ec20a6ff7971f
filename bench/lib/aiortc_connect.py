"""Offer → connected timing from an independent WebRTC stack (aiortc, Debian's python3-aiortc).

For bench/aiortc-connect.ts. Each call, one after another: start (transport webrtc) → webrtc_ice,
aiortc's offer (its ICE gathering happens inside setLocalDescription), webrtc_offer →
webrtc_answer, then ICE connected, DTLS connected (connectionState), `ready`, and the first
downlink audio frame (the server greets). Prints one JSON line per call (ms from the offer sent,
except `gather`, which is before it).

Usage: aiortc_connect.py WS_URL API_KEY CALLS HOSTS
  HOSTS: `loopback` offers 127.0.0.1 only (as the interop test does); `all` lets aiortc gather
  on every interface, as it does out of the box.
  WS_URL `self` instead connects aiortc to aiortc on loopback (the floor of aiortc's own cost).
Run with /usr/bin/python3 (the python3 on PATH lacks Debian's modules).
"""
import asyncio
import json
import sys
import time

import aioice.ice
from aiortc import RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import AudioStreamTrack

HOSTS = sys.argv[4] if len(sys.argv) > 4 else "loopback"
if HOSTS == "loopback":
    aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"]


def now():
    return time.perf_counter() * 1000


def watch(pc, marks, t_ref):
    """Records when ICE and the whole connection (ICE + DTLS) reach connected."""
    done = asyncio.get_event_loop().create_future()

    @pc.on("iceconnectionstatechange")
    def on_ice():
        if pc.iceConnectionState in ("completed", "connected") and "ice" not in marks:
            marks["ice"] = now() - t_ref[0]

    @pc.on("connectionstatechange")
    def on_state():
        if pc.connectionState == "connected" and "connected" not in marks:
            marks["connected"] = now() - t_ref[0]
            if not done.done():
                done.set_result(None)
        elif pc.connectionState == "failed" and not done.done():
            done.set_exception(RuntimeError("connection failed"))

    return done


def first_frame(track, marks, key, t_ref, got):
    async def consume():
        try:
            await track.recv()
            marks[key] = now() - t_ref[0]
            got.set_result(None)
            while True:
                await track.recv()
        except Exception:
            if not got.done():
                got.set_result(None)

    return asyncio.ensure_future(consume())


async def offering_peer(marks, t_ref):
    """The calling side: audio out, a `control` channel, its offer made (aiortc gathers here).

    Returns the peer, its connected future and a future for the first downlink audio frame;
    t_ref[0] is set to now, the moment the offer leaves."""
    pc = RTCPeerConnection()
    pc.addTrack(AudioStreamTrack())
    pc.createDataChannel("control")
    got = asyncio.get_event_loop().create_future()
    pc.consumers = []
    pc.on("track", lambda track: pc.consumers.append(first_frame(track, marks, "first_audio", t_ref, got)))
    connected = watch(pc, marks, t_ref)
    g0 = now()
    await pc.setLocalDescription(await pc.createOffer())
    marks["gather"] = now() - g0
    t_ref[0] = now()
    return pc, connected, got


async def server_call(http, url, api_key, index):
    import aiohttp

    marks = {}
    t_ref = [0.0]
    async with http.ws_connect(url) as ws:
        t0 = now()
        await ws.send_json({
            "type": "start", "session_id": f"bench-aiortc-{index}-{int(time.time() * 1000)}", "api_key": api_key,
            "mode": {"kind": "service", "greeting": "Hello."}, "audio": {"sr": 48000}, "transport": {"kind": "webrtc"},
        })
        ice = await ws.receive_json(timeout=10)
        assert ice["type"] == "webrtc_ice", ice
        marks["webrtc_ice"] = now() - t0
        pc, connected, got = await offering_peer(marks, t_ref)
        await ws.send_json({"type": "webrtc_offer", "sdp": pc.localDescription.sdp})
        ready = asyncio.get_event_loop().create_future()
        answer = None
        while answer is None:
            message = await ws.receive_json(timeout=10)
            if message["type"] == "webrtc_answer":
                answer = message
            elif message["type"] == "error":
                raise RuntimeError(json.dumps(message))
        marks["answer"] = now() - t_ref[0]
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type="answer"))
        marks["answer_applied"] = now() - t_ref[0]

        async def read_signaling():
            async for msg in ws:
                if msg.type == aiohttp.WSMsgType.TEXT and json.loads(msg.data)["type"] == "ready" and not ready.done():
                    marks["ready"] = now() - t_ref[0]
                    ready.set_result(None)

        reader = asyncio.ensure_future(read_signaling())
        await asyncio.wait_for(connected, 10)
        await asyncio.wait_for(asyncio.gather(ready, got), 10)
        reader.cancel()
        for c in pc.consumers:
            c.cancel()
        await pc.close()
    return marks


async def self_call(index):
    """aiortc offers to aiortc in the same process: the floor of aiortc's own connect cost."""
    marks = {}
    t_ref = [0.0]
    answerer = RTCPeerConnection()
    answerer.addTrack(AudioStreamTrack())
    offerer, connected, got = await offering_peer(marks, t_ref)
    await answerer.setRemoteDescription(offerer.localDescription)
    await answerer.setLocalDescription(await answerer.createAnswer())
    marks["answer"] = now() - t_ref[0]
    await offerer.setRemoteDescription(answerer.localDescription)
    marks["answer_applied"] = now() - t_ref[0]
    await asyncio.wait_for(connected, 10)
    await asyncio.wait_for(got, 10)
    for c in offerer.consumers:
        c.cancel()
    await offerer.close()
    await answerer.close()
    return marks


async def main(url, api_key, calls):
    import aiohttp

    async with aiohttp.ClientSession() as http:
        for i in range(calls):
            try:
                marks = await (self_call(i) if url == "self" else server_call(http, url, api_key, i))
            except Exception as error:  # one failed call is reported, the others still run
                marks = {"error": repr(error)}
            print(json.dumps({k: (round(v, 2) if isinstance(v, float) else v) for k, v in marks.items()}), flush=True)
            await asyncio.sleep(0.1)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
