"""An independent WebRTC peer for interop tests (aiortc, from Debian's python3-aiortc).

Talks to the server exactly as SPEC says: start with transport kind webrtc, wait for
webrtc_ice, offer (audio sendrecv + a `control` data channel), apply webrtc_answer, then send
a WAV file as microphone audio and record what comes back. Prints one JSON line of results.
Run with /usr/bin/python3 (the python3 on PATH lacks Debian's modules).
Usage: aiortc_peer.py WS_URL API_KEY SESSION_ID WAV_PATH SECONDS
"""
import asyncio
import json
import sys

import aiohttp
import aioice.ice
from aiortc import RTCPeerConnection, RTCSessionDescription
from aiortc.contrib.media import MediaPlayer

# Tests run on loopback only: offer 127.0.0.1 as aiortc's one host address.
aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"]


async def main(url, api_key, session_id, wav, seconds):
    result = {"frames": [], "control_frames": [], "audio_frames": 0, "audio_peak": 0}
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(url) as ws:
            await ws.send_json({
                "type": "start", "session_id": session_id, "api_key": api_key,
                "mode": {"kind": "service", "greeting": "Hello from Parley."},
                "audio": {"sr": 48000}, "transport": {"kind": "webrtc"},
            })
            ice = await ws.receive_json(timeout=10)
            result["frames"].append(ice["type"])
            pc = RTCPeerConnection()
            player = MediaPlayer(wav)
            pc.addTrack(player.audio)
            control = pc.createDataChannel("control")

            @control.on("message")
            def on_message(message):
                result["control_frames"].append(json.loads(message)["type"])

            async def consume(track):
                while True:
                    try:
                        frame = await track.recv()
                    except Exception:
                        return
                    result["audio_frames"] += 1
                    samples = frame.to_ndarray()
                    peak = int(abs(samples).max()) if samples.size else 0
                    result["audio_peak"] = max(result["audio_peak"], peak)

            @pc.on("track")
            def on_track(track):
                asyncio.ensure_future(consume(track))

            await pc.setLocalDescription(await pc.createOffer())
            await ws.send_json({"type": "webrtc_offer", "sdp": pc.localDescription.sdp})
            while True:
                message = await ws.receive_json(timeout=10)
                result["frames"].append(message["type"])
                if message["type"] == "webrtc_answer":
                    await pc.setRemoteDescription(RTCSessionDescription(sdp=message["sdp"], type="answer"))
                    break
                if message["type"] == "error":
                    result["error"] = message
                    print(json.dumps(result))
                    return

            async def read_signaling():
                try:
                    async for msg in ws:
                        if msg.type == aiohttp.WSMsgType.TEXT:
                            result["frames"].append(json.loads(msg.data)["type"])
                except Exception:
                    pass

            reader = asyncio.ensure_future(read_signaling())
            await asyncio.sleep(seconds)
            result["connection_state"] = pc.connectionState
            result["control_state"] = control.readyState
            reader.cancel()
            await pc.close()
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])))
