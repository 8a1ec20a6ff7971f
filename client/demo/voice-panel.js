/** The voice panel: what the assistant is doing, the microphone, its device, the voice. */

const STATE_TEXT = { idle: 'not connected', ready: 'ready', listening: 'listening', thinking: 'thinking…', working: 'working on it…', speaking: 'speaking' };

/**
 * Agent state from the conversation's own frames: a user turn (asr, or text sent) → thinking;
 * the reply's first text or audio → speaking; `working {active}` → working while a tool runs
 * with nothing audible; the turn's end → listening (microphone on) or ready.
 */
export function agentState(page) {
  const pill = page.$('agent-state');
  let mic = false;
  let state = 'idle';
  const set = (next) => {
    state = next;
    pill.dataset.state = next;
    pill.textContent = STATE_TEXT[next];
  };
  const rest = () => set(mic ? 'listening' : 'ready');
  page.on('connected', rest);
  page.on('disconnected', () => {
    mic = false;
    set('idle');
  });
  page.on('mic', (d) => {
    mic = d.on;
    if (state === 'ready' || state === 'listening') rest();
  });
  page.on('asr', () => set('thinking'));
  page.on('sent', () => set('thinking'));
  page.on('turn', () => state !== 'speaking' && set('thinking'));
  page.on('text_delta', () => state === 'thinking' && set('speaking'));
  page.on('audio', () => state === 'thinking' && set('speaking'));
  page.on('working', (d) => (d.active ? set('working') : state === 'working' && set('speaking')));
  page.on('done', rest);
  set('idle');
}

/** A level meter fed by the library's `mic_level` (RMS dBFS every 100 ms). */
export function micMeter(page) {
  const bar = page.$('level');
  const show = (dbfs) => (bar.style.width = `${Math.max(0, Math.min(100, ((dbfs + 60) / 60) * 100))}%`);
  page.on('mic_level', (d) => show(d.dbfs));
  page.on('mic', (d) => !d.on && show(-100));
  page.on('disconnected', () => show(-100));
}

/** The microphone's own status from the library's capture events. */
export function micStatus(page) {
  const set = (text) => (page.$('mic').textContent = text);
  page.on('warming_up', (d) => set(d.attempt > 1 ? 'retrying…' : 'starting…'));
  page.on('recovering', () => set('stalled, retrying…'));
  page.on('listening', () => set('on'));
  page.on('failed', (d) => set(`failed: ${d.code}`));
  page.on('mic', (d) => !d.on && set(d.error ? `failed: ${d.error}` : 'microphone off'));
  page.on('disconnected', () => set('microphone off'));
}

/** The server's `silent_mic` warning, until the microphone is heard again. */
export function silentMic(page) {
  const warning = page.$('mic-warning');
  const hide = () => (warning.hidden = true);
  page.on('silent_mic', (d) => {
    warning.textContent =
      d.reason === 'digital_silence'
        ? `Your microphone sends pure silence (${Math.round(d.duration_ms / 1000)} s): is it muted, or blocked by the system?`
        : `Your microphone is barely audible (${Math.round(d.duration_ms / 1000)} s): check the input device and its level.`;
    warning.hidden = false;
  });
  page.on('mic_level', (d) => d.dbfs > -45 && hide());
  page.on('mic', (d) => !d.on && hide());
  page.on('disconnected', hide);
}

/** The input device: the library's list, refreshed when devices change; a choice applies at once. */
export function devicePicker(page) {
  const select = page.$('device');
  const fill = async (client) => {
    const devices = await client.getInputDevices();
    const current = select.value;
    select.replaceChildren(new Option('system default', ''), ...devices.map((d, i) => new Option(d.label || `microphone ${i + 1}`, d.deviceId)));
    select.value = devices.some((d) => d.deviceId === current) ? current : '';
  };
  page.on('connected', (_, client) => client.mode.modality === 'voice' && fill(client));
  page.on('listening', (_, client) => fill(client));
  page.on('devices_changed', (_, client) => fill(client));
  select.onchange = () => page.client?.setInputDevice(select.value || null);
}

/** The voice: the choices `ready.voices` offers; `voice` confirms a change. */
export function voicePicker(page) {
  const select = page.$('voice');
  page.on('connected', ({ ready }) => {
    select.replaceChildren(...ready.voices.map((v) => new Option(`${v.name} (${v.language}, ${v.gender})`, v.voice)));
    select.value = ready.voice;
  });
  page.on('voice', (d) => (select.value = d.voice));
  select.onchange = () => page.client?.setVoice(select.value);
}

/** Whether this server can hold voice calls (/healthz): if not, say why before anyone tries. */
export function voiceAvailability(page) {
  fetch('/healthz')
    .then((res) => res.json())
    .then((health) => {
      if (health.voice?.available !== false) return;
      const notice = page.$('notice');
      notice.textContent = `Voice is off on this server, text works: ${health.voice.detail}`;
      notice.hidden = false;
      page.$('modality').querySelector('option[value=voice]').disabled = true;
    })
    .catch(() => undefined);
}
