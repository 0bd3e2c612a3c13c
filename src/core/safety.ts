/**
 * Text that must never reach a model view or the store as if it were ours (docs/learning.md: "no text aimed
 * at the model (instructions, role markers, prompt-injection phrases)"; docs/security.md "Learned lines").
 *
 * Every line that can be learned — a usage note, an example request, a "Not for" line, the example
 * call, an augmentation's description and requests, a trace's draft definition — goes through
 * `checkLineText`, the one check. It works on normalised text:
 * - NFKC (fullwidth `ＳＹＳＴＥＭ` is `SYSTEM`), then format, bidirectional and tag characters removed
 *   (a zero-width space cannot split a word the check looks for); that text is what is stored;
 * - for matching only, accents stripped, Cyrillic and Greek look-alike letters folded to Latin,
 *   case folded, and a second reading with spaced-out letters joined and digits read as letters.
 * Then a line is either refused (certainly hostile: a role marker or an instruction to the model
 * anywhere in it, in English or another language; markup of any kind) or passes, possibly marked
 * suspicious (addressed to the assistant, a URL, an e-mail address, another language or script than
 * the tool's definition, hidden characters removed): a suspicious line is never applied without a person.
 */

/** What the check knows about the tool a line is for. */
export interface LineContext {
  /** The tool's own words (name, description): the language and scripts a line is expected in. */
  definition?: string | undefined;
}

/** The result of checking one line: `text` is the normalised line, the one to store. */
export interface LineCheck {
  /** False when the line is refused. */
  ok: boolean;
  text: string;
  /** Why it is refused, or null. */
  refused: string | null;
  /** Why a person should read it before it is applied (empty when nothing is suspicious). */
  suspicious: string[];
}

/**
 * Characters that render as nothing or reorder what is shown: every format character (zero-width
 * space and joiners, bidirectional marks, embeddings, overrides and isolates, the tag block, the
 * byte-order mark, soft hyphen), and the invisible letters and marks that are not format characters
 * (combining grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian and other variation
 * selectors, the braille blank).
 */
const HIDDEN = /\p{Cf}|\p{Variation_Selector}|\u034F|[\u115F\u1160\u17B4\u17B5\u2800\u3164\uFFA0]/gu;

/** Where a text holds characters that render as nothing or reorder what is shown (code points, by UTF-16 index). */
export function hiddenCharacters(text: string): { index: number; code: string }[] {
  return [...text.matchAll(HIDDEN)].map((m) => ({
    index: m.index,
    code: `U+${(m[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`,
  }));
}

/**
 * The line as it is checked and stored: NFKC, hidden characters removed. The ellipsis a shortened
 * line ends with is kept (NFKC would make it three dots).
 */
export function normalizeLine(text: string): string {
  return text
    .split('…')
    .map((part) => part.normalize('NFKC'))
    .join('…')
    .replace(HIDDEN, '');
}

/** Cyrillic and Greek letters that look like Latin ones (Unicode confusables, the letters that matter). */
const LOOK_ALIKES: Record<string, string> = {
  // Cyrillic
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  ѕ: 's',
  і: 'i',
  ї: 'i',
  ј: 'j',
  һ: 'h',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  ӏ: 'l',
  ɡ: 'g',
  ү: 'y',
  ո: 'n',
  ս: 'u',
  А: 'a',
  В: 'b',
  Е: 'e',
  К: 'k',
  М: 'm',
  Н: 'h',
  О: 'o',
  Р: 'p',
  С: 'c',
  Т: 't',
  У: 'y',
  Х: 'x',
  Ѕ: 's',
  І: 'i',
  Ј: 'j',
  Һ: 'h',
  Ԁ: 'd',
  Ԛ: 'q',
  Ԝ: 'w',
  Ӏ: 'l',
  Ү: 'y',
  // Greek
  α: 'a',
  β: 'b',
  γ: 'y',
  ε: 'e',
  ζ: 'z',
  η: 'n',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  ω: 'w',
  Α: 'a',
  Β: 'b',
  Ε: 'e',
  Ζ: 'z',
  Η: 'h',
  Ι: 'i',
  Κ: 'k',
  Μ: 'm',
  Ν: 'n',
  Ο: 'o',
  Ρ: 'p',
  Τ: 't',
  Υ: 'y',
  Χ: 'x',
  // Latin letters that read as others
  ı: 'i',
  ȷ: 'j',
  ɑ: 'a',
  ɩ: 'i',
  ʏ: 'y',
  ᴀ: 'a',
  ʙ: 'b',
  ᴄ: 'c',
  ᴅ: 'd',
  ᴇ: 'e',
  ɢ: 'g',
  ʜ: 'h',
  ɪ: 'i',
  ᴊ: 'j',
  ᴋ: 'k',
  ʟ: 'l',
  ᴍ: 'm',
  ɴ: 'n',
  ᴏ: 'o',
  ᴘ: 'p',
  ʀ: 'r',
  ᴛ: 't',
  ᴜ: 'u',
  ᴠ: 'v',
  ᴡ: 'w',
  ᴢ: 'z',
};
/** Digits and signs written for letters ("1gn0re prev10us"), read as letters on a second pass. */
const LEET: Record<string, string> = { '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', $: 's' };

