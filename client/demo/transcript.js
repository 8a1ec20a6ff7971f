/**
 * The conversation log. Entries are kept in the order they appear on screen and saved with the
 * resume state, so a reload shows the same log: an assistant entry takes its place when its
 * turn starts (not when its text is final), so a tool line run during the reply stays below it.
 */
export function transcript(page) {
  const log = page.$('log');
  const bubbles = new Map(); // turn_id → { el, entry }
  let entries = [];

  const save = () => page.save({ transcript: entries.slice(-100) });
  const show = (kind, text) => {
    const el = document.createElement('div');
    el.className = `msg ${kind}`;
    el.textContent = text;
    log.append(el);
    log.scrollTop = log.scrollHeight;
    return el;
  };
  const add = (kind, text) => {
    entries.push({ kind, text });
    save();
    return show(kind, text);
  };
  page.add = add;

  page.on('restore', ({ saved }) => {
    entries = (saved?.transcript ?? []).filter((e) => e.text);
    for (const e of entries) show(e.kind, e.text);
  });
  page.on('expired', () => {
    entries = [];
    log.replaceChildren();
    add('system', 'the previous conversation had expired: this is a new one');
  });
  page.on('asr', (d) => add('user', d.text));
  page.on('turn', (d) => {
    const entry = { kind: 'assistant', text: '' };
    entries.push(entry);
    const el = show('assistant', '');
    el.dataset.turn = d.turn_id;
    bubbles.set(d.turn_id, { el, entry });
  });
  page.on('text_delta', (d) => {
    const bubble = bubbles.get(d.turn_id);
    if (!bubble) return;
    bubble.el.firstChild ? (bubble.el.firstChild.textContent += d.delta) : bubble.el.prepend(d.delta);
    log.scrollTop = log.scrollHeight;
  });
  page.on('utterance', (d) => {
    const bubble = bubbles.get(d.turn_id);
    if (!bubble) return;
    const streamed = bubble.el.firstChild?.textContent ?? '';
    bubble.el.firstChild ? (bubble.el.firstChild.textContent = d.text) : bubble.el.prepend(d.text);
    // corrected: cut to what was heard; show what the user never heard, greyed, after it.
    if (d.corrected) {
      bubble.el.classList.add('interrupted');
      if (streamed.startsWith(d.text) && streamed.length > d.text.length) {
        const unheard = document.createElement('span');
        unheard.className = 'unheard';
        unheard.textContent = streamed.slice(d.text.length);
        bubble.el.firstChild.after(unheard);
      }
    }
    bubble.entry.text = d.text;
    save();
  });
  page.on('interrupted', (d) => bubbles.get(d.turn_id)?.el.classList.add('interrupted'));
  page.on('error', (d) => add('system', `error ${d.code}: ${d.detail}`));
  page.on('reconnected', () => add('system', 'reconnected: the conversation continues'));
  page.on('session_end', (d) => add('system', `session ended (${d.reason || d.code})`));
  page.on('notice', (d) => add('system', d.text));
  page.on('mic', (d) => d.error && add('system', `microphone: ${d.error}`));
}

/** The sample client tool: declared in mode.tools, answered with sendToolResult. */
export function sampleTool(page) {
  page.tools = [{ name: 'get_time', description: "The user's local time and timezone.", parameters: { type: 'object', properties: {} } }];
  page.on('tool_call', (call, client) => {
    const known = call.name === 'get_time';
    const content = known ? { time: new Date().toLocaleTimeString(), timezone: Intl.DateTimeFormat().resolvedOptions().timeZone } : `unknown tool ${call.name}`;
    page.add('tool', `${call.name}() → ${JSON.stringify(content)}`);
    client.sendToolResult(call.id, content, known ? { outcome: 'succeeded', verified: true } : { outcome: 'failed' });
  });
}
