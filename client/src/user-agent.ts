/**
 * Safari and every other WebKit-only browser (all iOS browsers) take the WebSocket transport even
 * when WebRTC is asked for. Chromium-based browsers also say "AppleWebKit" in their user agent,
 * so they are told apart by their own tokens (Chrome, Chromium, Edg, and CriOS/EdgiOS, which
 * are WebKit on iOS and so do fall back).
 */
export function isWebKitOnly(userAgent: string): boolean {
  if (!/AppleWebKit/i.test(userAgent)) return false;
  if (/CriOS|EdgiOS|FxiOS/i.test(userAgent)) return true;
  return !/Chrome|Chromium|Edg/i.test(userAgent);
}

/** The transport a session will actually use: WebRTC only where the browser is not WebKit-only. */
export function effectiveTransport(requested: 'ws' | 'webrtc' | undefined, userAgent: string, hasPeerConnection: boolean): 'ws' | 'webrtc' {
  if (requested !== 'webrtc') return 'ws';
  if (!hasPeerConnection || isWebKitOnly(userAgent)) return 'ws';
  return 'webrtc';
}
