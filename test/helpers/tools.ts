/** Tool definitions for tests. No Workers module: the core's tests use them as the Worker's do. */

/** A tool definition as an agent registers it: `props` are its parameters' JSON Schema properties. */
export const tool = (name: string, description: string, props: Record<string, unknown> = {}) => ({
  name,
  description,
  parameters: { type: 'object', properties: props },
});

/** The claims desk's tools, defined once: the learning and routing tests name them in any mix. */
export const CLAIM_TOOLS = {
  lookup_claim: tool('lookup_claim', 'Look up an insurance claim by its claim reference and show its status.', {
    claim_ref: { type: 'string' },
  }),
  upload_file: tool('upload_file', 'Attach an uploaded document or photo to a claim.', {
    claim_ref: { type: 'string' },
    file_mb: { type: 'number' },
  }),
  start_recovery: tool('start_recovery', 'Start a subrogation recovery against a third party on a claim.', {
    claim_ref: { type: 'string' },
  }),
  refer_llu: tool('refer_llu', 'Refer a large loss to the large loss unit for specialist handling.', {
    claim_ref: { type: 'string' },
  }),
  set_rvf: tool('set_rvf', 'Set the reserve value figure held against a claim to an amount.', {
    claim_ref: { type: 'string' },
    amount: { type: 'number' },
  }),
};

/** An everyday assistant's tools (weather, email, currency), defined once: the client and MCP tests register them. */
export const DESK_TOOLS = [
  tool('get_weather', 'Current weather and forecast for a city: temperature, rain, wind.', {
    city: { type: 'string' },
  }),
  tool('send_email', 'Send an email message to a recipient with a subject and body.', { to: { type: 'string' } }),
  tool('convert_currency', "Convert an amount of money between currencies at today's exchange rate.", {
    amount: { type: 'number' },
  }),
];

/** The tools the apply tests register: a claims desk beside two everyday tools a revision must not disturb. */
export const APPLY_TOOLS = [
  tool('lookup_claim', 'Fetch an insurance claim record by its claim reference.', { claim_ref: { type: 'string' } }),
  CLAIM_TOOLS.start_recovery,
  tool('refer_llu', 'Refer a large loss to the large loss unit.', { claim_ref: { type: 'string' } }),
  tool('get_weather', 'Current weather for a city.', { city: { type: 'string' } }),
  tool('send_email', 'Send an email to a recipient.', { to: { type: 'string' } }),
];

/** A stored tool as routing reads it: its docstring and its routing memory's wordings, nothing else. */
export function routedTool(name: string, docstring: string, memory: readonly string[]) {
  return {
    name,
    description: null,
    docstring,
    parameters: {},
    examples: [],
    memory: memory.map((text) => ({ text, at: 0 })),
  };
}
