/**
 * Generated data of the realistic agent (`npm run eval -- --agent realistic`): the personal values
 * its users type (names, emails, phone numbers, card numbers, IBANs, money amounts, dates, street
 * addresses, order numbers, cities), the few generated tools its traffic needs beside the ToolE
 * ones (lookups and notifications), and the wordings users ask those tools with.
 *
 * Every value here is GENERATED from a seed: no name, number or address belongs to anyone. Every
 * value is checked against the ToolE texts (tool descriptions and wordings), so a value found in
 * something learned came from the traffic, never from the data set.
 */
import { mulberry32 } from './eval-data.ts';

/** The kinds of personal value the generated users type. */
export type ValueKind = 'name' | 'email' | 'phone' | 'card' | 'iban' | 'amount' | 'date' | 'address' | 'order' | 'city';

/**
 * One generated value. `text` is how a user types it ("$1,250.00", "4111 1111 1111 1111"), `arg`
 * how the agent passes it to a tool (1250, "4111111111111111"); `forms` every other form the
 * traffic writes it in (a first name alone, an order number without its dash). The leak check
 * looks for all of them.
 */
export interface PersonalValue {
  id: number;
  kind: ValueKind;
  text: string;
  arg: string | number;
  forms: string[];
}

/** The argument name a value of each kind is passed as. */
export const ARGUMENT_OF: Record<ValueKind, string> = {
  name: 'customer_name',
  email: 'email',
  phone: 'phone',
  card: 'card_number',
  iban: 'iban',
  amount: 'amount',
  date: 'date',
  address: 'address',
  order: 'order_id',
  city: 'city',
};

/** A generated customer: the values a lookup returns and errors quote. */
export interface Persona {
  name: PersonalValue;
  first: string;
  email: PersonalValue;
  phone: PersonalValue;
  card: PersonalValue;
  iban: PersonalValue;
  address: PersonalValue;
  city: PersonalValue;
}

const FIRST = [
  'Ana',
  'Joaquim',
  'Leonor',
  'Tomasz',
  'Ingrid',
  'Kwame',
  'Yusuf',
  'Mirela',
  'Dagny',
  'Oskar',
  'Beatriz',
  'Rafael',
  'Ilse',
  'Soren',
  'Anouk',
  'Matteo',
  'Zofia',
  'Emeka',
  'Haruto',
  'Ximena',
  'Priyanka',
  'Teodor',
  'Liesel',
  'Caetano',
  'Noor',
  'Fintan',
  'Svetlana',
  'Aurelio',
  'Katarzyna',
  'Bertil',
  'Ifeoma',
  'Radek',
  'Solveig',
  'Thiago',
  'Marit',
  'Dorottya',
  'Eilidh',
  'Casimir',
  'Ottilie',
  'Lazaro',
  'Wiebke',
  'Ruairi',
  'Jelena',
  'Anselm',
  'Mireille',
  'Bogdan',
  'Saoirse',
  'Vidar',
  'Amara',
  'Leocadia',
];
const LAST = [
  'Pereira',
  'Okafor',
  'Lindqvist',
  'Nakamura',
  'Kowalczyk',
  'Brandt',
  'Ferreira',
  'Haddad',
  'Moreau',
  'Castellanos',
  'Rasmussen',
  'Ivanova',
  'Delacroix',
  'Achterberg',
  'Quispe',
  'Varga',
  'Oyelaran',
  'Szabo',
  'Takahashi',
  'Bergstrom',
  'Almeida',
  'Novak',
  'Esposito',
  'Fitzgerald',
  'Mwangi',
  'Petrov',
  'Halvorsen',
  'Carvalho',
  'Wojcik',
  'Lindgren',
  'Adeyemi',
  'Grimaldi',
  'Sorensen',
  'Vukovic',
  'Dimitriou',
  'Kallio',
  'Ortega',
  'Zielinski',
  'Nyberg',
  'Chaudhry',
];
const STREETS = [
  'Quayside Row',
  'Alder Lane',
  'Rua das Flores',
  'Kestrel Close',
  'Juniper Mews',
  'Harbour Terrace',
  'Linden Crescent',
  'Weaver Street',
  'Osprey Walk',
  'Calle Mayor',
  'Birchwood Drive',
  'Tannery Yard',
];
const CITIES = [
  'Porto',
  'Lisbon',
  'Braga',
  'Coimbra',
  'Gdansk',
  'Bergen',
  'Aarhus',
  'Ghent',
  'Utrecht',
  'Bologna',
  'Valencia',
  'Tampere',
  'Ljubljana',
  'Cluj',
  'Krakow',
  'Leuven',
];
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** Lower-cased words of a text (letters and digits). */
export function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