/** Accents off (for other languages' phrasings) and case folded; scripts kept. */
function plainKey(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ');
}

/**
 * `plainKey` with look-alike letters folded to Latin: what English phrasings are matched on. Folded
 * before the case (Greek `Υ` looks like `Y`, its lower case `υ` like `u`).
 */
function latinKey(text: string): string {
  const unmarked = text.normalize('NFKD').replace(/\p{M}/gu, '');
  return plainKey([...unmarked].map((c) => LOOK_ALIKES[c] ?? c).join(''));
}

/** Letters spelled out one by one ("S Y S T E M", "i.g.n.o.r.e") joined, and digits read as letters. */
function squeezedKey(latin: string): string {
  const joined = latin.replace(/\b(\w)(?:[ ._*\-·]\w\b){2,}/g, (m) => m.replace(/[ ._*\-·]/g, ''));
  return [...joined].map((c) => LEET[c] ?? c).join('');
}

const ROLE_WORDS = 'system|assistant|developer|human|user|systeme|sistema|система|系统|系統|システム';
/** A role word opening a segment of the line (its start, after a quote, bracket, bar or a sentence's end). */
const ROLE_AT_SEGMENT = new RegExp(
  `(?:^|[.!?;:]\\s+|["'“”‘’«»\\[\\](){}<>|*#=]\\s*|[-—–]\\s+)(?:${ROLE_WORDS})\\s*(?:message\\s*)?:`,
  'u',
);
/** A role word followed by a colon anywhere else ("… payment system: timeout"): for a person to read. */
const ROLE_ANYWHERE = new RegExp(`(?:^|[^\\p{L}])(?:${ROLE_WORDS})\\s*:`, 'u');

/** Role markers of chat formats, matched on the folded line. */
const ROLE_MARKERS: RegExp[] = [
  /<\|\s*[\w-]*\s*\|>/,
  /\b(im_start|im_end|endoftext|start_header_id|end_header_id|eot_id)\b/,
  /\[\/?(inst|sys|system)\]/,
  /<<\/?sys>>/,
  /#{2,}\s*(instruction|system|response|user|assistant)/,
  /\bsystem[\s|:-]*(override|prompt|instructions?|directive)\b/,
  /\|\s*(system|assistant|user|developer)\s*\|/,
  /\b(admin|developer|god|debug|dan|jailbreak)\s+mode\b/,
];

