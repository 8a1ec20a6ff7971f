/** Speech louder than this (RMS dBFS) counts as the user talking, for the end-of-speech estimate. */
const SPEECH_DBFS = -45;

/**
 * Per-turn latency as the user feels it, shown under each reply: from the end of the user's
 * input (a typed message sent; for speech, the last 100 ms the microphone was above
 * SPEECH_DBFS, or the transcript's arrival when the level is unknown) to the reply's first
 * output (its first audio on the WebSocket, else its first text). Greetings have no input.
 */
export function turnLatency(page) {
  let inputAt;
  let lastSpeechAt;
  const pending = new Map(); // turn_id → input time
  const bubbleOf = (turnId) => [...page.$('log').querySelectorAll('.msg.assistant')].find((el) => el.dataset.turn === turnId);

  page.on('mic_level', (d) => d.dbfs > SPEECH_DBFS && (lastSpeechAt = performance.now()));
  page.on('sent', (d) => (inputAt = d.at));
  page.on('asr', (d) => d.input_source === 'voice' && (inputAt = lastSpeechAt ?? performance.now()));
  page.on('turn', (d) => {
    if (!d.welcome && inputAt !== undefined) pending.set(d.turn_id, inputAt);
    inputAt = undefined;
  });
  const first = (turnId, what) => {
    const since = pending.get(turnId);
    if (since === undefined) return;
    pending.delete(turnId);
    const label = document.createElement('span');
    label.className = 'latency';
    label.textContent = `${Math.round(performance.now() - since)} ms to first ${what}`;
    bubbleOf(turnId)?.append(label);
  };
  let audioTurn;
  page.on('turn', (d) => (audioTurn = d.turn_id));
  page.on('audio', () => audioTurn && first(audioTurn, 'audio'));
  page.on('text_delta', (d, client) => {
    // On the WebSocket a voice reply's audio follows its text within milliseconds: wait for it.
    if (client.mode.modality === 'voice' && client.transport === 'ws') return;
    first(d.turn_id, 'word');
  });
  page.on('done', (d) => pending.delete(d.turn_id));
}
