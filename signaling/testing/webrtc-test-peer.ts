import { RtcTestPeer } from '../../media/testing/rtc-test-peer.ts';
import { ServerFrame } from '../../session/protocol/server.ts';

/** The media layer's test peer, holding every control frame to SPEC's server frame schemas. */
export class WebRtcTestPeer extends RtcTestPeer<ServerFrame> {
  constructor(iceServers: { urls: string | string[] }[] = []) {
    super(iceServers, (raw) => {
      const parsed = ServerFrame.safeParse(raw);
      return parsed.success ? undefined : parsed.error.message;
    });
  }
}
