/**
 * Wall clock → stream time for audio sent as a microphone sends it: frame k holds stream time
 * [k·20, (k+1)·20) ms and counts as captured when it is sent, so its send time is the capture
 * time of its last sample. A moment t after frame k left and before frame k+1 did is stream time
 * (k+1)·20 + (t − sent[k]): a decision made on frame k with no delay lands on the frame's end, as
 * in the replay, and a late send timer shifts nothing that happened after it.
 */
export function streamTimeAt(sentAt: readonly number[], t: number, frameMs = 20): number {
  if (sentAt.length === 0) throw new Error('no frame was sent');
  let k = 0;
  // Send times only grow: the last frame sent at or before t.
  for (let i = 0; i < sentAt.length && sentAt[i]! <= t; i += 1) k = i;
  return (k + 1) * frameMs + (t - sentAt[k]!);
}
