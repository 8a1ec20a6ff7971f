import type { ChatMessage } from './llm.ts';

/**
 * The offline assistant's whole "intelligence": a few deterministic intents over the last user
 * message and the history. It exists so a fresh install holds a real conversation with no keys;
 * it does not understand open-ended language, and the README says so.
 */

const NAME_PATTERN = /\bmy name is ([A-Za-z][A-Za-z' -]{0,40}?)(?:[.!?,]|$)/i;

export function composeLocalReply(messages: readonly ChatMessage[], now: Date = new Date()): string {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const text = lastUser?.content.trim() ?? '';
  const lower = text.toLowerCase();

  const name = NAME_PATTERN.exec(text)?.[1]?.trim();
  if (name) return `Nice to meet you, ${name}. I will remember that.`;

  if (/\bwhat(?:'s| is) my name\b/.test(lower)) {
    const remembered = rememberedName(messages);
    return remembered ? `Your name is ${remembered}.` : "You haven't told me your name yet.";
  }

  const repeat = /^(?:please\s+)?(?:repeat after me|say)[:,]?\s+(.+)$/i.exec(text);
  if (repeat?.[1]) return repeat[1];

  const spoken = wordsToDigits(lower).replace(/\btimes\b|\bmultiplied by\b/g, '*').replace(/\bplus\b/g, '+').replace(/\bminus\b/g, '-').replace(/\bdivided by\b|\bover\b/g, '/');
  const arithmetic = /([(\-]*\d[\d\s.+\-*/()x×÷]*[\d)])/.exec(spoken);
  if (arithmetic?.[1] && /\d\s*\)*\s*[+\-*/x×÷]/.test(arithmetic[1])) {
    const value = evaluate(arithmetic[1]);
    if (value !== undefined) return `${speakExpression(arithmetic[1])} is ${formatNumber(value)}.`;
  }

  if (/\bwhat time is it\b|\bcurrent time\b/.test(lower)) {
    return `It is ${now.toISOString().slice(11, 16)} UTC.`;
  }
  if (/\b(what(?:'s| is) the date|what day is it|today's date)\b/.test(lower)) {
    return `Today is ${now.toISOString().slice(0, 10)}.`;
  }
  if (/^(hi|hello|hey|good (morning|afternoon|evening))\b/.test(lower)) {
    return 'Hello! What would you like to talk about?';
  }
  if (/\b(thank you|thanks)\b/.test(lower)) return "You're welcome.";
  if (/\b(bye|goodbye)\b/.test(lower)) return 'Goodbye! Talk to you soon.';
  if (/\b(help|what can you do)\b/.test(lower)) {
    return 'I am the built-in offline assistant. I can do arithmetic, tell the time and date, remember your name and repeat things. Connect a language model for open conversation.';
  }
  if (text.length === 0) return 'I am listening.';
  const turns = messages.filter((m) => m.role === 'user').length;
  return `You said: ${clip(text, 200)}. That is message ${turns} of our conversation.`;
}

function rememberedName(messages: readonly ChatMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    const match = NAME_PATTERN.exec(m.content);
    if (match?.[1]) return match[1].trim();
  }
  return undefined;
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').replace(/[.!?]+$/, '');
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

const UNITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/** "twelve times seven" → "12 times 7": recognisers write numbers as words. */
export function wordsToDigits(text: string): string {
  const word = /\b(?:(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand)(?:[\s-]+(?:and[\s-]+)?)?)+\b/g;
  return text.replace(word, (match) => {
    let total = 0;
    let current = 0;
    for (const w of match.trim().split(/[\s-]+/)) {
      if (w === 'and') continue;
      const unit = UNITS.indexOf(w);
      const ten = TENS.indexOf(w);
      if (unit >= 0) current += unit;
      else if (ten >= 2) current += ten * 10;
      else if (w === 'hundred') current = (current || 1) * 100;
      else if (w === 'thousand') {
        total += (current || 1) * 1000;
        current = 0;
      }
    }
    return `${total + current}${/\s$/.test(match) ? ' ' : ''}`;
  });
}

/** "12 * 7" → "12 times 7", for a reply that is spoken aloud. */
function speakExpression(expression: string): string {
  return expression
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\s*[*x×]\s*/g, ' times ')
    .replace(/\s*\/\s*/g, ' divided by ')
    .replace(/\s*\+\s*/g, ' plus ')
    .replace(/(\d)\s*-\s*(?=\d|\()/g, '$1 minus ');
}

function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toFixed(6)));
}

/** A tiny recursive-descent evaluator: numbers, + - * / and parentheses. Never uses eval. */
export function evaluate(expression: string): number | undefined {
  const tokens = expression.replace(/[x×]/g, '*').replace(/÷/g, '/').match(/\d+(?:\.\d+)?|[+\-*/()]/g);
  if (!tokens) return undefined;
  let pos = 0;
  const peek = (): string | undefined => tokens[pos];
  const factor = (): number => {
    const token = tokens[pos++];
    if (token === '-') return -factor();
    if (token === '(') {
      const value = sum();
      if (tokens[pos++] !== ')') throw new Error('unbalanced');
      return value;
    }
    const value = Number(token);
    if (token === undefined || Number.isNaN(value)) throw new Error('number expected');
    return value;
  };
  const product = (): number => {
    let value = factor();
    while (peek() === '*' || peek() === '/') {
      const op = tokens[pos++];
      const rhs = factor();
      value = op === '*' ? value * rhs : value / rhs;
    }
    return value;
  };
  const sum = (): number => {
    let value = product();
    while (peek() === '+' || peek() === '-') {
      const op = tokens[pos++];
      const rhs = product();
      value = op === '+' ? value + rhs : value - rhs;
    }
    return value;
  };
  try {
    const value = sum();
    return pos === tokens.length && Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