/** A value's normalised form: lower-case, every whitespace and punctuation character removed. */
export function normalised(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

/**
 * The generator of personal values for one seed. Values are drawn fresh for each task (amounts,
 * dates, order numbers) or from a pool of personas (a customer comes back in a few conversations).
 * Every value handed out is kept in `used`, the full list the leak check reads.
 */
export class ValueBook {
  readonly used: PersonalValue[] = [];
  readonly personas: Persona[] = [];
  private readonly random: () => number;
  private readonly forbidden: ReadonlySet<string>;
  private readonly taken = new Set<string>();

  /** `corpus`: every ToolE text; a word of it is never used as a name, street or city. */
  constructor(seed: number, corpus: readonly string[], personaCount: number) {
    this.random = mulberry32(seed * 7919 + 17);
    this.forbidden = new Set(corpus.flatMap(wordsOf));
    const firsts = FIRST.filter((n) => !this.forbidden.has(n.toLowerCase()));
    const lasts = LAST.filter((n) => !this.forbidden.has(n.toLowerCase()));
    const cities = CITIES.filter((c) => !this.forbidden.has(c.toLowerCase()));
    const streets = STREETS.filter((s) => wordsOf(s).every((w) => !this.forbidden.has(w) || w.length <= 4));
    for (let i = 0; i < personaCount; i++) {
      let first = this.pick(firsts);
      let last = this.pick(lasts);
      for (let tries = 0; this.taken.has(`${first} ${last}`) && tries < 50; tries++) {
        first = this.pick(firsts);
        last = this.pick(lasts);
      }
      this.taken.add(`${first} ${last}`);
      const full = `${first} ${last}`;
      const email = `${first}.${last}${this.digits(2)}@example.com`.toLowerCase();
      const phoneDigits = `9${this.digits(8)}`;
      const phone = `+351 ${phoneDigits.slice(0, 3)} ${phoneDigits.slice(3, 6)} ${phoneDigits.slice(6)}`;
      const card = `4${this.digits(15)}`;
      const ibanDigits = `${this.digits(2)}${this.digits(21)}`;
      const ibanCompact = `PT${ibanDigits}`;
      const iban = ibanCompact.replace(/(.{4})/g, '$1 ').trim();
      const city = this.pick(cities);
      const address = `${1 + Math.floor(this.random() * 240)} ${this.pick(streets)}`;
      this.personas.push({
        name: this.value('name', full, full, [first, last]),
        first,
        email: this.value('email', email, email, []),
        phone: this.value('phone', phone, `+351${phoneDigits}`, [phoneDigits]),
        card: this.value('card', card.replace(/(\d{4})(?=\d)/g, '$1 '), card, []),
        iban: this.value('iban', iban, ibanCompact, []),
        address: this.value('address', `${address}, ${city}`, `${address}, ${city}`, [address]),
        city: this.value('city', city, city, []),
      });
    }
  }

  /** A persona, uniformly (a customer comes back in several conversations). */
  persona(): Persona {
    return this.pick(this.personas);
  }

  /** A money amount as typed ("$1,250.00") and as passed (1250). */
  amount(): PersonalValue {
    const whole = 20 + Math.floor(this.random() * 4980);
    const cents = this.random() < 0.6 ? 0 : Math.floor(this.random() * 100);
    const arg = whole + cents / 100;
    const text = `$${whole.toLocaleString('en-US')}.${String(cents).padStart(2, '0')}`;
    return this.value('amount', text, arg, [String(arg)]);
  }

  /** A date as typed ("3 May 2027") and as passed ("2027-05-03"). */
  date(): PersonalValue {
    const month = Math.floor(this.random() * 12);
    const day = 1 + Math.floor(this.random() * 28);
    const iso = `2027-${String(month + 1).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
    return this.value('date', `${day} ${MONTHS[month]} 2027`, iso, [`${MONTHS[month]} ${day}`]);
  }

  /** An order number ("4471-XK"), also written without its dash in errors. */
  order(): PersonalValue {
    const letters = 'ABCDEFGHJKLMNPQRSTUVWXYZ';
    const code = `${this.digits(4)}-${this.pick([...letters])}${this.pick([...letters])}`;
    return this.value('order', code, code, [code.replace('-', '')]);
  }

  private value(kind: ValueKind, text: string, arg: string | number, forms: string[]): PersonalValue {
    const v: PersonalValue = { id: this.used.length, kind, text, arg, forms };
    this.used.push(v);
    return v;
  }

  private digits(n: number): string {
    let out = '';
    for (let i = 0; i < n; i++) out += String(Math.floor(this.random() * 10));
    return out;
  }

  private pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.random() * items.length)];
    if (item === undefined) throw new Error('nothing to pick from');
    return item;
  }
}

/** A generated tool the realistic traffic needs beside the ToolE ones. */
export interface GeneratedTool {
  name: string;
  description: string;
  properties: Record<string, { type: string }>;
  /** What the tool is: a read before a change, or a notification after one. */
  role: 'lookup' | 'notify';
  /** Generated wordings of users who ask for this tool itself (traffic only; never measured). */
  wordings: string[];
}

export const GENERATED_TOOLS: readonly GeneratedTool[] = [
  {
    name: 'lookup_record',
    description:
      'Looks up a record (an order, a booking, a ticket) by its reference or the customer it belongs to and returns its details. Reads only; changes nothing.',
    properties: { query: { type: 'string' }, order_id: { type: 'string' } },
    role: 'lookup',
    wordings: [
      'What is the status of my order',
      'Can you pull up the record of my booking',
      'Show me the details of my ticket',
      'Look up my last order',
    ],
  },
  {
    name: 'get_account',
    description:
      "Gets a customer's account: contact details, payment methods and preferences, by email or name. Reads only.",
    properties: { email: { type: 'string' }, customer_name: { type: 'string' } },
    role: 'lookup',
    wordings: [
      'Which payment methods are on my account',
      'What contact details do you have on file for me',
      'Show me my account settings',
      'Check what address my account has',
    ],
  },
  {
    name: 'send_email',
    description: 'Sends an email to a customer: a confirmation, a receipt or a message the user dictates.',
    properties: { to: { type: 'string' }, subject: { type: 'string' }, body: { type: 'string' } },
    role: 'notify',
    wordings: [
      'Email me a copy of the receipt',
      'Send a confirmation email to my inbox',
      'Mail the invoice to me',
      'Write an email to my colleague with the summary',
    ],
  },
  {
    name: 'send_notification',
    description: 'Sends a push or text notification to a customer phone.',
    properties: { recipient: { type: 'string' }, message: { type: 'string' } },
    role: 'notify',
    wordings: [
      'Text me when it is ready',
      'Send an SMS reminder to my phone',
      'Notify my phone with the update',
      'Push a notification to my mobile',
    ],
  },
];

/** The argument names every ToolE tool declares in this mode: one per kind of value a request carries. */
export const TOOLE_PROPERTIES: Record<string, { type: string }> = Object.fromEntries(
  Object.values(ARGUMENT_OF).map((name) => [name, { type: name === 'amount' ? 'number' : 'string' }]),
);