/** Instructions to the model, matched on the folded line (English; look-alikes and leet read as Latin). */
const INSTRUCTIONS: RegExp[] = [
  /\b(ignore|disregard|forget|override|bypass|discard|abandon|neglect|overlook|skip|drop)\b[^.!?]{0,40}?\b(previous|prior|above|earlier|preceding|former|original|initial|system|all|any|your|the|those|these)\b[^.!?]{0,25}?\b(instructions?|directions?|directives?|rules?|guidelines?|prompts?|messages?|context|guidance|orders?|constraints?|polic(y|ies)|commands?|programming|training)\b/,
  /\b(ignore|disregard|forget)\s+(everything|all)\b/,
  /\bpay\s+no\s+(attention|heed|mind)\s+to\b/,
  /\b(new|updated|revised|real|true|override|additional|secret|hidden)\s+instructions?\b/,
  /\b(new|updated|revised)\s+(rules|policy|policies|guidelines|directives)\s+(for|to)\s+(the\s+)?(assistant|model|ai|agent)\b/,
  /\byou\s+are\s+(now|no\s+longer)\b/,
  /\byou'?re\s+now\b/,
  /\bfrom\s+now\s+on\s*,?\s+(you|the\s+(assistant|model|ai|agent))\b/,
  /\b(act|behave|respond)\s+as\s+(an?\s+)?(admin|administrator|system|developer|root|unrestricted|unfiltered|jailbroken|dan|different)\b/,
  /\b(pretend|imagine)\s+(to\s+be|you\s+are|that\s+you)\b/,
  /\b(roleplay|role-play)\s+as\b/,
  /\byour\s+new\s+(role|task|goal|instructions?|purpose|persona)\b/,
  /\b(system|hidden|secret|initial|original)\s+prompt\b/,
  /\b(do\s+not|don'?t|never)\s+(tell|inform|mention\s+(this\s+)?to|alert|warn|notify|show)\s+(this\s+)?(to\s+)?the\s+user\b/,
  /\bwithout\s+(telling|informing|alerting|asking|notifying)\s+the\s+user\b/,
  /\b(keep|hide)\s+this\s+(secret|hidden)?\s*from\s+the\s+user\b/,
  /\b(reveal|print|output|show|repeat|display|leak|dump|disclose)\s+(your|the|all)\s+(system\s+)?(instructions|prompt|api\s*keys?|secrets?|credentials|passwords?)\b/,
  /\b(forward|send|e-?mail|post|upload|leak|exfiltrate|transmit|copy|relay|pass|share|hand|give|paste)\b[^.!?]{0,40}?\b(whole|entire|full|complete|current|ongoing)\s+(conversation|chat|transcript|message\s+history|context\s+window)\b/,
  /\b(forward|send|e-?mail|post|upload|leak|exfiltrate|transmit|relay)\b[^.!?]{0,30}?\b(the|your|our)\s+(conversation|chat|message)\s+(history|log|logs)\s+(to|with)\b/,
  /\b(forward|send|e-?mail|leak|exfiltrate|transmit|relay|share|reveal|print|output)\b[^.!?]{0,30}?\b(the|your)\s+system\s+prompt\b/,
  /\bjailbr(eak|oken)\b/,
  /\bdo\s+anything\s+now\b/,
  /\balways\s+(call|use|choose|pick|prefer|select|invoke)\s+(this|the|that)\s+tool\b/,
  /\bnever\s+(call|use|choose|invoke)\s+(any\s+)?other\s+tools?\b/,
  /\b(call|use|invoke)\s+this\s+tool\s+(first|instead|for\s+every(thing)?|before\s+any)\b/,
  /\bthe\s+(assistant|model|ai|agent|llm|chatbot)\s+(must|shall|has\s+to|needs\s+to|is\s+required\s+to)\s+(now\s+)?(forward|send|ignore|reveal|tell|email|post|call|always|never|obey|follow|reply|respond)\b/,
  /\b(end|close)\s+of\s+(the\s+)?(tool|function)\s*(output|result|description|response)\b/,
];

/** "Ignore previous instructions" and role markers in other languages, matched with accents off. */
const OTHER_LANGUAGES: RegExp[] = [
  // French
  /\b(ignore[rz]?|oublie[rz]?|neglige[rz]?|ne\s+tiens?\s+pas\s+compte\s+d)\b[^.!?]{0,40}?\b(instructions?|consignes?|regles?|directives?|ordres?)\b/,
  // Spanish, Italian, Portuguese
  /\b(ignora[rd]?|ignore|ignorar|olvida[rd]?|olvide|omite|dimentica|esqueca|esquece)\b[^.!?]{0,40}?\b(instrucciones|instruccion|indicaciones|reglas|ordenes|istruzioni|regole|instrucoes|regras)\b/,
  // German, Dutch
  /\b(ignorier(e|en|t)?|vergiss|vergessen|missachte|negeer|vergeet)\b[^.!?]{0,40}?\b(anweisungen|anweisung|instruktionen|regeln|befehle|vorgaben|anordnungen|instructies|regels)\b/,
  // Russian, Ukrainian (й folds to и with the accents)
  /(игнориру|игноруи|ігноруи|забуд|не\s+обращаи\s+внимания|проигнориру)[^.!?]{0,40}?(инструкци|указани|правил|команд|інструкці|вказів)/,
  /(ты\s+теперь|вы\s+теперь|новые\s+инструкции|системн\S*\s+(сообщени|промпт|подсказ))/,
  // Chinese, Japanese, Korean
  /(忽略|无视|忽视|無視|不要理会|不要理會|忘记|忘記|忘掉|无需遵守)[^。！？]{0,20}?(指令|指示|说明|說明|提示|规则|規則|命令|设定|設定|要求)/,
  /(之前|以上|先前|上面|前面|此前)的?(所有|全部)?(指令|指示|提示词|提示詞)/,
  /(你现在是|你現在是|系统提示|系統提示|系统消息|システムプロンプト)/,
  /(指示|命令|ルール)を?(すべて|全て)?(無視|忘れ)/,
  /(이전|모든|위의)\s*(지시|명령|지침)[^.!?]{0,20}?(무시|잊어)/,
  // Arabic
  /(تجاهل|انس)[^.!?]{0,40}?(التعليمات|الأوامر|الاوامر)/,
];

/** HTML and prompt-format tag names: `<word>` with one of these names is markup. */
const TAG_NAMES = new Set(
  (
    'a abbr b body br button code details div em embed form frame head html i iframe img input link ' +
    'math meta object p pre script span strong style summary svg table td title tr u video audio source ' +
    'system assistant user developer human tool tool_result tool_use tool_call tool_description ' +
    'function function_call function_result functions instructions instruction prompt context evidence ' +
    'result output document message im_start im_end endoftext admin important note'
  ).split(' '),
);

/** An HTML, XML or chat-format tag: the reason, or null. `<value>`-like placeholders are not tags. */
export function tagIn(text: string): string | null {
  if (/<\/\s*[a-z][\w:.-]*\s*>/i.test(text)) return 'a closing tag';
  if (/<[!?|]/.test(text)) return 'markup ("<!", "<?" or "<|")';
  const tag = /<([a-z][\w:.-]*)(\s+[^<>]*?)?(\/)?>/i.exec(text);
  if (tag && (tag[2] !== undefined || tag[3] !== undefined || TAG_NAMES.has((tag[1] ?? '').toLowerCase()))) {
    return `a tag (${tag[0].slice(0, 40)})`;
  }
  return null;
}

/** Markup of any kind: the reason, or null when the line reads as plain text. */
function markupIn(line: string): string | null {
  // Placeholders are Whetstone's own, and must not hide a tag around them ("<img onerror=f(<value>)>").
  const text = line.replace(/<(?:value|text|number)>/gi, 'x');
  const tags = tagIn(text);
  if (tags) return tags;
  // Spaces slipped into a tag ("< |im_start|>", "< / system >") do not make it text.
  const despaced = text.replace(/\s+/g, '');
  if (/<\/[a-z][\w:.-]*>|<[!?|]/i.test(despaced)) return tagIn(despaced);
  const named = /<([a-z][\w:.-]*)>/gi;
  for (const m of despaced.matchAll(named)) if (TAG_NAMES.has((m[1] ?? '').toLowerCase())) return `a tag (${m[0]})`;
  if (text.includes('](')) return 'a markdown link or image ("](")';
  if (/!\[/.test(text)) return 'a markdown image ("![")';
  if (/^\s*\[[^\]]+\]:\s*\S/.test(text)) return 'a markdown link definition';
  // Anywhere in a line, once its URL was masked as a value: "[docs]: <value>".
  if (/\[[^\]]+\]:\s*(?:<value>|[a-z][\w+.-]*:\/\/)/i.test(line)) return 'a markdown link definition';
  if (/```|~~~/.test(text)) return 'a code fence';
  if (/\*\*(?=\S)[^*]*\S\*\*/.test(text)) return 'emphasis (**…**)';
  const under = /(?:^|[^\w])__(?=[^_\s])(.*?[^_\s])__(?!\w)/.exec(text);
  // `__init__()` and `x.__proto__` are names, not emphasis.
  if (under && !/\.__\w+__|__\w+__\s*[(.]/.test(text)) return 'emphasis (__…__)';
  if (/(^|["'“‘]\s*)#{1,6}\s/.test(text)) return 'a markdown heading';
  return null;
}

/** Where a segment of a line begins: a quote, bracket, bar, sentence end or dash. */
const SEGMENT_BREAK = /["'“”‘’«».!?;:()[\]{}<>|*#=—–-]/;
const ROLE_NAMES = new Set(['system', 'assistant', 'developer', 'human', 'user']);

/**
 * A role word spelled with spaces or dots inside it ("SY STEM:", "s.y.s.t.e.m:"): the letters of
 * the segment before each colon, squeezed, are a role name.
 */
function splitRoleWord(latin: string): string | null {
  for (let at = latin.indexOf(':'); at >= 0; at = latin.indexOf(':', at + 1)) {
    let start = at - 1;
    while (start >= 0 && !SEGMENT_BREAK.test(latin[start] ?? '')) start -= 1;
    const tokens = latin
      .slice(start + 1, at)
      .split(/[\s._*·]+/)
      .map((t) => t.replace(/[^a-z]/g, ''))
      .filter((t) => t !== '');
    // The last tokens, joined: a role name split in two or more pieces ("devel oper:").
    let joined = '';
    for (let k = tokens.length - 1; k >= 0 && joined.length < 9; k -= 1) {
      joined = `${tokens[k]}${joined}`;
      if (ROLE_NAMES.has(joined) && (k < tokens.length - 1 || k === 0)) return `${joined}:`;
    }
  }
  return null;
}

/**
 * Instructions with the spaces taken out, for words split by spaces ("ig no re all pre vi ous
 * instructions"), which a model still reads: only phrasings no ordinary text squeezes into.
 */
const SQUEEZED_INSTRUCTIONS = new RegExp(
  [
    '(ignore|disregard|forget|override|bypass)(all|the|any|your)*(previous|prior|above|earlier|preceding|system)(instructions?|rules|directions|prompts?|guidelines)',
    'youarenow(the|an?|my|in|dan|admin|root|unrestricted|jailbroken)',
    '(new|updated|secret|hidden)instructions(for|to|follow|:)',
    '(reveal|print|show|output|leak)(your|the)(system)?(prompt|instructions)',
    'systemprompt',
    'developermode(enabled|on|activated)',
    'jailbr(eak|oken)',
    'doanythingnow',
    '(do ?not|dont|never)(tell|inform)theuser',
    '(forward|send|email|share|leak)the(whole|entire|full|complete)(conversation|chat|transcript)',
  ].join('|'),
);

/**
 * The first role marker or instruction to the model in a text, checked on each folded reading
 * (look-alike letters, spaced-out words, text stored backwards, other languages); null when none.
 * Unlike `checkLineText` it says nothing of markup: a tool's own description may use markdown.
 */
export function aimedIn(line: string): string | null {
  const latin = latinKey(line);
  // Text behind a right-to-left override is shown forwards and stored backwards; the override is
  // gone once the line is normalised (a stored line is checked again), so every line is read backwards too.
  const reversed = [...latin].reverse().join('');
  // Backwards, the segment a role word opens ends at the override: any role word before a colon counts.
  const backwards = ROLE_ANYWHERE.exec(reversed);
  if (backwards) return `role marker ("${backwards[0].replace(/^[^\p{L}]/u, '')}", stored backwards)`;
  for (const key of [latin, reversed]) {
    const found = aimedInReading(key);
    if (found) return key === latin ? found : `${found}, stored backwards`;
  }
  // Accents off for the Latin and Cyrillic phrasings; composed for Japanese and Korean, whose kana
  // and syllables fall apart into marks and jamo when decomposed.
  for (const reading of [plainKey(line), line.normalize('NFKC').toLowerCase()]) {
    for (const re of OTHER_LANGUAGES) {
      const m = re.exec(reading);
      if (m) return `instruction to the model ("${m[0]}")`;
    }
  }
  return null;
}

/** Role markers and English instructions in one folded reading (forwards or backwards). */
function aimedInReading(key: string): string | null {
  for (const reading of [key, squeezedKey(key)]) {
    const role = ROLE_AT_SEGMENT.exec(reading);
    if (role) return `role marker ("${role[0].replace(/^[^\p{L}\p{N}]+/u, '')}")`;
    for (const re of ROLE_MARKERS) {
      const m = re.exec(reading) ?? re.exec(reading.replace(/\s+/g, ''));
      if (m) return `role marker ("${m[0]}")`;
    }
    for (const re of INSTRUCTIONS) {
      const m = re.exec(reading);
      if (m) return `instruction to the model ("${m[0]}")`;
    }
  }
  const split = splitRoleWord(key);
  if (split) return `role marker ("${split}")`;
  const squeezed = SQUEEZED_INSTRUCTIONS.exec(squeezedKey(key).replace(/[^a-z:]/g, ''));
  return squeezed ? `instruction to the model ("${squeezed[0]}", spaced out)` : null;
}

/** Lines addressed to the assistant rather than describing the tool: for a person to read. */
const ADDRESSED: RegExp[] = [
  /\bthe\s+(assistant|model|ai|llm|chatbot|language\s+model|agent)\s+(must|should|shall|will|has\s+to|needs\s+to|is\s+required\s+to)\b/,
  /\byou\s+(must|should|need\s+to|have\s+to|will|shall)\s+(now|always|never|first|immediately|instead|not\s+(tell|mention|reveal)|ignore|forget|respond|reply|answer|say|tell|forward|send|include|output|print|reveal|obey)\b/,
  /\b(always|never)\s+(respond|reply|answer|say|tell|mention|output|include|obey|trust)\b/,
  /\b(before|instead\s+of)\s+(replying|responding|answering|you\s+(reply|respond|answer))\b/,
  /\bfrom\s+now\s+on\b/,
  /\bas\s+an\s+ai\b/,
  /\b(note|message|instructions?|reminder|rules)\s+(to|for)\s+the\s+(assistant|model|ai|llm|chatbot)\b/,
  /\btell\s+the\s+user\b/,
  /\b(important|attention|note\s+to\s+(the\s+)?(assistant|model|ai))\s*:/,
];

/** A URL: a scheme, `www.`, or a domain followed by a path. A bare domain ("kakaku.com") is a name people use. */
const URL =
  /\b(?:https?|ftp|file|data|javascript|mailto):|\bwww\.|\b[\w-]+(?:\.[\w-]+)*\.(?:com|net|org|io|ru|cn|xyz|top|info|biz|co|me|ly|app|dev|ai|sh|tk|ml|ga|cf|gq|site|online|click|link|zip|mov)\//i;
const EMAIL = /[\p{L}\p{N}._%+-]+@(?:[\p{L}\p{N}-]|…|\.\.\.)/u;
const ENTITY = /&(?:#\d+|#x[0-9a-f]+|[a-z]{2,8});/i;

/** Script of each letter that is not Latin, as a name; Latin letters are `Latin`. */
const SCRIPTS: [string, RegExp][] = [
  ['Latin', /\p{Script=Latin}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Greek', /\p{Script=Greek}/u],
  ['Han', /\p{Script=Han}/u],
  ['Japanese kana', /[\p{Script=Hiragana}\p{Script=Katakana}]/u],
  ['Hangul', /\p{Script=Hangul}/u],
  ['Arabic', /\p{Script=Arabic}/u],
  ['Hebrew', /\p{Script=Hebrew}/u],
  ['Devanagari', /\p{Script=Devanagari}/u],
  ['Thai', /\p{Script=Thai}/u],
  ['Armenian', /\p{Script=Armenian}/u],
  ['Georgian', /\p{Script=Georgian}/u],
];

function scriptOf(letter: string): string {
  for (const [name, re] of SCRIPTS) if (re.test(letter)) return name;
  return 'another';
}

/** The scripts of a text's words of two letters or more (a lone `π` is a symbol, not a word). */
function scriptsIn(text: string): Set<string> {
  const out = new Set<string>();
  for (const word of text.match(/\p{L}{2,}/gu) ?? []) for (const c of word) out.add(scriptOf(c));
  return out;
}

/** A word that mixes Latin letters with another script's: look-alike letters (Cyrillic, Greek, Cherokee, Lisu…). */
function mixedWord(text: string): string | null {
  for (const word of text.match(/\p{L}+/gu) ?? []) {
    const scripts = scriptsIn(word);
    if (scripts.has('Latin') && scripts.size > 1) return word;
  }
  return null;
}

/** Words that tell the languages written in Latin letters apart (accents off). */
const LANGUAGE_WORDS: Record<string, ReadonlySet<string>> = {
  English: new Set(
    'the and is are of to for with not you your all this that be in on it or by from was were has have when must can'.split(
      ' ',
    ),
  ),
  French: new Set(
    'le les des du et est une pour dans pas vous avec sur qui que sont toutes ces cette il elle nous au aux ne votre'.split(
      ' ',
    ),
  ),
  Spanish: new Set(
    'el los las del y es una para por con que son todas estas esta usted su sus al lo como pero mas'.split(' '),
  ),
  German: new Set(
    'der die das und ist nicht ein eine mit fur von den dem zu sie alle sind auf ich wir ihr auch'.split(' '),
  ),
  Italian: new Set('il gli della di e per con non sono tutte questo questa che nel alla delle'.split(' ')),
  Portuguese: new Set('os do da nao para com uma sao todas voce isso pelo pela dos das'.split(' ')),
  Dutch: new Set('de het een en is niet van met voor zijn alle deze je jij ook'.split(' ')),
};

/** The language of a Latin-script text by its common words, or null when too few to tell. */
function languageOf(text: string): string | null {
  const words = plainKey(text).match(/\p{L}+/gu) ?? [];
  let best: string | null = null;
  let bestScore = 0;
  for (const [language, common] of Object.entries(LANGUAGE_WORDS)) {
    const score = words.filter((w) => common.has(w)).length;
    if (score > bestScore) [best, bestScore] = [language, score];
  }
  return bestScore >= 2 ? best : null;
}

/** Why a line should be read by a person before it is applied (none when it reads as ordinary). */
function suspicionsIn(line: string, raw: string, ctx: LineContext): string[] {
  const out: string[] = [];
  const latin = latinKey(line);
  if (raw.replace(HIDDEN, '') !== raw) out.push('hidden characters (zero-width, bidirectional or tag) were removed');
  const addressed = ADDRESSED.map((re) => re.exec(latin)).find((m) => m !== null);
  if (addressed) out.push(`addressed to the assistant ("${addressed[0]}")`);
  const role = ROLE_ANYWHERE.exec(latin);
  if (role) out.push(`a role word before a colon ("${role[0].replace(/^[^\p{L}]/u, '')}")`);
  if (URL.test(line)) out.push('a URL or web address');
  if (/\[[^\]]{1,40}\]:/.test(line)) out.push('a bracketed label before a colon, as markdown defines a link');
  if (EMAIL.test(line)) out.push('an e-mail address');
  if (ENTITY.test(line)) out.push('an HTML entity');
  const mixed = mixedWord(line);
  if (mixed) out.push(`a word mixing Latin with other letters ("${mixed}")`);
  const own = scriptsIn(ctx.definition ?? 'Latin');
  if (own.size === 0) own.add('Latin');
  const foreign = [...scriptsIn(line)].filter((s) => !own.has(s));
  if (foreign.length > 0) out.push(`words in ${foreign.join(', ')} script, which the tool's definition does not use`);
  const language = languageOf(line);
  const ownLanguage = languageOf(ctx.definition ?? '') ?? 'English';
  if (language !== null && language !== ownLanguage && own.has('Latin')) {
    out.push(`words of another language (${language}) than the tool's definition (${ownLanguage})`);
  }
  return out;
}

/**
 * The one check for a line that may be learned (docs/security.md "Learned lines"). Normalises the
 * line (the text to store), refuses it when it carries markup, a role marker or an instruction to
 * the model, and lists what makes it suspicious, so `auto_apply` leaves it for a person.
 */
export function checkLineText(raw: string, ctx: LineContext = {}): LineCheck {
  const text = normalizeLine(raw);
  const refuse = (why: string): LineCheck => ({ ok: false, text, refused: why, suspicious: [] });
  const markup = markupIn(text);
  if (markup) return refuse(`markup: ${markup}`);
  const aimed = aimedIn(text);
  if (aimed) return refuse(aimed);
  return { ok: true, text, refused: null, suspicious: suspicionsIn(text, raw, ctx) };
}

/** Why a text is aimed at the model (markup, role marker, instruction), or null: `checkLineText`'s refusal. */
export function aimedAtModel(text: string): string | null {
  return checkLineText(text).refused;
}
