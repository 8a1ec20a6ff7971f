import type { TurnCue } from '../../media/endpointer.ts';

/**
 * Word-level cues for turn-taking, from the recogniser's text (lower-case words, no punctuation
 * from pocketsphinx; other recognisers' punctuation is dropped here).
 */

/**
 * Words a thought never ends on: conjunctions, fillers, articles, possessives, "to", an
 * intensifier, and a subject with its auxiliary contracted ("i'm", "it's": English never leaves
 * a contracted auxiliary at the end, "yes I am" but never "yes I'm"). Recognisers hear a
 * hesitant "um" as "i'm" about as often as not, which this catches too, or as "'em".
 */
const TRAILING_INCOMPLETE = new Set([
  'and', 'or', 'but', 'so', 'because', 'cause', 'if', 'than', 'whether', 'although', 'nor',
  'um', 'uh', 'er', 'ah', 'erm', 'hmm', 'mm', "'em",
  'the', 'a', 'an', 'my', 'your', 'our', 'their', 'its', 'to', 'very', 'gonna', 'wanna', 'gotta',
  "i'm", "i've", "i'll", "i'd", "you're", "you've", "you'll", "we're", "we've", "we'll", "they're", "they've", "they'll",
  "he's", "she's", "it's", "that's", "there's", "he'll", "she'll", "it'll",
]);

/** Words a statement does not end on, though a question may ("where are you from"). */
const TRAILING_WEAK = new Set([
  'of', 'for', 'with', 'in', 'on', 'at', 'from', 'about', 'into', 'onto', 'by', 'upon', 'between', 'without', 'against', 'towards', 'toward', 'during', 'until', 'unless',
  'i', 'we', 'they', 'he', 'she', 'would', 'could', 'should', 'like',
]);

export function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9' -]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/** Wh-words: a question whatever follows. */
const WH_WORDS = new Set(['what', "what's", 'where', "where's", 'when', 'who', "who's", 'whom', 'whose', 'why', 'which', 'how', "how's"]);

/** Auxiliaries and copulas: a question when they come first and a subject follows (inversion). */
const AUXILIARIES = new Set([
  'is', 'are', 'was', 'were', 'am', 'do', 'does', 'did', 'can', 'could', 'would', 'will', 'should', 'shall', 'may', 'might', 'must', 'have', 'has',
  "isn't", "aren't", "don't", "doesn't", "didn't", "can't", "won't", "wouldn't", "couldn't", "shouldn't",
]);

/**
 * Copulas and modals, which end a sentence only after their subject ("yes it is", "i can"): "the
 * best option is", "my flight will" trail off. ("do" and "have" are main verbs too: "things to do".)
 */
const TRAILING_COPULA = new Set(['is', 'are', 'was', 'were', 'am', 'can', 'could', 'would', 'will', 'should', 'shall', 'must', 'might']);

/** What can stand as the subject right after an inverted auxiliary ("can you", "is the", "did my"). */
const SUBJECT_START = new Set(['i', 'you', 'we', 'they', 'he', 'she', 'it', 'there', 'this', 'that', 'these', 'those', 'the', 'a', 'an', 'my', 'your', 'our', 'their', 'his', 'her', 'its', 'any', 'anyone', 'somebody', 'someone']);

/** Subject pronouns: an auxiliary after one ends an elliptical answer ("yes it is", "i do"). */
const SUBJECT_PRONOUNS = new Set(['i', 'you', 'we', 'they', 'he', 'she', 'it', 'there', 'that', 'this', 'who', 'what', 'which']);

/** Object pronouns, which a question may end on ("can you help me") but a shortened wait should not trust. */
const OBJECT_PRONOUNS = new Set(['me', 'us', 'him', 'her', 'them', 'you']);

/**
 * Verbs that want something after their object ("tell me the time", "let me see", "remind me to
 * call"): an object pronoun right after one does not end the thought.
 */
const COMPLEMENT_VERBS = new Set(['tell', 'give', 'show', 'send', 'remind', 'let', 'bring', 'ask', 'teach', 'lend', 'pass', 'hand', 'offer', 'email', 'text']);

/** A question by its syntax: a wh-word first, or an auxiliary first with a subject after it. */
function isQuestion(w: string[]): boolean {
  if (w.length < 3) return false;
  return WH_WORDS.has(w[0]!) || (AUXILIARIES.has(w[0]!) && SUBJECT_START.has(w[1]!));
}

/**
 * `incomplete` when the speech trails off on a word a thought does not end on, `question` for a
 * question (by its syntax) of three words or more that ends on a word a question is trusted to
 * end on, else `neutral`. A trailing auxiliary ("the best option is") is incomplete unless a
 * subject pronoun stands before it; a trailing object pronoun after a verb that wants more ("can
 * you remind me", "let me") is incomplete. A question ending on an object pronoun or an
 * auxiliary is not shortened: the local recogniser often drops a trailing "to" or "the" there
 * ("can you remind me [to]"), and a shortened wait cuts the pause that follows.
 */
export function lexicalCue(text: string): TurnCue {
  const w = words(text);
  const last = w[w.length - 1];
  if (last === undefined) return 'neutral';
  const before = w[w.length - 2];
  if (TRAILING_INCOMPLETE.has(last)) return 'incomplete';
  if (OBJECT_PRONOUNS.has(last) && before !== undefined && COMPLEMENT_VERBS.has(before)) return 'incomplete';
  const question = isQuestion(w);
  if (TRAILING_COPULA.has(last) && !(before !== undefined && SUBJECT_PRONOUNS.has(before))) return question ? 'neutral' : 'incomplete';
  if (TRAILING_WEAK.has(last)) return question ? 'neutral' : 'incomplete';
  if (question && (OBJECT_PRONOUNS.has(last) || AUXILIARIES.has(last))) return 'neutral';
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
