import type { TurnCue } from '../../media/endpointer.ts';

/**
 * Word-level cues for turn-taking, from the recogniser's text (lower-case words, no punctuation
 * from pocketsphinx; other recognisers' punctuation is dropped here).
 */

/**
 * Words a thought never ends on: conjunctions, fillers, articles, possessives, "to", an
 * intensifier, and a subject with its auxiliary contracted ("i'm", "it's": English never leaves
 * a contracted auxiliary at the end, "yes I am" but never "yes I'm"). Recognisers hear a
 * hesitant "um" as "i'm" about as often as not, which this catches too.
 */
const TRAILING_INCOMPLETE = new Set([
  'and', 'or', 'but', 'so', 'because', 'cause', 'if', 'than', 'whether', 'although', 'nor',
  'um', 'uh', 'er', 'ah', 'erm',
  'the', 'a', 'an', 'my', 'your', 'our', 'their', 'its', 'to', 'very',
  "i'm", "i've", "i'll", "i'd", "you're", "you've", "you'll", "we're", "we've", "we'll", "they're", "they've", "they'll",
  "he's", "she's", "it's", "that's", "there's", "he'll", "she'll", "it'll",
]);

/** Words a statement does not end on, though a question may ("where are you from"). */
const TRAILING_WEAK = new Set([
  'of', 'for', 'with', 'in', 'on', 'at', 'from', 'about', 'into', 'onto', 'by', 'upon', 'between', 'without', 'against', 'towards', 'toward', 'during', 'until', 'unless',
  'i', 'we', 'they', 'would', 'could', 'should', 'like',
]);

/** First words of a question (wh-words and inverted auxiliaries). */
const QUESTION_START = new Set([
  'what', "what's", 'where', "where's", 'when', 'who', "who's", 'whom', 'whose', 'why', 'which', 'how', "how's",
  'is', 'are', 'was', 'were', 'do', 'does', 'did', 'can', 'could', 'would', 'will', 'should', 'shall', 'may', 'might', 'have', 'has',
  "isn't", "aren't", "don't", "doesn't", "didn't", "can't", "won't",
]);

export function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9' -]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/**
 * `incomplete` when the speech trails off on a word a thought does not end on, `question` for a
 * question of three words or more that does not end on such a word, else `neutral`.
 */
export function lexicalCue(text: string): TurnCue {
  const w = words(text);
  const last = w[w.length - 1];
  if (last === undefined) return 'neutral';
  if (TRAILING_INCOMPLETE.has(last)) return 'incomplete';
  const question = w.length >= 3 && QUESTION_START.has(w[0]!);
  if (TRAILING_WEAK.has(last)) return question ? 'neutral' : 'incomplete';
  return question ? 'question' : 'neutral';
}

/**
 * The words of a transcript that are not backchannels ("mm-hm", "yeah", "right", "okay"... from
 * the list; a phrase of several words, "i see", counts as one).
 */
export function nonBackchannelWords(text: string, backchannels: readonly string[]): string[] {
  const w = words(text.replace(/-/g, ' '));
  const phrases = backchannels.map((p) => words(p.replace(/-/g, ' '))).filter((p) => p.length > 0);
  const rest: string[] = [];
  let i = 0;
  while (i < w.length) {
    const match = phrases.filter((p) => p.every((word, k) => w[i + k] === word)).sort((a, b) => b.length - a.length)[0];
    if (match) i += match.length;
    else rest.push(w[i++]!);
  }
  return rest;
}

/**
 * Whether recognised words take the floor from the assistant: two words or more that are not
 * backchannels, or one of the interruption words ("stop", "wait"). A single other word does not:
 * the local recogniser hears "mm-hm" or a cough as "i", "huh" or "you" about as often as not.
 */
export function wordsInterrupt(text: string, backchannels: readonly string[], interruptionWords: readonly string[]): boolean {
  const rest = nonBackchannelWords(text, backchannels);
  return rest.length >= 2 || rest.some((w) => interruptionWords.includes(w));
}
