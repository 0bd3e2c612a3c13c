/**
 * Text that must never reach a model view or the store as if it were ours (docs/learning.md: "no text aimed
 * at the model (instructions, role markers, prompt-injection phrases)").
 */

const ROLE_MARKERS = [
  /<\|?\s*(im_start|im_end|system|assistant|user|endoftext)\s*\|?>/i,
  /^\s*(system|assistant|user|developer)\s*:/im,
  /\[\/?(INST|SYS)\]/i,
  /<<\/?SYS>>/i,
  /###\s*(instruction|system|response)/i,
];

const INJECTION_PHRASES = [
  /\bignore\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|preceding)\b/i,
  /\bdisregard\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|instructions?)\b/i,
  /\bforget\s+(all\s+|everything|your|the\s+)?\s*(previous|prior|instructions?|rules)\b/i,
  /\b(new|updated|override)\s+instructions?\b/i,
  /\byou\s+are\s+now\b/i,
  /\bact\s+as\s+(an?\s+)?(admin|administrator|system|developer|root|jailbroken|dan)\b/i,
  /\b(system|hidden|secret)\s+prompt\b/i,
  /\bdo\s+not\s+tell\s+the\s+user\b/i,
  /\b(reveal|print|output|show)\s+(your\s+|the\s+)?(instructions|prompt|api\s*key|secrets?)\b/i,
  /\bjailbreak\b/i,
  /\bdeveloper\s+mode\b/i,
  /\balways\s+(call|use|choose|pick|prefer)\s+(this|the)\s+tool\b/i,
  /\bnever\s+(call|use)\s+(any\s+)?other\s+tools?\b/i,
];

/** Why a text is aimed at the model, or null when it reads as plain content. */
export function aimedAtModel(text: string): string | null {
  for (const re of ROLE_MARKERS) if (re.test(text)) return `role marker (${re.source})`;
  for (const re of INJECTION_PHRASES) {
    const m = re.exec(text);
    if (m) return `instruction to the model ("${m[0]}")`;
  }
  return null;
}
