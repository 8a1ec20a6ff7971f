/**
 * Offer fix-ups applied before werift sees an offer.
 *
 * With BUNDLE, every bundled m-line travels on the transport of the first one (RFC 8843), so
 * only that m-line's ICE credentials matter. Some peers (aiortc 1.4) still write different
 * ice-ufrag/ice-pwd per m-line; werift then checks with the wrong credentials and the call
 * never connects. Rewriting the bundled m-lines to the first one's credentials is exact.
 */
export function unifyBundleCredentials(sdp: string): string {
  const eol = sdp.includes('\r\n') ? '\r\n' : '\n';
  const lines = sdp.split(/\r?\n/);
  const group = lines.find((l) => l.startsWith('a=group:BUNDLE '));
  if (!group) return sdp;
  const bundled = new Set(group.slice('a=group:BUNDLE '.length).trim().split(/\s+/));
  // Split into the session part and one block per m-line.
  const blocks: string[][] = [[]];
  for (const line of lines) {
    if (line.startsWith('m=')) blocks.push([]);
    blocks[blocks.length - 1]!.push(line);
  }
  const mid = (block: string[]) => block.find((l) => l.startsWith('a=mid:'))?.slice(6).trim();
  const first = blocks.slice(1).find((b) => bundled.has(mid(b) ?? ''));
  const ufrag = first?.find((l) => l.startsWith('a=ice-ufrag:'));
  const pwd = first?.find((l) => l.startsWith('a=ice-pwd:'));
  if (!ufrag || !pwd) return sdp;
  const out = blocks.map((block, i) =>
    i > 0 && bundled.has(mid(block) ?? '')
      ? block.map((l) => (l.startsWith('a=ice-ufrag:') ? ufrag : l.startsWith('a=ice-pwd:') ? pwd : l))
      : block,
  );
  return out.flat().join(eol);
}

/**
 * The answer's DTLS role: the server takes `passive` (DTLS server) whenever the offer lets it
 * choose (`actpass`). werift as DTLS client waits a fixed 100 ms after ICE connects before its
 * ClientHello; as server it answers the client's ClientHello at once, and every browser and
 * aiortc, as DTLS client, sends that hello as soon as their ICE is connected.
 */
export function answerAsDtlsServer(offer: string, answer: string): string {
  if (!/^a=setup:actpass\s*$/m.test(offer)) return answer;
  return answer.replace(/^a=setup:active(\s*)$/gm, 'a=setup:passive$1');
}
